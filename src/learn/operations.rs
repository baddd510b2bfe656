//! Candidate rules from duplicate nodes: key-key mappings (Lei et al., Algorithm 3) and the
//! keep / replace / ignore operations of section 5.2.2, including the "fake replace" revision.
//!
//! The rate of common values `σ(k, k')` is measured cluster by cluster: the share of common
//! duplicate clusters in which some URL of `s` has value `v` under `k` and some URL of `t` has
//! the same `v` under `k'`. Aligning by cluster is stricter than comparing whole value sets
//! (two id keys over the same range share values by chance, not page by page). When exact
//! values do not map but lower-cased ones do, the replace lower-cases (case-insensitive
//! servers).

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64;

use super::config::LearnConfig;
use super::duplicate_nodes::DuplicatePair;
use super::key::{KeyId, Samples, ValId};
use super::tree::{Cond, Tree};
use crate::canon::rules::key::{Component, Key};

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
                    Some((k2, false))
                } else {
                    let mut best: Option<(f64, bool, KeyId)> = None;
                    for &(k1, _) in &source {
                        let (c1, c2) =
                            (samples.key_comp[k1 as usize], samples.key_comp[k2 as usize]);
                        if (host_like(c1) || host_like(c2)) && c1 != c2 {
                            continue;
                        }
                        for lower in [false, true] {
                            let hv = |v: ValId| {
                                if lower {
                                    lower_hash(samples, v)
                                } else {
                                    samples.value_hash[v as usize]
                                }
                            };
                            let shared = groups
                                .iter()
                                .filter(|(a, b)| {
                                    a.iter().filter_map(|&u| samples.get(u, k1)).any(|v1| {
                                        let h1 = hv(v1);
                                        b.iter()
                                            .filter_map(|&w| samples.get(w, k2))
                                            .any(|v2| hv(v2) == h1)
                                    })
                                })
                                .count() as f64
                                / n_groups;
                            let better = match best {
                                None => true,
                                Some((bs, bl, _)) => shared > bs || (shared == bs && bl && !lower),
                            };
                            if better {
                                best = Some((shared, lower, k1));
                            }
                            if shared > config.sigma_min {
                                break; // exact values map: no need to lower-case
                            }
                        }
                    }
                    // Between different keys, values shared in a handful of clusters can be
                    // chance (two small numeric ids): the mapping needs as many agreeing
                    // clusters as any rule needs support.
                    best.filter(|b| {
                        b.0 > config.sigma_min
                            && (b.2 == k2
                                || (b.0 * n_groups).round()
                                    >= f64::from(config.min_support_clusters))
                    })
                    .map(|b| (b.2, b.1))
                };
                // Fake replace: values differ within duplicates -> the key is irrelevant,
                // unless they differ only by case (then the replace lower-cases).
                let differing = |k1: KeyId, lower: bool| {
                    let hv = |v: ValId| {
                        if lower {
                            lower_hash(samples, v)
                        } else {
                            samples.value_hash[v as usize]
                        }
                    };
                    groups
                        .iter()
                        .filter(|(a, b)| {
                            let mut first = None;
                            let vals = a
                                .iter()
                                .filter_map(|&u| samples.get(u, k1))
                                .chain(b.iter().filter_map(|&w| samples.get(w, k2)));
                            for v in vals {
                                let h = hv(v);
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
                let replace = mapping.and_then(|(k1, lower)| {
                    if differing(k1, lower) < config.fake_replace_min {
                        Some((k1, lower))
                    } else if !lower && differing(k1, true) < config.fake_replace_min {
                        Some((k1, true))
                    } else {
                        None
                    }
                });
                match replace {
                    Some((from, lower)) => ops.push(Op::Replace {
                        key: k2,
                        from,
                        lower,
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
