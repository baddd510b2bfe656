//! Per-host reservoir sampling: keeps a bounded, uniformly random sample of each host's pages.
//!
//! The sidecar sees an unbounded stream of pages per host but can only keep (and fingerprint,
//! cluster and learn from) a bounded number. [`ReservoirSampler`] keeps, per host, a uniform
//! random sample of everything offered for that host (Vitter's Algorithm R), under four bounds:
//!
//! - **items per host** ([`SamplerConfig::per_host_items`]): the reservoir size;
//! - **bytes per host** ([`SamplerConfig::per_host_bytes`]): when a sample pushes a host over,
//!   items chosen uniformly at random from that host's reservoir (possibly the new one) are
//!   evicted and the host's reservoir size drops to what is left;
//! - **bytes overall** ([`SamplerConfig::global_bytes`]): everything held for the sampled hosts
//!   counts: their samples, a fixed cost per host ([`SamplerConfig::host_entry_bytes`]: the
//!   sampler's own entry and the caller's fixed per-host structures) and what the caller reports
//!   holding for each host beside its samples ([`ReservoirSampler::offer_with_host_bytes`], e.g.
//!   the sidecar's per-host template model). When the total goes over, the host holding the most
//!   sample bytes gives up one uniformly random item at a time (its reservoir size shrinking
//!   accordingly) while it holds more than one, so small hosts keep their samples and the budget
//!   tends towards an even split. When even the largest host is down to one sample, what is left
//!   is per-host state, which only goes with its host: the host offered nothing for longest gives
//!   way whole ([`Offer::evicted_hosts`], [`SamplerStats::hosts_given_way_to_budget`]). So the
//!   number of hosts held follows the budget, and many hosts cannot outgrow it;
//! - **hosts** ([`SamplerConfig::max_hosts`]): a new host beyond this takes the slot of the host
//!   idle longest, when that host has not been offered anything for [`SamplerConfig::max_hosts`]
//!   offers (a whole round of the table): its samples are handed back as evicted and its name in
//!   [`Offer::evicted_hosts`] ([`SamplerStats::hosts_replaced`]). Otherwise the offer is refused
//!   ([`SamplerStats::hosts_refused`]). A crawl of millions of hosts thus keeps sampling the hosts
//!   it is crawling now, and a burst of one-page hosts cannot push out hosts that are active.
//!
//! **One key, one sample.** An item with a [`SampleBytes::sample_key`] (the sidecar keys pages by
//! URL) that is already in its host's reservoir replaces the one there (the latest fetch wins,
//! [`Decision::Refreshed`]) instead of taking a second slot, so a client that resends pages does
//! not skew the sample. It does not count as a new offer for Algorithm R: the reservoir samples
//! distinct keys. (A key that was offered before and not selected is drawn again like a new one:
//! remembering every key ever offered would take unbounded memory.)
//!
//! Shrinking a reservoir by uniform random eviction keeps it a uniform sample of everything seen
//! (a uniform subsample of a uniform sample is uniform, and Algorithm R continues correctly from
//! any reservoir size), so every bound preserves uniformity. A reservoir never shrinks below one
//! slot, so a host squeezed by the global budget can still take new samples later.
//!
//! Items larger than the per-host or global budget are rejected outright. The RNG is seeded
//! ([`SamplerConfig::seed`]), so the same sequence of offers gives the same sample. Everything
//! evicted is returned to the caller, which removes it from its indexes.

use std::collections::{BTreeSet, HashMap};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Byte size of a sample, used for the byte budgets, and its identity within its host.
pub trait SampleBytes {
    /// Approximate heap plus inline bytes this sample keeps alive.
    fn sample_bytes(&self) -> usize;

    /// The sample's identity within its host (e.g. a hash of its URL): a new item with the key of
    /// one in the reservoir replaces it. `None` (the default): every item is distinct.
    fn sample_key(&self) -> Option<u64> {
        None
    }
}

impl SampleBytes for Vec<u8> {
    fn sample_bytes(&self) -> usize {
        self.len() + std::mem::size_of::<Self>()
    }
}

impl SampleBytes for String {
    fn sample_bytes(&self) -> usize {
        self.len() + std::mem::size_of::<Self>()
    }
}

