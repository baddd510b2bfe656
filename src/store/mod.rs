//! The embedded store in `--data-dir`: what must survive a crash and a restart.
//!
//! It is one [redb](https://www.redb.org) file, `undust.redb`. redb was chosen because it is pure
//! Rust (no C toolchain, no system library), ACID with copy-on-write B-trees and a crash-safe
//! commit (an interrupted write is rolled back on the next open, never half-applied), well kept,
//! and fast enough that one transaction per ingest stream or per seen-set flush is cheap. sled is
//! unmaintained and RocksDB needs a C++ build.
//!
//! | table | key | value | written |
//! |---|---|---|---|
//! | `rules` | host | JSON rule history (live version and the versions kept for rollback) | before a new or rolled-back rule set goes live |
//! | `samples` | (host, sample id) | one sampled page (URL evidence and content digest) | before an ingest stream is acknowledged |
//! | `templates` | host | the host's template model | with the samples |
//! | `mirrors` | `state` | JSON mirror book (live mirror sets, candidates on probation, operator pins and forbids) | before mirror sets change live, and on each pin or forbid |
//! | `seen` | chunk number | packed 64-bit keys of canonical forms | every flush interval, and rewritten whole on compaction |
//! | `state` | `trigger/<host>`, `estimated_bytes_saved` | a host's relearn trigger (new samples, pending since); the bytes-saved total | every flush interval, and at shutdown |
//!
//! Every value is wrapped in an envelope (format byte, xxh3 checksum, payload). A value whose
//! checksum or decoding fails is skipped, logged and counted, and the rest is restored: the sidecar
//! starts with everything it can trust. A file redb itself cannot open is moved aside (never
//! deleted) with an error naming both paths, and the sidecar starts with an empty store.
//!
//! Damage below the values (random bytes in a B-tree page, a truncated file) is found at open:
//! every table is read to its end before the store is used. redb reports some of that damage as
//! errors and *panics* on the rest (slice indexes and `unreachable!` while walking a damaged page),
//! so the open and the read-through run under `catch_unwind` (see [`guarded`]). A damaged file is
//! moved aside, the rows that could still be read are copied into a new file, and the damage is
//! kept in [`StoreDamage`] for health, metrics and `GetStats`. With [`OnDamage::Refuse`]
//! (`--refuse-damaged-store`) the file is left untouched and opening fails instead.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use redb::{
    Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
    TableHandle,
};

/// A table of values keyed by a name (a host, or a fixed key).
type NamedTable = TableDefinition<'static, &'static str, &'static [u8]>;

const RULES: NamedTable = TableDefinition::new("rules");
const SAMPLES: TableDefinition<'_, (&str, u64), &[u8]> = TableDefinition::new("samples");
const TEMPLATES: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("templates");
const SEEN: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("seen");
const MIRRORS: NamedTable = TableDefinition::new("mirrors");
/// The one row of the `mirrors` table.
const MIRRORS_KEY: &str = "state";
const STATE: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("state");

/// The store's file name inside the data directory.
pub const FILE_NAME: &str = "undust.redb";
/// Envelope format of stored values.
const ENVELOPE_VERSION: u8 = 1;
/// Keys per `seen` row.
const SEEN_CHUNK_KEYS: usize = 65_536;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("embedded store: {0}")]
    Db(#[from] redb::Error),
    #[error("encoding a stored value: {0}")]
    Encode(String),
    #[error(
        "{} is damaged ({reason}); it was left as it is because damaged stores are refused \
         (--refuse-damaged-store)",
        path.display()
    )]
    Damaged { path: PathBuf, reason: String },
}

/// What to do with a store file that is damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnDamage {
    /// Move it aside, keep what can be read, start.
    #[default]
    Recover,
    /// Leave it untouched and fail to open.
    Refuse,
}

/// The damage found when the store was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreDamage {
    /// Tables that could not be read to their end (all of them when the file did not open).
    pub tables: Vec<&'static str>,
    /// Where the damaged file was moved (kept for inspection, never deleted).
    pub moved_to: PathBuf,
    /// What redb reported, or the message of its panic.
    pub reason: String,
    /// Rows copied from the damaged file into the new one.
    pub salvaged_rows: u64,
}

