//! The sidecar's learning loop: samples in, rule sets out, everything durable.
//!
//! - **Sampling.** Every accepted page is analysed once on arrival (pagelets, template features,
//!   simhash contributions, the canonical its HTML head declares; the body is then dropped). The
//!   host's template model observes it, and the page's compact digest is offered to the host's
//!   reservoir ([`crate::ingest::sample`]), bounded per host and globally. A sample keeps one
//!   canonical: the crawler's `rel_canonical` when it sent one, else the HTML's (resolved against
//!   the URL the body came from and statically normalized), so a relearn after a restart uses it
//!   without the body. Changes are made durable in one store transaction before the ingest stream
//!   is acknowledged.
//! - **Relearning.** A host is relearned when `--relearn-min-new-samples` new pages entered its
//!   sample, or when `--relearn-interval-secs` passed and any did, or when an operator asks. A job
//!   re-fingerprints the host's samples against its *current* template model, clusters them
//!   ([`crate::cluster`]), learns rules ([`crate::learn`]), checks the new rule set against the
//!   samples, stores it, and only then swaps it live. At most `--relearn-concurrency` hosts learn at
//!   once, on blocking threads, so the async threads keep answering Canonicalize. A relearn asked for
//!   a host that is already learning joins the running job.
//! - **Versions.** Each host keeps its last [`KEPT_VERSIONS`] rule sets; rollback puts one live
//!   again (durably first).
//! - **Seen-set persistence.** Keys recorded by Canonicalize are journaled in memory and appended
//!   to the store every [`SEEN_FLUSH_INTERVAL`]; a crash loses at most that window, which can only
//!   make those URLs NEW again (a repeated fetch), never hide a URL. The persisted log is compacted
//!   when it grows past twice the live set.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::sync::{watch, Semaphore};
use tonic::Status;

use super::state::Sidecar;
use crate::canon::engine::HostRules;
use crate::canon::rules::{HostRuleSet, RuleFile};
use crate::cluster::{ClusterBuilder, ClusterConfig, PageEvidence};
use crate::content::{self, ContentConfig, PageDigest, TemplateModel};
use crate::ingest::sample::{ReservoirSampler, SampleBytes, SamplerConfig};
use crate::learn::{learn_host, LabelledUrl, LearnConfig};
use crate::pb::{
    GetRulesResponse, HostRelearn, JobState, RelearnJob, RelearnRequest, RelearnResponse,
    RollbackRulesResponse,
};
use crate::store::{unix_ms, SampleBatch, Store, StoreError, StoredSample};
use crate::telemetry;

/// Rule set versions kept per host for rollback (the live one included).
pub const KEPT_VERSIONS: usize = 5;
/// How often recorded seen-set keys are appended to the store.
pub const SEEN_FLUSH_INTERVAL: Duration = Duration::from_millis(100);
/// How often the scheduler looks for hosts to relearn.
const SCHEDULER_TICK: Duration = Duration::from_secs(1);
/// Finished jobs remembered for GetRelearnJob.
const KEPT_JOBS: usize = 1_000;
/// Largest share of support pairs a new rule set may merge across different clusters of the
/// host's own samples before it is refused (the learner's proofing should already keep it far
/// lower; this is the last gate before going live).
const MAX_LIVE_FALSE_POSITIVE_RATE: f64 = 0.01;
/// Samples a host needs before it is worth learning.
const MIN_SAMPLES_TO_LEARN: usize = 10;

/// What ingest hands over for one accepted page.
pub struct ObservedEvidence {
    pub url: url::Url,
    pub final_url: Option<url::Url>,
    pub rel_canonical: Option<url::Url>,
    pub body: Vec<u8>,
}

/// One sampled page: URL evidence and content digest (no body). Stored with postcard: fields
/// cannot be added or skipped without breaking the decoding of stored samples.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Sample {
    id: u64,
    url: String,
    final_url: Option<String>,
    /// The crawler's declared canonical, else the one the page's HTML head declares.
    rel_canonical: Option<String>,
    digest: PageDigest,
}

impl SampleBytes for Sample {
    fn sample_bytes(&self) -> usize {
        let urls = self.url.len()
            + self.final_url.as_ref().map_or(0, String::len)
            + self.rel_canonical.as_ref().map_or(0, String::len);
        let pagelets: usize = self
            .digest
            .pagelets
            .iter()
            .map(|p| 48 + p.vector.len() * 2)
            .sum();
        std::mem::size_of::<Sample>() + urls + pagelets
    }
}

