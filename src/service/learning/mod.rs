//! The sidecar's learning loop: accepted pages in, live rule sets out, everything durable. The
//! learning itself is [`crate::pipeline`]'s, the same as the offline commands'; this module owns
//! what only a long-running sidecar has, one concern per file:
//!
//! - [`samples`]: a host's evidence as the sidecar holds it: every accepted page observed into the
//!   host's template model, its [`EvidencePage`](crate::pipeline::EvidencePage) offered to a bounded
//!   reservoir ([`crate::ingest::sample`]), changes made durable in one store transaction before an
//!   ingest stream is acknowledged.
//! - [`sample_record`]: a sample's stored bytes (postcard's encoding) written without serde.
//! - [`scheduler`]: when a host is due: `--relearn-min-new-samples` new pages, or
//!   `--relearn-interval-secs` after the first page not yet learned from (hosts never learned
//!   included), on tokio's clock so tests can pause time; triggers and the bytes-saved total are
//!   stored with the samples, so a restart resumes the schedule where it was.
//! - [`jobs`]: relearn jobs (scheduled or asked for by an operator), at most
//!   `--relearn-concurrency` hosts at once on blocking threads, so the async threads keep answering
//!   Canonicalize; a relearn of hosts all already learning joins the running job. The learner
//!   itself runs on a pool of as many threads, which bounds the cores learning takes whether one
//!   host is learned or several.
//! - [`relearn`]: one host relearned: samples → clusters → rules through the live-rule gate
//!   ([`crate::pipeline::learn_checked`]), stored, then swapped live; failures are a typed
//!   [`RelearnError`](crate::pipeline::RelearnError). Each host is learned beside the hosts
//!   learned before it ([`crate::learn::shared_evidence`]): what their samples showed may make
//!   up what its own shows too thinly.
//! - [`versions`]: each host's last [`versions::KEPT_VERSIONS`] rule sets, rollback, and the reads
//!   the admin API makes of them.
//! - [`fleet`]: with `--fleet`, relearns through the host's lease from the whole fleet's samples,
//!   rule sets published on the fleet's board and followed from it, rollback fleet-wide.
//! - [`mirrors`]: mirror detection passes with hysteresis, the operator's pins and forbids, and
//!   the live mirror sets, durable in one mirror book.
//! - [`fleet_mirrors`]: with `--fleet`, that book is the fleet's: passes and decisions publish it
//!   under the mirror lease, and every sidecar follows it.
//! - [`seen_log`]: the seen-set's persistence: keys recorded by Canonicalize are journaled in memory
//!   and appended to the store every [`SEEN_FLUSH_INTERVAL`], and at once when an answer waits for
//!   them ([`crate::service::durable`]).

mod fleet;
mod fleet_mirrors;
mod jobs;
pub mod mirrors;
mod relearn;
mod sample_record;
mod samples;
mod scheduler;
mod seen_log;
mod versions;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use dashmap::DashMap;
use parking_lot::Mutex;
use tokio::sync::{watch, Semaphore};

use super::state::Sidecar;
use crate::content::{ContentConfig, TemplateModel};
use crate::ingest::sample::{ReservoirSampler, SamplerConfig};
use crate::learn::{LearnConfig, SharedEvidence};
use crate::pipeline::{AcceptPolicy, GatePolicy};
use crate::store::{SampleBatch, Store, StoreError};
use crate::telemetry;

pub use fleet_mirrors::FLEET_SUMMARIES_PER_PASS;
pub use samples::HostLearningSummary;
pub use seen_log::SEEN_FLUSH_INTERVAL;

use jobs::Jobs;
use samples::Sample;
use scheduler::Trigger;
use versions::RuleHistory;

/// Learning state of one host.
struct HostLearning {
    /// The host's template model: it has observed every accepted page of the host.
    template: TemplateModel,
    /// Whether the model changed since it was last stored.
    template_dirty: bool,
    /// What makes the host due for relearning.
    trigger: Trigger,
    /// Whether the trigger changed since it was last stored.
    trigger_dirty: bool,
    /// When the live rules were learned (0: never).
    last_learned_unix_ms: i64,
    /// Duplicate clusters found by the last relearn.
    clusters: u64,
    /// Rule versions, newest first.
    history: RuleHistory,
    /// Held while the host is relearned: one relearn of a host at a time.
    relearn_lock: Arc<Mutex<()>>,
}

impl HostLearning {
    fn new(content: &ContentConfig) -> Self {
        HostLearning {
            template: TemplateModel::new(content),
            template_dirty: false,
            trigger: Trigger::default(),
            trigger_dirty: false,
            last_learned_unix_ms: 0,
            clusters: 0,
            history: RuleHistory::default(),
            relearn_lock: Arc::default(),
        }
    }
}

