//! Near-duplicate index over 64-bit simhash fingerprints: which stored fingerprints lie within
//! Hamming distance `k` of a query?
//!
//! # Method
//!
//! Permuted tables after Manku, Jain and Das Sarma, "Detecting near-duplicates for web crawling"
//! (WWW 2007). The 64 bits are split into `b` contiguous blocks. Two fingerprints that differ in at
//! most `k` bits differ in at most `k` blocks, so (pigeonhole) at least `b - k` blocks are identical.
//! There is one table per choice of `b - k` blocks (`C(b, k)` tables); a table is keyed by the bits
//! of its chosen blocks, which is what the paper's "permuted leading bits" are. Only exact equality
//! of the key is ever needed, so instead of permuting and sorting, each table hashes the masked bits
//! into chained buckets (same candidates, O(1) instead of O(log n) per table, and O(1) inserts
//! and removals where a sorted array needs O(n)). Open addressing and a sorted run plus delta
//! were also measured; both were slower at 10^6 (longer probe runs, or an extra miss per table).
//! Every candidate is verified with a popcount of the XOR, so the answer is exact: every stored
//! fingerprint within `k` is reported once, nothing beyond `k` is ever reported.
//!
//! # Layout chosen from `k`
//!
//! Query cost is roughly `tables × (P + n / 2^key_bits)`: one bucket probe per table (at scale
//! a cache miss) plus the random candidates whose key hashes to the probed bucket (each also a
//! miss, in a chain). With `P` ([`PROBE_COST`]) = 2, `n` = [`DESIGN_SIZE`] = 2^20 (the largest
//! per-host index we design for) and `key_bits` the narrowest key over all tables, the layout with
//! the lowest cost and at most [`MAX_TABLES`] tables is used (memory grows with the table count).
//! The benchmark checks the choice for k = 3 at 10^6 fingerprints: 4 tables (16-bit keys, ~16
//! random candidates per table) is over 10x slower than the chosen 10, and 20 tables is about
//! 1.5–2x slower (more misses, nearly twice the memory).
//!
//! | k | blocks | tables | min key bits |
//! |---|--------|--------|--------------|
//! | 0 | 1      | 1      | 64           |
//! | 1 | 2      | 2      | 32           |
//! | 2 | 3      | 3      | 21           |
//! | 3 | 5      | 10     | 25           |
//! | 4 | 6      | 15     | 20           |
//! | 5 | 8      | 56     | 24           |
//! | 6 | 9      | 84     | 21           |
//! | 7 | 10     | 120    | 18           |
//! | 8 | 11     | 165    | 16           |
//!
//! (A unit test recomputes this table, so it cannot drift from the code.) Larger `k` is refused
//! by [`SimhashIndex::try_new`]: 9+ bits of 64 is no longer "near-duplicate" for simhash and the
//! table count explodes.
//!
//! # Memory
//!
//! Per fingerprint: 8 bytes (fingerprint) + 4 (id) + 4 per table (chain link) + 8 to 16 per table
//! (bucket heads; the bucket array doubles when the load passes 1/2) + about 10–20 for the
//! id → slot map. For the default `k = 3` (10 tables): 155 bytes per fingerprint measured at
//! 10^6 ([`SimhashIndex::memory_bytes`]); a per-host sample of a few thousand pages costs well
//! under a megabyte. Removed slots are reused.
//!
//! # Updates and queries
//!
//! Inserts and removals are O(tables) (plus an amortised O(tables) when the bucket array doubles);
//! a removal unlinks the slot from one short chain per table. A query reads every table's bucket
//! head, then every chain's first fingerprint, before walking any chain, so the cache misses of
//! the tables overlap. Query time depends on the number of tables and the near-duplicates found,
//! not on the number of stored fingerprints.

use std::collections::HashMap;

use thiserror::Error;

