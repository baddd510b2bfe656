//! The mirror book in a fleet (`--fleet`): one book for every sidecar, so every sidecar folds the
//! same aliases to the same canonical site and the shared seen-set holds one form of a mirrored
//! page.
//!
//! - A detection pass first shares the summaries of the hosts a relearn changed since the last
//!   pass, and refreshes the age of the others it holds ([`crate::fleet::summaries`]); then it
//!   takes the mirror lease ([`crate::fleet::MIRRORS_LEASE`]); a sidecar that finds it held skips
//!   the rest of its pass (the holder's table arrives at the next poll).
//! - Under the lease it reads the fleet's signatures. When the other sidecars' origins are at
//!   most `--fleet-mirror-summaries-per-pass` (default [`FLEET_SUMMARIES_PER_PASS`]), it fetches
//!   all of their full summaries (the pass then
//!   sees what one sidecar holding every host would). Beyond that it proposes pairs from the
//!   signatures joined with its own ([`crate::mirrors::propose`]: at least one origin of each
//!   pair summarized by another sidecar), and fetches the full summaries of the proposed
//!   origins and of the book's pairs, at most that many and [`FLEET_SUMMARY_BYTES_PER_PASS`]
//!   of them, in turn ([`FetchRotation`]: those no pass fetched yet first, then those fetched
//!   longest ago), so when they outnumber a pass's budget every pair still gets its turn
//!   within a few passes instead of the same best-ranked origins being fetched every time. Detection then runs on the union of its own summaries and those
//!   ([`crate::service::mirrors::MirrorWatch::detect_with`]), so a mirror pair whose two hosts
//!   are sampled on two sidecars is found. Memory of a pass, besides the local summaries: the
//!   fleet's signatures (≤ ~350 bytes each, plus their keys sorted once, 16 bytes per key and
//!   about 40 keys per origin: ~64 MB at 100,000 origins), a copy of the local summaries, and the
//!   fetched summaries (at most [`FLEET_SUMMARY_BYTES_PER_PASS`] encoded).
//! - It reads the fleet's book when newer than its own, counts its detection into it, and
//!   publishes the result ([`crate::fleet::mirrors`]) under the lease's fencing token. A pair
//!   the pass does not summarize both sites of (here or fetched) is neither confirmed nor
//!   missed by it ([`Learning::pass_on`]), so a sidecar that never saw a host's pages cannot
//!   withdraw what another sidecar found, and two sidecars' passes on one pair's evidence count
//!   as consecutive.
//! - The fleet's summaries unreadable (Redis slow or gone after the lease was taken): the pass
//!   runs on this sidecar's summaries only (logged, counted as `unavailable` in
//!   `undust_fleet_mirror_summaries_total`); a share that failed is sent again with the next
//!   pass's.
//! - An operator's pin, forbid or clear, asked on any sidecar, is recorded the same way (waiting
//!   a bounded time for a pass that holds the lease), so it is part of what every sidecar follows
//!   and survives a relearn on any of them.
//! - Every sidecar polls the fleet's table every `--fleet-rules-poll-ms` and puts a newer one live
//!   whole (stored first, as a local pass's book is).
//! - Redis unreachable: passes and decisions fail (logged, or refused to the operator), and the
//!   last table stays live; Canonicalize never waits on any of this. Shared summaries of a host
//!   that left every sidecar's sample are refreshed by none and age out after
//!   [`SUMMARY_AGE_INTERVALS`] relearn intervals (at least [`SUMMARY_MIN_AGE`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tonic::Status;

use rustc_hash::{FxHashMap, FxHashSet};

use super::mirrors::MirrorBook;
use super::Learning;
use crate::fleet::{
    Fleet, FleetError, Lease, MirrorsOutcome, PublishedMirrors, SharedOrigin, MIRRORS_LEASE,
};
use crate::mirrors::signature::DEFAULT_SKETCH;
use crate::mirrors::{propose, HostSummary, OriginSignature, ProposeParams};
use crate::pb::{DecideMirrorRequest, ListMirrorsResponse};
use crate::telemetry;

/// Longest an operator's decision waits for the mirror lease held by another change.
const DECISION_LEASE_WAIT: Duration = Duration::from_secs(5);

