//! Mirror sets in the sidecar: detection passes over the host summaries
//! ([`crate::service::mirrors`]), hysteresis, the operator's pins and forbids, and the live
//! mirror table, all kept in one durable [`MirrorBook`].
//!
//! A pass runs at the end of a relearn of every host and every `--relearn-interval-secs`
//! (on a blocking thread, one at a time). Detection yields mirror sets; each alias → canonical
//! pair of them is tracked:
//!
//! - a pair goes live once confirmed on [`CONFIRM_PASSES`] consecutive passes, and is withdrawn
//!   only after [`WITHDRAW_PASSES`] consecutive passes without it, so a set never flips on noise
//!   (one pass that misses a pair, one pass that wrongly finds one);
//! - live pairs are joined into sets by canonical site; a canonical that is itself a live alias
//!   elsewhere hands its aliases on to that set's canonical (sets stay disjoint);
//! - the operator's decisions then apply ([`crate::mirrors::sets::apply_decisions`]): a pinned
//!   alias is live whatever detection says, a forbidden one never joins its set;
//! - sets that would not validate together (a site in two sets) are left out, one at a time,
//!   with a warning.
//!
//! The book is stored before the new table goes live (as rule versions are), and restored at
//! start. Per-host rules stay per host: a folded URL gets the rules of its canonical host, the
//! alias host's own rules answer only its URLs outside the alias (see `canonicalize`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tonic::Status;
use url::Url;

use super::Learning;
use crate::canon::mirror::MirrorTable;
use crate::canon::rules::mirror::{origin_of, validate_mirror_sets, validate_site};
use crate::canon::rules::{MirrorAlias, MirrorEvidence, MirrorSet, MirrorSite};
use crate::mirrors::sets::apply_decisions;
use crate::mirrors::{HostSummary, MirrorConfig, Technique};
use crate::pb::{
    DecideMirrorRequest, ListMirrorsResponse, MirrorCandidate, MirrorDecision, MirrorFold,
};
use crate::store::StoreError;
use crate::telemetry;

/// Consecutive passes that must confirm a pair before it goes live.
pub const CONFIRM_PASSES: u32 = 2;
/// Consecutive passes without a live pair before it is withdrawn.
pub const WITHDRAW_PASSES: u32 = 2;
/// Most canonical → canonical hops followed when joining sets (chains longer than this are
/// left as separate sets and validation decides).
const MAX_HOPS: usize = 8;
/// Most pairs on probation (detected, not yet live) the book keeps. In a fleet a pass keeps the
/// pairs whose sites it holds no summaries of, so pairs whose hosts left every sample would
/// otherwise stay for good, and the whole book is what the fleet's table stores in Redis.
/// Past this, pairs on probation that this pass did not confirm give way; live pairs always
/// stay (they are the table in use).
const MAX_PROBATION_PAIRS: usize = 20_000;

/// Detection as the sidecar runs it: the default proposers and *conn*, whose out-links ingest
/// keeps ([`crate::service::mirrors`]). *conn* only filters the *paths* pairs, so it adds its
/// name to a pair's evidence, never a pair of its own.
fn sidecar_detection() -> MirrorConfig {
    let mut config = MirrorConfig::default();
    if !config.proposers.contains(&Technique::Conn) {
        config.proposers.push(Technique::Conn);
    }
    config
}

/// One alias → canonical pair detection confirmed at least once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Tracked {
    alias: MirrorSite,
    canonical: MirrorSite,
    /// Consecutive passes that confirmed it (0 after a pass without it).
    confirmed: u32,
    /// Consecutive passes without it (0 after a pass with it).
    missed: u32,
    live: bool,
    evidence: Option<MirrorEvidence>,
}

/// Everything the sidecar keeps about mirror sets (stored as JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct MirrorBook {
    passes: u64,
    /// Pairs by `alias display → canonical display`.
    tracked: BTreeMap<String, Tracked>,
    /// The operator's pins and forbids, per canonical site (aliases all `pinned`).
    decisions: Vec<MirrorSet>,
    /// The sets live now.
    live: Vec<MirrorSet>,
    /// In a fleet, the version of the fleet's mirror table this book is (0 outside a fleet, and
    /// in books stored before fleets shared them).
    #[serde(default)]
    pub(super) fleet_version: u64,
}