/// Sampler bounds and seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplerConfig {
    /// Reservoir size per host (default 2,000 samples: enough for the pattern-tree learner's
    /// support thresholds on a host's main URL patterns).
    pub per_host_items: usize,
    /// Byte budget of one host's samples (default 16 MiB).
    pub per_host_bytes: usize,
    /// Byte budget over all hosts: samples, per-host entries and what the caller reports holding
    /// per host (default 1 GiB).
    pub global_bytes: usize,
    /// Bytes counted for every host held, besides its samples and what the caller reports for it
    /// (default 0): the sampler's own per-host entry and the caller's fixed per-host structures.
    pub host_entry_bytes: usize,
    /// Maximum number of hosts sampled at once (default 100,000); see the module docs for what a
    /// new host does beyond it.
    pub max_hosts: usize,
    /// RNG seed (default 0).
    pub seed: u64,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            per_host_items: 2_000,
            per_host_bytes: 16 << 20,
            global_bytes: 1 << 30,
            host_entry_bytes: 0,
            max_hosts: 100_000,
            seed: 0,
        }
    }
}

/// What happened to an offered sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Added while the reservoir was filling.
    Added,
    /// Replaced a random earlier sample (which is in [`Offer::evicted`]).
    Replaced,
    /// Replaced the sample with the same key (which is in [`Offer::evicted`]).
    Refreshed,
    /// Not selected by the reservoir draw, or selected and then dropped again by a byte budget.
    NotSelected,
    /// Larger than the per-host or global byte budget.
    TooLarge,
    /// A new host beyond [`SamplerConfig::max_hosts`], with no idle host to give way.
    HostRefused,
}

/// Outcome of [`ReservoirSampler::offer`].
#[derive(Debug)]
pub struct Offer<T> {
    /// What happened to the offered sample.
    pub decision: Decision,
    /// The offered sample, handed back when it was not kept.
    pub returned: Option<T>,
    /// Samples evicted to make room, with their host (possibly other hosts, through the global
    /// budget, or hosts that gave way). Never contains the offered sample.
    pub evicted: Vec<(String, T)>,
    /// Hosts that gave way, to the host limit or the global budget (all their samples are in
    /// `evicted`): the caller must drop what else it keeps for them.
    pub evicted_hosts: Vec<String>,
}

impl<T> Offer<T> {
    /// True when the offered sample is now in the reservoir.
    pub fn kept(&self) -> bool {
        matches!(
            self.decision,
            Decision::Added | Decision::Replaced | Decision::Refreshed
        )
    }
}

/// Counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SamplerStats {
    /// Samples offered.
    pub offered: u64,
    /// Samples kept when offered.
    pub kept: u64,
    /// Samples rejected as larger than a budget.
    pub too_large: u64,
    /// Offers refused because the host limit was reached and no host was idle.
    pub hosts_refused: u64,
    /// Hosts that gave their slot to a new host (idle for a whole round of the table).
    pub hosts_replaced: u64,
    /// Hosts that gave way whole to the global budget (every host down to one sample).
    pub hosts_given_way_to_budget: u64,
    /// Offers that replaced the sample with the same key.
    pub refreshed: u64,
    /// Evictions caused by per-host byte budgets.
    pub host_budget_evictions: u64,
    /// Evictions caused by the global byte budget.
    pub global_budget_evictions: u64,
}

#[derive(Debug)]
struct Reservoir<T> {
    items: Vec<T>,
    /// Sample key → position in `items`, for the items that have a key.
    keys: HashMap<u64, usize>,
    bytes: usize,
    /// What the caller holds for this host beside its samples (see the module docs).
    host_bytes: usize,
    seen: u64,
    capacity: usize,
    /// The sampler's offer count at this host's last offer (for the host limit).
    last_offer: u64,
}

impl<T: SampleBytes> Reservoir<T> {
    fn new(capacity: usize, now: u64) -> Self {
        Reservoir {
            items: Vec::new(),
            keys: HashMap::new(),
            bytes: 0,
            host_bytes: 0,
            seen: 0,
            capacity,
            last_offer: now,
        }
    }

    fn push(&mut self, item: T) -> usize {
        if let Some(key) = item.sample_key() {
            self.keys.insert(key, self.items.len());
        }
        self.items.push(item);
        self.items.len() - 1
    }

    fn replace(&mut self, at: usize, item: T) -> T {
        let key = item.sample_key();
        let old = std::mem::replace(&mut self.items[at], item);
        if let Some(old_key) = old.sample_key() {
            if self.keys.get(&old_key) == Some(&at) {
                self.keys.remove(&old_key);
            }
        }
        if let Some(key) = key {
            self.keys.insert(key, at);
        }
        old
    }

    fn swap_remove(&mut self, at: usize) -> T {
        let item = self.items.swap_remove(at);
        if let Some(key) = item.sample_key() {
            self.keys.remove(&key);
        }
        if let Some(moved) = self.items.get(at).and_then(SampleBytes::sample_key) {
            self.keys.insert(moved, at);
        }
        item
    }
}