/// A host's rule versions, newest first, and which is live.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RuleHistory {
    live: u64,
    versions: Vec<HostRuleSet>,
}

impl RuleHistory {
    fn live_set(&self) -> Option<&HostRuleSet> {
        self.versions.iter().find(|set| set.version == self.live)
    }

    fn newest_version(&self) -> u64 {
        self.versions
            .iter()
            .map(|set| set.version)
            .max()
            .unwrap_or(0)
    }
}

/// Learning state of one host.
struct HostLearning {
    template: TemplateModel,
    template_dirty: bool,
    new_samples: u64,
    last_learned: Option<Instant>,
    last_learned_unix_ms: i64,
    clusters: u64,
    history: RuleHistory,
}

/// Per-host figures for ListHosts.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostLearningSummary {
    pub samples: u64,
    pub clusters: u64,
    pub last_learned_unix_ms: i64,
}

struct Job {
    record: Mutex<RelearnJob>,
    done: watch::Sender<bool>,
}

#[derive(Default)]
struct Jobs {
    by_id: HashMap<String, Arc<Job>>,
    finished: VecDeque<String>,
    /// Host → the job learning it now.
    running: HashMap<String, String>,
}

/// The learning loop's state (see the module docs).
pub struct Learning {
    sidecar: Arc<Sidecar>,
    store: Arc<Store>,
    content: ContentConfig,
    learn: LearnConfig,
    sampler: Mutex<ReservoirSampler<Sample>>,
    hosts: DashMap<String, Arc<Mutex<HostLearning>>>,
    pending: Mutex<SampleBatch>,
    /// Serializes take-and-commit of pending samples, so an acknowledgement never overtakes the
    /// commit of its own samples made by a concurrent stream.
    persist_lock: Mutex<()>,
    jobs: Mutex<Jobs>,
    permits: Arc<Semaphore>,
    next_sample_id: AtomicU64,
    next_job_id: AtomicU64,
}

