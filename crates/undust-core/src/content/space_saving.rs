//! The Space-Saving counter table of the template model (Metwally et al. 2005), with an index of
//! the least counted identity.
//!
//! The table tracks at most `capacity` identities; when full, a new identity replaces the least
//! counted one, the one with the smallest `(count, identity)` (ties broken by the smaller
//! identity), and inherits its count as overestimation error. Finding that victim by scanning the
//! table cost a walk over up to a few thousand counters for every new identity of a full model:
//! 20% of `undust clusters`' time on a crawl of small pages.
//!
//! The index is a min-heap of `(count lower bound, identity)` with exactly one entry per tracked
//! identity. Counts only grow while an identity is tracked, so increments leave the heap alone
//! (the entry becomes a lower bound) and an eviction looks at the least entry: a stale one takes
//! its current count and sinks back into the heap; the first one whose count is current is the
//! least `(count, identity)` of the table, since every other entry's current count is at least
//! its bound, which is not smaller. The victim is therefore the same as the scan's, and so are
//! models, clusters and rules. Each stale entry sinks after at least one increment, so an
//! eviction costs amortized O(log capacity) per increment.
//!
//! The heap is built at the first eviction (a table that never fills, most hosts' block table on
//! a short crawl, holds none: 16 bytes per identity saved) and is not stored: a table is
//! serialized as its counter map alone, the format it had before the index, and a loaded table
//! builds its heap again at its next eviction.
//!
//! The map hashes identities with [`KeyedIdentities`], one keyed multiply per identity, instead
//! of SipHash: identities are xxh3 hashes already, and SipHash was about 1.5% of the sidecar's CPU
//! under ingest load (BENCHMARKS.md, stop 28). The key is drawn per table, so a site cannot choose
//! pages whose identities collide in the map without knowing it. Nothing depends on the map's
//! order: evictions take the least `(count, identity)`, and the stored map decodes the same in
//! any order.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::hash_map::{Entry, RandomState};
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasher, Hasher};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A counter of the table: its count (how many pages carry the identity, overestimated by its
/// error) and a fresh counter replacing an evicted one.
pub(super) trait Counted: Default {
    /// The counter's count.
    fn count(&self) -> u64;
    /// A counter inheriting an evicted counter's count `floor` as its count and its error.
    fn inheriting(floor: u64) -> Self;
    /// Bytes the counter's own lists hold on the heap (see [`crate::heap`]).
    fn list_bytes(&self) -> usize;
}

/// The map's hasher builder: a key drawn from the standard library's random source, once per
/// table (see the module documentation).
#[derive(Clone, Debug)]
pub(super) struct KeyedIdentities {
    key: u64,
}

impl Default for KeyedIdentities {
    fn default() -> Self {
        KeyedIdentities {
            key: RandomState::new().hash_one(0x5eed_u64),
        }
    }
}

impl BuildHasher for KeyedIdentities {
    type Hasher = KeyedIdentity;

    fn build_hasher(&self) -> KeyedIdentity {
        KeyedIdentity { state: self.key }
    }
}

/// Odd multiplier of [`KeyedIdentity`] (the fractional part of the golden ratio).
const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// The 128-bit product of `a` and `b`, its halves xored: every bit of the result depends on every
/// bit of both.
#[inline]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Hashes an identity (a `u64`) with one folded multiply of it and the table's key.
pub(super) struct KeyedIdentity {
    state: u64,
}

impl Hasher for KeyedIdentity {
    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.state = folded_multiply(self.state ^ value, MULTIPLIER);
    }

    /// Other inputs (the map hashes `u64` identities alone), eight bytes at a time.
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.state
    }
}

/// Counters of at most `capacity` identities (the capacity is given on each insertion, by the
/// model that owns the table).
#[derive(Clone, Debug)]
pub(super) struct SpaceSaving<C> {
    counters: HashMap<u64, C, KeyedIdentities>,
    /// Empty until the table is first full; then one `(count lower bound, identity)` per tracked
    /// identity, least first.
    least: BinaryHeap<Reverse<(u64, u64)>>,
    /// Sum of the counters' [`Counted::list_bytes`], kept up to date by [`SpaceSaving::update`]
    /// so that a memory budget asking after every page does not walk the table.
    list_bytes: usize,
}