fn pair_key(alias: &MirrorSite, canonical: &MirrorSite) -> String {
    format!("{} -> {}", alias.display(), canonical.display())
}

impl MirrorBook {
    /// A detected set rooted on a site that is already a live (or operator-decided) canonical,
    /// when it holds one: the canonical of a live set stays put even when detection's preference
    /// moves (more URLs seen on another member), since canonical forms recorded in the seen-set
    /// point at it.
    fn reroot(&self, set: &MirrorSet) -> MirrorSet {
        let established = |site: &MirrorSite| {
            self.live
                .iter()
                .chain(&self.decisions)
                .any(|s| s.canonical == *site)
        };
        if established(&set.canonical) {
            return set.clone();
        }
        let Some(i) = set.aliases.iter().position(|a| established(&a.site)) else {
            return set.clone();
        };
        let mut out = set.clone();
        let new_canonical = out.aliases.remove(i);
        out.aliases.push(MirrorAlias {
            site: std::mem::replace(&mut out.canonical, new_canonical.site),
            pinned: false,
            evidence: new_canonical.evidence,
        });
        out.id = format!("mirror:{}", out.canonical.display());
        out
    }

    /// The origins of the pairs the book tracks (live or on probation).
    pub(super) fn tracked_origins(&self) -> impl Iterator<Item = &str> {
        self.tracked
            .values()
            .flat_map(|t| [t.alias.origin.as_str(), t.canonical.origin.as_str()])
    }

    /// Counts one detection pass's sets into the pairs' streaks.
    #[cfg(test)]
    fn observe_pass(&mut self, detected: &[MirrorSet]) {
        self.observe_pass_covering(detected, |_| true);
    }

    /// Counts one detection pass's sets into the pairs' streaks, where a pair not detected counts
    /// as missed only when the pass `covers` both of its sites (their summaries are in the
    /// detecting sidecar): in a fleet, a sidecar that never saw a host's pages has no evidence
    /// against the pairs another sidecar found.
    fn observe_pass_covering(
        &mut self,
        detected: &[MirrorSet],
        covers: impl Fn(&MirrorSite) -> bool,
    ) {
        self.passes += 1;
        let mut seen = std::collections::BTreeSet::new();
        let detected: Vec<MirrorSet> = detected.iter().map(|s| self.reroot(s)).collect();
        for set in &detected {
            for alias in &set.aliases {
                let key = pair_key(&alias.site, &set.canonical);
                seen.insert(key.clone());
                let entry = self.tracked.entry(key).or_insert_with(|| Tracked {
                    alias: alias.site.clone(),
                    canonical: set.canonical.clone(),
                    confirmed: 0,
                    missed: 0,
                    live: false,
                    evidence: None,
                });
                entry.confirmed = entry.confirmed.saturating_add(1);
                entry.missed = 0;
                entry.evidence.clone_from(&alias.evidence);
                if entry.confirmed >= CONFIRM_PASSES {
                    entry.live = true;
                }
            }
        }
        self.tracked.retain(|key, entry| {
            if seen.contains(key) || !(covers(&entry.alias) && covers(&entry.canonical)) {
                return true;
            }
            entry.confirmed = 0;
            entry.missed = entry.missed.saturating_add(1);
            // A pair on probation must be confirmed on consecutive passes; a live one stays
            // until it was missed on WITHDRAW_PASSES of them.
            entry.live && entry.missed < WITHDRAW_PASSES
        });
        let on_probation = self.tracked.values().filter(|t| !t.live).count();
        if on_probation > MAX_PROBATION_PAIRS {
            self.tracked
                .retain(|key, entry| entry.live || seen.contains(key));
        }
    }

