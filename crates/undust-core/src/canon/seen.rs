//! The seen-set: canonical forms the frontier already enqueued, in bounded memory.
//!
//! Entries are 64-bit xxh3 hashes of the canonical form (the dedup key). With n entries the chance
//! that two different canonical forms share a hash anywhere in the set is about n²/2⁶⁵: 1 in 100,000
//! at 20 million entries, an acceptable price for 8 bytes per key.
//!
//! Two modes bound memory differently once the configured number of entries is reached:
//!
//! - **exact** (default): sharded hash sets of hashes, each shard with a *current* and a *previous*
//!   generation. When the current generation of a shard holds half the shard's share of the limit,
//!   the previous generation is dropped and the current one takes its place. A hash found in the
//!   previous generation is copied into the current one, so canonical forms that keep being
//!   discovered survive rotation; only forms not seen for a whole generation are forgotten. Being
//!   forgotten makes an old URL NEW again (a re-crawl), never makes a new URL DUPLICATE.
//! - **bloom**: a stack of up to [`BLOOM_LAYERS`] Bloom filters, each sized for a quarter of the
//!   limit at the configured false-positive rate; a full layer starts a new one and the oldest is
//!   dropped beyond the stack depth. About 2.4 bytes per entry at 1e-4, but a never-seen URL is
//!   answered DUPLICATE with probability up to `BLOOM_LAYERS × rate`.
//!
//! Check-and-insert is atomic per key in both modes (a shard or stripe lock), so two concurrent
//! batches carrying the same canonical form get exactly one NEW.
//!
//! Beside the set, a bounded FIFO cache remembers the URL first enqueued for each canonical form, so
//! a DUPLICATE can tell the frontier which URL it already has.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

/// How the seen-set behaves once it is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum SeenSetMode {
    /// Exact 64-bit hashes; when full, the oldest generation (half the limit) is forgotten, so an
    /// old URL may be answered NEW again but a new URL is never answered DUPLICATE by mistake.
    Exact,
    /// Layered Bloom filters in bounded memory: never forgets, but answers DUPLICATE for a never-seen
    /// URL with the configured false-positive probability.
    Bloom,
}

impl SeenSetMode {
    /// The name used in flags, stats and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            SeenSetMode::Exact => "exact",
            SeenSetMode::Bloom => "bloom",
        }
    }
}

/// Validated configuration of the seen-set.
#[derive(Debug, Clone)]
pub struct SeenSetConfig {
    pub mode: SeenSetMode,
    pub max_entries: u64,
    pub bloom_fp_rate: f64,
    pub first_occurrence_cache: usize,
}

/// Shards of the exact set and of the first-occurrence cache (a power of two).
const SHARDS: usize = 64;
/// Bloom layers kept in bloom mode.
pub const BLOOM_LAYERS: usize = 4;

/// The dedup key of a canonical form.
pub fn key_of(canonical: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(canonical.as_bytes())
}

/// The hash-set hasher for keys that already are uniform 64-bit hashes. The shard is chosen from
/// the key's top bits, so the bits hashbrown uses inside a shard are remixed by a multiplication
/// (otherwise every key of a shard would share its control bits).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
}

type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

fn shard_of(key: u64) -> usize {
    (key >> 58) as usize & (SHARDS - 1)
}

/// The answer for one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Not seen before (and recorded, unless it was a dry run).
    New,
    /// Seen before.
    Duplicate,
}

struct ExactShard {
    current: KeySet,
    previous: KeySet,
    /// Keys recorded since the last [`SeenSet::drain_journal`], for persistence.
    journal: Vec<u64>,
}

struct ExactSet {
    shards: Vec<Mutex<ExactShard>>,
    /// Entries the current generation of a shard may hold before it rotates.
    generation_limit: usize,
}

