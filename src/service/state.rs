//! The sidecar's shared state: the canonicalizer and its rule book, the seen-set, per-host counters
//! and process totals. Every gRPC service holds an `Arc<Sidecar>`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use dashmap::DashMap;

use super::durable::DurableSeen;
use super::mirrors::MirrorWatch;
use super::replay::ReplayCache;
use crate::canon::seen::SeenSet;
use crate::canon::Canonicalizer;
use crate::config::ServeConfig;
use crate::fleet::Fleet;

/// Most hosts tracked with per-host counters, whatever the sample budget.
pub const MAX_TRACKED_HOSTS: usize = 1_000_000;

/// Fewest hosts tracked with per-host counters, however small the sample budget.
pub const MIN_TRACKED_HOSTS: usize = 1_000;

/// Sample budget bytes per host tracked with counters: the hosts tracked follow the budget
/// (65,536 under a 64 MiB budget), as the hosts sampled do, instead of the crawl. An entry (name,
/// counters, map slot) costs about 150 bytes, so the counters cost at most about 15% of the budget
/// beside it.
pub const BUDGET_BYTES_PER_TRACKED_HOST: u64 = 1_024;

/// Counters of one host. Atomics, so hot-path updates never take a lock beyond the map's shard.
#[derive(Debug, Default)]
pub struct HostCounters {
    pub urls_canonicalized: AtomicU64,
    pub duplicates_suppressed: AtomicU64,
    /// Pages observed by ingest and their summed body sizes (for the average page size).
    pub pages_observed: AtomicU64,
    pub page_bytes: AtomicU64,
    /// The sidecar's use tick at the host's last use: the least recently used hosts give way
    /// when the table is full ([`Sidecar::host`]).
    last_used: AtomicU64,
}

impl HostCounters {
    /// Average body size of the host's observed pages; `None` before any page.
    pub fn avg_page_bytes(&self) -> Option<u64> {
        let pages = self.pages_observed.load(Ordering::Relaxed);
        (pages > 0).then(|| self.page_bytes.load(Ordering::Relaxed) / pages)
    }
}

/// Process totals since start (GetStats).
#[derive(Debug, Default)]
pub struct Totals {
    pub urls_canonicalized: AtomicU64,
    pub urls_changed_static: AtomicU64,
    pub urls_changed_learned: AtomicU64,
    pub duplicates_suppressed: AtomicU64,
    pub urls_invalid: AtomicU64,
    pub estimated_bytes_saved: AtomicU64,
    pub pages_observed: AtomicU64,
    pub page_bytes: AtomicU64,
    pub relearn_runs: AtomicU64,
    pub relearn_failures: AtomicU64,
}

impl Totals {
    /// Average body size over every observed page; `None` before any page.
    pub fn avg_page_bytes(&self) -> Option<u64> {
        let pages = self.pages_observed.load(Ordering::Relaxed);
        (pages > 0).then(|| self.page_bytes.load(Ordering::Relaxed) / pages)
    }
}

/// Everything the services share.
pub struct Sidecar {
    pub config: ServeConfig,
    pub canonicalizer: Canonicalizer,
    /// The local seen-set. With a fleet it caches what this sidecar recorded in the shared one
    /// and answers alone while Redis is unreachable.
    pub seen: SeenSet,
    /// When answers that recorded canonical forms may be sent.
    pub durable: DurableSeen,
    /// Answers kept for retries under the same request id.
    pub replay: ReplayCache,
    /// The fleet's shared state (`--fleet`); `None` for a single embedded sidecar.
    pub fleet: Option<Arc<Fleet>>,
    /// Per-host counters, of at most `tracked_hosts_limit` hosts (see [`Sidecar::host`]).
    pub hosts: DashMap<String, Arc<HostCounters>>,
    /// Hosts `hosts` may hold: the sample budget over [`BUDGET_BYTES_PER_TRACKED_HOST`], within
    /// [`MIN_TRACKED_HOSTS`]..=[`MAX_TRACKED_HOSTS`].
    tracked_hosts_limit: usize,
    /// Counts uses of per-host counters: the clock of their least-recently-used order.
    use_tick: AtomicU64,
    /// What mirror detection knows of the sampled hosts.
    pub mirrors: MirrorWatch,
    pub totals: Totals,
    pub started: Instant,
    /// Latch: set once the sidecar restored its state and may answer; never unset.
    ready: AtomicBool,
}