/// Names of the store's tables, for damage reports.
const TABLE_NAMES: [&str; 6] = ["rules", "samples", "templates", "seen", "mirrors", "state"];

/// Rows read from a damaged file, to be copied into a new one (values still sealed).
#[derive(Default)]
struct Salvage {
    rules: Vec<(String, Vec<u8>)>,
    samples: Vec<((String, u64), Vec<u8>)>,
    templates: Vec<(String, Vec<u8>)>,
    seen: Vec<(u64, Vec<u8>)>,
    mirrors: Vec<(String, Vec<u8>)>,
    state: Vec<(String, Vec<u8>)>,
}

impl Salvage {
    fn rows(&self) -> u64 {
        (self.rules.len()
            + self.samples.len()
            + self.templates.len()
            + self.seen.len()
            + self.mirrors.len()
            + self.state.len()) as u64
    }
}

/// Runs redb work that may panic on a damaged file, turning both its errors and its panics into a
/// message. Why `catch_unwind`: redb 4 panics (index out of bounds, `unreachable!`) when a page it
/// walks holds garbage; a panic at startup with `Restart=on-failure` is a crash loop. Unwind safety
/// holds because whatever the closure touched (a `Database` being opened or read) is dropped, not
/// used again, when it panicked.
fn guarded<T, E: std::fmt::Display>(work: impl FnOnce() -> Result<T, E>) -> Result<T, String> {
    match std::panic::catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(err.to_string()),
        Err(panic) => Err(panic_message(panic.as_ref())),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    format!("the embedded store panicked reading it: {text}")
}

/// Reads every row of `definition` to its end, handing each to `row`; a missing table is empty.
fn read_rows<K: redb::Key + 'static>(
    db: &Database,
    definition: TableDefinition<'_, K, &'static [u8]>,
    mut row: impl FnMut(K::SelfType<'_>, &[u8]),
) -> Result<(), String> {
    guarded(|| -> Result<(), redb::Error> {
        let txn = db.begin_read()?;
        let table = match txn.open_table(definition) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
            Err(err) => return Err(err.into()),
        };
        for entry in table.iter()? {
            let (key, value) = entry?;
            row(key.value(), value.value());
        }
        Ok(())
    })
}

/// Reads every table of `db` to its end; with `salvage`, keeps a copy of every row read. Returns
/// the tables that could not be read whole, with the first reason.
fn read_through(
    db: &Database,
    mut salvage: Option<&mut Salvage>,
) -> (Vec<&'static str>, Option<String>) {
    let mut damaged = Vec::new();
    let mut first_reason = None;
    let mut note = |table: &'static str, result: Result<(), String>| {
        if let Err(reason) = result {
            damaged.push(table);
            first_reason.get_or_insert(reason);
        }
    };
    let [rules, samples, templates, seen, mirrors, state] = TABLE_NAMES;
    note(
        rules,
        read_rows(db, RULES, |host, value| {
            if let Some(out) = salvage.as_deref_mut() {
                out.rules.push((host.to_owned(), value.to_vec()));
            }
        }),
    );
    note(
        samples,
        read_rows(db, SAMPLES, |(host, id), value| {
            if let Some(out) = salvage.as_deref_mut() {
                out.samples.push(((host.to_owned(), id), value.to_vec()));
            }
        }),
    );
    note(
        templates,
        read_rows(db, TEMPLATES, |host, value| {
            if let Some(out) = salvage.as_deref_mut() {
                out.templates.push((host.to_owned(), value.to_vec()));
            }
        }),
    );
    note(
        seen,
        read_rows(db, SEEN, |chunk, value| {
            if let Some(out) = salvage.as_deref_mut() {
                out.seen.push((chunk, value.to_vec()));
            }
        }),
    );
    note(
        mirrors,
        read_rows(db, MIRRORS, |key, value| {
            if let Some(out) = salvage.as_deref_mut() {
                out.mirrors.push((key.to_owned(), value.to_vec()));
            }
        }),
    );
    note(
        state,
        read_rows(db, STATE, |key, value| {
            if let Some(out) = salvage.as_deref_mut() {
                out.state.push((key.to_owned(), value.to_vec()));
            }
        }),
    );
    (damaged, first_reason)
}

