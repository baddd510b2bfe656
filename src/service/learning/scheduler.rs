//! When a host is due for relearning, on tokio's clock (tests pause and advance it).
//!
//! A host is due when it has enough samples to learn from ([`GatePolicy::min_samples`](crate::pipeline::GatePolicy::min_samples)) and
//! pages not yet learned from, and either `--relearn-min-new-samples` of them arrived, or
//! `--relearn-interval-secs` passed since the first of them arrived. The interval counts from the
//! first unlearned page, not from the last learning, so a host never learned before is learned by
//! the interval too, and a quiet host is not relearned for nothing.
//!
//! A relearn that fails keeps the pages it did not learn from but restarts the interval, so a host
//! whose rules the gate refuses is retried an interval later (or after enough new pages), not at
//! every tick.
//!
//! Triggers survive a restart: each changed one is stored with the next sample commit (and at
//! shutdown) as its count and the wall-clock time of `pending_since`, and restored against tokio's
//! clock, so a restarted sidecar relearns a host exactly when an uninterrupted one would have. The
//! bytes-saved estimate of `GetStats` is stored alongside. What a `kill -9` can lose is what it
//! loses of samples: the changes since the last acknowledged ingest stream.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::Learning;
use crate::store::{unix_ms, StoreError};

/// `state` key prefix of a host's trigger.
const TRIGGER_PREFIX: &str = "trigger/";
/// `state` key of the bytes-saved estimate.
const BYTES_SAVED_KEY: &str = "estimated_bytes_saved";

/// The `state` key of `host`'s trigger.
pub(super) fn trigger_key(host: &str) -> String {
    format!("{TRIGGER_PREFIX}{host}")
}

/// A trigger as stored: tokio's clock does not survive a restart, the wall clock does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct StoredTrigger {
    new_samples: u64,
    pending_since_unix_ms: Option<i64>,
}

/// `state` rows about to be stored, and the hosts whose triggers they hold.
pub(super) struct ScheduleRows {
    pub(super) rows: Vec<(String, Vec<u8>)>,
    hosts: Vec<String>,
}

/// How often the scheduler looks for hosts to relearn.
pub(super) const SCHEDULER_TICK: Duration = Duration::from_secs(1);

/// What makes one host due.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Trigger {
    /// Pages that entered the host's sample and no successful relearn has learned from yet.
    pub(super) new_samples: u64,
    /// When the first of them arrived, or when the last failed relearn ended (the interval counts
    /// from there).
    pub(super) pending_since: Option<Instant>,
}

/// The scheduling knobs.
#[derive(Debug, Clone, Copy)]
pub(super) struct SchedulePolicy {
    pub(super) min_new_samples: u64,
    pub(super) interval: Duration,
    pub(super) min_samples: usize,
}

impl Trigger {
    /// A page entered the sample.
    pub(super) fn sampled(&mut self, now: Instant) {
        self.new_samples += 1;
        self.pending_since.get_or_insert(now);
    }

    /// A relearn that started when `learned_from` pages were new succeeded: those pages are learned
    /// from; pages that arrived during the relearn stay new, and start a new interval.
    pub(super) fn learned(&mut self, learned_from: u64, now: Instant) {
        self.new_samples = self.new_samples.saturating_sub(learned_from);
        self.pending_since = (self.new_samples > 0).then_some(now);
    }

    /// A relearn failed: try again after an interval, or after enough new pages.
    pub(super) fn failed(&mut self, learned_from: u64, now: Instant) {
        // The pages stay unlearned, but only new ones count towards the new-page trigger.
        self.new_samples = self.new_samples.saturating_sub(learned_from).max(1);
        self.pending_since = Some(now);
    }

    /// Whether the host is due now.
    pub(super) fn is_due(&self, samples: usize, now: Instant, policy: &SchedulePolicy) -> bool {
        if self.new_samples == 0 || samples < policy.min_samples {
            return false;
        }
        self.new_samples >= policy.min_new_samples
            || self
                .pending_since
                .is_some_and(|since| now.saturating_duration_since(since) >= policy.interval)
    }
}

impl Trigger {
    fn stored(&self, now: Instant, now_unix_ms: i64) -> StoredTrigger {
        StoredTrigger {
            new_samples: self.new_samples,
            pending_since_unix_ms: self.pending_since.map(|since| {
                let age = now.saturating_duration_since(since).as_millis();
                now_unix_ms.saturating_sub(i64::try_from(age).unwrap_or(i64::MAX))
            }),
        }
    }