/// Default Hamming distance for "near-duplicate" (Manku et al. found k = 3 right for 64-bit
/// simhash on web pages).
pub const DEFAULT_MAX_DISTANCE: u32 = 3;
/// Largest supported Hamming distance.
pub const MAX_SUPPORTED_DISTANCE: u32 = 8;
/// Index size the layout is optimised for (fingerprints per host index).
pub const DESIGN_SIZE: u64 = 1 << 20;
/// Marks the end of a bucket chain.
const NIL: u32 = u32::MAX;
/// Initial bucket bits per table (16 buckets): small hosts stay small.
const INITIAL_BUCKET_BITS: u32 = 4;
/// Layouts with at most this many tables get the overlapped first loads in queries.
const PREFETCH_TABLES: usize = 16;
/// Cost of one table probe in units of one candidate check (see the module docs).
pub const PROBE_COST: f64 = 2.0;
/// Upper bound on the number of tables a layout may use (memory guard).
pub const MAX_TABLES: u64 = 200;

/// Errors building an index.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum IndexError {
    /// The requested Hamming distance is above [`MAX_SUPPORTED_DISTANCE`].
    #[error("max distance {requested} is above the supported maximum {max}")]
    DistanceTooLarge {
        /// What was asked for.
        requested: u32,
        /// The largest supported distance.
        max: u32,
    },
    /// A block count that cannot serve the distance (needs `k < blocks <= 64` and at most
    /// [`MAX_TABLES`] tables).
    #[error("{blocks} blocks cannot serve distance {k} (need k < blocks <= 64, at most {MAX_TABLES} tables)")]
    BadBlocks {
        /// The distance.
        k: u32,
        /// The block count asked for.
        blocks: u32,
    },
}

/// The block/table layout used for a given `k`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Number of contiguous bit blocks the fingerprint is split into.
    pub blocks: u32,
    /// One mask per table: the bits of the `blocks - k` blocks the table is keyed on.
    pub masks: Vec<u64>,
    /// The narrowest key (in bits) over all tables.
    pub min_key_bits: u32,
}

impl Layout {
    /// The layout for Hamming distance `k` (see the module docs for the rule).
    pub fn for_distance(k: u32) -> Result<Self, IndexError> {
        if k > MAX_SUPPORTED_DISTANCE {
            return Err(IndexError::DistanceTooLarge {
                requested: k,
                max: MAX_SUPPORTED_DISTANCE,
            });
        }
        let mut best: Option<(f64, u32)> = None;
        for b in (k + 1)..=(k + 12).min(64) {
            let tables = binomial(u64::from(b), u64::from(k));
            if tables > MAX_TABLES {
                continue;
            }
            let key_bits = min_key_bits(b, k);
            let random = DESIGN_SIZE as f64 / 2f64.powi(key_bits as i32);
            let cost = tables as f64 * (PROBE_COST + random);
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, b));
            }
        }
        // k + 1 blocks always gives C(k+1, k) = k + 1 <= MAX_TABLES tables, so `best` is set;
        // fall back to it anyway rather than unwrap.
        Self::with_blocks(k, best.map_or(k + 1, |(_, b)| b))
    }

    /// The layout for Hamming distance `k` with an explicit number of blocks (`k + 1 ..= 64`,
    /// at most [`MAX_TABLES`] tables): fewer blocks use less memory, more blocks give wider
    /// keys (fewer random candidates per probe).
    pub fn with_blocks(k: u32, blocks: u32) -> Result<Self, IndexError> {
        if k > MAX_SUPPORTED_DISTANCE {
            return Err(IndexError::DistanceTooLarge {
                requested: k,
                max: MAX_SUPPORTED_DISTANCE,
            });
        }
        if blocks <= k || blocks > 64 || binomial(u64::from(blocks), u64::from(k)) > MAX_TABLES {
            return Err(IndexError::BadBlocks { k, blocks });
        }
        let ranges = block_ranges(blocks);
        let keep = (blocks - k) as usize;
        let mut masks = Vec::new();
        for_each_combination(blocks as usize, keep, &mut |combo| {
            let mask = combo.iter().fold(0u64, |m, &i| m | ranges[i]);
            masks.push(mask);
        });
        Ok(Layout {
            blocks,
            masks,
            min_key_bits: min_key_bits(blocks, k),
        })
    }

    /// Number of tables.
    pub fn tables(&self) -> usize {
        self.masks.len()
    }
}