/// Writes salvaged rows into a fresh database.
fn write_salvage(db: &Database, salvage: &Salvage) -> Result<(), StoreError> {
    let mut txn = db.begin_write()?;
    txn.set_durability(Durability::Immediate)?;
    {
        let mut rules = txn.open_table(RULES)?;
        for (host, value) in &salvage.rules {
            rules.insert(host.as_str(), value.as_slice())?;
        }
        let mut samples = txn.open_table(SAMPLES)?;
        for ((host, id), value) in &salvage.samples {
            samples.insert((host.as_str(), *id), value.as_slice())?;
        }
        let mut templates = txn.open_table(TEMPLATES)?;
        for (host, value) in &salvage.templates {
            templates.insert(host.as_str(), value.as_slice())?;
        }
        let mut seen = txn.open_table(SEEN)?;
        for (chunk, value) in &salvage.seen {
            seen.insert(*chunk, value.as_slice())?;
        }
        let mut mirrors = txn.open_table(MIRRORS)?;
        for (key, value) in &salvage.mirrors {
            mirrors.insert(key.as_str(), value.as_slice())?;
        }
        let mut state = txn.open_table(STATE)?;
        for (key, value) in &salvage.state {
            state.insert(key.as_str(), value.as_slice())?;
        }
    }
    txn.commit()?;
    Ok(())
}

macro_rules! db_error {
    ($($ty:ty),*) => {$(
        impl From<$ty> for StoreError {
            fn from(err: $ty) -> Self {
                StoreError::Db(err.into())
            }
        }
    )*};
}
db_error!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::SetDurabilityError
);

/// Wraps a payload in the checksummed envelope.
fn seal(payload: &[u8]) -> Vec<u8> {
    let mut sealed = Vec::with_capacity(payload.len() + 9);
    seal_into(&mut sealed, payload);
    sealed
}

/// [`seal`] into `sealed` (cleared first): a transaction writing many rows reuses one buffer
/// instead of allocating an envelope per row.
fn seal_into(sealed: &mut Vec<u8>, payload: &[u8]) {
    sealed.clear();
    sealed.push(ENVELOPE_VERSION);
    sealed.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(payload).to_le_bytes());
    sealed.extend_from_slice(payload);
}

/// The payload of an envelope whose checksum holds.
fn open_envelope(sealed: &[u8]) -> Option<&[u8]> {
    let (&version, rest) = sealed.split_first()?;
    if version != ENVELOPE_VERSION || rest.len() < 8 {
        return None;
    }
    let (sum, payload) = rest.split_at(8);
    let sum = u64::from_le_bytes(sum.try_into().ok()?);
    (xxhash_rust::xxh3::xxh3_64(payload) == sum).then_some(payload)
}

/// One sampled page as stored.
pub struct StoredSample {
    pub host: String,
    pub id: u64,
    pub payload: Vec<u8>,
}

/// Sample changes made durable together.
#[derive(Default)]
pub struct SampleBatch {
    pub put: Vec<StoredSample>,
    pub delete: Vec<(String, u64)>,
    pub templates: Vec<(String, Vec<u8>)>,
    /// Hosts whose template model is dropped (their sample gave way to another host's).
    pub delete_templates: Vec<String>,
    /// `state` rows written with the samples (the relearn triggers they moved, the bytes-saved
    /// total), and deleted.
    pub state: Vec<(String, Vec<u8>)>,
    pub delete_state: Vec<String>,
}