/// Per-host reservoirs under per-host and global bounds (see the module docs).
#[derive(Debug)]
pub struct ReservoirSampler<T> {
    config: SamplerConfig,
    names: Vec<String>,
    reservoirs: Vec<Reservoir<T>>,
    host_index: HashMap<String, usize>,
    /// (bytes, host) for finding the largest host when the global budget is exceeded.
    by_bytes: BTreeSet<(usize, usize)>,
    /// (last offer, host) for finding the host idle longest when the host limit is reached.
    by_last_offer: BTreeSet<(u64, usize)>,
    /// Sample bytes over all hosts.
    total_bytes: usize,
    /// Per-host entries and caller-reported per-host bytes over all hosts.
    host_total_bytes: usize,
    rng: SmallRng,
    stats: SamplerStats,
}

impl<T: SampleBytes> ReservoirSampler<T> {
    /// An empty sampler. A per-host item count of 0 is raised to 1.
    pub fn new(config: SamplerConfig) -> Self {
        let rng = SmallRng::seed_from_u64(config.seed);
        ReservoirSampler {
            config: SamplerConfig {
                per_host_items: config.per_host_items.max(1),
                ..config
            },
            names: Vec::new(),
            reservoirs: Vec::new(),
            host_index: HashMap::new(),
            by_bytes: BTreeSet::new(),
            by_last_offer: BTreeSet::new(),
            total_bytes: 0,
            host_total_bytes: 0,
            rng,
            stats: SamplerStats::default(),
        }
    }

    /// Offers one sample for `host` (what the caller holds for the host is left as last reported).
    pub fn offer(&mut self, host: &str, item: T) -> Offer<T> {
        self.offer_inner(host, item, None)
    }

    /// Offers one sample for `host`, with what the caller now holds for the host beside its
    /// samples (`host_bytes`), which counts against the global budget from now on.
    pub fn offer_with_host_bytes(&mut self, host: &str, item: T, host_bytes: usize) -> Offer<T> {
        self.offer_inner(host, item, Some(host_bytes))
    }

    fn offer_inner(&mut self, host: &str, item: T, host_bytes: Option<usize>) -> Offer<T> {
        self.stats.offered += 1;
        let size = item.sample_bytes();
        let reject = |decision, item| Offer {
            decision,
            returned: Some(item),
            evicted: Vec::new(),
            evicted_hosts: Vec::new(),
        };
        if size > self.config.per_host_bytes || size > self.config.global_bytes {
            self.stats.too_large += 1;
            return reject(Decision::TooLarge, item);
        }
        let now = self.stats.offered;
        let mut evicted = Vec::new();
        let mut evicted_hosts = Vec::new();
        let h = match self.host_index.get(host) {
            Some(&h) => h,
            None => {
                if self.reservoirs.len() >= self.config.max_hosts {
                    match self.idle_host(now) {
                        Some(idle) => {
                            let name = self.names[idle].clone();
                            evicted.extend(
                                self.remove_host(&name)
                                    .into_iter()
                                    .map(|item| (name.clone(), item)),
                            );
                            self.stats.hosts_replaced += 1;
                            evicted_hosts.push(name);
                        }
                        None => {
                            self.stats.hosts_refused += 1;
                            return reject(Decision::HostRefused, item);
                        }
                    }
                }
                let h = self.reservoirs.len();
                self.reservoirs
                    .push(Reservoir::new(self.config.per_host_items, now));
                self.names.push(host.to_string());
                self.host_index.insert(host.to_string(), h);
                self.by_bytes.insert((0, h));
                self.by_last_offer.insert((now, h));
                self.host_total_bytes += self.config.host_entry_bytes;
                h
            }
        };
        self.touch(h, now);
        if let Some(bytes) = host_bytes {
            self.set_host_bytes(h, bytes);
        }

        let existing = item
            .sample_key()
            .and_then(|key| self.reservoirs[h].keys.get(&key).copied());
        let (decision, new_pos) = if let Some(at) = existing {
            // The same key again: the latest fetch replaces the sample, in place.
            let old = self.reservoirs[h].replace(at, item);
            self.set_bytes(h, self.reservoirs[h].bytes - old.sample_bytes());
            evicted.push((self.names[h].clone(), old));
            self.stats.refreshed += 1;
            (Decision::Refreshed, at)
        } else {
            // Algorithm R.
            let r = &mut self.reservoirs[h];
            r.seen += 1;
            if r.items.len() < r.capacity {
                (Decision::Added, r.push(item))
            } else {
                let j = self.rng.random_range(0..r.seen);
                if j >= r.items.len() as u64 {
                    let mut offer = Offer {
                        decision: Decision::NotSelected,
                        returned: Some(item),
                        evicted,
                        evicted_hosts,
                    };
                    // What the caller holds for the host may have grown: the budget still holds.
                    self.fit_global_budget(h, &mut None, &mut offer);
                    return offer;
                }
                let old = r.replace(j as usize, item);
                let old_size = old.sample_bytes();
                self.set_bytes(h, self.reservoirs[h].bytes - old_size);
                evicted.push((self.names[h].clone(), old));
                (Decision::Replaced, j as usize)
            }
        };
        self.set_bytes(h, self.reservoirs[h].bytes + size);
        let mut new_pos = Some(new_pos);
        let mut dropped = None;

        // Per-host byte budget: uniform random evictions from this host.
        while self.reservoirs[h].bytes > self.config.per_host_bytes {
            self.stats.host_budget_evictions += 1;
            match self.evict_random(h, &mut new_pos) {
                Some(Evicted::Old(old)) => evicted.push((self.names[h].clone(), old)),
                Some(Evicted::New(new)) => dropped = Some(new),
                None => break,
            }
        }
        let mut offer = Offer {
            decision,
            returned: None,
            evicted,
            evicted_hosts,
        };
        if let Some(item) = dropped {
            // The offered sample was itself drawn for eviction: hand it back, not as evicted.
            offer.decision = Decision::NotSelected;
            offer.returned = Some(item);
        }
        self.fit_global_budget(h, &mut new_pos, &mut offer);
        if offer.returned.is_none() {
            self.stats.kept += 1;
        }
        offer
    }

