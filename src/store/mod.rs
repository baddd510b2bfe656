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
//! | `seen` | chunk number | packed 64-bit keys of canonical forms | every flush interval, and rewritten whole on compaction |
//!
//! Every value is wrapped in an envelope (format byte, xxh3 checksum, payload). A value whose
//! checksum or decoding fails is skipped, logged and counted, and the rest is restored: the sidecar
//! starts with everything it can trust. A file redb itself cannot open is moved aside (never
//! deleted) with an error naming both paths, and the sidecar starts with an empty store.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use redb::{
    Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
};

const RULES: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("rules");
const SAMPLES: TableDefinition<'_, (&str, u64), &[u8]> = TableDefinition::new("samples");
const TEMPLATES: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("templates");
const SEEN: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("seen");

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
    sealed.push(ENVELOPE_VERSION);
    sealed.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(payload).to_le_bytes());
    sealed.extend_from_slice(payload);
    sealed
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
}

impl SampleBatch {
    pub fn is_empty(&self) -> bool {
        self.put.is_empty()
            && self.delete.is_empty()
            && self.templates.is_empty()
            && self.delete_templates.is_empty()
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
    /// Values skipped on restore because they failed their checksum or decoding.
    skipped: AtomicU64,
    /// Next `seen` chunk number, and keys persisted in the table.
    next_seen_chunk: AtomicU64,
    seen_keys: AtomicU64,
}

impl Store {
    /// Opens (or creates) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let path = dir.join(FILE_NAME);
        let (db, moved_aside) = match Database::create(&path) {
            Ok(db) => (db, None),
            Err(
                err @ (redb::DatabaseError::DatabaseAlreadyOpen
                | redb::DatabaseError::UpgradeRequired(_)),
            ) => return Err(err.into()),
            Err(err) => {
                let aside = dir.join(format!("{FILE_NAME}.corrupt-{}", unix_ms()));
                std::fs::rename(&path, &aside).map_err(|io| StoreError::Io {
                    path: path.clone(),
                    message: format!("{err}; moving it aside failed: {io}"),
                })?;
                tracing::error!(
                    store = %path.display(),
                    moved_to = %aside.display(),
                    error = %err,
                    "the store could not be opened; it was moved aside and undust starts with an empty store"
                );
                (Database::create(&path)?, Some(aside))
            }
        };
        let store = Store {
            db,
            path,
            moved_aside,
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

    /// The unreadable file moved aside at open, if any.
    pub fn moved_aside(&self) -> Option<&Path> {
        self.moved_aside.as_deref()
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
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        txn.open_table(RULES)?
            .insert(host, seal(history).as_slice())?;
        txn.commit()?;
        Ok(())
    }

    /// Every host's rule history that can be trusted.
    pub fn load_rules(&self) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(RULES)?;
        let mut out = Vec::new();
        for row in table.iter()? {
            let (host, value) = row?;
            if let Some(payload) = self.trusted("rules", &host.value(), value.value()) {
                out.push((host.value().to_owned(), payload.to_vec()));
            }
        }
        Ok(out)
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
            for sample in &batch.put {
                samples.insert(
                    (sample.host.as_str(), sample.id),
                    seal(&sample.payload).as_slice(),
                )?;
            }
            let mut templates = txn.open_table(TEMPLATES)?;
            for host in &batch.delete_templates {
                templates.remove(host.as_str())?;
            }
            for (host, model) in &batch.templates {
                templates.insert(host.as_str(), seal(model).as_slice())?;
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
            };
            store.apply_samples(&batch).expect("samples");
            store
                .apply_samples(&SampleBatch {
                    delete: vec![("a.com".into(), 1)],
                    ..SampleBatch::default()
                })
                .expect("delete");
            store.append_seen(&[1, 2, 3]).expect("seen");
            store.append_seen(&[4]).expect("seen");
        }
        let store = Store::open(dir.path()).expect("reopen");
        assert_eq!(
            store.load_rules().expect("rules"),
            vec![("example.com".to_owned(), b"{\"v\":1}".to_vec())]
        );
        let samples = store.load_samples().expect("samples");
        assert_eq!(samples.len(), 1);
        assert_eq!(
            (samples[0].id, samples[0].payload.as_slice()),
            (2, b"two".as_slice())
        );
        assert_eq!(store.load_templates().expect("templates").len(), 1);
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
        assert!(store.load_rules().expect("rules").is_empty());
    }
}