impl SampleBatch {
    pub fn is_empty(&self) -> bool {
        self.put.is_empty()
            && self.delete.is_empty()
            && self.templates.is_empty()
            && self.delete_templates.is_empty()
            && self.state.is_empty()
            && self.delete_state.is_empty()
    }

    /// Drops `host`'s template model: a pending write of it is cancelled, the stored one deleted.
    pub fn forget_template(&mut self, host: &str) {
        self.templates.retain(|(name, _)| name != host);
        self.delete_templates.push(host.to_owned());
    }
}

/// The embedded store.
pub struct Store {
    db: Database,
    path: PathBuf,
    /// A file that could not be opened and was moved aside at start, if any.
    moved_aside: Option<PathBuf>,
    /// Damage found at open (the file was moved aside), if any.
    damage: Option<StoreDamage>,
    /// Values skipped on restore because they failed their checksum or decoding.
    skipped: AtomicU64,
    /// Next `seen` chunk number, and keys persisted in the table.
    next_seen_chunk: AtomicU64,
    seen_keys: AtomicU64,
}

impl Store {
    /// Opens (or creates) the store in `dir`, recovering from damage (see the module docs).
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        Store::open_with(dir, OnDamage::Recover)
    }

    /// Opens (or creates) the store in `dir`; a damaged file is recovered or refused per `policy`.
    pub fn open_with(dir: &Path, policy: OnDamage) -> Result<Store, StoreError> {
        let path = dir.join(FILE_NAME);
        let refuse = |reason: &str| match policy {
            OnDamage::Refuse => Err(StoreError::Damaged {
                path: path.clone(),
                reason: reason.to_owned(),
            }),
            OnDamage::Recover => Ok(()),
        };
        let opened = match std::panic::catch_unwind(|| create(&path)) {
            Ok(Ok(db)) => Ok(db),
            Ok(Err(
                err @ (redb::DatabaseError::DatabaseAlreadyOpen
                | redb::DatabaseError::UpgradeRequired(_)),
            )) => return Err(err.into()),
            Ok(Err(err)) => Err(err.to_string()),
            Err(panic) => Err(panic_message(panic.as_ref())),
        };
        let (db, damage) = match opened {
            Ok(db) => match read_through(&db, None) {
                (_, None) => (db, None),
                (tables, Some(reason)) => {
                    refuse(&reason)?;
                    let mut salvage = Salvage::default();
                    read_through(&db, Some(&mut salvage));
                    // Dropping a database that panicked may panic again; it is not used anymore.
                    let _ = guarded(|| {
                        drop(db);
                        Ok::<(), String>(())
                    });
                    let moved_to = move_aside(dir, &path, &reason)?;
                    let db = create(&path)?;
                    write_salvage(&db, &salvage)?;
                    let damage = StoreDamage {
                        tables,
                        moved_to,
                        reason,
                        salvaged_rows: salvage.rows(),
                    };
                    (db, Some(damage))
                }
            },
            Err(reason) => {
                refuse(&reason)?;
                let moved_to = move_aside(dir, &path, &reason)?;
                let damage = StoreDamage {
                    tables: TABLE_NAMES.to_vec(),
                    moved_to,
                    reason,
                    salvaged_rows: 0,
                };
                (create(&path)?, Some(damage))
            }
        };
        if let Some(damage) = &damage {
            // The one line an operator needs: what happened, where the file went, what was kept.
            tracing::error!(
                store = %path.display(),
                moved_to = %damage.moved_to.display(),
                tables = ?damage.tables,
                salvaged_rows = damage.salvaged_rows,
                reason = %damage.reason,
                "the store was damaged: it was moved aside and undust starts with the rows it could \
                 still read (set --refuse-damaged-store to refuse to start instead)"
            );
        }
        let moved_aside = damage
            .as_ref()
            .filter(|damage| damage.salvaged_rows == 0)
            .map(|damage| damage.moved_to.clone());
        let store = Store {
            db,
            path,
            moved_aside,
            damage,
            skipped: AtomicU64::new(0),
            next_seen_chunk: AtomicU64::new(0),
            seen_keys: AtomicU64::new(0),
        };
        store.create_tables()?;
        Ok(store)
    }

    fn create_tables(&self) -> Result<(), StoreError> {
        let txn = self.db.begin_write()?;
        {
            txn.open_table(RULES)?;
            txn.open_table(SAMPLES)?;
            txn.open_table(TEMPLATES)?;
            txn.open_table(MIRRORS)?;
            let seen = txn.open_table(SEEN)?;
            let next = seen.last()?.map_or(0, |(chunk, _)| chunk.value() + 1);
            self.next_seen_chunk.store(next, Ordering::Relaxed);
        }
        txn.commit()?;
        Ok(())
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The damaged file moved aside at open when nothing of it could be kept (the store starts
    /// empty), if any. [`Store::damage`] reports every damage, salvaged or not.
    pub fn moved_aside(&self) -> Option<&Path> {
        self.moved_aside.as_deref()
    }

    /// Damage found at open, if any.
    pub fn damage(&self) -> Option<&StoreDamage> {
        self.damage.as_ref()
    }

    /// Values skipped on restore as corrupt.
    pub fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    fn trusted<'a>(
        &self,
        what: &str,
        key: &dyn std::fmt::Debug,
        sealed: &'a [u8],
    ) -> Option<&'a [u8]> {
        let payload = open_envelope(sealed);
        if payload.is_none() {
            self.skipped.fetch_add(1, Ordering::Relaxed);
            tracing::error!(
                what,
                ?key,
                "a stored value failed its checksum and was skipped"
            );
        }
        payload
    }

    /// Counts a value whose envelope held but whose payload did not decode.
    pub fn count_undecodable(
        &self,
        what: &str,
        key: &dyn std::fmt::Debug,
        error: &dyn std::fmt::Display,
    ) {
        self.skipped.fetch_add(1, Ordering::Relaxed);
        tracing::error!(what, ?key, %error, "a stored value could not be decoded and was skipped");
    }

    /// Durably replaces a host's rule history.
    pub fn put_rules(&self, host: &str, history: &[u8]) -> Result<(), StoreError> {
        self.put_row(RULES, host, history)
    }

    /// Calls `restore` with every host's rule history that can be trusted, one row at a time (a
    /// million hosts' histories are never all in memory at once); returns how many.
    pub fn load_rules(&self, mut restore: impl FnMut(&str, &[u8])) -> Result<u64, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(RULES)?;
        let mut count = 0;
        for row in table.iter()? {
            let (host, value) = row?;
            if let Some(payload) = self.trusted("rules", &host.value(), value.value()) {
                restore(host.value(), payload);
                count += 1;
            }
        }
        Ok(count)
    }

    /// One host's rule history, when one was stored and can be trusted.
    pub fn host_rules(&self, host: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.row(RULES, host)
    }

    /// Durably replaces the mirror book.
    pub fn put_mirrors(&self, book: &[u8]) -> Result<(), StoreError> {
        self.put_row(MIRRORS, MIRRORS_KEY, book)
    }

    /// The mirror book, when one was stored and can be trusted.
    pub fn load_mirrors(&self) -> Result<Option<Vec<u8>>, StoreError> {
        self.row(MIRRORS, MIRRORS_KEY)
    }

    /// Durably replaces one row of a table keyed by name.
    fn put_row(&self, table: NamedTable, key: &str, payload: &[u8]) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        txn.open_table(table)?
            .insert(key, seal(payload).as_slice())?;
        txn.commit()?;
        Ok(())
    }

    /// One row of a table keyed by name, when it was stored and can be trusted.
    fn row(&self, table: NamedTable, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.db.begin_read()?;
        let rows = txn.open_table(table)?;
        let Some(value) = rows.get(key)? else {
            return Ok(None);
        };
        Ok(self
            .trusted(table.name(), &key, value.value())
            .map(<[u8]>::to_vec))
    }

    /// Durably applies sample changes in one transaction.
    pub fn apply_samples(&self, batch: &SampleBatch) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        {
            let mut samples = txn.open_table(SAMPLES)?;
            for (host, id) in &batch.delete {
                samples.remove((host.as_str(), *id))?;
            }
            let mut sealed = Vec::new();
            for sample in &batch.put {
                seal_into(&mut sealed, &sample.payload);
                samples.insert((sample.host.as_str(), sample.id), sealed.as_slice())?;
            }
            let mut templates = txn.open_table(TEMPLATES)?;
            for host in &batch.delete_templates {
                templates.remove(host.as_str())?;
            }
            for (host, model) in &batch.templates {
                seal_into(&mut sealed, model);
                templates.insert(host.as_str(), sealed.as_slice())?;
            }
            let mut state = txn.open_table(STATE)?;
            for key in &batch.delete_state {
                state.remove(key.as_str())?;
            }
            for (key, value) in &batch.state {
                seal_into(&mut sealed, value);
                state.insert(key.as_str(), sealed.as_slice())?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// Every sample that can be trusted.
    pub fn load_samples(&self) -> Result<Vec<StoredSample>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(SAMPLES)?;
        let mut out = Vec::new();
        for row in table.iter()? {
            let (key, value) = row?;
            let (host, id) = key.value();
            if let Some(payload) = self.trusted("sample", &(host, id), value.value()) {
                out.push(StoredSample {
                    host: host.to_owned(),
                    id,
                    payload: payload.to_vec(),
                });
            }
        }
        Ok(out)
    }

    /// Durably writes and deletes rows of the `state` table, in one transaction.
    pub fn put_state(
        &self,
        put: &[(String, Vec<u8>)],
        delete: &[String],
    ) -> Result<(), StoreError> {
        if put.is_empty() && delete.is_empty() {
            return Ok(());
        }
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        {
            let mut table = txn.open_table(STATE)?;
            for key in delete {
                table.remove(key.as_str())?;
            }
            for (key, value) in put {
                table.insert(key.as_str(), seal(value).as_slice())?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// Every `state` row that can be trusted (none in a store written before the table existed).
    pub fn load_state(&self) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = match txn.open_table(STATE) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(err) => return Err(err.into()),
        };
        let mut out = Vec::new();
        for row in table.iter()? {
            let (key, value) = row?;
            if let Some(payload) = self.trusted("state", &key.value(), value.value()) {
                out.push((key.value().to_owned(), payload.to_vec()));
            }
        }
        Ok(out)
    }

    /// Every template model that can be trusted.
    pub fn load_templates(&self) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(TEMPLATES)?;
        let mut out = Vec::new();
        for row in table.iter()? {
            let (host, value) = row?;
            if let Some(payload) = self.trusted("template", &host.value(), value.value()) {
                out.push((host.value().to_owned(), payload.to_vec()));
            }
        }
        Ok(out)
    }

    /// Durably appends seen-set keys.
    pub fn append_seen(&self, keys: &[u64]) -> Result<(), StoreError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        {
            let mut table = txn.open_table(SEEN)?;
            for chunk in keys.chunks(SEEN_CHUNK_KEYS) {
                let number = self.next_seen_chunk.fetch_add(1, Ordering::Relaxed);
                table.insert(number, seal(&pack(chunk)).as_slice())?;
            }
        }
        txn.commit()?;
        self.seen_keys
            .fetch_add(keys.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Calls `restore` for every persisted seen-set key, oldest first; returns how many.
    pub fn load_seen(&self, mut restore: impl FnMut(u64)) -> Result<u64, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(SEEN)?;
        let mut count = 0;
        for row in table.iter()? {
            let (chunk, value) = row?;
            if let Some(payload) = self.trusted("seen", &chunk.value(), value.value()) {
                for key in unpack(payload) {
                    restore(key);
                    count += 1;
                }
            }
        }
        self.seen_keys.store(count, Ordering::Relaxed);
        Ok(count)
    }

    /// Keys currently persisted in the `seen` table (including ones the live set has forgotten).
    pub fn seen_keys(&self) -> u64 {
        self.seen_keys.load(Ordering::Relaxed)
    }

    /// Replaces the persisted seen-set with exactly `keys` (compaction), in one transaction.
    pub fn rewrite_seen(&self, keys: &[u64]) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        {
            let mut table = txn.open_table(SEEN)?;
            table.retain(|_, _| false)?;
            for (number, chunk) in keys.chunks(SEEN_CHUNK_KEYS).enumerate() {
                table.insert(number as u64, seal(&pack(chunk)).as_slice())?;
            }
            self.next_seen_chunk.store(
                keys.len().div_ceil(SEEN_CHUNK_KEYS) as u64,
                Ordering::Relaxed,
            );
        }
        txn.commit()?;
        self.seen_keys.store(keys.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Drops the oldest seen chunks until at most `max_keys` keys remain persisted (bloom mode,
    /// whose keys cannot be listed for a compaction).
    pub fn trim_seen(&self, max_keys: u64) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        let mut remaining = self.seen_keys();
        {
            let mut table = txn.open_table(SEEN)?;
            while remaining > max_keys {
                let Some((chunk, value)) = table.pop_first()? else {
                    break;
                };
                let dropped =
                    open_envelope(value.value()).map_or(0, |payload| payload.len() / 8) as u64;
                drop(chunk);
                remaining = remaining.saturating_sub(dropped);
            }
            let _ = table.len()?;
        }
        txn.commit()?;
        self.seen_keys.store(remaining, Ordering::Relaxed);
        Ok(())
    }
}

/// Renames a damaged store file next to itself (`undust.redb.corrupt-<unix ms>`).
/// Opens or creates the redb file readable by its owner only: it holds the URLs of the crawl
/// (first occurrences, samples). A new file is created 0600 before redb initializes it (redb
/// initializes an empty file); an existing one readable by others is narrowed to 0600.
fn create(path: &Path) -> Result<Database, redb::DatabaseError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(PRIVATE_FILE_MODE)
            .open(path)
            .map_err(redb::StorageError::Io)?;
        let metadata = file.metadata().map_err(redb::StorageError::Io)?;
        if metadata.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(PRIVATE_FILE_MODE))
                .map_err(redb::StorageError::Io)?;
        }
    }
    Database::builder()
        .set_cache_size(STORE_CACHE_BYTES)
        .create(path)
}