    /// Enforces the global budget after an offer for host `h` (see the module docs): the host
    /// holding the most sample bytes gives up random samples while it holds more than one, then
    /// the hosts offered nothing for longest give way whole. `new_pos` tracks where the offered
    /// sample sits in `h`; if it is drawn, it goes back to the caller in `offer`.
    fn fit_global_budget(&mut self, h: usize, new_pos: &mut Option<usize>, offer: &mut Offer<T>) {
        let mut h = h;
        while self.held_bytes() > self.config.global_bytes {
            let largest = self
                .by_bytes
                .last()
                .copied()
                .filter(|&(bytes, l)| bytes > 0 && self.reservoirs[l].items.len() > 1);
            if let Some((_, largest)) = largest {
                self.stats.global_budget_evictions += 1;
                let mut other = None;
                let pos = if largest == h {
                    &mut *new_pos
                } else {
                    &mut other
                };
                match self.evict_random(largest, pos) {
                    Some(Evicted::Old(old)) => {
                        offer.evicted.push((self.names[largest].clone(), old));
                    }
                    Some(Evicted::New(new)) => {
                        offer.decision = Decision::NotSelected;
                        offer.returned = Some(new);
                    }
                    None => break,
                }
                continue;
            }
            // Only per-host state is left to give: the host offered nothing for longest goes
            // (never the host just offered, which is the most recent).
            let Some(&(_, idle)) = self.by_last_offer.iter().find(|&&(_, i)| i != h) else {
                break;
            };
            let name = self.names[idle].clone();
            let offered_host = self.names[h].clone();
            let items = self.remove_host(&name);
            offer
                .evicted
                .extend(items.into_iter().map(|item| (name.clone(), item)));
            offer.evicted_hosts.push(name);
            self.stats.hosts_given_way_to_budget += 1;
            // Removing a host may move the offered host to another slot.
            match self.host_index.get(&offered_host) {
                Some(&moved) => h = moved,
                None => break,
            }
        }
    }

    /// Removes a uniformly random sample of host `h` and shrinks its reservoir size to what is
    /// left (never below one slot). `new_pos` tracks where the just-offered sample sits.
    fn evict_random(&mut self, h: usize, new_pos: &mut Option<usize>) -> Option<Evicted<T>> {
        let len = self.reservoirs[h].items.len();
        if len == 0 {
            return None;
        }
        let i = self.rng.random_range(0..len);
        let r = &mut self.reservoirs[h];
        let item = r.swap_remove(i);
        r.capacity = r.items.len().max(1);
        let size = item.sample_bytes();
        let was_new = *new_pos == Some(i);
        if was_new {
            *new_pos = None;
        } else if *new_pos == Some(len - 1) {
            // swap_remove moved the last element (the new sample) into slot i.
            *new_pos = Some(i);
        }
        self.set_bytes(h, self.reservoirs[h].bytes.saturating_sub(size));
        Some(if was_new {
            Evicted::New(item)
        } else {
            Evicted::Old(item)
        })
    }