/// Bit masks of `b` contiguous blocks covering all 64 bits, sizes differing by at most one.
fn block_ranges(b: u32) -> Vec<u64> {
    let base = 64 / b;
    let extra = 64 % b;
    let mut start = 0u32;
    let mut out = Vec::with_capacity(b as usize);
    for i in 0..b {
        let len = base + u32::from(i < extra);
        let mask = if len == 64 {
            u64::MAX
        } else {
            ((1u64 << len) - 1) << start
        };
        out.push(mask);
        start += len;
    }
    out
}

/// Narrowest key: 64 minus the `k` largest blocks.
fn min_key_bits(b: u32, k: u32) -> u32 {
    let base = 64 / b;
    let extra = 64 % b;
    let large = k.min(extra);
    64 - large * (base + 1) - (k - large) * base
}

fn binomial(n: u64, k: u64) -> u64 {
    let k = k.min(n - k.min(n));
    (0..k).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

fn for_each_combination(n: usize, k: usize, f: &mut dyn FnMut(&[usize])) {
    fn rec(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, f: &mut dyn FnMut(&[usize])) {
        if cur.len() == k {
            f(cur);
            return;
        }
        for i in start..n {
            if n - i < k - cur.len() {
                break;
            }
            cur.push(i);
            rec(i + 1, n, k, cur, f);
            cur.pop();
        }
    }
    rec(0, n, k, &mut Vec::with_capacity(k), f);
}

/// Bucket of a masked key: a SplitMix64 finalizer so that keys which differ only in a few bits
/// (near-duplicates of different pages) spread over all buckets.
#[inline]
fn bucket_of(masked: u64, bits: u32) -> usize {
    let mut x = masked;
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x >> (64 - bits)) as usize
}

/// Near-duplicate index: permuted (masked) tables over simhash fingerprints, one index per host.
#[derive(Debug, Clone)]
pub struct SimhashIndex {
    max_distance: u32,
    layout: Layout,
    /// Slot → fingerprint.
    fps: Vec<u64>,
    /// Slot → caller id.
    ids: Vec<u32>,
    /// Chain links, `next[slot * tables + table]`; interleaved so one slot's links share a line.
    next: Vec<u32>,
    /// Bucket heads, `heads[(table << bucket_bits) | bucket]`.
    heads: Vec<u32>,
    bucket_bits: u32,
    /// Slots freed by removals, reused by inserts.
    free: Vec<u32>,
    /// Caller id → slot.
    slot_of: HashMap<u32, u32>,
}

impl SimhashIndex {
    /// An empty index for Hamming distance `max_distance`. Distances above
    /// [`MAX_SUPPORTED_DISTANCE`] are clamped to it; use [`SimhashIndex::try_new`] to get an
    /// error instead.
    pub fn new(max_distance: u32) -> Self {
        match Self::try_new(max_distance) {
            Ok(index) => index,
            Err(_) => Self::with_layout(MAX_SUPPORTED_DISTANCE),
        }
    }

    /// An empty index for Hamming distance `max_distance` (0..=[`MAX_SUPPORTED_DISTANCE`]).
    pub fn try_new(max_distance: u32) -> Result<Self, IndexError> {
        Layout::for_distance(max_distance)?;
        Ok(Self::with_layout(max_distance))
    }

    /// An empty index for distance `k` with an explicit number of blocks (see
    /// [`Layout::with_blocks`]).
    pub fn with_blocks(k: u32, blocks: u32) -> Result<Self, IndexError> {
        let layout = Layout::with_blocks(k, blocks)?;
        Ok(Self::from_layout(k, layout))
    }