    /// The live sets: live pairs joined by canonical, then the operator's decisions, validated.
    fn resolve(&self) -> Vec<MirrorSet> {
        // Newest confirmation first, so an alias live under two canonicals (the canonical choice
        // moved) takes the one detection confirms now.
        let mut pairs: Vec<&Tracked> = self.tracked.values().filter(|t| t.live).collect();
        pairs.sort_by_key(|t| (t.missed, std::cmp::Reverse(t.confirmed)));
        let mut canonical_of: BTreeMap<MirrorSite, (MirrorSite, Option<MirrorEvidence>)> =
            BTreeMap::new();
        for t in pairs {
            canonical_of
                .entry(t.alias.clone())
                .or_insert_with(|| (t.canonical.clone(), t.evidence.clone()));
        }
        let root = |site: &MirrorSite| {
            let mut at = site.clone();
            for _ in 0..MAX_HOPS {
                match canonical_of.get(&at) {
                    Some((next, _)) if next != site => at = next.clone(),
                    _ => break,
                }
            }
            at
        };
        let mut sets: BTreeMap<MirrorSite, Vec<MirrorAlias>> = BTreeMap::new();
        for (alias, (_, evidence)) in &canonical_of {
            let canonical = root(alias);
            if &canonical == alias {
                continue;
            }
            sets.entry(canonical).or_default().push(MirrorAlias {
                site: alias.clone(),
                pinned: false,
                evidence: evidence.clone(),
            });
        }
        let detected: Vec<MirrorSet> = sets
            .into_iter()
            .map(|(canonical, aliases)| MirrorSet {
                id: format!("mirror:{}", canonical.display()),
                canonical,
                aliases,
                forbidden: Vec::new(),
            })
            .collect();
        let decided = apply_decisions(detected, &self.decisions);
        let mut accepted: Vec<MirrorSet> = Vec::with_capacity(decided.len());
        for set in decided {
            accepted.push(set);
            if let Err(err) = validate_mirror_sets(&accepted) {
                if let Some(dropped) = accepted.pop() {
                    tracing::warn!(set = %dropped.id, %err, "mirror set left out: it conflicts with another");
                }
            }
        }
        accepted
    }

    /// Records an operator's decision on `alias` in `canonical`'s set.
    fn decide(&mut self, decision: MirrorDecision, canonical: MirrorSite, alias: MirrorSite) {
        let pos = self.decisions.iter().position(|s| s.canonical == canonical);
        let set = match pos {
            Some(i) => &mut self.decisions[i],
            None => {
                self.decisions.push(MirrorSet {
                    id: format!("mirror:{}", canonical.display()),
                    canonical: canonical.clone(),
                    aliases: Vec::new(),
                    forbidden: Vec::new(),
                });
                let last = self.decisions.len() - 1;
                &mut self.decisions[last]
            }
        };
        set.aliases.retain(|a| a.site != alias);
        set.forbidden.retain(|f| *f != alias);
        match decision {
            MirrorDecision::Pin => set.aliases.push(MirrorAlias {
                site: alias,
                pinned: true,
                evidence: None,
            }),
            MirrorDecision::Forbid => set.forbidden.push(alias),
            MirrorDecision::Clear | MirrorDecision::Unspecified => {}
        }
        self.decisions
            .retain(|s| !s.aliases.is_empty() || !s.forbidden.is_empty());
    }
}

/// A site as an operator writes it: `scheme://host[:port]` and an optional folder.
fn parse_site(field: &str, text: &str) -> Result<MirrorSite, Status> {
    let url = Url::parse(text.trim()).map_err(|err| {
        Status::invalid_argument(format!("{field} {text:?} is not a URL ({err})"))
    })?;
    let origin = origin_of(&url)
        .ok_or_else(|| Status::invalid_argument(format!("{field} {text:?} has no host")))?;
    let site = MirrorSite {
        origin,
        path_prefix: url.path().trim_end_matches('/').to_owned(),
    };
    validate_site("", &site)
        .map_err(|err| Status::invalid_argument(format!("{field} {text:?}: {err}")))?;
    Ok(site)
}

impl Learning {
    /// Restores the stored mirror book and puts its sets live.
    pub(super) fn restore_mirrors(&self) -> Result<(), StoreError> {
        // The gauges say "none" until a stored book says otherwise.
        self.publish_mirror_gauges();
        let Some(bytes) = self.store.load_mirrors()? else {
            return Ok(());
        };
        let book: MirrorBook = match serde_json::from_slice(&bytes) {
            Ok(book) => book,
            Err(err) => {
                self.store.count_undecodable("mirrors", &"state", &err);
                return Ok(());
            }
        };
        match MirrorTable::compile(&book.live) {
            Ok(table) => {
                self.sidecar.canonicalizer.set_mirrors(Arc::new(table));
            }
            Err(err) => self.store.count_undecodable("mirrors", &"live", &err),
        }
        *self.mirror_book.lock() = book;
        self.publish_mirror_gauges();
        Ok(())
    }