impl Learning {
    /// Opens the learning loop on restored state: rules compiled and live, samples and template
    /// models back, the seen-set refilled.
    pub fn restore(sidecar: Arc<Sidecar>, store: Arc<Store>) -> Result<Arc<Learning>, StoreError> {
        let learning_config = &sidecar.config.learning;
        let sampler = ReservoirSampler::new(SamplerConfig {
            per_host_items: learning_config.sample_pages_per_host,
            per_host_bytes: usize::try_from(learning_config.sample_budget_bytes)
                .unwrap_or(usize::MAX),
            global_bytes: usize::try_from(learning_config.sample_budget_bytes)
                .unwrap_or(usize::MAX),
            ..SamplerConfig::default()
        });
        let learning = Arc::new(Learning {
            content: ContentConfig::default(),
            learn: LearnConfig::default(),
            sampler: Mutex::new(sampler),
            hosts: DashMap::new(),
            pending: Mutex::new(SampleBatch::default()),
            persist_lock: Mutex::new(()),
            jobs: Mutex::new(Jobs::default()),
            permits: Arc::new(Semaphore::new(learning_config.relearn_concurrency)),
            next_sample_id: AtomicU64::new(1),
            next_job_id: AtomicU64::new(1),
            sidecar,
            store,
        });
        learning.restore_rules()?;
        learning.restore_samples()?;
        let seen = &learning.sidecar.seen;
        let keys = learning.store.load_seen(|key| seen.restore(key))?;
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

    fn host_state(&self, host: &str) -> Arc<Mutex<HostLearning>> {
        if let Some(state) = self.hosts.get(host) {
            return Arc::clone(state.value());
        }
        let state = self.hosts.entry(host.to_owned()).or_insert_with(|| {
            Arc::new(Mutex::new(HostLearning {
                template: TemplateModel::new(&self.content),
                template_dirty: false,
                new_samples: 0,
                last_learned: None,
                last_learned_unix_ms: 0,
                clusters: 0,
                history: RuleHistory::default(),
            }))
        });
        Arc::clone(state.value())
    }

    fn restore_rules(&self) -> Result<(), StoreError> {
        for (host, bytes) in self.store.load_rules()? {
            let history: RuleHistory = match serde_json::from_slice(&bytes) {
                Ok(history) => history,
                Err(err) => {
                    self.store.count_undecodable("rules", &host, &err);
                    continue;
                }
            };
            if let Some(set) = history.live_set() {
                match HostRules::compile(set) {
                    Ok(rules) => {
                        self.sidecar
                            .canonicalizer
                            .rules()
                            .swap(&host, Arc::new(rules));
                    }
                    Err(err) => self.store.count_undecodable("rules", &host, &err),
                }
            }
            let state = self.host_state(&host);
            let mut state = state.lock();
            state.last_learned_unix_ms = history.live_set().map_or(0, |set| set.learned_at_unix_ms);
            state.history = history;
        }
        Ok(())
    }

    fn restore_samples(&self) -> Result<(), StoreError> {
        let mut templates: HashMap<String, TemplateModel> = HashMap::new();
        for (host, bytes) in self.store.load_templates()? {
            match postcard::from_bytes::<TemplateModel>(&bytes) {
                Ok(model) => {
                    templates.insert(host, model);
                }
                Err(err) => self.store.count_undecodable("template", &host, &err),
            }
        }
        let mut max_id = 0;
        let mut sampler = self.sampler.lock();
        let mut orphans = SampleBatch::default();
        for StoredSample { host, id, payload } in self.store.load_samples()? {
            let sample: Sample = match postcard::from_bytes(&payload) {
                Ok(sample) => sample,
                Err(err) => {
                    self.store
                        .count_undecodable("sample", &(host.as_str(), id), &err);
                    continue;
                }
            };
            max_id = max_id.max(id);
            let state = self.host_state(&host);
            if !templates.contains_key(&host) {
                // No trusted model: rebuild it from the samples themselves.
                state.lock().template.observe_digest(&sample.digest);
            }
            let offer = sampler.offer(&host, sample);
            // Bounds may have shrunk since the samples were written; drop what no longer fits.
            for (evicted_host, evicted) in offer.evicted {
                orphans.delete.push((evicted_host, evicted.id));
            }
            if let Some(returned) = offer.returned {
                orphans.delete.push((host.clone(), returned.id));
            }
        }
        drop(sampler);
        for (host, model) in templates {
            self.host_state(&host).lock().template = model;
        }
        self.next_sample_id.store(max_id + 1, Ordering::Relaxed);
        self.store.apply_samples(&orphans)
    }

    /// Analyses one accepted page and offers it to its host's sample; true when it was sampled.
    /// CPU-bound: call from a blocking thread.
    pub fn observe(&self, evidence: ObservedEvidence) -> bool {
        let Some(host) = evidence.url.host_str().map(str::to_owned) else {
            return false;
        };
        let analysis = content::analyze(&evidence.body, &self.content);
        // The crawler's canonical wins; else the HTML's, relative to the URL the body came from.
        let rel_canonical = evidence.rel_canonical.or_else(|| {
            let served_from = evidence.final_url.as_ref().unwrap_or(&evidence.url);
            let declared = analysis.declared_canonical(served_from)?;
            self.sidecar
                .canonicalizer
                .normalizer()
                .normalize(declared.as_str())
                .ok()
        });
        let url = String::from(evidence.url);
        let state = self.host_state(&host);
        {
            let mut state = state.lock();
            state.template.observe_linked(&url, &analysis);
            state.template_dirty = true;
        }
        let sample = Sample {
            id: self.next_sample_id.fetch_add(1, Ordering::Relaxed),
            url,
            final_url: evidence.final_url.map(String::from),
            rel_canonical: rel_canonical.map(String::from),
            digest: analysis.digest,
        };
        let id = sample.id;
        let payload = postcard::to_allocvec(&sample).ok();
        let offer = self.sampler.lock().offer(&host, sample);
        let kept = offer.kept();
        let mut pending = self.pending.lock();
        if kept {
            if let Some(payload) = payload {
                pending.put.push(StoredSample {
                    host: host.clone(),
                    id,
                    payload,
                });
            }
            state.lock().new_samples += 1;
        }
        let dropped = offer.evicted.len() as u64;
        for (evicted_host, evicted) in offer.evicted {
            pending.delete.push((evicted_host, evicted.id));
        }
        metrics::counter!(telemetry::SAMPLES_DROPPED).increment(dropped);
        kept
    }

    /// Makes every pending sample change durable (one transaction). Blocking.
    pub fn persist_samples(&self) -> Result<(), StoreError> {
        let _serial = self.persist_lock.lock();
        let mut batch = std::mem::take(&mut *self.pending.lock());
        for entry in &self.hosts {
            let mut state = entry.value().lock();
            if state.template_dirty {
                state.template_dirty = false;
                match postcard::to_allocvec(&state.template) {
                    Ok(bytes) => batch.templates.push((entry.key().clone(), bytes)),
                    Err(err) => {
                        tracing::error!(host = %entry.key(), %err, "template model not encodable")
                    }
                }
            }
        }
        // A sample added and evicted before this commit needs neither write.
        let deleted: HashSet<(String, u64)> = batch.delete.iter().cloned().collect();
        batch
            .put
            .retain(|sample| !deleted.contains(&(sample.host.clone(), sample.id)));
        let result = self.store.apply_samples(&batch);
        if result.is_err() {
            // Keep the changes for the next attempt; the caller reports the failure.
            let mut pending = self.pending.lock();
            pending.put.append(&mut batch.put);
            pending.delete.append(&mut batch.delete);
        }
        self.publish_gauges();
        result
    }

    /// Appends journaled seen-set keys to the store, compacting the log when it outgrew the set.
    fn flush_seen(&self) {
        let seen = &self.sidecar.seen;
        let keys = seen.drain_journal();
        if let Err(err) = self.store.append_seen(&keys) {
            tracing::error!(%err, lost = keys.len(), "seen-set keys could not be persisted");
        }
        let live = seen.len();
        if self.store.seen_keys() > live.saturating_mul(2).saturating_add(100_000) {
            let compacted = match seen.keys() {
                Some(keys) => self.store.rewrite_seen(&keys),
                None => self
                    .store
                    .trim_seen(self.sidecar.config.seen_set.max_entries),
            };
            if let Err(err) = compacted {
                tracing::error!(%err, "seen-set log compaction failed");
            }
        }
        metrics::gauge!(telemetry::SEEN_SET_ENTRIES).set(live as f64);
        metrics::counter!(telemetry::SEEN_SET_EVICTIONS).absolute(seen.evictions());
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
            let mut flush = tokio::time::interval(SEEN_FLUSH_INTERVAL);
            let mut schedule = tokio::time::interval(SCHEDULER_TICK);
            flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            schedule.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = flush.tick() => {
                        let learning = Arc::clone(&learning);
                        let _ = tokio::task::spawn_blocking(move || learning.flush_seen()).await;
                    }
                    _ = schedule.tick() => learning.schedule(),
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

    /// Starts jobs for hosts whose sample grew enough or whose interval passed.
    fn schedule(self: &Arc<Self>) {
        let config = &self.sidecar.config.learning;
        let due: Vec<String> = self
            .hosts
            .iter()
            .filter(|entry| {
                let state = entry.value().lock();
                let interval_passed = state
                    .last_learned
                    .is_none_or(|at| at.elapsed() >= config.relearn_interval);
                state.new_samples >= config.relearn_min_new_samples
                    || (state.new_samples > 0 && interval_passed && state.last_learned.is_some())
            })
            .map(|entry| entry.key().clone())
            .collect();
        let running: HashSet<String> = self.jobs.lock().running.keys().cloned().collect();
        let due: Vec<String> = due
            .into_iter()
            .filter(|host| !running.contains(host))
            .collect();
        if !due.is_empty() {
            tracing::info!(hosts = due.len(), "scheduled relearn");
            let _ = self.start_job(due);
        }
    }

    /// Hosts with samples or rules.
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|entry| entry.key().clone()).collect()
    }