/// Bytes of the store file redb keeps cached in memory. redb's own default (1 GiB) fills as the
/// file grows and then stays, on top of everything the sample budget bounds: with 150,000 hosts
/// of a few pages it was most of the sidecar's 1.49 GiB (BENCHMARKS.md, "Memory per host and per
/// sample"). The store is written in group commits and read in full once, at startup, so a
/// small cache costs little.
pub const STORE_CACHE_BYTES: usize = 32 << 20;

/// Mode of the files undust creates in its data directory (the store, generated tokens).
pub const PRIVATE_FILE_MODE: u32 = 0o600;
/// Mode of a data directory undust creates.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Creates the data directory (and missing parents) readable by its owner only. An existing
/// directory is left as the operator made it.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, PRIVATE_DIR_MODE);
    builder.create(dir)
}

fn move_aside(dir: &Path, path: &Path, reason: &str) -> Result<PathBuf, StoreError> {
    let aside = dir.join(format!("{FILE_NAME}.corrupt-{}", unix_ms()));
    std::fs::rename(path, &aside).map_err(|io| StoreError::Io {
        path: path.to_owned(),
        message: format!("{reason}; moving it aside failed: {io}"),
    })?;
    Ok(aside)
}

fn pack(keys: &[u64]) -> Vec<u8> {
    keys.iter().flat_map(|key| key.to_le_bytes()).collect()
}

