//! Relearn jobs: one per scheduler round or operator request, each learning its hosts one after
//! the other under the shared `--relearn-concurrency` permits, on blocking threads. Finished jobs
//! are remembered (the last [`KEPT_JOBS`]) for GetRelearnJob.
//!
//! A request whose hosts all wait in one running job, not yet learned, joins that job: it takes
//! their samples when it comes to them, so it learns from everything the request could. Any other request gets its own job with *all* its hosts: a host
//! whose learning has begun took its samples then, and the request may come with newer evidence,
//! so it is learned again after (one relearn per host at a time).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;
use tonic::Status;

use super::Learning;
use crate::pb::{HostRelearn, JobState, RelearnJob, RelearnRequest, RelearnResponse};
use crate::pipeline::RelearnError;
use crate::store::unix_ms;
use crate::telemetry;

/// Finished jobs remembered for GetRelearnJob.
const KEPT_JOBS: usize = 1_000;

pub(super) struct Job {
    record: Mutex<RelearnJob>,
    /// Turns `true` once the job has finished. The value is stored whether or not anyone is
    /// waiting yet: a caller that asks to wait may subscribe only after a quick job (one refused
    /// at once because another sidecar holds the lease) has already finished.
    done: watch::Sender<bool>,
}

impl Job {
    fn new(record: RelearnJob) -> Job {
        Job {
            record: Mutex::new(record),
            done: watch::Sender::new(false),
        }
    }

    /// Marks the job finished and wakes its waiters. `send_replace`, not `send`: `send` stores
    /// nothing when no receiver exists, so a waiter subscribing just after would wait forever.
    fn mark_done(&self) {
        self.done.send_replace(true);
    }

    /// Whether the job covers `host` and has not begun learning it (it has not taken its samples).
    fn has_yet_to_learn(&self, host: &str) -> bool {
        self.record
            .lock()
            .hosts
            .iter()
            .any(|entry| entry.host == host && entry.state == JobState::Queued as i32)
    }

    /// Waits until the job has finished (at once if it has).
    async fn finished(&self) {
        let mut done = self.done.subscribe();
        // The sender lives as long as `self`, so the wait ends only by the job finishing.
        let _ = done.wait_for(|done| *done).await;
    }
}

#[derive(Default)]
pub(super) struct Jobs {
    by_id: HashMap<String, Arc<Job>>,
    finished: VecDeque<String>,
    /// Host → the newest job that covers it and has not finished it.
    running: HashMap<String, String>,
}