    /// Stores `book` and puts its live sets live (durably first). Caller holds `mirror_pass`.
    pub(super) fn commit_book(&self, book: MirrorBook) -> Result<(), String> {
        let table = MirrorTable::compile(&book.live).map_err(|err| err.to_string())?;
        let bytes = serde_json::to_vec(&book).map_err(|err| err.to_string())?;
        self.store
            .put_mirrors(&bytes)
            .map_err(|err| format!("mirror sets not stored: {err}"))?;
        let changed = self.mirror_book.lock().live != book.live;
        if changed {
            self.sidecar.canonicalizer.set_mirrors(Arc::new(table));
            tracing::info!(
                sets = book.live.len(),
                aliases = book.live.iter().map(|s| s.aliases.len()).sum::<usize>(),
                "mirror sets live"
            );
        }
        *self.mirror_book.lock() = book;
        self.publish_mirror_gauges();
        Ok(())
    }

    /// One detection pass (see the module docs). Blocking.
    pub(super) fn mirror_pass(&self) -> Result<(), String> {
        let _one = self.mirror_pass.lock();
        let book = self.pass_on(self.mirror_book.lock().clone(), false, Vec::new());
        self.commit_book(book)
    }

    /// `book` after one detection pass on this sidecar's summaries joined with `fleet` (other
    /// sidecars' summaries this pass fetched, see [`super::fleet_mirrors`]). With
    /// `covering_only`, pairs the pass does not summarize both sites of (neither here nor in
    /// `fleet`) are left as they are: another sidecar may hold their evidence. Blocking.
    pub(super) fn pass_on(
        &self,
        mut book: MirrorBook,
        covering_only: bool,
        fleet: Vec<HostSummary>,
    ) -> MirrorBook {
        let started = std::time::Instant::now();
        let fetched: std::collections::HashSet<String> =
            fleet.iter().map(|s| s.origin.clone()).collect();
        let detection = self.on_learn_threads(|| {
            self.sidecar
                .mirrors
                .detect_with(fleet, &sidecar_detection())
        });
        let watch = &self.sidecar.mirrors;
        book.observe_pass_covering(&detection.sets, |site| {
            !covering_only || fetched.contains(&site.origin) || watch.has_origin(&site.origin)
        });
        book.live = book.resolve();
        metrics::counter!(telemetry::MIRROR_PASSES).increment(1);
        metrics::histogram!(telemetry::MIRROR_PASS_DURATION)
            .record(started.elapsed().as_secs_f64());
        tracing::debug!(
            proposed = detection.proposed,
            confirmed = detection.confirmed.len(),
            detected_sets = detection.sets.len(),
            live_sets = book.live.len(),
            "mirror detection pass"
        );
        book
    }

