//! Candidate rules from duplicate nodes: key-key mappings (Lei et al., Algorithm 3) and the
//! keep / replace / ignore operations of section 5.2.2, including the "fake replace" revision.
//!
//! The rate of common values `σ(k, k')` is measured cluster by cluster: the share of common
//! duplicate clusters in which some URL of `s` has value `v` under `k` and some URL of `t` has
//! the same `v` under `k'`. Aligning by cluster is stricter than comparing whole value sets
//! (two id keys over the same range share values by chance, not page by page). When exact
//! values do not map but lower-cased ones do, the replace lower-cases (case-insensitive
//! servers). When neither maps, the first or the last run of digits of a path segment (or path
//! parameter, or of a query value for a query key) is compared with the target's values: an id
//! inside a slug (`/threads/7869-radio-quick` -> `?t=7869`). Only the slug side is transformed,
//! so the rule always goes slug -> id and never invents a slug. Numbers of any length count:
//! chance agreement of small numbers (a `2` in a slug and `page=2`) is bounded by the same
//! guards as any mapping between different keys (a majority of the common clusters, at least
//! `min_support_clusters` of them), then by the rule's false-positive rate in proofing.

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64;

use super::config::LearnConfig;
use super::duplicate_nodes::DuplicatePair;
use super::key::{KeyId, Samples, ValId};
use super::tree::{Cond, Tree};
use crate::canon::rules::key::{Component, Key};
use crate::canon::rules::Extract;

/// One operation on interned keys (see [`crate::canon::rules::Operation`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Keep {
        key: KeyId,
        val: ValId,
    },
    Replace {
        key: KeyId,
        from: KeyId,
        lower: bool,
        ext: Option<Extract>,
    },
    Ignore {
        key: KeyId,
        fill: Option<ValId>,
    },
}

impl Op {
    pub fn key(&self) -> KeyId {
        match self {
            Op::Keep { key, .. } | Op::Replace { key, .. } | Op::Ignore { key, .. } => *key,
        }
    }
}

/// A candidate rule `s -> t`.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub s: u32,
    pub t: u32,
    /// Closed source pattern, keys in URL order.
    pub source: Vec<(KeyId, Cond)>,
    pub shape: u32,
    /// Operations: output keys in URL order, then dropped keys.
    pub ops: Vec<Op>,
    /// Source keys whose values the rule discards (ignored, or overwritten by a literal).
    pub merged: Vec<KeyId>,
    /// Overlap or duplicate rate of the node pair.
    pub score: f64,
}

/// Canonical order of keys in a rule's output: URL order, with query parameters sorted by name
/// (then occurrence). Parameter order never changes what a server returns in practice, and a
/// fixed order makes URLs that differ only in it one canonical form.
pub(crate) fn url_order(k: &Key) -> (u8, u16, u8, &str, u16) {
    match k {
        Key::Scheme => (0, 0, 0, "", 0),
        Key::Auth(i) => (1, *i, 0, "", 0),
        Key::Port => (2, 0, 0, "", 0),
        Key::Path(i) => (3, *i, 0, "", 0),
        Key::PathParam {
            segment,
            name,
            occurrence,
        } => (3, *segment, 1, name, *occurrence),
        Key::Query { name, occurrence } => (4, 0, 0, name, *occurrence),
    }
}

/// The closed pattern of a single-shape node, keys in canonical output order ([`url_order`]).
pub(crate) fn node_pattern(
    samples: &Samples,
    tree: &Tree,
    n: u32,
) -> Option<(Vec<(KeyId, Cond)>, u32)> {
    let nd = &tree.nodes[n as usize];
    let shape = nd.shape?;
    let first = *tree.order.get(nd.start as usize)?;
    let conds = tree.conditions(n);
    let mut pattern: Vec<(KeyId, Cond)> = samples
        .pairs_of(first)
        .iter()
        .map(|&(k, _)| (k, conds.get(&k).copied().unwrap_or(Cond::Any)))
        .collect();
    pattern.sort_by(|a, b| {
        url_order(&samples.keys[a.0 as usize]).cmp(&url_order(&samples.keys[b.0 as usize]))
    });
    Some((pattern, shape))
}

fn host_like(c: Component) -> bool {
    matches!(c, Component::Host | Component::Scheme | Component::Port)
}