    /// The stored trigger on tokio's clock. A `pending_since` older than the monotonic clock can
    /// express (a machine booted less than that long ago) is clamped to the interval, which keeps
    /// the host exactly as due; if even that is out of reach the interval restarts now.
    fn restored(stored: StoredTrigger, now: Instant, now_unix_ms: i64, interval: Duration) -> Self {
        let pending_since = stored.pending_since_unix_ms.map(|since| {
            let age = Duration::from_millis(
                u64::try_from(now_unix_ms.saturating_sub(since)).unwrap_or(0),
            );
            now.checked_sub(age)
                .or_else(|| now.checked_sub(age.min(interval)))
                .unwrap_or(now)
        });
        Trigger {
            new_samples: stored.new_samples,
            pending_since,
        }
    }
}

impl Learning {
    /// The `state` rows of the triggers changed since they were last stored, and of the
    /// bytes-saved total; the triggers count as stored from here (see
    /// [`schedule_not_stored`](Self::schedule_not_stored)).
    pub(super) fn schedule_rows(&self) -> ScheduleRows {
        let now = Instant::now();
        let now_unix_ms = unix_ms();
        let mut rows = Vec::new();
        let mut hosts = Vec::new();
        for entry in &self.hosts {
            let mut state = entry.value().lock();
            if !state.trigger_dirty {
                continue;
            }
            state.trigger_dirty = false;
            if let Ok(bytes) = postcard::to_allocvec(&state.trigger.stored(now, now_unix_ms)) {
                rows.push((trigger_key(entry.key()), bytes));
                hosts.push(entry.key().clone());
            }
        }
        let saved = self
            .sidecar
            .totals
            .estimated_bytes_saved
            .load(Ordering::Relaxed);
        rows.push((BYTES_SAVED_KEY.to_owned(), saved.to_le_bytes().to_vec()));
        ScheduleRows { rows, hosts }
    }

    /// The rows were not stored: their triggers are still to be.
    pub(super) fn schedule_not_stored(&self, rows: &ScheduleRows) {
        for host in &rows.hosts {
            if let Some(state) = self.hosts.get(host) {
                state.lock().trigger_dirty = true;
            }
        }
    }

    /// Restores stored triggers (of hosts still known) and the bytes-saved total.
    pub(super) fn restore_schedule(&self) -> Result<(), StoreError> {
        let now = Instant::now();
        let now_unix_ms = unix_ms();
        let interval = self.sidecar.config.learning.relearn_interval;
        for (key, value) in self.store.load_state()? {
            if key == BYTES_SAVED_KEY {
                match <[u8; 8]>::try_from(value.as_slice()) {
                    Ok(bytes) => {
                        self.sidecar
                            .totals
                            .estimated_bytes_saved
                            .fetch_add(u64::from_le_bytes(bytes), Ordering::Relaxed);
                    }
                    Err(err) => self.store.count_undecodable("state", &key, &err),
                }
                continue;
            }
            let Some(host) = key.strip_prefix(TRIGGER_PREFIX) else {
                continue;
            };
            match postcard::from_bytes::<StoredTrigger>(&value) {
                Ok(stored) => {
                    if let Some(state) = self.hosts.get(host) {
                        state.lock().trigger =
                            Trigger::restored(stored, now, now_unix_ms, interval);
                    }
                }
                Err(err) => self.store.count_undecodable("state", &key, &err),
            }
        }
        Ok(())
    }

    fn schedule_policy(&self) -> SchedulePolicy {
        let config = &self.sidecar.config.learning;
        SchedulePolicy {
            min_new_samples: config.relearn_min_new_samples,
            interval: config.relearn_interval,
            min_samples: self.gate.min_samples,
        }
    }

    /// Hosts due now, not already learning.
    pub(super) fn due_hosts(&self, now: Instant) -> Vec<String> {
        let policy = self.schedule_policy();
        let candidates: Vec<(String, super::scheduler::Trigger)> = self
            .hosts
            .iter()
            .map(|entry| (entry.key().clone(), entry.value().lock().trigger.clone()))
            .filter(|(_, trigger)| trigger.new_samples > 0)
            .collect();
        let running = self.running_hosts();
        let mut due: Vec<String> = candidates
            .into_iter()
            .filter(|(host, trigger)| {
                !running.contains(host) && trigger.is_due(self.sample_count_of(host), now, &policy)
            })
            .map(|(host, _)| host)
            .collect();
        due.sort_unstable();
        due
    }