    /// Runs a pass on a blocking thread (in a fleet, on the fleet's table: see
    /// [`super::fleet_mirrors`]), logging a failure (the previous sets stay live).
    pub(super) async fn mirror_pass_async(self: &Arc<Self>) {
        if let Some(fleet) = self.sidecar.fleet.clone() {
            if let Err(err) = self.mirror_pass_in_fleet(&fleet).await {
                tracing::warn!(%err, "fleet mirror detection pass not published; the previous mirror sets stay live");
            }
            return;
        }
        let learning = Arc::clone(self);
        match tokio::task::spawn_blocking(move || learning.mirror_pass()).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => {
                tracing::error!(%err, "mirror detection pass failed; the previous mirror sets stay live")
            }
            Err(err) => tracing::error!(%err, "mirror detection pass panicked"),
        }
    }

    fn publish_mirror_gauges(&self) {
        let book = self.mirror_book.lock();
        metrics::gauge!(telemetry::MIRROR_SETS).set(book.live.len() as f64);
        metrics::gauge!(telemetry::MIRROR_HOSTS_FOLDED)
            .set(book.live.iter().map(|s| s.aliases.len()).sum::<usize>() as f64);
    }

    /// The ListMirrors call.
    pub fn list_mirrors(&self) -> Result<ListMirrorsResponse, Status> {
        let book = self.mirror_book.lock().clone();
        let json = |sets: &[MirrorSet]| {
            serde_json::to_string_pretty(sets).map_err(|err| Status::internal(err.to_string()))
        };
        Ok(ListMirrorsResponse {
            mirrors_json: json(&book.live)?,
            candidates: book
                .tracked
                .values()
                .map(|t| MirrorCandidate {
                    alias: t.alias.display(),
                    canonical: t.canonical.display(),
                    confirmed_passes: t.confirmed,
                    missed_passes: t.missed,
                    live: t.live,
                })
                .collect(),
            decisions_json: json(&book.decisions)?,
            passes: book.passes,
        })
    }

    /// The DecideMirror call: records the decision, resolves the live sets again, stores and
    /// swaps them; refused when the decision cannot hold (the alias is another set's canonical,
    /// or the canonical is an alias elsewhere).
    pub fn decide_mirror(
        &self,
        request: DecideMirrorRequest,
    ) -> Result<ListMirrorsResponse, Status> {
        {
            let _one = self.mirror_pass.lock();
            let book = self.decided(self.mirror_book.lock().clone(), &request)?;
            self.commit_book(book).map_err(Status::unavailable)?;
        }
        self.list_mirrors()
    }

    /// `book` with the operator's decision `request` recorded and its live sets resolved again;
    /// refused when the decision cannot hold (see [`Learning::decide_mirror`]).
    pub(super) fn decided(
        &self,
        mut book: MirrorBook,
        request: &DecideMirrorRequest,
    ) -> Result<MirrorBook, Status> {
        let decision = MirrorDecision::try_from(request.decision)
            .ok()
            .filter(|d| *d != MirrorDecision::Unspecified)
            .ok_or_else(|| Status::invalid_argument("decision must be PIN, FORBID or CLEAR"))?;
        let canonical = parse_site("canonical", &request.canonical)?;
        let alias = parse_site("alias", &request.alias)?;
        if canonical == alias {
            return Err(Status::invalid_argument(
                "alias and canonical are the same site",
            ));
        }
        {
            book.decide(decision, canonical.clone(), alias.clone());
            book.live = book.resolve();
            if decision == MirrorDecision::Pin
                && !book
                    .live
                    .iter()
                    .any(|s| s.canonical == canonical && s.aliases.iter().any(|a| a.site == alias))
            {
                return Err(Status::failed_precondition(format!(
                    "{} cannot be pinned into {}'s set: one of them is already in another \
                     mirror set as {}; forbid or clear that first (see `undust admin mirrors \
                     list`)",
                    alias.display(),
                    canonical.display(),
                    "its canonical or an alias"
                )));
            }
        }
        tracing::info!(?decision, canonical = %canonical.display(), alias = %alias.display(), "mirror decision");
        Ok(book)
    }

    /// The live mirror set an origin of `host` is in: its id and canonical site.
    pub fn mirror_set_of_host(&self, host: &str) -> Option<(String, String)> {
        let table = self.sidecar.canonicalizer.mirrors();
        let on_host = |site: &MirrorSite| {
            Url::parse(&site.origin)
                .ok()
                .is_some_and(|u| u.host_str() == Some(host))
        };
        table
            .sets()
            .iter()
            .find(|s| on_host(&s.canonical) || s.aliases.iter().any(|a| on_host(&a.site)))
            .map(|s| (s.id.clone(), s.canonical.display()))
    }

    /// The live mirror sets with a site on `host` (for GetRules' rule file).
    pub fn mirror_sets_of_host(&self, host: &str) -> Vec<MirrorSet> {
        let table = self.sidecar.canonicalizer.mirrors();
        let on_host = |site: &MirrorSite| {
            Url::parse(&site.origin)
                .ok()
                .is_some_and(|u| u.host_str() == Some(host))
        };
        table
            .sets()
            .iter()
            .filter(|s| on_host(&s.canonical) || s.aliases.iter().any(|a| on_host(&a.site)))
            .cloned()
            .collect()
    }
}