    fn with_layout(k: u32) -> Self {
        let k = k.min(MAX_SUPPORTED_DISTANCE);
        let layout = Layout::for_distance(k).unwrap_or(Layout {
            blocks: 1,
            masks: vec![u64::MAX],
            min_key_bits: 64,
        });
        Self::from_layout(k, layout)
    }

    fn from_layout(k: u32, layout: Layout) -> Self {
        let tables = layout.tables();
        SimhashIndex {
            max_distance: k,
            layout,
            fps: Vec::new(),
            ids: Vec::new(),
            next: Vec::new(),
            heads: vec![NIL; tables << INITIAL_BUCKET_BITS],
            bucket_bits: INITIAL_BUCKET_BITS,
            free: Vec::new(),
            slot_of: HashMap::new(),
        }
    }

    /// The Hamming distance this index answers for.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// The block/table layout in use.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Number of fingerprints stored.
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    /// The fingerprint stored under `id`.
    pub fn get(&self, id: u32) -> Option<u64> {
        self.slot_of.get(&id).map(|&s| self.fps[s as usize])
    }

    /// Stores `fp` under `id`, replacing (and returning) the fingerprint previously stored under
    /// the same id. The index addresses at most `u32::MAX - 1` slots; allocation fails long
    /// before that, so in practice every insert succeeds.
    pub fn insert(&mut self, id: u32, fp: u64) -> Option<u64> {
        let previous = self.remove(id);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.fps[slot as usize] = fp;
                self.ids[slot as usize] = id;
                slot
            }
            None => {
                if self.fps.len() >= (NIL - 1) as usize {
                    return previous;
                }
                let slot = self.fps.len() as u32;
                self.fps.push(fp);
                self.ids.push(id);
                self.next
                    .extend(std::iter::repeat_n(NIL, self.layout.tables()));
                slot
            }
        };
        self.slot_of.insert(id, slot);
        if self.slot_of.len() * 2 > (1usize << self.bucket_bits) {
            // Doubling relinks every live slot, including the new one.
            self.grow();
        } else {
            self.link(slot);
        }
        previous
    }

    /// Removes the fingerprint stored under `id`, returning it.
    pub fn remove(&mut self, id: u32) -> Option<u64> {
        let slot = self.slot_of.remove(&id)?;
        let tables = self.layout.tables();
        let fp = self.fps[slot as usize];
        for t in 0..tables {
            let head =
                (t << self.bucket_bits) | bucket_of(fp & self.layout.masks[t], self.bucket_bits);
            let after = self.next[slot as usize * tables + t];
            if self.heads[head] == slot {
                self.heads[head] = after;
                continue;
            }
            let mut cur = self.heads[head];
            while cur != NIL {
                let link = cur as usize * tables + t;
                if self.next[link] == slot {
                    self.next[link] = after;
                    break;
                }
                cur = self.next[link];
            }
        }
        for t in 0..tables {
            self.next[slot as usize * tables + t] = NIL;
        }
        self.free.push(slot);
        Some(fp)
    }

    /// Removes everything, keeping the allocated capacity.
    pub fn clear(&mut self) {
        self.fps.clear();
        self.ids.clear();
        self.next.clear();
        self.free.clear();
        self.slot_of.clear();
        self.heads.iter_mut().for_each(|h| *h = NIL);
    }

    fn link(&mut self, slot: u32) {
        let tables = self.layout.tables();
        let fp = self.fps[slot as usize];
        for t in 0..tables {
            let head =
                (t << self.bucket_bits) | bucket_of(fp & self.layout.masks[t], self.bucket_bits);
            self.next[slot as usize * tables + t] = self.heads[head];
            self.heads[head] = slot;
        }
    }

    fn grow(&mut self) {
        self.bucket_bits += 1;
        self.heads.clear();
        self.heads
            .resize(self.layout.tables() << self.bucket_bits, NIL);
        let mut live: Vec<u32> = self.slot_of.values().copied().collect();
        // Relink in slot order so chain order (and so nothing observable) depends on hash-map
        // iteration order.
        live.sort_unstable();
        for slot in live {
            self.link(slot);
        }
    }

    /// Calls `f(id, distance)` once for every stored fingerprint within `max_distance` of `fp`
    /// (in no particular order). Allocation-free.
    pub fn for_each_near(&self, fp: u64, mut f: impl FnMut(u32, u32)) {
        let tables = self.layout.tables();
        let masks = &self.layout.masks;
        // Read every table's bucket head, then every chain's first fingerprint, before walking
        // any chain: the loads of each phase are independent, so their cache misses overlap
        // instead of queueing behind each other.
        let mut heads = [NIL; PREFETCH_TABLES];
        if tables <= PREFETCH_TABLES {
            let mut touch = 0u64;
            for (t, &mask) in masks.iter().enumerate() {
                heads[t] =
                    self.heads[(t << self.bucket_bits) | bucket_of(fp & mask, self.bucket_bits)];
            }
            for &h in &heads[..tables] {
                if h != NIL {
                    touch ^= self.fps[h as usize];
                }
            }
            std::hint::black_box(touch);
        }
        for (t, &mask) in masks.iter().enumerate() {
            let mut slot = if tables <= PREFETCH_TABLES {
                heads[t]
            } else {
                self.heads[(t << self.bucket_bits) | bucket_of(fp & mask, self.bucket_bits)]
            };
            while slot != NIL {
                let s = slot as usize;
                let diff = self.fps[s] ^ fp;
                if diff & mask == 0 {
                    let distance = diff.count_ones();
                    // Report a match only from the first table whose key it shares, so each
                    // fingerprint is reported once without a dedup set.
                    if distance <= self.max_distance && !masks[..t].iter().any(|&m| diff & m == 0) {
                        f(self.ids[s], distance);
                    }
                }
                slot = self.next[s * tables + t];
            }
        }
    }

    /// Clears `out` and fills it with the ids of all stored fingerprints within `max_distance` of
    /// `fp`, sorted ascending.
    pub fn query(&self, fp: u64, out: &mut Vec<u32>) {
        out.clear();
        self.for_each_near(fp, |id, _| out.push(id));
        out.sort_unstable();
    }

    /// Like [`SimhashIndex::query`] with the distance of each match, sorted by (distance, id).
    pub fn query_with_distance(&self, fp: u64) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        self.for_each_near(fp, |id, d| out.push((id, d)));
        out.sort_unstable_by_key(|&(id, d)| (d, id));
        out
    }

    /// Approximate heap bytes in use (allocated capacities of all parts).
    pub fn memory_bytes(&self) -> usize {
        let map_slot = std::mem::size_of::<(u32, u32)>() + 1;
        self.fps.capacity() * 8
            + self.ids.capacity() * 4
            + self.next.capacity() * 4
            + self.heads.capacity() * 4
            + self.free.capacity() * 4
            + self.slot_of.capacity() * map_slot
    }
}

