//! The mirror book in a fleet (`--fleet`): one book for every sidecar, so every sidecar folds the
//! same aliases to the same canonical site and the shared seen-set holds one form of a mirrored
//! page.
//!
//! - A detection pass takes the mirror lease ([`crate::fleet::MIRRORS_LEASE`]); a sidecar that
//!   finds it held skips its pass (the holder's table arrives at the next poll). Under the lease
//!   it reads the fleet's book when newer than its own, counts its own detection into it, and
//!   publishes the result ([`crate::fleet::mirrors`]) under the lease's fencing token. A pair
//!   this sidecar does not summarize both sites of is neither confirmed nor missed by its pass
//!   ([`Learning::pass_on`]), so a sidecar that never saw a host's pages cannot withdraw what
//!   another sidecar found, and two sidecars' passes on one pair's evidence count as consecutive.
//! - An operator's pin, forbid or clear, asked on any sidecar, is recorded the same way (waiting
//!   a bounded time for a pass that holds the lease), so it is part of what every sidecar follows
//!   and survives a relearn on any of them.
//! - Every sidecar polls the fleet's table every `--fleet-rules-poll-ms` and puts a newer one live
//!   whole (stored first, as a local pass's book is).
//! - Redis unreachable: passes and decisions fail (logged, or refused to the operator), and the
//!   last table stays live; Canonicalize never waits on any of this.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tonic::Status;

use super::mirrors::MirrorBook;
use super::Learning;
use crate::fleet::{Fleet, Lease, MirrorsOutcome, PublishedMirrors, MIRRORS_LEASE};
use crate::pb::{DecideMirrorRequest, ListMirrorsResponse};
use crate::telemetry;

/// Longest an operator's decision waits for the mirror lease held by another change.
const DECISION_LEASE_WAIT: Duration = Duration::from_secs(5);

/// Wait between attempts to take the mirror lease for a decision.
const DECISION_LEASE_RETRY: Duration = Duration::from_millis(50);

/// The book a fleet publication carries (the version is the board's, set on receipt).
fn decode(published: &PublishedMirrors) -> Result<MirrorBook, serde_json::Error> {
    let mut book: MirrorBook = serde_json::from_slice(&published.body)?;
    book.fleet_version = published.version;
    Ok(book)
}