/// Wait between attempts to take the mirror lease for a decision.
const DECISION_LEASE_RETRY: Duration = Duration::from_millis(50);

/// Most full summaries of other sidecars one detection pass fetches, unless
/// `--fleet-mirror-summaries-per-pass` says otherwise.
pub const FLEET_SUMMARIES_PER_PASS: usize = 2_000;

/// Most bytes (encoded) of other sidecars' full summaries one detection pass fetches.
pub const FLEET_SUMMARY_BYTES_PER_PASS: usize = 256 << 20;

/// Relearn intervals after which a shared summary no sidecar refreshed ages out: every sidecar
/// refreshes those it holds at each pass, at least once per interval, so a few missed passes
/// (a sidecar restarting, Redis away) do not drop them.
pub const SUMMARY_AGE_INTERVALS: u32 = 4;

/// Shortest age bound, for sidecars that relearn every few seconds.
pub const SUMMARY_MIN_AGE: Duration = Duration::from_secs(600);

/// When recent passes fetched each proposed origin of other sidecars (a pass counter), so a pass
/// whose proposals exceed its budget takes those never or longest ago fetched first. Holds only
/// the origins the last pass proposed or tracked: bounded by the fleet's origins.
#[derive(Debug, Default)]
pub(super) struct FetchRotation {
    passes: u64,
    last_fetched: FxHashMap<String, u64>,
}

impl FetchRotation {
    /// Orders `proposed` (origin indices in priority order) for this pass: never fetched first,
    /// then fetched longest ago, the priority order kept within each (a stable sort).
    fn order<'a>(&self, proposed: &mut [usize], origin: impl Fn(usize) -> &'a str) {
        proposed.sort_by_key(|&i| self.last_fetched.get(origin(i)).copied().unwrap_or(0));
    }

    /// Records a pass: `fetched` were fetched now; of the rest, only `candidates` stay
    /// remembered.
    fn record<'a>(
        &mut self,
        fetched: impl IntoIterator<Item = &'a str>,
        candidates: &FxHashSet<&str>,
    ) {
        self.passes += 1;
        let pass = self.passes;
        self.last_fetched
            .retain(|origin, _| candidates.contains(origin.as_str()));
        for origin in fetched {
            self.last_fetched.insert(origin.to_owned(), pass);
        }
    }
}

/// The book a fleet publication carries (the version is the board's, set on receipt).
fn decode(published: &PublishedMirrors) -> Result<MirrorBook, serde_json::Error> {
    let mut book: MirrorBook = serde_json::from_slice(&published.body)?;
    book.fleet_version = published.version;
    Ok(book)
}

/// The signatures and full summaries of `changed`, encoded for the fleet (a summary that does not
/// encode is logged and left out).
fn encode_for_sharing(changed: &[HostSummary]) -> Vec<SharedOrigin> {
    let mut shared = Vec::with_capacity(changed.len());
    for summary in changed {
        let signature = OriginSignature::of(summary, DEFAULT_SKETCH);
        match (
            postcard::to_stdvec(&signature),
            postcard::to_stdvec(summary),
        ) {
            (Ok(signature), Ok(encoded)) => shared.push(SharedOrigin {
                origin: summary.origin.clone(),
                signature,
                summary: encoded,
            }),
            (Err(err), _) | (_, Err(err)) => {
                tracing::error!(origin = %summary.origin, %err, "a host summary does not encode; not shared");
            }
        }
    }
    shared
}

impl Learning {
    /// One detection pass on the fleet's book (see the module docs).
    pub(super) async fn mirror_pass_in_fleet(
        self: &Arc<Self>,
        fleet: &Arc<Fleet>,
    ) -> Result<(), Status> {
        self.share_summaries(fleet).await;
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
        let fetched = match self.fleet_summaries(fleet).await {
            Ok(fetched) => fetched,
            Err(err) => {
                tracing::warn!(%err, "the fleet's host summaries could not be read; this mirror pass runs on this sidecar's summaries only");
                metrics::counter!(telemetry::FLEET_SUMMARIES, "outcome" => "unavailable")
                    .increment(1);
                Vec::new()
            }
        };
        let outcome = self
            .change_fleet_book(fleet, &lease, move |learning, base| {
                Ok(learning.pass_on(base, true, fetched))
            })
            .await;
        if let Err(err) = fleet.leases.release(&lease).await {
            tracing::debug!(%err, "the mirror lease was not released; it expires by itself");
        }
        outcome
    }

