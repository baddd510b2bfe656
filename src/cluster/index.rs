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
//! into an open-addressing table (same candidates, O(1) instead of O(log n) per table, and O(1)
//! inserts and removals where a sorted array needs O(n)). Every candidate is verified
//! with a popcount of the XOR, so the answer is exact: every stored fingerprint within `k` is
//! reported once, nothing beyond `k` is ever reported.
//!
//! # Layout chosen from `k`
//!
//! Query cost is roughly `tables × (1 + n / 2^key_bits)` (a bucket probe per table, plus random
//! candidates whose key collides), memory is roughly proportional to `tables`. For each `k` the
//! layout with the lowest `tables × (2 + DESIGN_SIZE / 2^key_bits)` is used, where
//! [`DESIGN_SIZE`] = 2^20 fingerprints is the largest per-host index we design for, `key_bits` is the
//! narrowest key over all tables, and at most [`MAX_TABLES`] tables are allowed:
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
//! Each table is an open-addressing array of 12-byte `(fingerprint, id)` cells kept between 3/8
//! and 3/4 full (it doubles past 3/4), so 16–32 bytes per fingerprint per table, plus about
//! 15–30 bytes for the id → fingerprint map. For the default `k = 3` (10 tables) that is about
//! 175–350 bytes per fingerprint (measured: see [`SimhashIndex::memory_bytes`] and the
//! benchmark's report). A per-host sample of a few thousand pages costs well under a megabyte.
//!
//! # Updates
//!
//! Inserts and removals are O(tables) (plus an amortised O(tables) when the arrays double);
//! removal uses backward-shift deletion, so no tombstones accumulate under the reservoir's
//! steady insert/evict churn. Query time depends on the number of tables, the load factor and
//! the near-duplicates found, not on the number of stored fingerprints.

use std::collections::HashMap;

use thiserror::Error;

/// Default Hamming distance for "near-duplicate" (Manku et al. found k = 3 right for 64-bit
/// simhash on web pages).
pub const DEFAULT_MAX_DISTANCE: u32 = 3;
/// Largest supported Hamming distance.
pub const MAX_SUPPORTED_DISTANCE: u32 = 8;
/// Index size the layout is optimised for (fingerprints per host index).
pub const DESIGN_SIZE: u64 = 1 << 20;
/// Upper bound on the number of tables a layout may use (memory guard).
pub const MAX_TABLES: u64 = 200;

/// Initial cells per table (2^4 = 16): small hosts stay small.
const INITIAL_BUCKET_BITS: u32 = 4;

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
            let cost = tables as f64 * (2.0 + random);
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, b));
            }
        }
        // k + 1 blocks always gives C(k+1, k) = k + 1 <= MAX_TABLES tables, so `best` is set;
        // fall back to it anyway rather than unwrap.
        let blocks = best.map_or(k + 1, |(_, b)| b);
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

/// One table cell: fingerprint (as two halves, so a cell is 12 bytes with no padding) and id.
/// `id == EMPTY` marks a free cell.
type Cell = [u32; 3];

const EMPTY_CELL: Cell = [0, 0, EMPTY];

#[inline]
fn cell_fp(c: &Cell) -> u64 {
    u64::from(c[0]) | (u64::from(c[1]) << 32)
}

/// Near-duplicate index: permuted (masked) tables over simhash fingerprints, one index per host.
///
/// Each table is an open-addressing hash table (linear probing) of `(fingerprint, id)` cells
/// keyed by the table's masked bits, so a probe reads the candidates' fingerprints from the same
/// cache line instead of chasing pointers, and the tables' first cells are loaded before any is
/// examined so their cache misses overlap.
#[derive(Debug, Clone)]
pub struct SimhashIndex {
    max_distance: u32,
    layout: Layout,
    /// All tables' cells, table `t` at `cells[t << bits .. (t + 1) << bits]`.
    cells: Vec<Cell>,
    bits: u32,
    /// Id → fingerprint, for removal and replacement.
    fp_of: HashMap<u32, u64>,
}