impl<C> Default for SpaceSaving<C> {
    fn default() -> Self {
        SpaceSaving {
            counters: HashMap::default(),
            least: BinaryHeap::new(),
            list_bytes: 0,
        }
    }
}

impl<C: Counted> SpaceSaving<C> {
    /// Updates the counter of `identity` with `change`, inserting it first if untracked
    /// (replacing the least counted identity when `capacity` identities are tracked already).
    /// `change` may only increase the count.
    pub(super) fn update(&mut self, identity: u64, capacity: usize, change: impl FnOnce(&mut C)) {
        let counter = self.counter(identity, capacity);
        let before = counter.list_bytes();
        change(counter);
        let after = counter.list_bytes();
        self.list_bytes = (self.list_bytes + after).saturating_sub(before);
    }

    fn counter(&mut self, identity: u64, capacity: usize) -> &mut C {
        // The length first: a table with room looks the identity up once, below.
        if self.counters.len() >= capacity && !self.counters.contains_key(&identity) {
            if let Some(floor) = self.replace_least(identity) {
                return self
                    .counters
                    .entry(identity)
                    .or_insert_with(|| C::inheriting(floor));
            }
        }
        match self.counters.entry(identity) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                if !self.least.is_empty() {
                    // Indexed already (a table that was full once and has room again, under a
                    // larger capacity): keep one entry per identity.
                    self.least.push(Reverse((0, identity)));
                }
                e.insert(C::default())
            }
        }
    }

    /// Removes the least `(count, identity)` counter and returns its count, giving its index entry
    /// to `identity` with that count as its bound.
    ///
    /// Entries are changed in place at the top of the heap (a stale entry takes its current
    /// count, the victim's becomes `identity`'s) rather than popped and pushed again: one sift
    /// down instead of a sift to the bottom and two sifts up. The heap holds the same entries as
    /// with pops and pushes, and its least entry, the victim, is the same (identities are
    /// unique, so no two entries tie).
    fn replace_least(&mut self, identity: u64) -> Option<u64> {
        if self.least.len() != self.counters.len() {
            self.least = self
                .counters
                .iter()
                .map(|(&id, c)| Reverse((c.count(), id)))
                .collect();
        }
        while let Some(mut top) = self.least.peek_mut() {
            let Reverse((bound, id)) = *top;
            match self.counters.get(&id).map(Counted::count) {
                None => {
                    PeekMut::pop(top);
                }
                Some(current) if current == bound => {
                    *top = Reverse((bound, identity));
                    drop(top);
                    if let Some(victim) = self.counters.remove(&id) {
                        self.list_bytes = self.list_bytes.saturating_sub(victim.list_bytes());
                    }
                    return Some(bound);
                }
                Some(current) => *top = Reverse((current, id)),
            }
        }
        None
    }

    /// The counter of `identity`, if tracked.
    pub(super) fn get(&self, identity: &u64) -> Option<&C> {
        self.counters.get(identity)
    }

    /// Identities tracked.
    pub(super) fn len(&self) -> usize {
        self.counters.len()
    }

    /// The counters, in no order.
    #[cfg(test)]
    pub(super) fn values(&self) -> impl Iterator<Item = &C> {
        self.counters.values()
    }

    /// Capacities of the map and of the index (for a test walking the table).
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.counters.capacity()
    }

    #[cfg(test)]
    pub(super) fn least_capacity(&self) -> usize {
        self.least.capacity()
    }

    /// Bytes the table holds on the heap: the map at its capacity, the index and the counters'
    /// lists (see [`crate::heap`]). Constant time.
    pub(super) fn held_bytes(&self) -> usize {
        use crate::heap::{hash_table_bytes, vec_bytes};
        use std::mem::size_of;
        hash_table_bytes(self.counters.capacity(), size_of::<(u64, C)>())
            + vec_bytes(self.least.capacity(), size_of::<Reverse<(u64, u64)>>())
            + self.list_bytes
    }
}