    /// Shares the summaries of the hosts a relearn changed and refreshes the others (see the
    /// module docs); on failure the changed hosts wait for the next pass. Held origins Redis
    /// turns out to have lost (restarted empty, flushed, failed over) are shared again whole at
    /// once, so a fleet's summaries heal in one pass rather than waiting for the hosts' marks
    /// to change.
    async fn share_summaries(&self, fleet: &Arc<Fleet>) {
        let watch = &self.sidecar.mirrors;
        let max_age = self
            .sidecar
            .config
            .learning
            .relearn_interval
            .saturating_mul(SUMMARY_AGE_INTERVALS)
            .max(SUMMARY_MIN_AGE);
        // The second round only re-sends what the first found lost; it holds nothing back, so
        // it finds nothing missing and the loop ends.
        for _round in 0..2 {
            let (changed, held) = watch.take_unshared();
            let shared = encode_for_sharing(&changed);
            match fleet.summaries.share(&shared, &held, max_age).await {
                Ok(outcome) => {
                    metrics::counter!(telemetry::FLEET_SUMMARIES, "outcome" => "shared")
                        .increment(shared.len() as u64);
                    metrics::counter!(telemetry::FLEET_SUMMARIES, "outcome" => "evicted")
                        .increment(outcome.evicted);
                    if outcome.missing.is_empty() {
                        return;
                    }
                    tracing::info!(
                        origins = outcome.missing.len(),
                        "Redis no longer holds some of this sidecar's shared host summaries (restarted empty, flushed or failed over); sharing them again"
                    );
                    metrics::counter!(telemetry::FLEET_SUMMARIES, "outcome" => "lost")
                        .increment(outcome.missing.len() as u64);
                    watch.origins_unshared_again(&outcome.missing);
                }
                Err(err) => {
                    tracing::debug!(%err, hosts = changed.len(), "host summaries not shared with the fleet; the next pass shares them");
                    metrics::counter!(telemetry::FLEET_SUMMARIES, "outcome" => "unavailable")
                        .increment(1);
                    watch.unshared_again(changed.into_iter().map(|summary| summary.host));
                    return;
                }
            }
        }
    }

    /// The full summaries of other sidecars' origins this pass compares (see the module docs).
    async fn fleet_summaries(
        self: &Arc<Self>,
        fleet: &Arc<Fleet>,
    ) -> Result<Vec<HostSummary>, FleetError> {
        let signatures = fleet
            .summaries
            .signatures(fleet.summaries.max_origins())
            .await?;
        let learning = Arc::clone(self);
        let per_pass = fleet.config.mirror_summaries_per_pass;
        let wanted =
            tokio::task::spawn_blocking(move || learning.origins_to_fetch(signatures, per_pass))
                .await
                .map_err(|err| FleetError::Protocol(format!("proposing pairs panicked: {err}")))?;
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let raw = fleet
            .summaries
            .summaries(&wanted, FLEET_SUMMARY_BYTES_PER_PASS)
            .await?;
        let mut out = Vec::with_capacity(raw.len());
        for (origin, bytes) in raw {
            match postcard::from_bytes::<HostSummary>(&bytes) {
                Ok(summary) if summary.origin == origin => out.push(summary),
                _ => {
                    metrics::counter!(telemetry::FLEET_SUMMARIES, "outcome" => "undecodable")
                        .increment(1);
                }
            }
        }
        metrics::counter!(telemetry::FLEET_SUMMARIES, "outcome" => "fetched")
            .increment(out.len() as u64);
        Ok(out)
    }