/// Reserved id marking an empty cell; [`SimhashIndex::insert`] ignores it.
pub const RESERVED_ID: u32 = u32::MAX;
const EMPTY: u32 = RESERVED_ID;

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

    fn with_layout(k: u32) -> Self {
        let k = k.min(MAX_SUPPORTED_DISTANCE);
        let layout = Layout::for_distance(k).unwrap_or(Layout {
            blocks: 1,
            masks: vec![u64::MAX],
            min_key_bits: 64,
        });
        let tables = layout.tables();
        SimhashIndex {
            max_distance: k,
            layout,
            cells: vec![EMPTY_CELL; tables << INITIAL_BUCKET_BITS],
            bits: INITIAL_BUCKET_BITS,
            fp_of: HashMap::new(),
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
        self.fp_of.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.fp_of.is_empty()
    }

    /// The fingerprint stored under `id`.
    pub fn get(&self, id: u32) -> Option<u64> {
        self.fp_of.get(&id).copied()
    }

    /// Stores `fp` under `id`, replacing (and returning) the fingerprint previously stored under
    /// the same id. [`RESERVED_ID`] (`u32::MAX`) marks empty cells and is ignored.
    pub fn insert(&mut self, id: u32, fp: u64) -> Option<u64> {
        if id == EMPTY {
            return None;
        }
        let previous = self.remove(id);
        self.fp_of.insert(id, fp);
        // Load factor at most 3/4: linear probing stays within a cache line or two.
        if self.fp_of.len() * 4 > (3usize << self.bits) {
            self.grow();
        } else {
            self.place(id, fp);
        }
        previous
    }

    fn place(&mut self, id: u32, fp: u64) {
        let size_mask = (1usize << self.bits) - 1;
        let cell = [fp as u32, (fp >> 32) as u32, id];
        for (t, &mask) in self.layout.masks.iter().enumerate() {
            let base = t << self.bits;
            let mut i = bucket_of(fp & mask, self.bits);
            // The load factor is below 1, so an empty cell exists.
            while self.cells[base + i][2] != EMPTY {
                i = (i + 1) & size_mask;
            }
            self.cells[base + i] = cell;
        }
    }

    /// Removes the fingerprint stored under `id`, returning it.
    pub fn remove(&mut self, id: u32) -> Option<u64> {
        let fp = self.fp_of.remove(&id)?;
        let size_mask = (1usize << self.bits) - 1;
        for (t, &mask) in self.layout.masks.iter().enumerate() {
            let base = t << self.bits;
            let mut i = bucket_of(fp & mask, self.bits);
            loop {
                let c = self.cells[base + i];
                if c[2] == id {
                    break;
                }
                if c[2] == EMPTY {
                    // Not reachable while the map and the tables agree; nothing to remove.
                    i = usize::MAX;
                    break;
                }
                i = (i + 1) & size_mask;
            }
            if i == usize::MAX {
                continue;
            }
            // Backward-shift deletion: pull later cells of the run into the hole when their
            // home position allows, so probes never need tombstones.
            let mut hole = i;
            let mut j = i;
            loop {
                j = (j + 1) & size_mask;
                let c = self.cells[base + j];
                if c[2] == EMPTY {
                    break;
                }
                let home = bucket_of(cell_fp(&c) & mask, self.bits);
                let stays = if hole <= j {
                    hole < home && home <= j
                } else {
                    hole < home || home <= j
                };
                if !stays {
                    self.cells[base + hole] = c;
                    hole = j;
                }
            }
            self.cells[base + hole] = EMPTY_CELL;
        }
        Some(fp)
    }

    /// Removes everything, keeping the allocated capacity.
    pub fn clear(&mut self) {
        self.fp_of.clear();
        self.cells.iter_mut().for_each(|c| *c = EMPTY_CELL);
    }

    fn grow(&mut self) {
        self.bits += 1;
        self.cells.clear();
        self.cells.resize(self.layout.tables() << self.bits, EMPTY_CELL);
        let mut all: Vec<(u32, u64)> = self.fp_of.iter().map(|(&id, &fp)| (id, fp)).collect();
        // Place in id order so the layout (and so nothing observable) depends on hash-map
        // iteration order.
        all.sort_unstable();
        for (id, fp) in all {
            self.place(id, fp);
        }
    }

    /// Calls `f(id, distance)` once for every stored fingerprint within `max_distance` of `fp`
    /// (in no particular order). Allocation-free.
    pub fn for_each_near(&self, fp: u64, mut f: impl FnMut(u32, u32)) {
        let masks = &self.layout.masks;
        let size_mask = (1usize << self.bits) - 1;
        let mut homes = [0usize; MAX_TABLES as usize];
        // Issue every table's first load before examining any, so the misses overlap.
        let mut touch = 0u32;
        for (t, &mask) in masks.iter().enumerate() {
            let home = bucket_of(fp & mask, self.bits);
            homes[t] = home;
            touch ^= self.cells[(t << self.bits) + home][2];
        }
        std::hint::black_box(touch);
        for (t, &mask) in masks.iter().enumerate() {
            let base = t << self.bits;
            let mut i = homes[t];
            loop {
                let c = &self.cells[base + i];
                if c[2] == EMPTY {
                    break;
                }
                let diff = cell_fp(c) ^ fp;
                if diff & mask == 0 {
                    let distance = diff.count_ones();
                    // Report a match only from the first table whose key it shares, so each
                    // fingerprint is reported once without a dedup set.
                    if distance <= self.max_distance && !masks[..t].iter().any(|&m| diff & m == 0)
                    {
                        f(c[2], distance);
                    }
                }
                i = (i + 1) & size_mask;
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

    /// Approximate heap bytes in use (allocated capacities).
    pub fn memory_bytes(&self) -> usize {
        let map_slot = std::mem::size_of::<(u32, u64)>() + 1;
        self.cells.capacity() * std::mem::size_of::<Cell>() + self.fp_of.capacity() * map_slot
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
        for k in 0..=MAX_SUPPORTED_DISTANCE {
            let mut index = SimhashIndex::new(k);
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
        // Removal leaves no residue: the cells hold exactly the live fingerprints.
        let live = index.cells.iter().filter(|c| c[2] != EMPTY).count();
        assert_eq!(live, index.len() * index.layout().tables());
        assert_eq!(index.insert(RESERVED_ID, 1), None);
        assert_eq!(index.get(RESERVED_ID), None);
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