/// Tables are equal when their counters are: the index is a function of them.
impl<C: PartialEq> PartialEq for SpaceSaving<C> {
    fn eq(&self, other: &Self) -> bool {
        self.counters == other.counters
    }
}

impl<C: Eq> Eq for SpaceSaving<C> {}

/// Serialized as the counter map alone (the stored format before the index existed).
impl<C: Serialize> Serialize for SpaceSaving<C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.counters.serialize(serializer)
    }
}

impl<'de, C: Counted + Deserialize<'de>> Deserialize<'de> for SpaceSaving<C> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let counters: HashMap<u64, C, KeyedIdentities> = HashMap::deserialize(deserializer)?;
        let list_bytes = counters.values().map(Counted::list_bytes).sum();
        Ok(SpaceSaving {
            counters,
            least: BinaryHeap::new(),
            list_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    struct Plain {
        count: u64,
        error: u64,
    }

    impl Counted for Plain {
        fn count(&self) -> u64 {
            self.count
        }
        fn inheriting(floor: u64) -> Self {
            Plain {
                count: floor,
                error: floor,
            }
        }
        fn list_bytes(&self) -> usize {
            0
        }
    }

    /// The table before the index: a scan for the least `(count, identity)`.
    fn scan_counter(map: &mut HashMap<u64, Plain>, identity: u64, capacity: usize) -> &mut Plain {
        if !map.contains_key(&identity) && map.len() >= capacity {
            let victim = map
                .iter()
                .min_by_key(|(id, c)| (c.count, **id))
                .map(|(id, c)| (*id, c.count));
            if let Some((id, floor)) = victim {
                map.remove(&id);
                map.insert(identity, Plain::inheriting(floor));
            }
        }
        map.entry(identity).or_default()
    }

    #[test]
    fn evictions_are_those_of_the_linear_scan_on_random_streams() {
        for seed in 0..40u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let capacity = rng.random_range(1..40usize);
            // Skewed streams: a few heavy identities, many rare ones, many ties of counts.
            let universe = rng.random_range(2..200u64);
            let mut indexed: SpaceSaving<Plain> = SpaceSaving::default();
            let mut scanned: HashMap<u64, Plain> = HashMap::new();
            for step in 0..3_000 {
                let id = if rng.random_bool(0.3) {
                    rng.random_range(0..4u64)
                } else {
                    rng.random_range(0..universe)
                };
                indexed.update(id, capacity, |c| c.count += 1);
                scan_counter(&mut scanned, id, capacity).count += 1;
                assert!(
                    indexed.counters.len() == scanned.len()
                        && scanned
                            .iter()
                            .all(|(id, c)| indexed.counters.get(id) == Some(c)),
                    "seed {seed}, capacity {capacity}, step {step}"
                );
                if step == 1_500 {
                    // A stored and reloaded table evicts the same identities too.
                    let json = serde_json::to_value(&indexed).expect("serialize");
                    assert_eq!(json, serde_json::to_value(&scanned).expect("serialize"));
                    indexed = serde_json::from_value(json).expect("deserialize");
                    assert!(indexed.least.is_empty(), "the index is not stored");
                }
            }
        }
    }

    #[test]
    fn a_table_that_never_fills_holds_no_index() {
        let mut table: SpaceSaving<Plain> = SpaceSaving::default();
        for id in 0..100 {
            table.update(id, 1_000, |c| c.count += 1);
        }
        assert!(table.least.is_empty());
        table.update(1_000, 100, |c| c.count += 1);
        assert_eq!(table.len(), 100);
        assert_eq!(table.least.len(), 100);
        // Identity 0 was the least (count 1, smallest identity).
        assert!(table.get(&0).is_none());
        assert_eq!(table.get(&1_000), Some(&Plain { count: 2, error: 1 }));
    }
}