    /// The host idle longest, when it has been idle for a whole round of the table.
    fn idle_host(&self, now: u64) -> Option<usize> {
        let &(last, h) = self.by_last_offer.first()?;
        (now.saturating_sub(last) > self.config.max_hosts as u64).then_some(h)
    }

    fn touch(&mut self, h: usize, now: u64) {
        let last = self.reservoirs[h].last_offer;
        self.by_last_offer.remove(&(last, h));
        self.by_last_offer.insert((now, h));
        self.reservoirs[h].last_offer = now;
    }

    /// Everything counted against the global budget.
    fn held_bytes(&self) -> usize {
        self.total_bytes + self.host_total_bytes
    }

    fn set_host_bytes(&mut self, h: usize, bytes: usize) {
        self.host_total_bytes = self.host_total_bytes - self.reservoirs[h].host_bytes + bytes;
        self.reservoirs[h].host_bytes = bytes;
    }

    fn set_bytes(&mut self, h: usize, bytes: usize) {
        let old = self.reservoirs[h].bytes;
        self.by_bytes.remove(&(old, h));
        self.by_bytes.insert((bytes, h));
        self.total_bytes = self.total_bytes - old + bytes;
        self.reservoirs[h].bytes = bytes;
    }

    /// Drops `host` entirely (e.g. once its rules are learned), returning its samples so the
    /// caller can drop them from its indexes. The host may be sampled afresh later; it no longer
    /// counts towards [`SamplerConfig::max_hosts`].
    pub fn remove_host(&mut self, host: &str) -> Vec<T> {
        let Some(h) = self.host_index.remove(host) else {
            return Vec::new();
        };
        let last = self.reservoirs.len() - 1;
        self.by_bytes.remove(&(self.reservoirs[h].bytes, h));
        self.by_last_offer
            .remove(&(self.reservoirs[h].last_offer, h));
        if h != last {
            // swap_remove moves the last host into slot h: re-key its entries.
            let moved_bytes = self.reservoirs[last].bytes;
            self.by_bytes.remove(&(moved_bytes, last));
            self.by_bytes.insert((moved_bytes, h));
            let moved_offer = self.reservoirs[last].last_offer;
            self.by_last_offer.remove(&(moved_offer, last));
            self.by_last_offer.insert((moved_offer, h));
            if let Some(i) = self.host_index.get_mut(&self.names[last]) {
                *i = h;
            }
        }
        self.names.swap_remove(h);
        let removed = self.reservoirs.swap_remove(h);
        self.total_bytes -= removed.bytes;
        self.host_total_bytes -= removed.host_bytes + self.config.host_entry_bytes;
        removed.items
    }

    /// The current sample of `host`.
    pub fn samples(&self, host: &str) -> Option<&[T]> {
        let &h = self.host_index.get(host)?;
        Some(&self.reservoirs[h].items)
    }

    /// How many samples were offered for `host` (selected or not).
    pub fn seen(&self, host: &str) -> u64 {
        self.host_index
            .get(host)
            .map_or(0, |&h| self.reservoirs[h].seen)
    }

    /// The current reservoir size of `host` (lower than the configured count after byte-budget
    /// shrinking).
    pub fn capacity(&self, host: &str) -> Option<usize> {
        let &h = self.host_index.get(host)?;
        Some(self.reservoirs[h].capacity)
    }

    /// Bytes held for `host`.
    pub fn host_bytes(&self, host: &str) -> usize {
        self.host_index
            .get(host)
            .map_or(0, |&h| self.reservoirs[h].bytes)
    }

    /// Hosts sampled so far, in order of first appearance.
    pub fn hosts(&self) -> impl Iterator<Item = &str> + '_ {
        self.names.iter().map(String::as_str)
    }

    /// Number of hosts sampled.
    pub fn host_count(&self) -> usize {
        self.names.len()
    }

    /// Bytes held over all hosts: samples, per-host entries and what the caller reported holding
    /// per host (what the global budget bounds).
    pub fn total_bytes(&self) -> usize {
        self.held_bytes()
    }

    /// Bytes of the samples alone, over all hosts.
    pub fn sample_bytes(&self) -> usize {
        self.total_bytes
    }

    /// Counters.
    pub fn stats(&self) -> &SamplerStats {
        &self.stats
    }

    /// The configuration in use.
    pub fn config(&self) -> &SamplerConfig {
        &self.config
    }
}