    /// Origins held by other sidecars whose full summaries this pass wants: all of them when
    /// they are at most `per_pass`; else those of the book's pairs and of the pairs their
    /// signatures propose with this sidecar's or each other's, in [`FetchRotation`] order, at
    /// most `per_pass`. Blocking (linear in the signatures).
    fn origins_to_fetch(&self, shared: Vec<(String, Vec<u8>)>, per_pass: usize) -> Vec<String> {
        let mut signatures = self.sidecar.mirrors.signatures(DEFAULT_SKETCH);
        let local = signatures.len();
        let held: FxHashSet<String> = signatures.iter().map(|s| s.origin.clone()).collect();
        for (origin, bytes) in shared {
            if held.contains(&origin) {
                continue;
            }
            match postcard::from_bytes::<OriginSignature>(&bytes) {
                Ok(signature) if signature.origin == origin => signatures.push(signature),
                _ => {
                    metrics::counter!(telemetry::FLEET_SUMMARIES, "outcome" => "undecodable")
                        .increment(1);
                }
            }
        }
        let elsewhere: FxHashMap<&str, usize> = signatures[local..]
            .iter()
            .enumerate()
            .map(|(i, s)| (s.origin.as_str(), local + i))
            .collect();
        let mut order: Vec<usize> = Vec::new();
        let mut taken: FxHashSet<usize> = FxHashSet::default();
        {
            let book = self.mirror_book.lock();
            for origin in book.tracked_origins() {
                if let Some(&i) = elsewhere.get(origin) {
                    if taken.insert(i) {
                        order.push(i);
                    }
                }
            }
        }
        if signatures.len() - local <= per_pass {
            // Every origin of the fleet fits one pass: all of them, so the pass sees what one
            // sidecar holding every host would, and passes on different sidecars agree.
            order.extend((local..signatures.len()).filter(|i| !taken.contains(i)));
            return order
                .into_iter()
                .map(|i| signatures[i].origin.clone())
                .collect();
        }
        let mut proposed: Vec<usize> = Vec::new();
        for pair in propose(&signatures, |i| i >= local, &ProposeParams::default()) {
            for i in [pair.a as usize, pair.b as usize] {
                if i >= local && taken.insert(i) {
                    proposed.push(i);
                }
            }
        }
        // The book's origins and the proposals share the budget in one rotation (the book's
        // first among equals): a pair not covered by a pass is neither confirmed nor missed, so
        // the book's pairs lose nothing by waiting their turn, while giving them the whole
        // budget every pass would starve the proposals once the book tracks more origins
        // than one pass fetches.
        order.extend(proposed);
        let mut rotation = self.fleet_fetches.lock();
        let candidates: FxHashSet<&str> = order
            .iter()
            .map(|&i| signatures[i].origin.as_str())
            .collect();
        rotation.order(&mut order, |i| signatures[i].origin.as_str());
        order.truncate(per_pass);
        rotation.record(
            order.iter().map(|&i| signatures[i].origin.as_str()),
            &candidates,
        );
        order
            .into_iter()
            .map(|i| signatures[i].origin.clone())
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Proposals beyond a pass's budget get their turn: each pass takes those never fetched,
    /// then those fetched longest ago, in proposal order within each.
    #[test]
    fn a_budget_smaller_than_the_proposals_rotates_through_them() {
        let origins = ["a", "b", "c", "d", "e"];
        let mut rotation = FetchRotation::default();
        let pass = |rotation: &mut FetchRotation, budget: usize| -> Vec<&str> {
            let mut proposed: Vec<usize> = (0..origins.len()).collect();
            rotation.order(&mut proposed, |i| origins[i]);
            proposed.truncate(budget);
            let candidates: FxHashSet<&str> = origins.iter().copied().collect();
            rotation.record(proposed.iter().map(|&i| origins[i]), &candidates);
            proposed.into_iter().map(|i| origins[i]).collect()
        };
        assert_eq!(pass(&mut rotation, 2), ["a", "b"]);
        assert_eq!(pass(&mut rotation, 2), ["c", "d"]);
        assert_eq!(pass(&mut rotation, 2), ["e", "a"]);
        assert_eq!(pass(&mut rotation, 2), ["b", "c"]);
        // An origin no longer proposed is forgotten.
        let only: FxHashSet<&str> = ["a"].into_iter().collect();
        rotation.record(std::iter::empty(), &only);
        assert_eq!(rotation.last_fetched.len(), 1);
    }
}