/// How a source value is compared with target values when mapping keys, in order of
/// preference: as is, lower-cased, or the first / last run of digits (an id inside a slug).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    Exact,
    Lower,
    First,
    Last,
}

/// Stands for "no number in the value" among value hashes.
const NO_NUMBER: u64 = 0x6e6f_5f6e_756d_6265;

impl Mode {
    const ALL: [Mode; 4] = [Mode::Exact, Mode::Lower, Mode::First, Mode::Last];

    fn extract(self) -> Option<Extract> {
        match self {
            Mode::First => Some(Extract::FirstNumber),
            Mode::Last => Some(Extract::LastNumber),
            Mode::Exact | Mode::Lower => None,
        }
    }

    /// Numbers are picked out of path segments and path parameters (slugs) for any target key,
    /// and out of a query value only for another query key; exact and lower-cased values map
    /// between any keys the caller allows.
    fn allowed(self, from: Component, to: Component) -> bool {
        match self {
            Mode::Exact | Mode::Lower => true,
            Mode::First | Mode::Last => match from {
                Component::Segment | Component::PathParam => true,
                Component::Query => to == Component::Query,
                _ => false,
            },
        }
    }

    /// Hash of source value `v` as the replace would write it (digits are never escaped, so
    /// an extracted number hashes like the bare target value); `None`: no number.
    fn source_hash(self, samples: &Samples, v: ValId) -> Option<u64> {
        match self {
            Mode::Exact => Some(samples.value_hash[v as usize]),
            Mode::Lower => Some(lower_hash(samples, v)),
            Mode::First | Mode::Last => {
                let e = self.extract()?;
                e.apply(&samples.values[v as usize])
                    .map(|n| xxh3_64(n.as_bytes()))
            }
        }
    }

    /// Hash of target value `v` compared with [`Mode::source_hash`]: target values are taken as
    /// they are, except when both sides are lower-cased.
    fn target_hash(self, samples: &Samples, v: ValId) -> u64 {
        match self {
            Mode::Lower => lower_hash(samples, v),
            _ => samples.value_hash[v as usize],
        }
    }
}

fn lower_hash(samples: &Samples, v: ValId) -> u64 {
    let s = &samples.values[v as usize];
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        xxh3_64(s.to_ascii_lowercase().as_bytes())
    } else {
        samples.value_hash[v as usize]
    }
}