/// Explain's account of a fold: the set, the alias and its evidence.
pub fn mirror_fold(table: &MirrorTable, set_id: &str, input: &Url, folded: &str) -> MirrorFold {
    let Some(set) = table.sets().iter().find(|s| s.id == set_id) else {
        return MirrorFold {
            set_id: set_id.to_owned(),
            canonical_url: folded.to_owned(),
            ..MirrorFold::default()
        };
    };
    let origin = origin_of(input).unwrap_or_default();
    let path = input.path();
    let alias = set
        .aliases
        .iter()
        .filter(|a| {
            a.site.origin == origin
                && (a.site.path_prefix.is_empty()
                    || path
                        .strip_prefix(a.site.path_prefix.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/')))
        })
        .max_by_key(|a| a.site.path_prefix.len());
    let evidence = alias.and_then(|a| a.evidence.clone()).unwrap_or_default();
    MirrorFold {
        set_id: set.id.clone(),
        canonical_url: folded.to_owned(),
        alias_site: alias.map(|a| a.site.display()).unwrap_or_default(),
        canonical_site: set.canonical.display(),
        pinned: alias.is_some_and(|a| a.pinned),
        techniques: evidence.techniques,
        matching_pages: evidence.matching_pages,
        mismatching_pages: evidence.mismatching_pages,
        examples: evidence.examples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(origin: &str) -> MirrorSite {
        MirrorSite {
            origin: origin.into(),
            path_prefix: String::new(),
        }
    }

    fn set(canonical: &str, aliases: &[&str]) -> MirrorSet {
        MirrorSet {
            id: format!("mirror:{canonical}"),
            canonical: site(canonical),
            aliases: aliases
                .iter()
                .map(|a| MirrorAlias {
                    site: site(a),
                    pinned: false,
                    evidence: Some(MirrorEvidence {
                        techniques: vec!["content".into()],
                        matching_pages: 10,
                        mismatching_pages: 0,
                        examples: vec![],
                    }),
                })
                .collect(),
            forbidden: vec![],
        }
    }

    fn aliases(book: &MirrorBook) -> Vec<String> {
        let mut out: Vec<String> = book
            .live
            .iter()
            .flat_map(|s| {
                s.aliases
                    .iter()
                    .map(move |a| format!("{}>{}", a.site.origin, s.canonical.origin))
            })
            .collect();
        out.sort();
        out
    }

    fn pass(book: &mut MirrorBook, detected: &[MirrorSet]) {
        book.observe_pass(detected);
        book.live = book.resolve();
    }

    #[test]
    fn a_pair_goes_live_after_two_passes_and_is_withdrawn_after_two_misses() {
        let mut book = MirrorBook::default();
        let found = [set("https://www.a.org", &["http://a.org", "https://a.de"])];
        pass(&mut book, &found);
        assert!(book.live.is_empty(), "one pass is not enough");
        pass(&mut book, &found);
        assert_eq!(
            aliases(&book),
            [
                "http://a.org>https://www.a.org",
                "https://a.de>https://www.a.org"
            ]
        );
        let live = book.live.clone();
        // Noise: one pass misses a.de, another wrongly finds b.org.
        pass(
            &mut book,
            &[set("https://www.a.org", &["http://a.org", "http://b.org"])],
        );
        assert_eq!(book.live, live, "one miss and one new find change nothing");
        pass(&mut book, &[set("https://www.a.org", &["http://a.org"])]);
        assert_eq!(aliases(&book), ["http://a.org>https://www.a.org"]);
        // Same evidence again: nothing changes.
        let before = book.live.clone();
        pass(&mut book, &[set("https://www.a.org", &["http://a.org"])]);
        assert_eq!(book.live, before);
        // A forbid wins at once; a pin holds with no detection at all.
        book.decide(
            MirrorDecision::Forbid,
            site("https://www.a.org"),
            site("http://a.org"),
        );
        book.decide(
            MirrorDecision::Pin,
            site("https://www.a.org"),
            site("http://old-a.org"),
        );
        book.live = book.resolve();
        assert_eq!(aliases(&book), ["http://old-a.org>https://www.a.org"]);
        pass(&mut book, &[]);
        pass(&mut book, &[]);
        pass(&mut book, &[]);
        assert_eq!(aliases(&book), ["http://old-a.org>https://www.a.org"]);
        book.decide(
            MirrorDecision::Clear,
            site("https://www.a.org"),
            site("http://old-a.org"),
        );
        book.live = book.resolve();
        assert!(book.live.is_empty());
    }

    #[test]
    fn passes_that_do_not_summarize_a_pair_neither_withdraw_nor_break_its_streak() {
        let mut book = MirrorBook::default();
        let found = [set("https://www.a.org", &["http://a.org"])];
        let elsewhere = |site: &MirrorSite| !site.origin.contains("a.org");
        book.observe_pass_covering(&found, |_| true);
        // Another sidecar's pass, without a.org's summaries, between two confirmations.
        book.observe_pass_covering(&[], elsewhere);
        book.observe_pass_covering(&found, |_| true);
        book.live = book.resolve();
        assert_eq!(aliases(&book), ["http://a.org>https://www.a.org"]);
        for _ in 0..3 {
            book.observe_pass_covering(&[], elsewhere);
            book.live = book.resolve();
        }
        assert_eq!(
            aliases(&book),
            ["http://a.org>https://www.a.org"],
            "passes without the pair's summaries withdrew it"
        );
        // A pass that summarizes both sites and misses the pair counts.
        pass(&mut book, &[]);
        pass(&mut book, &[]);
        assert!(book.live.is_empty());
    }

    #[test]
    fn pairs_on_probation_that_no_pass_covers_stay_bounded() {
        // A fleet's passes keep the pairs whose sites they hold no summaries of; pairs whose
        // hosts left every sample must not pile up in the book (and the fleet's table).
        let mut book = MirrorBook::default();
        let nowhere = |_: &MirrorSite| false;
        for batch in 0..3 {
            let found: Vec<MirrorSet> = (0..MAX_PROBATION_PAIRS / 2 + 1)
                .map(|i| {
                    set(
                        &format!("https://www.s{batch}x{i}.org"),
                        &[&format!("http://s{batch}x{i}.org")],
                    )
                })
                .collect();
            book.observe_pass_covering(&found, nowhere);
            // One pass's own pairs always stay: they may go live on the next.
            assert!(book.tracked.len() > MAX_PROBATION_PAIRS / 2);
            assert!(
                book.tracked.len() <= MAX_PROBATION_PAIRS,
                "{} pairs tracked after pass {batch}",
                book.tracked.len()
            );
        }
        // A live pair stays whatever the bound does.
        let live = [set("https://www.a.org", &["http://a.org"])];
        pass(&mut book, &live);
        pass(&mut book, &live);
        assert_eq!(aliases(&book), ["http://a.org>https://www.a.org"]);
    }

    #[test]
    fn a_live_canonical_stays_when_detection_prefers_another_member() {
        let mut book = MirrorBook::default();
        let found = [set("https://www.a.org", &["http://a.org", "https://a.de"])];
        pass(&mut book, &found);
        pass(&mut book, &found);
        let live = book.live.clone();
        // Detection now ranks the bare host first (it saw more of its URLs).
        let moved = [set("http://a.org", &["https://a.de", "https://www.a.org"])];
        for _ in 0..4 {
            pass(&mut book, &moved);
            assert_eq!(
                aliases(&book),
                aliases(&MirrorBook {
                    live: live.clone(),
                    ..MirrorBook::default()
                })
            );
        }
    }

    #[test]
    fn chained_canonicals_join_into_one_disjoint_set() {
        let mut book = MirrorBook::default();
        // Two passes find b under a, then c under b (the canonical choice of a group moved).
        let found = [
            set("https://a.org", &["https://b.org"]),
            set("https://b.org", &["https://c.org"]),
        ];
        pass(&mut book, &found);
        pass(&mut book, &found);
        assert_eq!(
            aliases(&book),
            ["https://b.org>https://a.org", "https://c.org>https://a.org"]
        );
        validate_mirror_sets(&book.live).unwrap();
    }

    #[test]
    fn operator_sites_parse_with_a_folder_and_bad_ones_are_refused() {
        let s = parse_site("alias", "http://Mirror.edu/pub/site/").unwrap();
        assert_eq!(
            (s.origin.as_str(), s.path_prefix.as_str()),
            ("http://mirror.edu", "/pub/site")
        );
        assert_eq!(
            parse_site("alias", "https://a.org").unwrap().path_prefix,
            ""
        );
        let err = parse_site("alias", "not a url").unwrap_err();
        assert!(
            err.message().contains("alias \"not a url\""),
            "{}",
            err.message()
        );
        let err = parse_site("alias", "ftp://a.org").unwrap_err();
        assert!(err.message().contains("http(s)"), "{}", err.message());
    }
}
