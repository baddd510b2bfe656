//! The learning loop in a fleet (`--fleet`): the glue between this sidecar's learning state and
//! the shared state of [`crate::fleet`].
//!
//! - A relearn of a host, scheduled or asked through the admin API of any sidecar, reads the
//!   samples every sidecar shared ([`crate::fleet::evidence`]), takes the host's lease
//!   ([`crate::fleet::lease`]), learns from them and the host's samples here, renews the lease at a third of its
//!   time while learning, and publishes the rule set on the board under the lease's fencing token
//!   ([`crate::fleet::rules`]). A learner whose lease was taken over is fenced and publishes
//!   nothing. The published version is then put live here through [`Learning::adopt`].
//! - Every sidecar follows the board: each published set is put live through the same
//!   [`Learning::adopt`] (stored with the host's history, then swapped live), within one poll
//!   interval plus a round trip of its publication. A set received this way counts as learned from
//!   the pages pending here (they were shared before the learner read the evidence), so the fleet
//!   does not relearn a host once per sidecar.
//! - A rollback asked on any sidecar takes the lease and publishes the older set as a new version,
//!   so every sidecar rolls back with it.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::watch;
use tonic::Status;

use super::samples::Sample;
use super::Learning;
use crate::canon::rules::HostRuleSet;
use crate::fleet::{Fleet, Lease, PublishOutcome, PublishedRules};
use crate::pb::{HostRelearn, JobState, RollbackRulesResponse};
use crate::pipeline::{EvidencePage, RelearnError};
use crate::store::unix_ms;

/// What a relearn learned, before it is published.
struct Learned {
    set: HostRuleSet,
    samples: usize,
    clusters: u64,
    /// Pages new here when the relearn started (they are learned from once it succeeds).
    new_at_start: u64,
}

impl Learning {
    /// Queues a sampled page's stored form for the fleet's shared evidence (with `--fleet`).
    pub(super) fn share_sample(&self, host: &str, url_key: u64, payload: &[u8]) {
        if let Some(fleet) = &self.sidecar.fleet {
            fleet.evidence.offer(host, url_key, payload.to_vec());
        }
    }

    /// Sends the queued samples to the fleet's shared evidence. A failure keeps them queued for the
    /// next call and is only logged: the samples are durable here already.
    pub async fn share_evidence(&self) {
        let Some(fleet) = &self.sidecar.fleet else {
            return;
        };
        if let Err(err) = fleet.evidence.flush().await {
            tracing::debug!(%err, queued = fleet.evidence.queued(), "samples not shared yet");
        }
    }