impl Sidecar {
    /// State for a configuration, with an empty seen-set and no rules.
    pub fn new(config: ServeConfig, canonicalizer: Canonicalizer) -> Self {
        let seen = SeenSet::journaled(&config.seen_set);
        let durable = DurableSeen::new(config.seen_durability);
        let replay = ReplayCache::new(config.replay_cache_bytes);
        let tracked_hosts_limit =
            usize::try_from(config.learning.sample_budget_bytes / BUDGET_BYTES_PER_TRACKED_HOST)
                .unwrap_or(MAX_TRACKED_HOSTS)
                .clamp(MIN_TRACKED_HOSTS, MAX_TRACKED_HOSTS);
        Sidecar {
            config,
            canonicalizer,
            seen,
            durable,
            replay,
            fleet: None,
            hosts: DashMap::new(),
            tracked_hosts_limit,
            use_tick: AtomicU64::new(0),
            mirrors: MirrorWatch::default(),
            totals: Totals::default(),
            started: Instant::now(),
            ready: AtomicBool::new(false),
        }
    }

    /// The same state, sharing the seen-set (and learning) with a fleet.
    pub fn with_fleet(mut self, fleet: Arc<Fleet>) -> Self {
        self.fleet = Some(fleet);
        self
    }

    /// The counters of a host, created on first use. When the table is full, the least recently
    /// used half of it gives way first (their counts restart at zero if the host comes back), so
    /// the table follows the hosts in use instead of every host a crawl ever named, and the
    /// sweep's cost is spread over as many insertions as it frees.
    pub fn host(&self, host: &str) -> Arc<HostCounters> {
        let tick = self.use_tick.fetch_add(1, Ordering::Relaxed);
        if let Some(entry) = self.hosts.get(host) {
            entry.value().last_used.store(tick, Ordering::Relaxed);
            return Arc::clone(entry.value());
        }
        if self.hosts.len() >= self.tracked_hosts_limit {
            self.evict_least_used_hosts();
        }
        let entry = self.hosts.entry(host.to_owned()).or_default();
        entry.value().last_used.store(tick, Ordering::Relaxed);
        Arc::clone(entry.value())
    }

    /// Removes the least recently used half of the per-host counters.
    fn evict_least_used_hosts(&self) {
        let mut ticks: Vec<u64> = self
            .hosts
            .iter()
            .map(|entry| entry.value().last_used.load(Ordering::Relaxed))
            .collect();
        if ticks.is_empty() {
            return;
        }
        let middle = ticks.len() / 2;
        let (_, &mut median, _) = ticks.select_nth_unstable(middle);
        self.hosts
            .retain(|_, counters| counters.last_used.load(Ordering::Relaxed) >= median);
    }

    /// Drops a host's counters (the host left the sample and has no rules: nothing will ask
    /// for them before it is seen again).
    pub fn forget_host(&self, host: &str) {
        self.hosts.remove(host);
    }

    /// Average page size for a host's savings estimate: the host's own average, else the average
    /// over all observed pages, else zero (nothing observed yet: no estimate).
    pub fn page_size_estimate(&self, host: Option<&HostCounters>) -> u64 {
        host.and_then(HostCounters::avg_page_bytes)
            .or_else(|| self.totals.avg_page_bytes())
            .unwrap_or(0)
    }

    /// Marks the sidecar ready (restored and serving). Once ready, always ready.
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// Whether the sidecar finished starting.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
}