enum Evicted<T> {
    Old(T),
    New(T),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample with a chosen byte size.
    #[derive(Debug, Clone, PartialEq)]
    struct Item {
        id: u32,
        size: usize,
    }

    impl SampleBytes for Item {
        fn sample_bytes(&self) -> usize {
            self.size
        }
    }

    /// Pearson chi-square statistic of observed counts against equal expected counts.
    fn chi_square(counts: &[u64]) -> f64 {
        let total: u64 = counts.iter().sum();
        let expected = total as f64 / counts.len() as f64;
        counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    }

    /// Inclusion counts per group of 100 stream positions over many seeded runs.
    fn inclusion(config: impl Fn(u64) -> SamplerConfig, size: impl Fn(u32) -> usize) -> Vec<u64> {
        let mut groups = vec![0u64; 10];
        for seed in 0..600u64 {
            let mut s = ReservoirSampler::new(config(seed));
            for id in 0..1000u32 {
                s.offer("h", Item { id, size: size(id) });
            }
            for item in s.samples("h").unwrap_or(&[]) {
                groups[item.id as usize / 100] += 1;
            }
        }
        groups
    }

    #[test]
    fn algorithm_r_is_uniform() {
        let groups = inclusion(
            |seed| SamplerConfig {
                per_host_items: 100,
                seed,
                ..SamplerConfig::default()
            },
            |_| 10,
        );
        assert_eq!(groups.iter().sum::<u64>(), 600 * 100);
        // 9 degrees of freedom: 27.88 is the 0.1% critical value.
        let chi = chi_square(&groups);
        assert!(chi < 27.88, "chi-square {chi}, groups {groups:?}");
        // And it can fail: a sampler keeping the first 100 would be maximally non-uniform.
        assert!(chi_square(&[60_000, 0, 0, 0, 0, 0, 0, 0, 0, 0]) > 27.88);
    }

    #[test]
    fn byte_budget_shrinking_stays_uniform() {
        // Sizes vary (independently of position); 100 slots would need ~3,450 bytes on average,
        // the budget allows 2,000, so the reservoir shrinks.
        let size = |id: u32| 10 + (id as usize * 7919) % 50;
        let groups = inclusion(
            |seed| SamplerConfig {
                per_host_items: 100,
                per_host_bytes: 2_000,
                seed,
                ..SamplerConfig::default()
            },
            size,
        );
        let chi = chi_square(&groups);
        assert!(chi < 27.88, "chi-square {chi}, groups {groups:?}");
        let mut s = ReservoirSampler::new(SamplerConfig {
            per_host_items: 100,
            per_host_bytes: 2_000,
            ..SamplerConfig::default()
        });
        for id in 0..1000u32 {
            s.offer("h", Item { id, size: size(id) });
        }
        assert!(s.host_bytes("h") <= 2_000);
        assert!(s.capacity("h").unwrap_or(0) < 100);
        assert!(s.stats().host_budget_evictions > 0);
    }

    #[test]
    fn bounds_hold_and_evictions_account_for_everything() {
        let config = SamplerConfig {
            per_host_items: 20,
            per_host_bytes: 500,
            global_bytes: 3_000,
            host_entry_bytes: 0,
            max_hosts: 8,
            seed: 3,
        };
        let mut s = ReservoirSampler::new(config.clone());
        let mut rng = SmallRng::seed_from_u64(99);
        let mut held: HashMap<(String, u32), usize> = HashMap::new();
        for id in 0..20_000u32 {
            let host = format!("h{}", rng.random_range(0..12u32));
            let size = rng.random_range(1..120usize);
            let offer = s.offer(&host, Item { id, size });
            if offer.kept() {
                assert!(offer.returned.is_none());
                held.insert((host.clone(), id), size);
            } else {
                assert_eq!(offer.returned.as_ref().map(|i| i.id), Some(id));
            }
            for (h, item) in offer.evicted {
                assert_ne!(
                    item.id, id,
                    "the offered sample is never reported as evicted"
                );
                assert!(
                    held.remove(&(h, item.id)).is_some(),
                    "evicted something not held"
                );
            }
            assert!(s.total_bytes() <= config.global_bytes);
            assert!(s.host_count() <= config.max_hosts);
            assert!(s.host_bytes(&host) <= config.per_host_bytes);
            assert!(s.samples(&host).map_or(0, <[Item]>::len) <= config.per_host_items);
        }
        // What the caller believes is held is exactly what the sampler holds.
        let held_total: usize = held.values().sum();
        assert_eq!(held_total, s.total_bytes());
        let sampled: usize = s
            .hosts()
            .map(|h| s.samples(h).map_or(0, <[Item]>::len))
            .sum();
        assert_eq!(sampled, held.len());
        assert!(
            s.stats().hosts_refused + s.stats().hosts_replaced > 0,
            "the host limit was in play"
        );
        assert!(s.stats().global_budget_evictions > 0);
        let too_big = s.offer("h0", Item { id: 0, size: 501 });
        assert_eq!(too_big.decision, Decision::TooLarge);
    }

