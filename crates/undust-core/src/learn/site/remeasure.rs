//! Measurements kept from one round of the site-rule search for the next.
//!
//! The search repeats its candidates after every round that accepted an action (`super::learn`),
//! and most of them are refused again: the actions accepted since moved other samples than the
//! ones a candidate's evidence reads. [`super::measure`] is a function of what it reads in the
//! round, and of nothing else:
//!
//! - the samples the candidate may change (`may_change`): their outputs, output hashes, page
//!   types, shapes and routes, and their clusters (which never change);
//! - the candidate's new output hash of each of them (`moved`, the ones that differ), which it
//!   computes with the candidate added to the accepted actions, or, for a dropped parameter
//!   (`dropped`), from the sample's output alone;
//! - for each new output hash, the samples that already have it (`ByHash`), with their output
//!   hashes and clusters;
//! - whether the host's front controller answers its other paths (`Round::controller_twins`),
//!   and the scheme the accepted actions give a sample (read for the new hashes).
//!
//! [`Changes`] stamps every sample and every output hash with the last acceptance that changed
//! it (output, hash, page type, shape or route of a sample; a sample taking or leaving a hash),
//! and the host-wide facts with the last acceptance that changed one of them. A measurement kept
//! here is answered again when its `may_change`, `dropped` and guards are the same, none of what
//! it read was stamped after it was made, and its new output hashes are the same: those are
//! computed again, except for a parameter dropped beside nothing, whose new outputs follow from
//! the unchanged outputs alone (`super::query_without`). The same inputs give the same evidence,
//! so the decisions, and the rules learned, are those of measuring again; only the grouping of
//! the changed samples and their twins is saved.

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64;

use super::{Evidence, Round};

/// A measurement's arguments that select it: the samples it may change, the parameter it drops
/// and the one that must stand beside it, and whether it asked for the front controller's guards.
type Asked<'q> = (&'q [u32], Option<(&'q str, Option<&'q str>)>, bool);

/// The last acceptance that changed each thing [`super::measure`] reads.
#[derive(Default)]
pub(super) struct Changes {
    /// Acceptances so far that changed the round; a stamp is the value this had then.
    epoch: u32,
    /// Per sample: when its output, output hash, page type, shape or route last changed (grown
    /// on the first change; a sample beyond it never changed).
    sample: Vec<u32>,
    /// Per output hash: when a sample last took it or left it.
    hash: FxHashMap<u64, u32>,
    /// When the front controller's twins or the scheme of the accepted actions last changed.
    host: u32,
    /// Measurements of this round and of the one before, by [`key`].
    kept: FxHashMap<u64, Kept>,
    /// Rounds started: a measurement not asked for again in the next round is let go.
    rounds: u32,
}

/// One measurement and what it read.
struct Kept {
    /// [`Changes::epoch`] when it was made.
    made: u32,
    /// [`Changes::rounds`] when it was last made or answered.
    used: u32,
    may_change: Vec<u32>,
    dropped: Option<(String, Option<String>)>,
    param_guards: bool,
    moved: Vec<(u32, u64)>,
    evidence: Evidence,
}