/// The learning loop's state (see the module docs).
pub struct Learning {
    sidecar: Arc<Sidecar>,
    store: Arc<Store>,
    content: ContentConfig,
    learn: LearnConfig,
    accept: AcceptPolicy,
    gate: GatePolicy,
    sampler: Mutex<ReservoirSampler<Sample>>,
    hosts: DashMap<String, Arc<Mutex<HostLearning>>>,
    pending: Mutex<SampleBatch>,
    /// Serializes take-and-commit of pending samples, so an acknowledgement never overtakes the
    /// commit of its own samples made by a concurrent stream.
    persist_lock: Mutex<()>,
    jobs: Mutex<Jobs>,
    permits: Arc<Semaphore>,
    /// The threads learning and mirror detection run on: as many as hosts may be learned at
    /// once (`relearn_concurrency`). The learner shares one host's work out among the threads
    /// of the pool it runs in, and detection its pairs, so this bounds the cores they take from
    /// serving, however many hosts are learned at once. `None` when the threads could not be started: learning then
    /// runs on the blocking thread that asked, and the learner's shared-out work on the
    /// process-wide pool.
    learn_threads: Option<rayon::ThreadPool>,
    next_sample_id: AtomicU64,
    next_job_id: AtomicU64,
    /// Mirror sets: streaks, decisions, live sets ([`mirrors`]).
    mirror_book: Mutex<mirrors::MirrorBook>,
    /// Held by a detection pass or an operator's decision: one change of the book at a time.
    mirror_pass: Mutex<()>,
    /// In a fleet: when recent passes fetched other sidecars' origins ([`fleet_mirrors`]).
    fleet_fetches: Mutex<fleet_mirrors::FetchRotation>,
    /// What each host's learning found, read by the next hosts learned
    /// ([`crate::learn::shared_evidence`]): in memory, bounded, rebuilt by relearns after a
    /// restart.
    shared_evidence: SharedEvidence,
}

impl Learning {
    /// Runs `work` on the learning threads ([`Learning::learn_threads`]): what it shares out
    /// among threads stays within them.
    fn on_learn_threads<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        match &self.learn_threads {
            Some(pool) => pool.install(work),
            None => work(),
        }
    }
}

/// The pool of [`Learning::learn_threads`].
fn learn_threads(threads: usize) -> Option<rayon::ThreadPool> {
    match rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("undust-learn-{i}"))
        .build()
    {
        Ok(pool) => Some(pool),
        Err(error) => {
            tracing::warn!(%error, threads, "learning threads not started: learning runs on the blocking threads");
            None
        }
    }
}

impl Learning {
    /// Opens the learning loop on restored state: rules compiled and live, samples and template
    /// models back, the seen-set refilled.
    pub fn restore(sidecar: Arc<Sidecar>, store: Arc<Store>) -> Result<Arc<Learning>, StoreError> {
        let learning_config = &sidecar.config.learning;
        let budget = usize::try_from(learning_config.sample_budget_bytes).unwrap_or(usize::MAX);
        let sampler = ReservoirSampler::new(SamplerConfig {
            per_host_items: learning_config.sample_pages_per_host,
            per_host_bytes: budget,
            global_bytes: budget,
            host_entry_bytes: samples::HOST_ENTRY_BYTES,
            max_hosts: learning_config.sample_max_hosts,
            ..SamplerConfig::default()
        });
        let learning = Arc::new(Learning {
            content: ContentConfig::default(),
            learn: LearnConfig::default(),
            accept: AcceptPolicy {
                max_body_bytes: learning_config.ingest_max_body_bytes,
            },
            gate: GatePolicy::default(),
            sampler: Mutex::new(sampler),
            hosts: DashMap::new(),
            pending: Mutex::new(SampleBatch::default()),
            persist_lock: Mutex::new(()),
            jobs: Mutex::new(Jobs::default()),
            permits: Arc::new(Semaphore::new(learning_config.relearn_concurrency)),
            learn_threads: learn_threads(learning_config.relearn_concurrency),
            next_sample_id: AtomicU64::new(1),
            next_job_id: AtomicU64::new(1),
            mirror_book: Mutex::default(),
            mirror_pass: Mutex::new(()),
            fleet_fetches: Mutex::default(),
            shared_evidence: SharedEvidence::new(),
            sidecar,
            store,
        });
        learning.restore_rules()?;
        learning.restore_mirrors()?;
        learning.restore_samples()?;
        learning.restore_schedule()?;
        let keys = learning.restore_seen()?;
        if let Some(aside) = learning.store.moved_aside() {
            tracing::error!(moved_to = %aside.display(), "started from an empty store: the previous one was unreadable");
        }
        tracing::info!(
            hosts_with_rules = learning.sidecar.canonicalizer.rules().len(),
            samples = learning.sample_count(),
            seen_keys = keys,
            skipped_corrupt = learning.store.skipped(),
            "state restored"
        );
        learning.publish_gauges();
        Ok(learning)
    }

    /// The content stage's configuration pages are analysed with.
    pub fn content_config(&self) -> &ContentConfig {
        &self.content
    }

    /// What a page must be to count as evidence here (the body limit is a sidecar knob).
    pub fn accept_policy(&self) -> &AcceptPolicy {
        &self.accept
    }