impl ExactSet {
    fn new(max_entries: u64) -> Self {
        let per_shard = (max_entries / SHARDS as u64).max(2);
        ExactSet {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(ExactShard {
                        current: KeySet::default(),
                        previous: KeySet::default(),
                        journal: Vec::new(),
                    })
                })
                .collect(),
            generation_limit: usize::try_from(per_shard / 2).unwrap_or(usize::MAX),
        }
    }

    /// Returns whether the key was present, inserting it when `record`, and whether a generation
    /// was dropped to make room.
    fn check(&self, key: u64, record: bool, journal: bool) -> (bool, bool) {
        let mut shard = self.shards[shard_of(key)].lock();
        if !record {
            return (
                shard.current.contains(&key) || shard.previous.contains(&key),
                false,
            );
        }
        let mut rotated = false;
        if shard.current.len() >= self.generation_limit && !shard.current.contains(&key) {
            let current = std::mem::take(&mut shard.current);
            shard.previous = current;
            rotated = true;
        }
        // One probe answers "already current" and records the key otherwise; a key found in the
        // previous generation is thereby moved forward, so live keys survive rotation.
        if !shard.current.insert(key) {
            return (true, rotated);
        }
        let in_previous = !shard.previous.is_empty() && shard.previous.contains(&key);
        if journal && !in_previous {
            shard.journal.push(key);
        }
        (in_previous, rotated)
    }

    fn len(&self) -> u64 {
        self.shards
            .iter()
            .map(|shard| {
                let shard = shard.lock();
                (shard.current.len() + shard.previous.len()) as u64
            })
            .sum()
    }

    fn drain_journal(&self, out: &mut Vec<u64>) {
        for shard in &self.shards {
            out.append(&mut shard.lock().journal);
        }
    }

    fn keys(&self) -> Vec<u64> {
        let mut keys = Vec::new();
        for shard in &self.shards {
            let shard = shard.lock();
            keys.extend(shard.previous.iter().copied());
            keys.extend(shard.current.iter().copied());
        }
        keys
    }
}

struct BloomLayer {
    bits: Vec<AtomicU64>,
    /// Number of bits (`bits.len() * 64`).
    bit_count: u64,
    hashes: u32,
    inserted: AtomicU64,
    capacity: u64,
}

impl BloomLayer {
    fn new(capacity: u64, fp_rate: f64) -> Self {
        let ln2 = std::f64::consts::LN_2;
        let bits_per_entry = -(fp_rate.ln()) / (ln2 * ln2);
        let bit_count = ((capacity as f64 * bits_per_entry).ceil() as u64).max(64);
        let words = bit_count.div_ceil(64);
        let hashes = ((bits_per_entry * ln2).round() as u32).clamp(1, 30);
        BloomLayer {
            bits: (0..words).map(|_| AtomicU64::new(0)).collect(),
            bit_count: words * 64,
            hashes,
            inserted: AtomicU64::new(0),
            capacity,
        }
    }

    /// Bit positions of a key by double hashing (Kirsch and Mitzenmacher).
    fn positions(&self, key: u64) -> impl Iterator<Item = u64> + '_ {
        let h1 = key;
        let h2 = key.rotate_left(32).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..u64::from(self.hashes))
            .map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % self.bit_count)
    }

    fn contains(&self, key: u64) -> bool {
        self.positions(key).all(|bit| {
            self.bits[(bit / 64) as usize].load(Ordering::Relaxed) & (1 << (bit % 64)) != 0
        })
    }

    fn insert(&self, key: u64) {
        for bit in self.positions(key) {
            self.bits[(bit / 64) as usize].fetch_or(1 << (bit % 64), Ordering::Relaxed);
        }
        self.inserted.fetch_add(1, Ordering::Relaxed);
    }
}

struct BloomSet {
    layers: RwLock<VecDeque<BloomLayer>>,
    layer_capacity: u64,
    fp_rate: f64,
    /// Makes check-then-insert atomic for equal keys; each stripe journals the keys it recorded.
    stripes: Vec<Mutex<Vec<u64>>>,
}