    /// Hosts known to learning.
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }

    /// Pages in all samples.
    pub fn sample_count(&self) -> u64 {
        let sampler = self.sampler.lock();
        sampler
            .hosts()
            .map(|host| sampler.samples(host).map_or(0, <[Sample]>::len) as u64)
            .sum()
    }

    /// Per-host figures for ListHosts.
    pub fn host_summary(&self, host: &str) -> HostLearningSummary {
        let samples = self.sampler.lock().samples(host).map_or(0, <[Sample]>::len) as u64;
        let Some(state) = self.hosts.get(host).map(|entry| Arc::clone(entry.value())) else {
            return HostLearningSummary {
                samples,
                ..HostLearningSummary::default()
            };
        };
        let state = state.lock();
        HostLearningSummary {
            samples,
            clusters: state.clusters,
            last_learned_unix_ms: state.last_learned_unix_ms,
        }
    }

    /// The Relearn call.
    pub async fn relearn(
        self: &Arc<Self>,
        request: RelearnRequest,
    ) -> Result<RelearnResponse, Status> {
        let hosts: Vec<String> = if request.host.is_empty() {
            let sampler = self.sampler.lock();
            let mut hosts: Vec<String> = sampler.hosts().map(str::to_owned).collect();
            hosts.sort_unstable();
            hosts
        } else {
            if self
                .sampler
                .lock()
                .samples(&request.host)
                .is_none_or(<[Sample]>::is_empty)
            {
                return Err(Status::failed_precondition(format!(
                    "host {:?} has no samples to learn from; stream its pages to Ingest first",
                    request.host
                )));
            }
            vec![request.host.clone()]
        };
        if hosts.is_empty() {
            return Err(Status::failed_precondition(
                "no host has samples to learn from",
            ));
        }
        let (job, joined) = self.start_job(hosts);
        if request.wait {
            let mut done = job.done.subscribe();
            let _ = done.wait_for(|done| *done).await;
        }
        let record = job.record.lock().clone();
        Ok(RelearnResponse {
            job_id: record.job_id.clone(),
            joined,
            job: Some(record),
        })
    }

    /// Starts a job for the hosts not already learning, or joins the job that learns all of them.
    fn start_job(self: &Arc<Self>, hosts: Vec<String>) -> (Arc<Job>, bool) {
        let mut jobs = self.jobs.lock();
        let fresh: Vec<String> = hosts
            .iter()
            .filter(|host| !jobs.running.contains_key(*host))
            .cloned()
            .collect();
        if fresh.is_empty() {
            // Every host is already learning; join the job of the first one.
            let existing = hosts
                .first()
                .and_then(|host| jobs.running.get(host))
                .and_then(|id| jobs.by_id.get(id))
                .cloned();
            if let Some(job) = existing {
                return (job, true);
            }
        }
        let id = format!(
            "relearn-{}-{}",
            unix_ms(),
            self.next_job_id.fetch_add(1, Ordering::Relaxed)
        );
        let record = RelearnJob {
            job_id: id.clone(),
            state: JobState::Queued as i32,
            hosts: fresh
                .iter()
                .map(|host| HostRelearn {
                    host: host.clone(),
                    state: JobState::Queued as i32,
                    ..HostRelearn::default()
                })
                .collect(),
            started_at_unix_ms: unix_ms(),
            finished_at_unix_ms: 0,
        };
        let job = Arc::new(Job {
            record: Mutex::new(record),
            done: watch::channel(false).0,
        });
        for host in &fresh {
            jobs.running.insert(host.clone(), id.clone());
        }
        jobs.by_id.insert(id.clone(), Arc::clone(&job));
        drop(jobs);
        let learning = Arc::clone(self);
        let task_job = Arc::clone(&job);
        tokio::spawn(async move { learning.run_job(task_job, fresh).await });
        (job, false)
    }

    async fn run_job(self: Arc<Self>, job: Arc<Job>, hosts: Vec<String>) {
        job.record.lock().state = JobState::Running as i32;
        let mut failed = false;
        for (index, host) in hosts.iter().enumerate() {
            let Ok(_permit) = Arc::clone(&self.permits).acquire_owned().await else {
                break;
            };
            if let Some(entry) = job.record.lock().hosts.get_mut(index) {
                entry.state = JobState::Running as i32;
            }
            let learning = Arc::clone(&self);
            let learn_host_name = host.clone();
            let started = Instant::now();
            let outcome =
                tokio::task::spawn_blocking(move || learning.relearn_host(&learn_host_name))
                    .await
                    .unwrap_or_else(|err| Err(format!("learning panicked: {err}")));
            metrics::histogram!(telemetry::RELEARN_DURATION)
                .record(started.elapsed().as_secs_f64());
            self.sidecar
                .totals
                .relearn_runs
                .fetch_add(1, Ordering::Relaxed);
            let mut record = job.record.lock();
            let Some(entry) = record.hosts.get_mut(index) else {
                continue;
            };
            match outcome {
                Ok(result) => {
                    metrics::counter!(telemetry::RELEARN_RUNS, "outcome" => "succeeded")
                        .increment(1);
                    *entry = HostRelearn {
                        state: JobState::Succeeded as i32,
                        ..result
                    };
                }
                Err(error) => {
                    failed = true;
                    self.sidecar
                        .totals
                        .relearn_failures
                        .fetch_add(1, Ordering::Relaxed);
                    metrics::counter!(telemetry::RELEARN_RUNS, "outcome" => "failed").increment(1);
                    tracing::warn!(host, %error, "relearn failed; the previous rules stay live");
                    entry.state = JobState::Failed as i32;
                    entry.rules_version = self
                        .sidecar
                        .canonicalizer
                        .rules()
                        .get(host)
                        .map_or(0, |r| r.version());
                    entry.error = error;
                }
            }
            drop(record);
            self.jobs.lock().running.remove(host);
        }
        {
            let mut record = job.record.lock();
            record.state = if failed {
                JobState::Failed
            } else {
                JobState::Succeeded
            } as i32;
            record.finished_at_unix_ms = unix_ms();
        }
        let mut jobs = self.jobs.lock();
        for host in &hosts {
            if jobs.running.get(host) == Some(&job.record.lock().job_id) {
                jobs.running.remove(host);
            }
        }
        jobs.finished.push_back(job.record.lock().job_id.clone());
        while jobs.finished.len() > KEPT_JOBS {
            if let Some(old) = jobs.finished.pop_front() {
                jobs.by_id.remove(&old);
            }
        }
        drop(jobs);
        let _ = job.done.send(true);
        self.publish_gauges();
    }

    /// Learns one host from its samples and puts the result live. Blocking.
    fn relearn_host(&self, host: &str) -> Result<HostRelearn, String> {
        let samples: Vec<Sample> = self
            .sampler
            .lock()
            .samples(host)
            .map(<[Sample]>::to_vec)
            .unwrap_or_default();
        let state = self.host_state(host);
        let (template, new_at_start) = {
            let state = state.lock();
            (state.template.clone(), state.new_samples)
        };
        if samples.len() < MIN_SAMPLES_TO_LEARN {
            return Err(format!(
                "{} samples; at least {MIN_SAMPLES_TO_LEARN} are needed",
                samples.len()
            ));
        }
        let mut builder = ClusterBuilder::new(ClusterConfig::default());
        for sample in &samples {
            let fingerprint = content::fingerprint_digest(&sample.digest, &template, &self.content);
            builder.add_fetch(
                &sample.url,
                sample.final_url.as_deref(),
                sample.rel_canonical.as_deref(),
                PageEvidence::from(&fingerprint),
            );
        }
        let clustering = builder.finish();
        let clusters = clustering
            .clusters()
            .iter()
            .filter(|cluster| cluster.members.len() > 1)
            .count() as u64;
        let labelled: Vec<LabelledUrl> = clustering
            .labelled_pairs()
            .into_iter()
            .filter(|(url, _)| {
                url::Url::parse(url)
                    .ok()
                    .and_then(|u| u.host_str().map(|h| h == host))
                    .unwrap_or(false)
            })
            .map(|(url, cluster)| LabelledUrl { url, cluster })
            .collect();
        let outcome = learn_host(host, &labelled, &self.learn).map_err(|err| err.to_string())?;
        let mut set = outcome.rules;
        let rules = HostRules::compile(&set)
            .map_err(|err| format!("the learned rules do not compile: {err}"))?;
        check_against_samples(&rules, &labelled)?;

        let mut state = state.lock();
        set.version = state.history.newest_version() + 1;
        set.learned_at_unix_ms = unix_ms();
        set.host = host.to_owned();
        let rules = HostRules::compile(&set)
            .map_err(|err| format!("the learned rules do not compile: {err}"))?;
        let mut history = state.history.clone();
        history.versions.insert(0, set.clone());
        history.live = set.version;
        history.versions.truncate(KEPT_VERSIONS);
        let bytes = serde_json::to_vec(&history).map_err(|err| err.to_string())?;
        self.store
            .put_rules(host, &bytes)
            .map_err(|err| format!("the rule set could not be stored: {err}"))?;
        let rule_count = rules.len() as u32;
        self.sidecar
            .canonicalizer
            .rules()
            .swap(host, Arc::new(rules));
        state.history = history;
        state.new_samples = state.new_samples.saturating_sub(new_at_start);
        state.last_learned = Some(Instant::now());
        state.last_learned_unix_ms = set.learned_at_unix_ms;
        state.clusters = clusters;
        tracing::info!(
            host,
            version = set.version,
            rules = rule_count,
            samples = samples.len(),
            clusters,
            "new rules live"
        );
        Ok(HostRelearn {
            host: host.to_owned(),
            state: JobState::Succeeded as i32,
            rules_version: set.version,
            rules: rule_count,
            samples: samples.len() as u64,
            clusters,
            error: String::new(),
        })
    }

    /// Reads a host's live rule set.
    fn with_live_set<T>(
        &self,
        host: &str,
        read: impl FnOnce(&crate::canon::rules::HostRuleSet) -> Option<T>,
    ) -> Option<T> {
        let state = self
            .hosts
            .get(host)
            .map(|entry| Arc::clone(entry.value()))?;
        let state = state.lock();
        state.history.live_set().and_then(read)
    }

    /// A rule of a host's live rule set, by index (for Explain's support and false-positive rate).
    pub fn live_rule(&self, host: &str, index: usize) -> Option<crate::canon::rules::Rule> {
        self.with_live_set(host, |set| set.rules.get(index).cloned())
    }

    /// A site rule of a host's live rule set, by id (for Explain's support and false-positive
    /// rate).
    pub fn live_site_rule(&self, host: &str, id: &str) -> Option<crate::canon::rules::SiteRule> {
        self.with_live_set(host, |set| {
            set.site_rules.iter().find(|r| r.id == id).cloned()
        })
    }

    /// A job by id.
    pub fn job(&self, id: &str) -> Option<RelearnJob> {
        self.jobs
            .lock()
            .by_id
            .get(id)
            .map(|job| job.record.lock().clone())
    }

    /// The GetRules call.
    pub fn get_rules(&self, host: &str) -> Result<GetRulesResponse, Status> {
        let Some(state) = self.hosts.get(host).map(|entry| Arc::clone(entry.value())) else {
            return Ok(GetRulesResponse {
                host: host.to_owned(),
                ..GetRulesResponse::default()
            });
        };
        let state = state.lock();
        let history = &state.history;
        let Some(live) = history.live_set() else {
            return Ok(GetRulesResponse {
                host: host.to_owned(),
                ..GetRulesResponse::default()
            });
        };
        let rules_json = serde_json::to_string_pretty(&RuleFile::new(vec![live.clone()]))
            .map_err(|err| Status::internal(err.to_string()))?;
        Ok(GetRulesResponse {
            host: host.to_owned(),
            version: live.version,
            learned_at_unix_ms: live.learned_at_unix_ms,
            site_rules: live
                .site_rules
                .iter()
                .map(super::rules_pb::site_rule_to_pb)
                .collect(),
            previous_versions: history
                .versions
                .iter()
                .map(|set| set.version)
                .filter(|version| *version != live.version)
                .collect(),
            rules: live.rules.iter().map(super::rules_pb::rule_to_pb).collect(),
            rules_json,
        })
    }

    /// The RollbackRules call.
    pub fn rollback(&self, host: &str, to_version: u64) -> Result<RollbackRulesResponse, Status> {
        let Some(state) = self.hosts.get(host).map(|entry| Arc::clone(entry.value())) else {
            return Err(Status::not_found(format!(
                "host {host:?} has no rule versions"
            )));
        };
        let mut state = state.lock();
        let live = state.history.live;
        let target = if to_version == 0 {
            state
                .history
                .versions
                .iter()
                .map(|set| set.version)
                .filter(|version| *version < live)
                .max()
                .ok_or_else(|| {
                    Status::failed_precondition(format!(
                        "host {host:?} has no version before {live}"
                    ))
                })?
        } else {
            to_version
        };
        let Some(set) = state
            .history
            .versions
            .iter()
            .find(|set| set.version == target)
            .cloned()
        else {
            let kept: Vec<u64> = state
                .history
                .versions
                .iter()
                .map(|set| set.version)
                .collect();
            return Err(Status::not_found(format!(
                "host {host:?} keeps versions {kept:?}, not {target}"
            )));
        };
        let rules = HostRules::compile(&set)
            .map_err(|err| Status::internal(format!("version {target} does not compile: {err}")))?;
        let mut history = state.history.clone();
        history.live = target;
        let bytes =
            serde_json::to_vec(&history).map_err(|err| Status::internal(err.to_string()))?;
        self.store
            .put_rules(host, &bytes)
            .map_err(|err| Status::unavailable(format!("rollback not stored: {err}")))?;
        self.sidecar
            .canonicalizer
            .rules()
            .swap(host, Arc::new(rules));
        state.history = history;
        // The gauges lock every host's state, this one included.
        drop(state);
        tracing::info!(host, from = live, to = target, "rules rolled back");
        self.publish_gauges();
        Ok(RollbackRulesResponse {
            host: host.to_owned(),
            version: target,
        })
    }
}