    fn host_state(&self, host: &str) -> Arc<Mutex<HostLearning>> {
        if let Some(state) = self.hosts.get(host) {
            return Arc::clone(state.value());
        }
        let state = self
            .hosts
            .entry(host.to_owned())
            .or_insert_with(|| Arc::new(Mutex::new(HostLearning::new(&self.content))));
        Arc::clone(state.value())
    }

    /// Flushes what is pending (on shutdown).
    pub fn flush(&self) {
        self.flush_seen();
        if let Err(err) = self.persist_samples() {
            tracing::error!(%err, "samples could not be persisted at shutdown");
        }
    }

    fn publish_gauges(&self) {
        metrics::gauge!(telemetry::SAMPLES).set(self.sample_count() as f64);
        {
            let sampler = self.sampler.lock();
            metrics::gauge!(telemetry::SAMPLE_HELD_BYTES).set(sampler.total_bytes() as f64);
            metrics::gauge!(telemetry::SAMPLED_HOSTS).set(sampler.host_count() as f64);
        }
        metrics::gauge!(telemetry::HOSTS)
            .set(self.host_count().max(self.sidecar.hosts.len()) as f64);
        metrics::gauge!(telemetry::RULES_ACTIVE)
            .set(self.sidecar.canonicalizer.rules().rule_count() as f64);
        let clusters: u64 = self
            .hosts
            .iter()
            .map(|entry| entry.value().lock().clusters)
            .sum();
        metrics::gauge!(telemetry::CLUSTERS).set(clusters as f64);
    }

    /// Starts the background work (seen-set flushing, relearn scheduling); it ends when `stop`
    /// turns true, after a last flush.
    pub fn start(self: &Arc<Self>, mut stop: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
        let learning = Arc::clone(self);
        tokio::spawn(async move {
            let mut flush = tokio::time::interval(seen_log::SEEN_FLUSH_INTERVAL);
            let mut schedule = tokio::time::interval(scheduler::SCHEDULER_TICK);
            // Periodic mirror detection: the first tick (at once) is skipped, the state was just
            // restored.
            let mirror_every = learning.sidecar.config.learning.relearn_interval;
            let mut mirror_tick =
                tokio::time::interval_at(tokio::time::Instant::now() + mirror_every, mirror_every);
            mirror_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            schedule.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = flush.tick() => {
                        let learning = Arc::clone(&learning);
                        let _ = tokio::task::spawn_blocking(move || learning.flush_seen()).await;
                    }
                    () = learning.sidecar.durable.drain_wanted() => {
                        let learning = Arc::clone(&learning);
                        let _ = tokio::task::spawn_blocking(move || learning.flush_seen()).await;
                    }
                    _ = schedule.tick() => learning.schedule(),
                    _ = mirror_tick.tick() => {
                        // Not awaited here: a long pass must not hold up seen-set flushes.
                        let learning = Arc::clone(&learning);
                        tokio::spawn(async move { learning.mirror_pass_async().await });
                    }
                    changed = stop.changed() => {
                        if changed.is_err() || *stop.borrow_and_update() {
                            break;
                        }
                    }
                }
            }
            let learning = Arc::clone(&learning);
            let _ = tokio::task::spawn_blocking(move || learning.flush_seen()).await;
        })
    }

    /// Hosts with samples or rules.
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|entry| entry.key().clone()).collect()
    }

    /// Hosts known to learning.
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }
}

/// A learning loop over a store in `knobs.data_dir`, as the server builds it, for the tests of
/// its parts.
#[cfg(test)]
fn learning_for_tests(knobs: crate::config::Knobs) -> Arc<Learning> {
    use crate::canon::normalize::StaticNormalizer;
    use crate::canon::Canonicalizer;

    let config = crate::config::ServeConfig::from_knobs(knobs).expect("configuration");
    crate::store::create_private_dir(&config.data_dir).expect("data dir");
    let store = Arc::new(Store::open(&config.data_dir).expect("store"));
    let normalizer = StaticNormalizer::new(config.static_config.clone()).expect("normalizer");
    let sidecar = Arc::new(Sidecar::new(config, Canonicalizer::new(normalizer)));
    Learning::restore(sidecar, store).expect("learning")
}

#[cfg(test)]
mod tests {
    use super::learn_threads;

    /// The learner's shared-out work runs on the pool it is installed in: as many threads as
    /// `--relearn-concurrency`, named so an operator can tell them in `top -H`.
    #[test]
    fn learning_runs_on_as_many_threads_as_hosts_learned_at_once() {
        for threads in [1, 3] {
            let pool = learn_threads(threads).expect("threads start");
            let (seen, name) = pool.install(|| {
                (
                    rayon::current_num_threads(),
                    std::thread::current().name().map(str::to_owned),
                )
            });
            assert_eq!(seen, threads);
            assert!(name.is_some_and(|n| n.starts_with("undust-learn-")));
        }
    }
}