impl Default for SimhashIndex {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_DISTANCE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn documented_layout_table_matches_code() {
        let expected = [
            (0, 1, 1, 64),
            (1, 2, 2, 32),
            (2, 3, 3, 21),
            (3, 5, 10, 25),
            (4, 6, 15, 20),
            (5, 8, 56, 24),
            (6, 9, 84, 21),
            (7, 10, 120, 18),
            (8, 11, 165, 16),
        ];
        for (k, blocks, tables, key_bits) in expected {
            let l = Layout::for_distance(k).unwrap();
            assert_eq!(
                (l.blocks, l.tables(), l.min_key_bits),
                (blocks, tables, key_bits),
                "k = {k}"
            );
            // Every table keeps exactly blocks - k blocks, and all blocks cover 64 bits.
            let all = block_ranges(l.blocks).iter().fold(0u64, |a, m| a | m);
            assert_eq!(all, u64::MAX);
            for m in &l.masks {
                assert!(m.count_ones() >= l.min_key_bits);
            }
        }
        assert!(Layout::for_distance(9).is_err());
        assert!(Layout::with_blocks(3, 3).is_err());
        assert!(Layout::with_blocks(8, 13).is_err());
        assert_eq!(Layout::with_blocks(3, 6).map(|l| l.tables()), Ok(20));
        assert!(SimhashIndex::try_new(9).is_err());
        assert_eq!(SimhashIndex::new(40).max_distance(), MAX_SUPPORTED_DISTANCE);
    }