/// Refuses a rule set that merges too many of the host's own samples across clusters, or that is
/// not idempotent on them.
fn check_against_samples(rules: &HostRules, labelled: &[LabelledUrl]) -> Result<(), String> {
    let mut groups: HashMap<String, HashMap<u64, u64>> = HashMap::new();
    for sample in labelled {
        let Ok(url) = url::Url::parse(&sample.url) else {
            continue;
        };
        let canonical = match rules.apply(&url) {
            Some(rewrite) => {
                if let Ok(again) = url::Url::parse(&rewrite.canonical) {
                    if let Some(second) = rules.apply(&again) {
                        if second.canonical != rewrite.canonical {
                            return Err(format!(
                                "the rules are not idempotent: {} -> {} -> {}",
                                sample.url, rewrite.canonical, second.canonical
                            ));
                        }
                    }
                }
                rewrite.canonical
            }
            None => String::from(url),
        };
        *groups
            .entry(canonical)
            .or_default()
            .entry(sample.cluster)
            .or_default() += 1;
    }
    let (mut support, mut false_positive) = (0u64, 0u64);
    for clusters in groups.values() {
        let total: u64 = clusters.values().sum();
        let pairs = total * total.saturating_sub(1) / 2;
        let same: u64 = clusters.values().map(|n| n * n.saturating_sub(1) / 2).sum();
        support += pairs;
        false_positive += pairs - same;
    }
    let rate = if support == 0 {
        0.0
    } else {
        false_positive as f64 / support as f64
    };
    if rate > MAX_LIVE_FALSE_POSITIVE_RATE {
        return Err(format!(
            "refused: the rules merge {false_positive} of {support} sample pairs across different clusters \
             ({:.2}% > {:.2}%)",
            rate * 100.0,
            MAX_LIVE_FALSE_POSITIVE_RATE * 100.0
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store keeps samples and template models in postcard, which is not self-describing:
    /// a serde attribute that skips fields would make them undecodable after a restart.
    #[test]
    fn samples_and_template_models_survive_their_storage_encoding() {
        let config = ContentConfig {
            template_connectivity: true,
            ..ContentConfig::default()
        };
        let html = "<html><body><nav><a href=/a>a</a><a href=/b>b</a><a href=/c>c</a></nav>\
            <div><aside><p>Sponsored: a rotating line.</p></aside><article><p>One paragraph of \
            the article with enough words to matter.</p><p>A second paragraph, also with words.</p>\
            </article></div><footer>Page generated 2024-01-01</footer></body></html>";
        let mut model = TemplateModel::new(&config);
        let mut samples = Vec::new();
        for i in 0..5 {
            let analysis = content::analyze(html.as_bytes(), &config);
            let url = format!("http://example.com/{i}");
            model.observe_linked(&url, &analysis);
            samples.push(Sample {
                id: i,
                url,
                final_url: None,
                rel_canonical: Some("http://example.com/".into()),
                digest: analysis.digest,
            });
        }
        assert!(
            samples[0]
                .digest
                .pagelets
                .iter()
                .any(|p| !p.blocks.is_empty()),
            "the page has blocks"
        );
        for sample in &samples {
            let bytes = postcard::to_allocvec(sample).expect("encode");
            let back: Sample = postcard::from_bytes(&bytes).expect("a stored sample decodes");
            assert_eq!(back.digest, sample.digest);
            assert_eq!(back.url, sample.url);
        }
        let bytes = postcard::to_allocvec(&model).expect("encode");
        let back: TemplateModel = postcard::from_bytes(&bytes).expect("a stored model decodes");
        let digest = &samples[0].digest;
        assert_eq!(
            content::fingerprint_digest(digest, &back, &config),
            content::fingerprint_digest(digest, &model, &config)
        );
    }
}