/// Builds the candidate rules of one duplicate pair: `s -> t` and, when `s != t`, `t -> s`.
pub(crate) fn candidates(
    samples: &Samples,
    tree: &Tree,
    pos: &[u32],
    pair: &DuplicatePair,
    config: &LearnConfig,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    let dirs: &[(u32, u32)] = if pair.s == pair.t {
        &[(pair.s, pair.s)]
    } else {
        &[(pair.s, pair.t), (pair.t, pair.s)]
    };
    for &(s, t) in dirs {
        if let Some(c) = build(samples, tree, pos, s, t, &pair.evidence, pair.score, config) {
            out.push(c);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn build(
    samples: &Samples,
    tree: &Tree,
    pos: &[u32],
    s: u32,
    t: u32,
    evidence: &[u32],
    score: f64,
    config: &LearnConfig,
) -> Option<Candidate> {
    let (source, shape) = node_pattern(samples, tree, s)?;
    let (target, _) = node_pattern(samples, tree, t)?;
    let (ns, nt) = (&tree.nodes[s as usize], &tree.nodes[t as usize]);
    let in_node = |u: u32, n: &super::tree::Node| (n.start..n.end).contains(&pos[u as usize]);
    // Members of every common cluster in s and in t.
    let mut groups: Vec<(Vec<u32>, Vec<u32>)> = Vec::with_capacity(evidence.len());
    for &c in evidence {
        let urls = samples.cluster(c);
        let a: Vec<u32> = urls.iter().copied().filter(|&u| in_node(u, ns)).collect();
        let b: Vec<u32> = urls.iter().copied().filter(|&u| in_node(u, nt)).collect();
        if !a.is_empty() && !b.is_empty() {
            groups.push((a, b));
        }
    }
    if groups.is_empty() {
        return None;
    }
    let n_groups = groups.len() as f64;
    let mut ops = Vec::new();
    for &(k2, cond) in &target {
        match cond {
            Cond::Lit(_)
                if samples.key_comp[k2 as usize] == Component::Query
                    && !source.iter().any(|(k1, _)| *k1 == k2) =>
            {
                // Never add a query parameter with a constant value: of two duplicates the
                // one without the extra parameter (`?utm_source=x`, `?output=amp`) is the
                // canonical form.
                return None;
            }
            Cond::Lit(v) => ops.push(Op::Keep { key: k2, val: v }),
            Cond::Absent => return None,
            Cond::Any => {
                // Algorithm 3: the source key sharing most values with k2.
                let mapping = if s == t {
                    Some((k2, Mode::Exact))
                } else {
                    let mut best: Option<(f64, Mode, KeyId)> = None;
                    // An extracted number can only equal a target value made of digits: when
                    // too few common clusters have one, no number extraction can map.
                    let numeric_groups = groups
                        .iter()
                        .filter(|(_, b)| {
                            b.iter().filter_map(|&w| samples.get(w, k2)).any(|v| {
                                let text = &samples.values[v as usize];
                                !text.is_empty() && text.bytes().all(|c| c.is_ascii_digit())
                            })
                        })
                        .count() as f64
                        / n_groups;
                    let numbers_may_map = numeric_groups > config.sigma_min;
                    for &(k1, _) in &source {
                        let (c1, c2) =
                            (samples.key_comp[k1 as usize], samples.key_comp[k2 as usize]);
                        if (host_like(c1) || host_like(c2)) && c1 != c2 {
                            continue;
                        }
                        for mode in Mode::ALL {
                            if !mode.allowed(c1, c2) || (mode > Mode::Lower && !numbers_may_map) {
                                continue;
                            }
                            let shared = groups
                                .iter()
                                .filter(|(a, b)| {
                                    a.iter().filter_map(|&u| samples.get(u, k1)).any(|v1| {
                                        let Some(h1) = mode.source_hash(samples, v1) else {
                                            return false;
                                        };
                                        b.iter()
                                            .filter_map(|&w| samples.get(w, k2))
                                            .any(|v2| mode.target_hash(samples, v2) == h1)
                                    })
                                })
                                .count() as f64
                                / n_groups;
                            let better = match best {
                                None => true,
                                Some((bs, bm, _)) => shared > bs || (shared == bs && mode < bm),
                            };
                            if better {
                                best = Some((shared, mode, k1));
                            }
                            // Whole values that map need no transformation. The first and
                            // the last number are both measured unless one maps everywhere: a
                            // slug may hold other numbers (`top-10`) before or after the id.
                            if shared > config.sigma_min && mode <= Mode::Lower || shared >= 1.0 {
                                break;
                            }
                        }
                    }
                    // Between different keys, values shared in a handful of clusters can be
                    // chance (two small numeric ids, or a number picked out of a slug): the
                    // mapping needs as many agreeing clusters as any rule needs support.
                    best.filter(|b| {
                        b.0 > config.sigma_min
                            && (b.2 == k2 && b.1 <= Mode::Lower
                                || (b.0 * n_groups).round()
                                    >= f64::from(config.min_support_clusters))
                    })
                    .map(|b| (b.2, b.1))
                };
                // Fake replace: values differ within duplicates -> the key is irrelevant,
                // unless they differ only by case (then the replace lower-cases). A source
                // value without the number to extract counts as differing.
                let differing = |k1: KeyId, mode: Mode| {
                    groups
                        .iter()
                        .filter(|(a, b)| {
                            let mut first = None;
                            let vals = a
                                .iter()
                                .filter_map(|&u| samples.get(u, k1))
                                .map(|v| mode.source_hash(samples, v).unwrap_or(NO_NUMBER))
                                .chain(
                                    b.iter()
                                        .filter_map(|&w| samples.get(w, k2))
                                        .map(|v| mode.target_hash(samples, v)),
                                );
                            for h in vals {
                                match first {
                                    None => first = Some(h),
                                    Some(f) if f != h => return true,
                                    _ => {}
                                }
                            }
                            false
                        })
                        .count() as f64
                        / n_groups
                };
                let replace = mapping.and_then(|(k1, mode)| {
                    if differing(k1, mode) < config.fake_replace_min {
                        Some((k1, mode))
                    } else if mode == Mode::Exact
                        && differing(k1, Mode::Lower) < config.fake_replace_min
                    {
                        Some((k1, Mode::Lower))
                    } else {
                        None
                    }
                });
                match replace {
                    Some((from, mode)) => ops.push(Op::Replace {
                        key: k2,
                        from,
                        lower: mode == Mode::Lower,
                        ext: mode.extract(),
                    }),
                    None if !source.iter().any(|(k1, _)| *k1 == k2) => {
                        // The target has a varying key the source lacks and nothing maps to
                        // it: writing a constant would fabricate a value (`/topic/7` ->
                        // `/topic/7/page-4`). No rule.
                        return None;
                    }
                    None => {
                        let droppable = matches!(
                            samples.key_comp[k2 as usize],
                            Component::Query | Component::PathParam
                        );
                        let fill = if droppable {
                            None
                        } else {
                            Some(most_frequent(samples, tree, t, k2)?)
                        };
                        ops.push(Op::Ignore { key: k2, fill });
                    }
                }
            }
        }
    }
    ignore_unused_source_keys(&source, &mut ops);
    let merged = merged_keys(samples, &source, &ops);
    // A rule of a node to itself that changes no value still sorts the query: proofing keeps
    // it only where parameter order varies among duplicates.
    Some(Candidate {
        s,
        t,
        source,
        shape,
        ops,
        merged,
        score,
    })
}

/// Source keys that reach the output neither by name nor through a replace are dropped: adds an
/// `ignore` for each.
pub(crate) fn ignore_unused_source_keys(source: &[(KeyId, Cond)], ops: &mut Vec<Op>) {
    for &(k1, _) in source {
        let used = ops.iter().any(|o| match o {
            Op::Replace { from, .. } => *from == k1 || o.key() == k1,
            _ => o.key() == k1,
        });
        if !used {
            ops.push(Op::Ignore {
                key: k1,
                fill: None,
            });
        }
    }
}

/// Source keys whose values the rule discards, each of which proofing must show irrelevant on
/// its own: a key dropped or overwritten by a literal, unless the source fixes it to that same
/// literal, and not carried to the output by a replace. Overwriting (`keep p=2` for a source
/// `p=*`, or `p=3 -> p=2`) is an ignore with a fill value and needs exactly an ignore's
/// evidence, or it would map every page number onto one.
pub(crate) fn merged_keys(samples: &Samples, source: &[(KeyId, Cond)], ops: &[Op]) -> Vec<KeyId> {
    source
        .iter()
        .filter(|&&(k1, cond)| {
            if ops
                .iter()
                .any(|o| matches!(o, Op::Replace { from, .. } if *from == k1))
            {
                return false;
            }
            match cond {
                Cond::Lit(a) => match ops.iter().find(|o| o.key() == k1) {
                    // Overwritten by another literal: the rule claims the two are the same page.
                    Some(
                        &Op::Keep { val, .. }
                        | &Op::Ignore {
                            fill: Some(val), ..
                        },
                    ) => samples.value_hash[a as usize] != samples.value_hash[val as usize],
                    // Dropped (`?output=amp`): an ignore, with an ignore's evidence.
                    Some(Op::Ignore { fill: None, .. }) | None => true,
                    // Rebuilt from another key (`forum.php` -> the page id): a structural
                    // change, vetted by the key-key mapping and the rule's false-positive rate.
                    Some(Op::Replace { .. }) => false,
                },
                Cond::Any => true,
                Cond::Absent => false,
            }
        })
        .map(|(k, _)| *k)
        .collect()
}

fn most_frequent(samples: &Samples, tree: &Tree, t: u32, k: KeyId) -> Option<ValId> {
    let nd = &tree.nodes[t as usize];
    let mut counts: FxHashMap<ValId, u32> = FxHashMap::default();
    for &u in tree.order[nd.start as usize..nd.end as usize]
        .iter()
        .take(10_000)
    {
        if let Some(v) = samples.get(u, k) {
            *counts.entry(v).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by(|a, b| {
            a.1.cmp(&b.1)
                .then_with(|| samples.values[b.0 as usize].cmp(&samples.values[a.0 as usize]))
        })
        .map(|(v, _)| v)
}