impl Learning {
    /// The Relearn call.
    pub async fn relearn(
        self: &Arc<Self>,
        request: RelearnRequest,
    ) -> Result<RelearnResponse, Status> {
        let hosts: Vec<String> = if request.host.is_empty() {
            self.sampled_hosts()
        } else {
            // In a fleet, the other sidecars' samples count too: the learner reads them.
            if self.sidecar.fleet.is_none() && self.sample_count_of(&request.host) == 0 {
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
        // A relearn of every host ends with a mirror detection pass over what it learned.
        let (job, joined) = self.start_job_with(hosts, request.host.is_empty());
        if request.wait {
            job.finished().await;
        }
        let record = job.record.lock().clone();
        Ok(RelearnResponse {
            job_id: record.job_id.clone(),
            joined,
            job: Some(record),
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

    /// Hosts some job is learning or about to learn.
    pub(super) fn running_hosts(&self) -> HashSet<String> {
        self.jobs.lock().running.keys().cloned().collect()
    }

    /// Starts a job for `hosts`, or joins the running job in which every one of them waits.
    pub(super) fn start_job(self: &Arc<Self>, hosts: Vec<String>) -> (Arc<Job>, bool) {
        self.start_job_with(hosts, false)
    }

    /// [`Learning::start_job`], and with `mirror_pass` a mirror detection pass once the hosts
    /// are learned, before the job is reported done.
    pub(super) fn start_job_with(
        self: &Arc<Self>,
        hosts: Vec<String>,
        mirror_pass: bool,
    ) -> (Arc<Job>, bool) {
        let mut jobs = self.jobs.lock();
        let joinable = hosts
            .first()
            .and_then(|host| jobs.running.get(host))
            .and_then(|id| jobs.by_id.get(id))
            .filter(|job| hosts.iter().all(|host| job.has_yet_to_learn(host)));
        if let Some(job) = joinable {
            return (Arc::clone(job), true);
        }
        let id = format!(
            "relearn-{}-{}",
            unix_ms(),
            self.next_job_id.fetch_add(1, Ordering::Relaxed)
        );
        let record = RelearnJob {
            job_id: id.clone(),
            state: JobState::Queued as i32,
            hosts: hosts
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
        let job = Arc::new(Job::new(record));
        for host in &hosts {
            jobs.running.insert(host.clone(), id.clone());
        }
        jobs.by_id.insert(id, Arc::clone(&job));
        drop(jobs);
        let learning = Arc::clone(self);
        let task_job = Arc::clone(&job);
        tokio::spawn(async move { learning.run_job(task_job, hosts, mirror_pass).await });
        (job, false)
    }

    async fn run_job(self: Arc<Self>, job: Arc<Job>, hosts: Vec<String>, mirror_pass: bool) {
        job.record.lock().state = JobState::Running as i32;
        let job_id = job.record.lock().job_id.clone();
        let (mut failed, mut rejected) = (false, false);
        // Each host once, then again each host the others' findings lift (what its sample
        // showed too thinly, theirs made up: `learn::shared_evidence`), as `undust learn`
        // learns a crawl's hosts beside each other.
        let mut order: Vec<usize> = (0..hosts.len()).collect();
        for pass in 0..2 {
            if pass == 1 {
                let lifted = self.shared_evidence.lifted(self.learn.min_support_clusters);
                order.retain(|&index| lifted.contains(&hosts[index]));
            }
            for &index in &order {
                match self
                    .learn_job_host(&job, &job_id, index, &hosts[index])
                    .await
                {
                    Some(Ended::Succeeded) => {}
                    Some(Ended::Rejected) => rejected = true,
                    Some(Ended::Failed) => failed = true,
                    // Shutting down: no permit to learn with.
                    None => break,
                }
            }
        }
        if mirror_pass {
            self.mirror_pass_async().await;
        }
        {
            let mut record = job.record.lock();
            record.state = if failed {
                JobState::Failed
            } else if rejected {
                JobState::Rejected
            } else {
                JobState::Succeeded
            } as i32;
            record.finished_at_unix_ms = unix_ms();
        }
        let mut jobs = self.jobs.lock();
        for host in &hosts {
            if jobs.running.get(host) == Some(&job_id) {
                jobs.running.remove(host);
            }
        }
        jobs.finished.push_back(job_id);
        while jobs.finished.len() > KEPT_JOBS {
            if let Some(old) = jobs.finished.pop_front() {
                jobs.by_id.remove(&old);
            }
        }
        drop(jobs);
        job.mark_done();
        self.publish_gauges();
    }

    /// Learns host `index` of `job` and records how it ended in the job; `None` when the
    /// sidecar is shutting down (no permit to learn with).
    async fn learn_job_host(
        self: &Arc<Self>,
        job: &Job,
        job_id: &str,
        index: usize,
        host: &str,
    ) -> Option<Ended> {
        let Ok(_permit) = Arc::clone(&self.permits).acquire_owned().await else {
            return None;
        };
        if let Some(entry) = job.record.lock().hosts.get_mut(index) {
            entry.state = JobState::Running as i32;
        }
        let learning = Arc::clone(self);
        let learn_host_name = host.to_owned();
        let started = tokio::time::Instant::now();
        let outcome = match self.sidecar.fleet.clone() {
            Some(fleet) => learning.relearn_in_fleet(&fleet, host).await,
            None => tokio::task::spawn_blocking(move || learning.relearn_host(&learn_host_name))
                .await
                .unwrap_or_else(|err| {
                    Err(RelearnError::DoesNotCompile(format!(
                        "learning panicked: {err}"
                    )))
                }),
        };
        metrics::histogram!(telemetry::RELEARN_DURATION).record(started.elapsed().as_secs_f64());
        self.sidecar
            .totals
            .relearn_runs
            .fetch_add(1, Ordering::Relaxed);
        let ended = match &outcome {
            Ok(_) => Ended::Succeeded,
            Err(RelearnError::Refused(_)) => Ended::Rejected,
            Err(_) => Ended::Failed,
        };
        let mut record = job.record.lock();
        if let Some(entry) = record.hosts.get_mut(index) {
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
                    let outcome = error.outcome();
                    self.sidecar
                        .totals
                        .relearn_failures
                        .fetch_add(1, Ordering::Relaxed);
                    metrics::counter!(telemetry::RELEARN_RUNS, "outcome" => outcome).increment(1);
                    tracing::warn!(host, %error, outcome, "relearn did not put new rules live; the previous rules stay live");
                    entry.state = if ended == Ended::Rejected {
                        JobState::Rejected
                    } else {
                        JobState::Failed
                    } as i32;
                    entry.rules_version = self
                        .sidecar
                        .canonicalizer
                        .rules()
                        .get(host)
                        .map_or(0, |r| r.version());
                    entry.error = error.to_string();
                }
            }
        }
        drop(record);
        let mut jobs = self.jobs.lock();
        if jobs.running.get(host).map(String::as_str) == Some(job_id) {
            jobs.running.remove(host);
        }
        Some(ended)
    }
}

/// How learning one host of a job ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ended {
    Succeeded,
    /// The gate refused the rules.
    Rejected,
    Failed,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::Knobs;
    use crate::service::learning::learning_for_tests;

    /// An operator's relearn asked while the scheduler's job is learning the host (stop 49: the
    /// job had taken its samples mid-ingest, and the joined request learned 19,558 of 20,000
    /// pages). It joins only while the job has yet to take the host's samples.
    #[tokio::test]
    async fn a_relearn_joins_a_job_only_while_the_job_has_yet_to_learn_the_host() {
        let dir = tempfile::tempdir().expect("tempdir");
        let learning = learning_for_tests(Knobs {
            data_dir: Some(dir.path().to_owned()),
            relearn_min_new_samples: Some(1_000_000),
            ..Knobs::default()
        });
        // A scheduler job over two hosts, learning the first, the second still waiting. It is
        // registered as `start_job` registers one, but never run, so its states stay put.
        let running = "relearn-scheduler";
        let entry = |host: &str, state: JobState| HostRelearn {
            host: host.to_owned(),
            state: state as i32,
            ..HostRelearn::default()
        };
        let job = Arc::new(Job::new(RelearnJob {
            job_id: running.to_owned(),
            state: JobState::Running as i32,
            hosts: vec![
                entry("learning.example", JobState::Running),
                entry("waiting.example", JobState::Queued),
            ],
            ..RelearnJob::default()
        }));
        {
            let mut jobs = learning.jobs.lock();
            jobs.by_id.insert(running.to_owned(), job);
            for host in ["learning.example", "waiting.example"] {
                jobs.running.insert(host.to_owned(), running.to_owned());
            }
        }

        let (waiting, joined) = learning.start_job(vec!["waiting.example".to_owned()]);
        assert!(joined, "the job has yet to take waiting.example's samples");
        assert_eq!(waiting.record.lock().job_id, running);

        let (learning_again, joined) = learning.start_job(vec!["learning.example".to_owned()]);
        assert!(
            !joined,
            "the job took learning.example's samples when it began it"
        );
        let record = learning_again.record.lock().clone();
        assert_ne!(record.job_id, running);
        assert_eq!(record.hosts.len(), 1);
        assert_eq!(record.hosts[0].host, "learning.example");

        // Both hosts wait now, but in two jobs: neither covers the request.
        let (both, joined) = learning.start_job(vec![
            "waiting.example".to_owned(),
            "learning.example".to_owned(),
        ]);
        assert!(!joined);
        assert_eq!(both.record.lock().hosts.len(), 2);
    }

    /// The hang seen in CI under load (fleet test, stop 24): a relearn refused at once finished
    /// before its caller subscribed to the job, and the caller waited forever.
    #[tokio::test]
    async fn a_caller_that_waits_after_the_job_finished_returns_at_once() {
        let job = Job::new(RelearnJob::default());
        job.mark_done();
        tokio::time::timeout(Duration::from_secs(5), job.finished())
            .await
            .expect("the job had finished before the caller waited; the wait must end at once");
    }

    #[tokio::test]
    async fn a_caller_waiting_before_the_job_finishes_is_woken() {
        let job = Arc::new(Job::new(RelearnJob::default()));
        let waiter = tokio::spawn({
            let job = Arc::clone(&job);
            async move { job.finished().await }
        });
        tokio::task::yield_now().await;
        job.mark_done();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the waiter is woken when the job finishes")
            .expect("the waiter did not panic");
    }
}