    #[test]
    fn per_host_state_counts_and_the_least_active_hosts_give_way_once_samples_cannot() {
        let mut s = ReservoirSampler::new(SamplerConfig {
            per_host_items: 10,
            global_bytes: 1_000,
            host_entry_bytes: 50,
            ..SamplerConfig::default()
        });
        // Five hosts of one 10-byte sample and 140 bytes of the caller's state: 200 bytes each.
        for h in 0..5u32 {
            let offer = s.offer_with_host_bytes(&format!("h{h}"), Item { id: h, size: 10 }, 140);
            assert!(offer.kept() && offer.evicted_hosts.is_empty());
        }
        assert_eq!(s.total_bytes(), 1_000);
        assert_eq!(s.sample_bytes(), 50);
        // A sixth host: every host holds one sample, so the least active host goes whole.
        let offer = s.offer_with_host_bytes("h5", Item { id: 5, size: 10 }, 140);
        assert!(offer.kept());
        assert_eq!(offer.evicted_hosts, ["h0"]);
        assert_eq!(offer.evicted.len(), 1);
        assert_eq!((s.host_count(), s.total_bytes()), (5, 1_000));
        // A host with two samples gives up a sample first; h1 is active again, h2 goes next.
        let offer = s.offer("h1", Item { id: 6, size: 10 });
        assert!(offer.evicted_hosts.is_empty());
        assert_eq!(s.total_bytes(), 1_000);
        let offer = s.offer_with_host_bytes("h6", Item { id: 7, size: 10 }, 140);
        assert_eq!(offer.evicted_hosts, ["h2"]);
        // The caller's state growing pushes the least active hosts out as well.
        let offer = s.offer_with_host_bytes("h6", Item { id: 8, size: 10 }, 540);
        assert_eq!(offer.evicted_hosts, ["h3", "h4"]);
        assert!(s.total_bytes() <= 1_000);
        assert_eq!(s.stats().hosts_given_way_to_budget, 4);
        let held: usize = s.hosts().map(|h| s.host_bytes(h)).sum();
        assert_eq!(held, s.sample_bytes());
    }

    #[test]
    fn global_budget_shrinks_the_largest_host_first() {
        let mut s = ReservoirSampler::new(SamplerConfig {
            per_host_items: 1_000,
            per_host_bytes: 10_000,
            global_bytes: 1_000,
            host_entry_bytes: 0,
            max_hosts: 10,
            seed: 1,
        });
        for id in 0..90 {
            s.offer("big", Item { id, size: 10 });
        }
        for id in 0..10 {
            s.offer("small", Item { id, size: 10 });
        }
        assert_eq!(s.total_bytes(), 1_000);
        let offer = s.offer("small", Item { id: 10, size: 10 });
        assert!(offer.kept());
        assert_eq!(offer.evicted.len(), 1);
        assert_eq!(offer.evicted[0].0, "big");
        assert_eq!(s.samples("small").map(<[Item]>::len), Some(11));
        assert_eq!(s.capacity("big"), Some(89));
    }

    /// An item keyed like one in the reservoir.
    #[derive(Debug, Clone, PartialEq)]
    struct Page {
        url: u64,
        fetch: u32,
        size: usize,
    }

    impl SampleBytes for Page {
        fn sample_bytes(&self) -> usize {
            self.size
        }
        fn sample_key(&self) -> Option<u64> {
            Some(self.url)
        }
    }