impl BloomSet {
    fn new(max_entries: u64, fp_rate: f64) -> Self {
        let layer_capacity = (max_entries / BLOOM_LAYERS as u64).max(1);
        let mut layers = VecDeque::new();
        layers.push_back(BloomLayer::new(layer_capacity, fp_rate));
        BloomSet {
            layers: RwLock::new(layers),
            layer_capacity,
            fp_rate,
            stripes: (0..SHARDS).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    fn check(&self, key: u64, record: bool, journal: bool) -> (bool, bool) {
        let mut stripe = self.stripes[shard_of(key)].lock();
        let present = self.layers.read().iter().any(|layer| layer.contains(key));
        if present || !record {
            return (present, false);
        }
        let mut evicted = false;
        let full = self
            .layers
            .read()
            .back()
            .is_none_or(|layer| layer.inserted.load(Ordering::Relaxed) >= layer.capacity);
        if full {
            let mut layers = self.layers.write();
            // Another thread may have rotated between the read and the write lock.
            if layers
                .back()
                .is_none_or(|layer| layer.inserted.load(Ordering::Relaxed) >= layer.capacity)
            {
                layers.push_back(BloomLayer::new(self.layer_capacity, self.fp_rate));
                if layers.len() > BLOOM_LAYERS {
                    layers.pop_front();
                    evicted = true;
                }
            }
        }
        if let Some(layer) = self.layers.read().back() {
            layer.insert(key);
        }
        if journal {
            stripe.push(key);
        }
        (false, evicted)
    }

    fn drain_journal(&self, out: &mut Vec<u64>) {
        for stripe in &self.stripes {
            out.append(&mut stripe.lock());
        }
    }

    fn len(&self) -> u64 {
        self.layers
            .read()
            .iter()
            .map(|layer| layer.inserted.load(Ordering::Relaxed))
            .sum()
    }
}

enum Mode {
    Exact(ExactSet),
    Bloom(BloomSet),
}

/// One shard of [`FirstOccurrences`]: the map and its insertion order.
type FirstShard = (
    HashMap<u64, Box<str>, BuildHasherDefault<KeyHasher>>,
    VecDeque<u64>,
);

/// A bounded FIFO map from a canonical form's key to the URL first enqueued for it.
struct FirstOccurrences {
    shards: Vec<Mutex<FirstShard>>,
    per_shard: usize,
}

impl FirstOccurrences {
    fn new(capacity: usize) -> Self {
        FirstOccurrences {
            shards: (0..SHARDS)
                .map(|_| Mutex::new((HashMap::default(), VecDeque::new())))
                .collect(),
            per_shard: capacity.div_ceil(SHARDS),
        }
    }

    fn remember(&self, key: u64, url: &str) {
        if self.per_shard == 0 {
            return;
        }
        let mut guard = self.shards[shard_of(key)].lock();
        let (map, order) = &mut *guard;
        if map.insert(key, url.into()).is_none() {
            order.push_back(key);
        }
        while order.len() > self.per_shard {
            if let Some(oldest) = order.pop_front() {
                map.remove(&oldest);
            }
        }
    }

    fn get(&self, key: u64) -> Option<String> {
        self.shards[shard_of(key)]
            .lock()
            .0
            .get(&key)
            .map(|url| url.to_string())
    }
}

/// The seen-set with its first-occurrence cache. Cheap to share behind an `Arc`.
pub struct SeenSet {
    mode: Mode,
    /// Whether recorded keys are journaled for persistence (the sidecar drains the journal).
    journaling: bool,
    first: FirstOccurrences,
    evictions: AtomicU64,
}

impl SeenSet {
    /// An empty seen-set bounded as configured.
    pub fn new(config: &SeenSetConfig) -> Self {
        let mode = match config.mode {
            SeenSetMode::Exact => Mode::Exact(ExactSet::new(config.max_entries)),
            SeenSetMode::Bloom => {
                Mode::Bloom(BloomSet::new(config.max_entries, config.bloom_fp_rate))
            }
        };
        SeenSet {
            mode,
            journaling: false,
            first: FirstOccurrences::new(config.first_occurrence_cache),
            evictions: AtomicU64::new(0),
        }
    }

    /// The same, journaling every recorded key until [`SeenSet::drain_journal`] takes it.
    pub fn journaled(config: &SeenSetConfig) -> Self {
        SeenSet {
            journaling: true,
            ..SeenSet::new(config)
        }
    }

    /// The mode's name (`exact` or `bloom`).
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            Mode::Exact(_) => SeenSetMode::Exact.as_str(),
            Mode::Bloom(_) => SeenSetMode::Bloom.as_str(),
        }
    }

    /// Looks a key up and, when `record` is true and it is new, records it. `first_url`, when
    /// given, is remembered as the URL the frontier enqueued for this key (callers pass it only
    /// when it differs from the canonical form itself, which needs no remembering).
    pub fn check(&self, key: u64, record: bool, first_url: Option<&str>) -> Seen {
        let (present, evicted) = match &self.mode {
            Mode::Exact(set) => set.check(key, record, self.journaling),
            Mode::Bloom(set) => set.check(key, record, self.journaling),
        };
        if evicted {
            self.evictions.fetch_add(1, Ordering::Relaxed);
        }
        if present {
            Seen::Duplicate
        } else {
            if let (true, Some(url)) = (record, first_url) {
                self.first.remember(key, url);
            }
            Seen::New
        }
    }

    /// Records a key without asking (restoring persisted state).
    pub fn restore(&self, key: u64) {
        let _ = match &self.mode {
            Mode::Exact(set) => set.check(key, true, false),
            Mode::Bloom(set) => set.check(key, true, false),
        };
    }

    /// Takes the keys recorded since the last call (empty unless journaling).
    pub fn drain_journal(&self) -> Vec<u64> {
        let mut keys = Vec::new();
        match &self.mode {
            Mode::Exact(set) => set.drain_journal(&mut keys),
            Mode::Bloom(set) => set.drain_journal(&mut keys),
        }
        keys
    }

    /// The URL first enqueued for a key, if still remembered.
    pub fn first_occurrence(&self, key: u64) -> Option<String> {
        self.first.get(key)
    }