/// The bucket of a measurement's arguments.
fn key((may_change, dropped, param_guards): Asked<'_>) -> u64 {
    let mut bytes = Vec::with_capacity(may_change.len() * 4 + 32);
    for u in may_change {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    bytes.push(u8::from(param_guards));
    if let Some((name, beside)) = dropped {
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(beside.unwrap_or("\0").as_bytes());
    }
    xxh3_64(&bytes)
}

impl Changes {
    /// A new round of candidates: measurements neither made nor answered in the round before
    /// are let go, so at most two rounds' measurements are kept.
    pub(super) fn next_round(&mut self) {
        self.rounds += 1;
        let rounds = self.rounds;
        self.kept.retain(|_, k| k.used + 1 >= rounds);
    }

    /// An acceptance changed the round: later stamps are new.
    pub(super) fn accepted(&mut self) {
        self.epoch += 1;
    }

    /// Sample `u` changed (output, hash, type, shape or route), from output hash `old` to `new`.
    pub(super) fn sample_changed(&mut self, u: u32, old: u64, new: u64) {
        let u = u as usize;
        if self.sample.len() <= u {
            self.sample.resize(u + 1, 0);
        }
        self.sample[u] = self.epoch;
        if old != new {
            self.hash.insert(old, self.epoch);
            self.hash.insert(new, self.epoch);
        }
    }

    /// A host-wide fact the measurements read changed.
    pub(super) fn host_changed(&mut self) {
        self.host = self.epoch;
    }

    /// The kept measurement for `asked`, when nothing it read changed since: its evidence and
    /// moved samples, given `moved`, the new output hashes computed again (`None` for a dropped
    /// parameter beside nothing, whose new outputs follow from the unchanged outputs).
    pub(super) fn recall(
        &mut self,
        asked: Asked<'_>,
        moved: Option<&[(u32, u64)]>,
    ) -> Option<(Evidence, Vec<(u32, u64)>)> {
        let rounds = self.rounds;
        let k = self.kept.get(&key(asked))?;
        let (may_change, dropped, param_guards) = asked;
        let same_asked = k.may_change == may_change
            && k.param_guards == param_guards
            && k.dropped.as_ref().map(|(n, b)| (n.as_str(), b.as_deref())) == dropped;
        let unchanged = same_asked
            && self.host <= k.made
            && may_change
                .iter()
                .all(|&u| self.sample.get(u as usize).is_none_or(|&at| at <= k.made))
            && moved.is_none_or(|m| m == k.moved)
            && k.moved
                .iter()
                .all(|(_, h)| self.hash.get(h).is_none_or(|&at| at <= k.made));
        if !unchanged {
            return None;
        }
        let k = self.kept.get_mut(&key(asked))?;
        k.used = rounds;
        Some((k.evidence.clone(), k.moved.clone()))
    }

    /// Keeps a measurement made now.
    pub(super) fn keep(&mut self, asked: Asked<'_>, moved: &[(u32, u64)], evidence: &Evidence) {
        let (may_change, dropped, param_guards) = asked;
        self.kept.insert(
            key(asked),
            Kept {
                made: self.epoch,
                used: self.rounds,
                may_change: may_change.to_vec(),
                dropped: dropped.map(|(n, b)| (n.to_owned(), b.map(str::to_owned))),
                param_guards,
                moved: moved.to_vec(),
                evidence: evidence.clone(),
            },
        );
    }

    /// Stamps what differs between `old` and `new`, the round before and after an acceptance
    /// that rewrote every sample.
    pub(super) fn compare(&mut self, old: &Round<'_>, new: &Round<'_>) {
        self.accepted();
        if old.controller_twins != new.controller_twins || old.upgrades_http != new.upgrades_http {
            self.host_changed();
        }
        for u in 0..new.hashes.len() {
            let same = old.hashes[u] == new.hashes[u]
                && old.outputs[u] == new.outputs[u]
                && old.types[u] == new.types[u]
                && old.shapes[u] == new.shapes[u]
                && old.routes[u].hash == new.routes[u].hash
                && old.routes[u].arguments == new.routes[u].arguments;
            if !same {
                self.sample_changed(u as u32, old.hashes[u], new.hashes[u]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(positive_groups: u64) -> Evidence {
        Evidence {
            positive_groups,
            ..Evidence::default()
        }
    }

    /// A kept measurement answers only while nothing it read changed: not a sample it may
    /// change, not the hash of an output it merges into, not the host-wide facts.
    #[test]
    fn a_kept_measurement_is_used_only_while_what_it_read_is_unchanged() {
        let may_change = [1u32, 2, 3];
        let moved = [(2u32, 77u64)];
        let asked: Asked<'_> = (&may_change, Some(("sid", None)), true);
        let kept = |c: &mut Changes| c.recall(asked, None).map(|(e, m)| (e.positive_groups, m));
        let fresh = || {
            let mut c = Changes::default();
            c.keep(asked, &moved, &evidence(4));
            c.accepted();
            c
        };
        // Other samples and hashes changed: still the same.
        let mut c = fresh();
        c.sample_changed(9, 5, 6);
        assert_eq!(kept(&mut c), Some((4, moved.to_vec())));
        // Other arguments are another measurement.
        assert!(c
            .recall((&may_change, Some(("ref", None)), true), None)
            .is_none());
        assert!(c
            .recall((&may_change[..2], Some(("sid", None)), true), None)
            .is_none());
        assert!(c
            .recall((&may_change, Some(("sid", None)), false), None)
            .is_none());
        // New outputs computed again, and different: measured again.
        assert!(c.recall(asked, Some(&[(2, 78)])).is_none());
        // A sample it may change changed (even one it did not move).
        let mut c = fresh();
        c.sample_changed(3, 5, 5);
        assert_eq!(kept(&mut c), None);
        // A sample took or left the output a moved sample merges into.
        let mut c = fresh();
        c.sample_changed(9, 77, 6);
        assert_eq!(kept(&mut c), None);
        let mut c = fresh();
        c.sample_changed(9, 6, 77);
        assert_eq!(kept(&mut c), None);
        // The host's front controller or scheme changed.
        let mut c = fresh();
        c.host_changed();
        assert_eq!(kept(&mut c), None);
        // Let go after a round in which it was not asked for.
        let mut c = fresh();
        c.next_round();
        c.next_round();
        assert_eq!(kept(&mut c), None);
    }
}