impl Learning {
    /// One detection pass on the fleet's book (see the module docs).
    pub(super) async fn mirror_pass_in_fleet(
        self: &Arc<Self>,
        fleet: &Arc<Fleet>,
    ) -> Result<(), Status> {
        let lease = match fleet.leases.acquire(MIRRORS_LEASE).await {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                tracing::debug!(
                    "another sidecar is changing the fleet's mirror table; this pass is skipped"
                );
                return Ok(());
            }
            Err(err) => {
                return Err(Status::unavailable(format!(
                    "the fleet's mirror lease could not be taken: {err}"
                )))
            }
        };
        let outcome = self
            .change_fleet_book(fleet, &lease, |learning, base| {
                Ok(learning.pass_on(base, true))
            })
            .await;
        if let Err(err) = fleet.leases.release(&lease).await {
            tracing::debug!(%err, "the mirror lease was not released; it expires by itself");
        }
        outcome
    }

    /// The DecideMirror call, on the fleet's book with `--fleet`, else on this sidecar's.
    pub async fn decide_mirror_anywhere(
        self: &Arc<Self>,
        request: DecideMirrorRequest,
    ) -> Result<ListMirrorsResponse, Status> {
        let Some(fleet) = self.sidecar.fleet.clone() else {
            let learning = Arc::clone(self);
            // Stores durably and may wait for a running detection pass: off the async threads.
            return tokio::task::spawn_blocking(move || learning.decide_mirror(request))
                .await
                .map_err(|err| Status::internal(format!("mirror decision failed: {err}")))?;
        };
        let deadline = tokio::time::Instant::now() + DECISION_LEASE_WAIT;
        let lease = loop {
            match fleet.leases.acquire(MIRRORS_LEASE).await {
                Ok(Some(lease)) => break lease,
                Ok(None) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(DECISION_LEASE_RETRY).await;
                }
                Ok(None) => {
                    return Err(Status::aborted(format!(
                        "another sidecar of the fleet held the mirror table for {DECISION_LEASE_WAIT:?}; \
                         retry the decision"
                    )))
                }
                Err(err) => {
                    return Err(Status::unavailable(format!(
                        "the fleet's mirror lease could not be taken (the decision would not reach \
                         the other sidecars): {err}"
                    )))
                }
            }
        };
        let outcome = self
            .change_fleet_book(&fleet, &lease, move |learning, base| {
                learning.decided(base, &request)
            })
            .await;
        if let Err(err) = fleet.leases.release(&lease).await {
            tracing::debug!(%err, "the mirror lease was not released; it expires by itself");
        }
        outcome?;
        self.list_mirrors()
    }

    /// Under the mirror lease: the fleet's book (or this sidecar's, when at least as new) changed
    /// by `change` (blocking), published, then stored and put live here.
    async fn change_fleet_book(
        self: &Arc<Self>,
        fleet: &Arc<Fleet>,
        lease: &Lease,
        change: impl FnOnce(&Learning, MirrorBook) -> Result<MirrorBook, Status> + Send + 'static,
    ) -> Result<(), Status> {
        let have = self.mirror_book.lock().fleet_version;
        let published = fleet.mirrors.newer_than(have).await.map_err(|err| {
            Status::unavailable(format!("the fleet's mirror table could not be read: {err}"))
        })?;
        let learning = Arc::clone(self);
        let book = tokio::task::spawn_blocking(move || {
            let local = learning.mirror_book.lock().clone();
            let base = match published.as_ref().map(decode) {
                Some(Ok(book)) => book,
                Some(Err(err)) => {
                    tracing::error!(%err, "the fleet's mirror table does not decode; this sidecar's replaces it");
                    local
                }
                None => local,
            };
            change(&learning, base)
        })
        .await
        .map_err(|err| Status::internal(format!("the mirror change panicked: {err}")))??;
        let body = serde_json::to_vec(&book).map_err(|err| Status::internal(err.to_string()))?;
        let least = book.fleet_version + 1;
        let version = match fleet.mirrors.publish(lease, &body, least).await {
            Ok(MirrorsOutcome::Published { version }) => version,
            Ok(MirrorsOutcome::Fenced { newer }) => {
                return Err(Status::aborted(format!(
                    "fenced: a newer mirror lease ({newer}) changed the fleet's mirror table \
                     (this change held {}); its table is the one served",
                    lease.token
                )))
            }
            Err(err) => {
                return Err(Status::unavailable(format!(
                    "the fleet's mirror table could not be published: {err}"
                )))
            }
        };
        let mut book = book;
        book.fleet_version = version;
        let learning = Arc::clone(self);
        tokio::task::spawn_blocking(move || learning.adopt_mirrors(book))
            .await
            .map_err(|err| Status::internal(format!("storing the mirror table panicked: {err}")))?
            .map(|_| ())
            .map_err(Status::unavailable)
    }

    /// Stores and puts live a fleet book unless this sidecar already has its version or a newer
    /// one (blocking); true when it did.
    fn adopt_mirrors(&self, book: MirrorBook) -> Result<bool, String> {
        let _one = self.mirror_pass.lock();
        if book.fleet_version <= self.mirror_book.lock().fleet_version {
            return Ok(false);
        }
        self.commit_book(book).map(|()| true)
    }

    /// Follows the fleet's mirror table until `stop` (see the module docs).
    pub(super) async fn follow_fleet_mirrors(
        self: Arc<Self>,
        fleet: Arc<Fleet>,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut ticker = tokio::time::interval(fleet.config.rules_poll);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // A version that did not decode is not decoded (and logged) again at every poll.
        let mut refused = None;
        loop {
            tokio::select! {
                _ = ticker.tick() => {}
                _ = stop.wait_for(|stop| *stop) => return,
            }
            if !fleet.link.is_connected() {
                continue;
            }
            let have = self.mirror_book.lock().fleet_version;
            let published = match fleet.mirrors.newer_than(have).await {
                Ok(Some(published)) if refused != Some(published.version) => published,
                Ok(_) => continue,
                Err(err) => {
                    tracing::debug!(%err, "polling the fleet's mirror table failed");
                    continue;
                }
            };
            let book = match decode(&published) {
                Ok(book) => book,
                Err(err) => {
                    tracing::error!(version = published.version, %err, "the fleet's mirror table does not decode; the previous mirror sets stay live");
                    refused = Some(published.version);
                    continue;
                }
            };
            let learning = Arc::clone(&self);
            match tokio::task::spawn_blocking(move || learning.adopt_mirrors(book)).await {
                Ok(Ok(true)) => {
                    metrics::counter!(telemetry::FLEET_MIRRORS_RECEIVED).increment(1);
                }
                Ok(Ok(false)) => {}
                Ok(Err(err)) => {
                    tracing::error!(%err, "the fleet's mirror table could not be put live; the previous mirror sets stay live")
                }
                Err(err) => tracing::error!(%err, "adopting the fleet's mirror table panicked"),
            }
        }
    }
}