    /// Entries held (in bloom mode: insertions into the live layers).
    pub fn len(&self) -> u64 {
        match &self.mode {
            Mode::Exact(set) => set.len(),
            Mode::Bloom(set) => set.len(),
        }
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Generations or layers dropped so far to stay in bound.
    pub fn evictions(&self) -> u64 {
        self.evictions.load(Ordering::Relaxed)
    }

    /// Every key held, for persistence. `None` in bloom mode, whose keys are not recoverable.
    pub fn keys(&self) -> Option<Vec<u64>> {
        match &self.mode {
            Mode::Exact(set) => Some(set.keys()),
            Mode::Bloom(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mode: SeenSetMode, max_entries: u64) -> SeenSetConfig {
        SeenSetConfig {
            mode,
            max_entries,
            bloom_fp_rate: 0.001,
            first_occurrence_cache: 1_000,
        }
    }

    #[test]
    fn exact_mode_answers_new_then_duplicate_and_dry_run_records_nothing() {
        let seen = SeenSet::new(&config(SeenSetMode::Exact, 1_000_000));
        let key = key_of("http://example.com/a");
        assert_eq!(seen.check(key, false, Some("x")), Seen::New);
        assert_eq!(
            seen.check(key, false, Some("x")),
            Seen::New,
            "a dry run must not record"
        );
        assert_eq!(
            seen.check(key, true, Some("http://example.com/a?utm_source=x")),
            Seen::New
        );
        assert_eq!(seen.check(key, true, Some("y")), Seen::Duplicate);
        assert_eq!(
            seen.first_occurrence(key).as_deref(),
            Some("http://example.com/a?utm_source=x")
        );
        assert_eq!(seen.len(), 1);
    }

    #[test]
    fn exact_mode_stays_within_its_bound_and_keeps_live_keys() {
        let max = 64 * 100;
        let seen = SeenSet::new(&config(SeenSetMode::Exact, max));
        let hot = key_of("hot");
        for i in 0..100_000u64 {
            seen.check(key_of(&i.to_string()), true, None);
            if i % 500 == 0 {
                seen.check(hot, true, None);
            }
        }
        assert!(
            seen.len() <= max,
            "{} entries exceed the bound {max}",
            seen.len()
        );
        assert!(seen.evictions() > 0);
        assert_eq!(
            seen.check(hot, false, None),
            Seen::Duplicate,
            "a key seen every generation survives"
        );
    }

    #[test]
    fn the_journal_holds_each_recorded_key_once() {
        for mode in [SeenSetMode::Exact, SeenSetMode::Bloom] {
            let seen = SeenSet::journaled(&config(mode, 100_000));
            seen.check(1, true, None);
            seen.check(1, true, None);
            seen.check(2, false, None);
            seen.restore(3);
            seen.check(4, true, None);
            let mut keys = seen.drain_journal();
            keys.sort_unstable();
            assert_eq!(keys, vec![1, 4], "{mode:?}");
            assert!(seen.drain_journal().is_empty());
        }
    }

    #[test]
    fn bloom_mode_has_no_false_negatives_and_few_false_positives() {
        let seen = SeenSet::new(&config(SeenSetMode::Bloom, 40_000));
        for i in 0..10_000u64 {
            assert_eq!(seen.check(key_of(&format!("a{i}")), true, None), Seen::New);
        }
        for i in 0..10_000u64 {
            assert_eq!(
                seen.check(key_of(&format!("a{i}")), false, None),
                Seen::Duplicate
            );
        }
        let false_positives = (0..10_000u64)
            .filter(|i| seen.check(key_of(&format!("b{i}")), false, None) == Seen::Duplicate)
            .count();
        assert!(
            false_positives < 60,
            "{false_positives} false positives out of 10000 at 0.1% per layer"
        );
    }

    #[test]
    fn bloom_mode_drops_its_oldest_layer_when_full() {
        let seen = SeenSet::new(&config(SeenSetMode::Bloom, 4_000));
        for i in 0..20_000u64 {
            seen.check(key_of(&i.to_string()), true, None);
        }
        assert!(seen.evictions() >= 1);
        assert!(seen.len() <= 4_000 + 1_000);
    }

    #[test]
    fn concurrent_inserts_of_one_key_yield_exactly_one_new() {
        for mode in [SeenSetMode::Exact, SeenSetMode::Bloom] {
            let seen = std::sync::Arc::new(SeenSet::new(&config(mode, 100_000)));
            let news: usize = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..4)
                    .map(|_| {
                        let seen = seen.clone();
                        scope.spawn(move || {
                            (0..1_000u64)
                                .filter(|i| {
                                    seen.check(key_of(&i.to_string()), true, None) == Seen::New
                                })
                                .count()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
            });
            assert_eq!(news, 1_000, "{mode:?}");
        }
    }
}