    /// Starts a job for the hosts due now.
    pub(super) fn schedule(self: &Arc<Self>) {
        let due = self.due_hosts(Instant::now());
        if !due.is_empty() {
            tracing::info!(hosts = due.len(), "scheduled relearn");
            let _ = self.start_job(due);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: SchedulePolicy = SchedulePolicy {
        min_new_samples: 500,
        interval: Duration::from_secs(3600),
        min_samples: 10,
    };

    #[tokio::test(start_paused = true)]
    async fn enough_new_samples_make_a_host_due_at_once() {
        let mut trigger = Trigger::default();
        for _ in 0..499 {
            trigger.sampled(Instant::now());
        }
        assert!(!trigger.is_due(499, Instant::now(), &POLICY));
        trigger.sampled(Instant::now());
        assert!(trigger.is_due(500, Instant::now(), &POLICY));
    }

    #[tokio::test(start_paused = true)]
    async fn a_host_never_learned_is_learned_by_the_interval() {
        let mut trigger = Trigger::default();
        for _ in 0..20 {
            trigger.sampled(Instant::now());
        }
        assert!(!trigger.is_due(20, Instant::now(), &POLICY), "not yet");
        tokio::time::advance(Duration::from_secs(3599)).await;
        assert!(
            !trigger.is_due(20, Instant::now(), &POLICY),
            "one second early"
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(
            trigger.is_due(20, Instant::now(), &POLICY),
            "the interval passed"
        );
        assert!(
            !trigger.is_due(9, Instant::now(), &POLICY),
            "too few samples to learn from"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_interval_counts_from_the_first_page_not_yet_learned_from() {
        let mut trigger = Trigger::default();
        for _ in 0..20 {
            trigger.sampled(Instant::now());
        }
        tokio::time::advance(Duration::from_secs(3600)).await;
        trigger.learned(20, Instant::now());
        assert_eq!(trigger, Trigger::default(), "everything learned from");
        tokio::time::advance(Duration::from_secs(7200)).await;
        assert!(
            !trigger.is_due(20, Instant::now(), &POLICY),
            "a quiet host is not relearned"
        );
        trigger.sampled(Instant::now());
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert!(trigger.is_due(21, Instant::now(), &POLICY));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_relearn_is_retried_an_interval_later_not_at_every_tick() {
        let mut trigger = Trigger::default();
        for _ in 0..600 {
            trigger.sampled(Instant::now());
        }
        assert!(trigger.is_due(600, Instant::now(), &POLICY));
        trigger.failed(600, Instant::now());
        tokio::time::advance(SCHEDULER_TICK).await;
        assert!(!trigger.is_due(600, Instant::now(), &POLICY));
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert!(trigger.is_due(600, Instant::now(), &POLICY));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stored_trigger_is_restored_as_due_as_it_was() {
        let mut trigger = Trigger::default();
        for _ in 0..20 {
            trigger.sampled(Instant::now());
        }
        tokio::time::advance(Duration::from_secs(1800)).await;
        let stored = trigger.stored(Instant::now(), 10_000_000);
        assert_eq!(
            stored,
            StoredTrigger {
                new_samples: 20,
                pending_since_unix_ms: Some(10_000_000 - 1_800_000),
            }
        );
        // Restarted a minute later on a fresh clock: 29 minutes to go, as without the restart.
        tokio::time::advance(Duration::from_secs(7200)).await;
        let restored = Trigger::restored(stored, Instant::now(), 10_060_000, POLICY.interval);
        assert_eq!(restored.new_samples, 20);
        assert!(!restored.is_due(20, Instant::now(), &POLICY));
        tokio::time::advance(Duration::from_secs(1739)).await;
        assert!(
            !restored.is_due(20, Instant::now(), &POLICY),
            "one second early"
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(restored.is_due(20, Instant::now(), &POLICY));
    }

    #[tokio::test(start_paused = true)]
    async fn pages_arriving_during_a_relearn_stay_new() {
        let mut trigger = Trigger::default();
        for _ in 0..30 {
            trigger.sampled(Instant::now());
        }
        trigger.learned(25, Instant::now());
        assert_eq!(trigger.new_samples, 5);
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert!(trigger.is_due(30, Instant::now(), &POLICY));
    }
}