    #[test]
    fn one_key_is_one_sample_and_the_latest_fetch_wins() {
        let mut s = ReservoirSampler::new(SamplerConfig {
            per_host_items: 10,
            ..SamplerConfig::default()
        });
        for fetch in 0..500 {
            let offer = s.offer(
                "h",
                Page {
                    url: 7,
                    fetch,
                    size: 10 + fetch as usize % 3,
                },
            );
            assert!(offer.kept());
            if fetch > 0 {
                assert_eq!(offer.decision, Decision::Refreshed);
                assert_eq!(offer.evicted.len(), 1, "the previous fetch is handed back");
                assert_eq!(offer.evicted[0].1.fetch, fetch - 1);
            }
        }
        let samples = s.samples("h").expect("host");
        assert_eq!(samples.len(), 1, "500 fetches of one URL are one sample");
        assert_eq!(samples[0].fetch, 499, "the latest fetch wins");
        assert_eq!(s.total_bytes(), samples[0].size);
        assert_eq!(
            s.seen("h"),
            1,
            "a refresh is not a new member of the population"
        );
        // Resending a whole stream's pages leaves the sample as it was.
        for url in 0..8 {
            s.offer(
                "h",
                Page {
                    url,
                    fetch: 1,
                    size: 10,
                },
            );
        }
        for url in 0..8 {
            s.offer(
                "h",
                Page {
                    url,
                    fetch: 2,
                    size: 10,
                },
            );
        }
        let samples = s.samples("h").expect("host");
        assert_eq!(samples.len(), 8);
        assert!(samples.iter().all(|p| p.fetch == 2));
        assert_eq!(
            s.stats().refreshed,
            499 + 1 + 8,
            "url 7 of the resent pages too"
        );
    }

    #[test]
    fn at_the_host_limit_the_host_idle_longest_gives_way_and_active_hosts_stay() {
        let mut s = ReservoirSampler::new(SamplerConfig {
            per_host_items: 100,
            max_hosts: 3,
            ..SamplerConfig::default()
        });
        for id in 0..5 {
            s.offer("idle", Item { id, size: 1 });
        }
        for id in 0..10 {
            s.offer("busy-1", Item { id, size: 1 });
            s.offer("busy-2", Item { id, size: 1 });
        }
        let offer = s.offer("new", Item { id: 0, size: 1 });
        assert_eq!(offer.decision, Decision::Added);
        assert_eq!(offer.evicted_hosts, ["idle"]);
        assert_eq!(
            offer.evicted.len(),
            5,
            "the idle host's samples are handed back"
        );
        assert!(offer.evicted.iter().all(|(host, _)| host == "idle"));
        assert_eq!(s.host_count(), 3);
        assert!(s.samples("idle").is_none());
        assert_eq!(s.samples("busy-1").map(<[Item]>::len), Some(10));
        // Now every host is active: a burst of new hosts is refused, not let in.
        let refused = s.offer("burst", Item { id: 0, size: 1 });
        assert_eq!(refused.decision, Decision::HostRefused);
        assert_eq!((s.stats().hosts_replaced, s.stats().hosts_refused), (1, 1));
    }

    #[test]
    fn remove_host_keeps_accounting() {
        let mut s = ReservoirSampler::new(SamplerConfig {
            per_host_items: 10,
            global_bytes: 32,
            max_hosts: 3,
            ..SamplerConfig::default()
        });
        for (i, host) in ["a", "b", "c"].iter().enumerate() {
            for id in 0..5 {
                s.offer(host, Item { id, size: i + 1 });
            }
        }
        assert_eq!(s.total_bytes(), 5 + 10 + 15);
        let gone = s.remove_host("a");
        assert_eq!(gone.len(), 5);
        assert!(s.remove_host("a").is_empty());
        assert_eq!(s.total_bytes(), 25);
        assert_eq!(s.samples("c").map(<[Item]>::len), Some(5));
        assert_eq!(s.host_bytes("c"), 15);
        assert!(s.offer("d", Item { id: 0, size: 1 }).kept());
        // The global budget still finds the largest host: "c", which moved into "a"'s slot.
        for id in 1..10 {
            s.offer("d", Item { id, size: 1 });
        }
        assert_eq!(s.host_bytes("d"), 10);
        assert!(s.total_bytes() <= 32);
        assert!(s.host_bytes("c") < 15, "c gave up samples");
        assert_eq!(s.host_bytes("b"), 10);
        assert_eq!(s.hosts().count(), 3);
        let sum: usize = s.hosts().map(|h| s.host_bytes(h)).sum();
        assert_eq!(sum, s.total_bytes());
    }

    #[test]
    fn same_seed_same_sample() {
        let run = |seed| {
            let mut s = ReservoirSampler::new(SamplerConfig {
                per_host_items: 10,
                seed,
                ..SamplerConfig::default()
            });
            for id in 0..500u32 {
                s.offer(["a", "b"][id as usize % 2], Item { id, size: 1 });
            }
            let ids = |h| {
                s.samples(h)
                    .unwrap_or(&[])
                    .iter()
                    .map(|i| i.id)
                    .collect::<Vec<_>>()
            };
            (ids("a"), ids("b"))
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