fn unpack(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(8)
        .filter_map(|chunk| chunk.try_into().ok().map(u64::from_le_bytes))
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_across_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let store = Store::open(dir.path()).expect("open");
            store.put_rules("example.com", b"{\"v\":1}").expect("rules");
            let batch = SampleBatch {
                put: vec![
                    StoredSample {
                        host: "a.com".into(),
                        id: 1,
                        payload: b"one".to_vec(),
                    },
                    StoredSample {
                        host: "a.com".into(),
                        id: 2,
                        payload: b"two".to_vec(),
                    },
                ],
                delete: vec![],
                templates: vec![("a.com".into(), b"model".to_vec())],
                delete_templates: vec![],
                state: vec![
                    ("trigger/a.com".into(), b"t".to_vec()),
                    ("trigger/b.com".into(), b"u".to_vec()),
                ],
                delete_state: vec![],
            };
            store.apply_samples(&batch).expect("samples");
            store
                .apply_samples(&SampleBatch {
                    delete: vec![("a.com".into(), 1)],
                    delete_state: vec!["trigger/b.com".into()],
                    ..SampleBatch::default()
                })
                .expect("delete");
            store.append_seen(&[1, 2, 3]).expect("seen");
            store.append_seen(&[4]).expect("seen");
            assert_eq!(store.load_mirrors().expect("mirrors"), None);
            store.put_mirrors(b"{\"m\":0}").expect("mirrors");
            store.put_mirrors(b"{\"m\":1}").expect("mirrors");
        }
        let store = Store::open(dir.path()).expect("reopen");
        assert_eq!(
            store.load_mirrors().expect("mirrors").as_deref(),
            Some(b"{\"m\":1}".as_slice())
        );
        let mut rules = Vec::new();
        let restored = store
            .load_rules(|host, history| rules.push((host.to_owned(), history.to_vec())))
            .expect("rules");
        assert_eq!(restored, 1);
        assert_eq!(
            rules,
            vec![("example.com".to_owned(), b"{\"v\":1}".to_vec())]
        );
        assert_eq!(
            store.host_rules("example.com").expect("rules").as_deref(),
            Some(b"{\"v\":1}".as_slice())
        );
        assert_eq!(store.host_rules("other.com").expect("rules"), None);
        let samples = store.load_samples().expect("samples");
        assert_eq!(samples.len(), 1);
        assert_eq!(
            (samples[0].id, samples[0].payload.as_slice()),
            (2, b"two".as_slice())
        );
        assert_eq!(store.load_templates().expect("templates").len(), 1);
        assert_eq!(
            store.load_state().expect("state"),
            vec![("trigger/a.com".to_owned(), b"t".to_vec())]
        );
        let mut keys = Vec::new();
        assert_eq!(store.load_seen(|key| keys.push(key)).expect("seen"), 4);
        assert_eq!(keys, vec![1, 2, 3, 4]);
        store.rewrite_seen(&[9]).expect("rewrite");
        store.append_seen(&[10]).expect("append after rewrite");
        let mut keys = Vec::new();
        store.load_seen(|key| keys.push(key)).expect("seen");
        assert_eq!(keys, vec![9, 10]);
        store.trim_seen(1).expect("trim");
        let mut keys = Vec::new();
        store.load_seen(|key| keys.push(key)).expect("seen");
        assert_eq!(keys, vec![10]);
    }

    #[test]
    fn corrupt_values_are_skipped_not_fatal() {
        assert_eq!(
            open_envelope(&seal(b"payload")),
            Some(b"payload".as_slice())
        );
        let mut broken = seal(b"payload");
        let last = broken.len() - 1;
        broken[last] ^= 0xFF;
        assert_eq!(open_envelope(&broken), None);
        assert_eq!(open_envelope(&[]), None);
        assert_eq!(open_envelope(&[ENVELOPE_VERSION, 1, 2]), None);
    }

    #[test]
    fn an_unreadable_file_is_moved_aside_and_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(FILE_NAME),
            b"this is not a redb file, just garbage bytes",
        )
        .expect("write");
        let store = Store::open(dir.path()).expect("open despite corruption");
        let aside = store.moved_aside().expect("moved aside").to_owned();
        assert!(aside.exists(), "the corrupt file is kept for inspection");
        assert_eq!(store.load_rules(|_, _| {}).expect("rules"), 0);
    }
}