    /// One host relearned in a fleet (see the module docs).
    pub(super) async fn relearn_in_fleet(
        self: &Arc<Self>,
        fleet: &Arc<Fleet>,
        host: &str,
    ) -> Result<HostRelearn, RelearnError> {
        // The fleet's samples are read before the lease is taken, so the lease covers only the
        // learning and the publication.
        let shared = match fleet.evidence.fetch(host).await {
            Ok(shared) => shared,
            Err(err) => {
                self.relearn_failed_here(host, 0);
                return Err(RelearnError::Contended(format!(
                    "the fleet's samples of {host:?} could not be read: {err}"
                )));
            }
        };
        let lease = match fleet.leases.acquire(host).await {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                self.relearn_failed_here(host, 0);
                return Err(RelearnError::Contended(format!(
                    "another sidecar of the fleet is learning {host:?}; the rules it publishes \
                     will be served here"
                )));
            }
            Err(err) => {
                self.relearn_failed_here(host, 0);
                return Err(RelearnError::Contended(format!(
                    "the learning lease of {host:?} could not be taken: {err}"
                )));
            }
        };
        let outcome = self.learn_under_lease(fleet, &lease, shared).await;
        if let Err(err) = fleet.leases.release(&lease).await {
            // It expires by itself; the next learner waits at most the lease time.
            tracing::debug!(host, %err, "the learning lease was not released");
        }
        outcome
    }

    async fn learn_under_lease(
        self: &Arc<Self>,
        fleet: &Arc<Fleet>,
        lease: &Lease,
        shared: Vec<Vec<u8>>,
    ) -> Result<HostRelearn, RelearnError> {
        let host = lease.host.clone();
        // Renew at a third of the lease time, so a learner slower than one lease keeps the host.
        let renewing = {
            let (fleet, lease) = (Arc::clone(fleet), lease.clone());
            tokio::spawn(async move {
                let every = fleet.leases.ttl() / 3;
                loop {
                    tokio::time::sleep(every).await;
                    match fleet.leases.renew(&lease).await {
                        Ok(true) => {}
                        Ok(false) => {
                            tracing::warn!(host = %lease.host, "the learning lease was lost: what is learned will be fenced");
                            return;
                        }
                        Err(err) => tracing::debug!(host = %lease.host, %err, "lease not renewed"),
                    }
                }
            })
        };
        let learning = Arc::clone(self);
        let learn_host = host.clone();
        let learned =
            tokio::task::spawn_blocking(move || learning.learn_with_shared(&learn_host, &shared))
                .await;
        renewing.abort();
        let learned = learned.unwrap_or_else(|err| {
            Err(RelearnError::DoesNotCompile(format!(
                "learning panicked: {err}"
            )))
        })?;
        let Learned {
            mut set,
            samples,
            clusters,
            new_at_start,
        } = learned;
        set.host = host.clone();
        set.learned_at_unix_ms = unix_ms();
        let published = match self.publish(fleet, lease, &mut set).await {
            Ok(version) => version,
            Err(err) => {
                self.relearn_failed_here(&host, new_at_start);
                return Err(err);
            }
        };
        let rule_count = set.len() as u32;
        let learning = Arc::clone(self);
        let adopt_host = host.clone();
        tokio::task::spawn_blocking(move || learning.adopt(&adopt_host, set))
            .await
            .map_err(|err| RelearnError::Store(format!("storing panicked: {err}")))??;
        if let Some(state) = self.hosts.get(&host).map(|entry| Arc::clone(entry.value())) {
            let mut state = state.lock();
            state
                .trigger
                .learned(new_at_start, tokio::time::Instant::now());
            state.clusters = clusters;
        }
        tracing::info!(
            host,
            version = published,
            rules = rule_count,
            samples,
            clusters,
            token = lease.token,
            "new rules published to the fleet and live"
        );
        Ok(HostRelearn {
            host,
            state: JobState::Succeeded as i32,
            rules_version: published,
            rules: rule_count,
            samples: samples as u64,
            clusters,
            error: String::new(),
        })
    }

    /// Publishes `set` under `lease` as a version newer than every version here; stamps and
    /// returns the version.
    async fn publish(
        &self,
        fleet: &Fleet,
        lease: &Lease,
        set: &mut HostRuleSet,
    ) -> Result<u64, RelearnError> {
        // The board's version is the one stamped: the body carries none.
        set.version = 0;
        let body = serde_json::to_vec(&*set).map_err(|err| RelearnError::Store(err.to_string()))?;
        let least = self.newest_version(&lease.host) + 1;
        match fleet.rules.publish(lease, &body, least).await {
            Ok(PublishOutcome::Published { version, .. }) => {
                set.version = version;
                Ok(version)
            }
            Ok(PublishOutcome::Fenced { newer }) => Err(RelearnError::Contended(format!(
                "fenced: a learner with the newer lease {newer} took {:?} over (this one held \
                 {}); its rules are the ones served",
                lease.host, lease.token
            ))),
            Err(err) => Err(RelearnError::Contended(format!(
                "the rule set of {:?} could not be published: {err}",
                lease.host
            ))),
        }
    }

    /// Learns a host from its samples here and the fleet's shared ones (blocking). A page sampled
    /// both here and elsewhere counts once, as sampled here; pages sampled only elsewhere are
    /// observed into a copy of the host's template model so their boilerplate is recognised.
    fn learn_with_shared(&self, host: &str, shared: &[Vec<u8>]) -> Result<Learned, RelearnError> {
        let state = self.host_state(host);
        let relearn_lock = Arc::clone(&state.lock().relearn_lock);
        let _relearning = relearn_lock.lock();
        let mut samples = self.samples_of(host);
        let (mut template, new_at_start) = {
            let state = state.lock();
            (state.template.clone(), state.trigger.new_samples)
        };
        let mut urls: HashSet<String> = samples.iter().map(|page| page.url.clone()).collect();
        let mut undecodable = 0usize;
        for bytes in shared {
            match postcard::from_bytes::<Sample>(bytes) {
                Ok(sample) => {
                    if urls.insert(sample.page.url.clone()) {
                        template.observe_digest(&sample.page.digest);
                        samples.push(sample.page);
                    }
                }
                Err(_) => undecodable += 1,
            }
        }
        if undecodable > 0 {
            tracing::warn!(
                host,
                undecodable,
                "shared samples that did not decode were skipped"
            );
        }
        // The same evidence learns the same rules whichever sidecar learns it.
        samples.sort_unstable_by(|a: &Arc<EvidencePage>, b: &Arc<EvidencePage>| a.url.cmp(&b.url));
        match self.learn_from(host, &samples, &template) {
            Ok((checked, clusters)) => Ok(Learned {
                set: checked.set,
                samples: samples.len(),
                clusters,
                new_at_start,
            }),
            Err(error) => {
                self.relearn_failed_here(host, new_at_start);
                Err(error)
            }
        }
    }

    /// A relearn of `host` did not put rules live: it is retried an interval later (or after
    /// enough new pages), as a relearn refused locally is.
    fn relearn_failed_here(&self, host: &str, new_at_start: u64) {
        if let Some(state) = self.hosts.get(host).map(|entry| Arc::clone(entry.value())) {
            state
                .lock()
                .trigger
                .failed(new_at_start, tokio::time::Instant::now());
        }
    }

    /// Follows the fleet's board until `stop`: every rule set published (by any sidecar, this one
    /// included) is put live here unless this sidecar already has its version.
    /// The fleet's mirror table is followed alongside ([`super::fleet_mirrors`]).
    pub async fn follow_fleet(self: Arc<Self>, fleet: Arc<Fleet>, stop: watch::Receiver<bool>) {
        let poll = fleet.config.rules_poll;
        let mirrors = Arc::clone(&self).follow_fleet_mirrors(Arc::clone(&fleet), stop.clone());
        let rules = fleet.rules.follow(poll, stop, |published| {
            let learning = Arc::clone(&self);
            // Storing is blocking; versions arriving out of order are put live in order
            // (adopt keeps only a version newer than the host's newest).
            tokio::task::spawn_blocking(move || learning.adopt_published(published));
        });
        tokio::join!(rules, mirrors);
    }

    /// Puts one rule set received from the board live (blocking).
    fn adopt_published(&self, published: PublishedRules) {
        let PublishedRules {
            host,
            version,
            token,
            body,
        } = published;
        let mut set: HostRuleSet = match serde_json::from_slice(&body) {
            Ok(set) => set,
            Err(err) => {
                tracing::error!(host, version, token, %err, "a published rule set does not decode; the previous rules stay live");
                return;
            }
        };
        set.version = version;
        set.host.clone_from(&host);
        match self.adopt(&host, set) {
            Ok(true) => {
                if let Some(state) = self.hosts.get(&host).map(|entry| Arc::clone(entry.value())) {
                    let mut state = state.lock();
                    let pending = state.trigger.new_samples;
                    state.trigger.learned(pending, tokio::time::Instant::now());
                }
                tracing::info!(
                    host,
                    version,
                    token,
                    "rules published by the fleet are live"
                );
                self.publish_gauges();
            }
            Ok(false) => {}
            Err(err) => {
                tracing::error!(host, version, %err, "a published rule set could not be put live; the previous rules stay live");
            }
        }
    }

    /// The RollbackRules call: in a fleet, the older set is published as a new version (under the
    /// host's lease), so every sidecar rolls back; otherwise [`Learning::rollback`].
    pub async fn rollback_rules(
        self: &Arc<Self>,
        host: &str,
        to_version: u64,
    ) -> Result<RollbackRulesResponse, Status> {
        let Some(fleet) = self.sidecar.fleet.clone() else {
            return self.rollback(host, to_version);
        };
        let mut set = self.rollback_set(host, to_version)?;
        let from = set.version;
        let lease = match fleet.leases.acquire(host).await {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                return Err(Status::aborted(format!(
                    "another sidecar of the fleet is learning {host:?}; retry the rollback when \
                     it is done"
                )))
            }
            Err(err) => {
                return Err(Status::unavailable(format!(
                    "the fleet's lease of {host:?} could not be taken: {err}"
                )))
            }
        };
        let published = self.publish(&fleet, &lease, &mut set).await;
        if let Err(err) = fleet.leases.release(&lease).await {
            tracing::debug!(host, %err, "the rollback's lease was not released");
        }
        let version = published.map_err(|err| Status::aborted(err.to_string()))?;
        let learning = Arc::clone(self);
        let adopt_host = host.to_owned();
        tokio::task::spawn_blocking(move || learning.adopt(&adopt_host, set))
            .await
            .map_err(|err| Status::internal(format!("storing panicked: {err}")))?
            .map_err(|err| Status::unavailable(format!("rollback not stored: {err}")))?;
        tracing::info!(host, from, version, "rules rolled back fleet-wide");
        self.publish_gauges();
        Ok(RollbackRulesResponse {
            host: host.to_owned(),
            version,
        })
    }
}