    fn flip(fp: u64, rng: &mut SmallRng, bits: u32) -> u64 {
        let mut out = fp;
        let mut flipped = 0;
        while flipped < bits {
            let b = 1u64 << rng.random_range(0..64);
            if (out ^ fp) & b == 0 {
                out ^= b;
                flipped += 1;
            }
        }
        out
    }

    #[test]
    fn exact_against_brute_force_for_every_k() {
        let mut rng = SmallRng::seed_from_u64(7);
        let layouts = (0..=MAX_SUPPORTED_DISTANCE).map(|k| (k, None)).chain([
            (3, Some(4)),
            (3, Some(6)),
            (2, Some(5)),
            (5, Some(6)),
        ]);
        for (k, blocks) in layouts {
            let mut index = match blocks {
                None => SimhashIndex::new(k),
                Some(b) => SimhashIndex::with_blocks(k, b).unwrap(),
            };
            let mut stored = Vec::new();
            for id in 0..600u32 {
                // Half random, half planted within 0..=k+2 bits of an earlier one, so there are
                // matches at, just inside and just beyond k.
                let fp = if id % 2 == 1 && !stored.is_empty() {
                    let (_, base) = stored[rng.random_range(0..stored.len())];
                    let bits = rng.random_range(0..=k + 2);
                    flip(base, &mut rng, bits)
                } else {
                    rng.random()
                };
                index.insert(id, fp);
                stored.push((id, fp));
            }
            let mut out = Vec::new();
            for &(_, q) in stored.iter().step_by(3) {
                index.query(q, &mut out);
                let mut want: Vec<u32> = stored
                    .iter()
                    .filter(|(_, f)| (f ^ q).count_ones() <= k)
                    .map(|(id, _)| *id)
                    .collect();
                want.sort_unstable();
                assert_eq!(out, want, "k = {k}");
            }
        }
    }

    #[test]
    fn remove_and_replace() {
        let mut rng = SmallRng::seed_from_u64(11);
        let mut index = SimhashIndex::new(3);
        let base: u64 = rng.random();
        for id in 0..50u32 {
            index.insert(id, flip(base, &mut rng, id % 4));
        }
        assert_eq!(index.len(), 50);
        let mut out = Vec::new();
        index.query(base, &mut out);
        assert_eq!(out.len(), 50);
        for id in (0..50u32).step_by(2) {
            assert!(index.remove(id).is_some());
        }
        assert_eq!(index.remove(0), None);
        index.query(base, &mut out);
        assert_eq!(out, (1..50u32).step_by(2).collect::<Vec<_>>());
        // Replacing an id moves it: the old fingerprint no longer matches.
        let far = !base;
        assert!(index.insert(1, far).is_some());
        index.query(base, &mut out);
        assert!(!out.contains(&1));
        index.query(far, &mut out);
        assert_eq!(out, vec![1]);
        assert_eq!(index.get(1), Some(far));
        // Freed slots are reused rather than growing.
        let slots = index.fps.len();
        for id in 100..110u32 {
            index.insert(id, rng.random());
        }
        assert_eq!(index.fps.len(), slots);
        index.clear();
        assert!(index.is_empty());
        index.query(far, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn many_identical_fingerprints_reported_once() {
        let mut index = SimhashIndex::new(3);
        for id in 0..100u32 {
            index.insert(id, 0xdead_beef);
        }
        let hits = index.query_with_distance(0xdead_beef ^ 0b111);
        assert_eq!(hits.len(), 100);
        assert!(hits.iter().all(|&(_, d)| d == 3));
    }
}
