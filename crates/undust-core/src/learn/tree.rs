//! Pattern tree construction (Lei et al., Algorithm 1, section 5.1).
//!
//! Starting from the root (all URLs), a node's URLs are split by the not-yet-used key of least
//! entropy (eq. 4). The key's values are sorted by frequency and cut into salient and trivial
//! values at the largest drop of the log-frequency curve (eq. 5); each salient value gets a
//! child, trivial values share a `*` child.
//!
//! Corner cases the paper leaves open, and what we do:
//!
//! - **Frequencies for salience are counted in distinct duplicate clusters**, not URLs: an
//!   identifier repeated by its page's own duplicates (`?id=7&sid=a`, `?id=7&sid=b`) must not
//!   look like a directory name. Entropy (the split order) uses URL counts as in eq. 4.
//! - **Absent keys**: a key missing from some URLs is first split by presence alone (a
//!   `present` child with the key still undecided, and an `absent` child), so nodes deep enough
//!   have one key set and can be written as closed patterns, and the `present` child is a
//!   pattern (`?ref=*`) on which a rule can ignore every value of the key even when some values
//!   are frequent enough to be split further below it.
//! - **One value** (entropy 0, present everywhere): the key is fixed to that literal in place,
//!   without creating a one-child chain.
//! - **All values trivial**: the paper stops splitting; we fix the key to `*` in place and
//!   continue with the next key, because a more diverse key may still hold salient values.
//! - **All values about equally frequent** (no drop of at least `MIN_DECLINE`, a halving): salient when there are at most
//!   `max_salient_values` of them, each seen in at least `min_salient_clusters` clusters
//!   (`http`/`https`, `dir/` versus `dir/index.html`); otherwise trivial (identifiers), except
//!   the few values at least twice as frequent as the identifiers' plateau (a script name or a
//!   folder such as `tagged` among ids), which stay salient.
//! - **Tiny groups**: a value seen in fewer than `min_salient_clusters` clusters is trivial, so
//!   tiny groups stop splitting by themselves.
//! - **Bounds**: at most `MAX_TREE_NODES` nodes and `MAX_TREE_DEPTH` levels.
//!
//! URLs are kept sorted by cluster inside every node (the root is sorted once, splits are
//! stable), so distinct-cluster counts cost one comparison per URL. A node's members are a
//! contiguous range of one permutation, so "u is in node n" is a range test.

use rustc_hash::FxHashMap;

use super::config::{LearnConfig, MAX_TREE_DEPTH, MAX_TREE_NODES};
use super::key::{KeyId, Samples, ValId};

/// A decision on one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cond {
    /// Exactly this value.
    Lit(ValId),
    /// Present, trivial value.
    Any,
    /// Absent.
    Absent,
}

/// One tree node.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub parent: Option<u32>,
    /// Members: `order[start..end]`.
    pub start: u32,
    pub end: u32,
    pub depth: u32,
    /// Keys decided at this node (the split key of its parent, then in-place decisions).
    pub decisions: Vec<(KeyId, Cond)>,
    pub children: Vec<u32>,
    /// All members share this shape.
    pub shape: Option<u32>,
    /// Distinct clusters among members.
    pub clusters: u32,
}

/// The pattern tree of one host.
#[derive(Debug)]
pub(crate) struct Tree {
    pub nodes: Vec<Node>,
    pub order: Vec<u32>,
    /// Deepest node of each URL.
    pub leaf: Vec<u32>,
}

impl Node {
    pub fn size(&self) -> u32 {
        self.end - self.start
    }
}

struct Work {
    node: u32,
    done: Vec<KeyId>,
}

impl Tree {
    /// Builds the tree (Algorithm 1) over all samples.
    pub fn build(samples: &Samples, config: &LearnConfig) -> Tree {
        let n = samples.urls.len() as u32;
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_by_key(|&u| (samples.urls[u as usize].cluster, u));
        let mut tree = Tree {
            nodes: Vec::new(),
            order,
            leaf: vec![0; n as usize],
        };
        tree.push_node(samples, None, 0, n, 0, Vec::new());
        let mut stack = vec![Work {
            node: 0,
            done: Vec::new(),
        }];
        let mut counts: FxHashMap<(KeyId, ValId), (u32, u32, u32)> = FxHashMap::default();
        let mut scratch: Vec<u32> = Vec::new();
        while let Some(Work { node, mut done }) = stack.pop() {
            let (start, end, depth) = {
                let nd = &tree.nodes[node as usize];
                (nd.start, nd.end, nd.depth)
            };
            if end - start < 2 || depth as usize >= MAX_TREE_DEPTH {
                continue;
            }
            // Value statistics of every undecided key: (URLs, distinct clusters, last cluster).
            counts.clear();
            let mut present: FxHashMap<KeyId, u32> = FxHashMap::default();
            for &u in &tree.order[start as usize..end as usize] {
                let c = samples.urls[u as usize].cluster;
                for &(k, v) in samples.pairs_of(u) {
                    if done.binary_search(&k).is_ok() {
                        continue;
                    }
                    *present.entry(k).or_default() += 1;
                    let e = counts.entry((k, v)).or_insert((0, 0, u32::MAX));
                    e.0 += 1;
                    if e.2 != c {
                        e.1 += 1;
                        e.2 = c;
                    }
                }
            }
            if present.is_empty() {
                continue;
            }
            let total = f64::from(end - start);
            let mut per_key: FxHashMap<KeyId, Vec<(ValId, u32, u32)>> = FxHashMap::default();
            for (&(k, v), &(urls, clusters, _)) in &counts {
                per_key.entry(k).or_default().push((v, urls, clusters));
            }
            let mut keyed: Vec<(f64, u32, KeyId)> = per_key
                .iter()
                .map(|(&k, vals)| {
                    let absent = (end - start) - present[&k];
                    let mut h = 0.0;
                    for &(_, c, _) in vals.iter() {
                        let p = f64::from(c) / total;
                        h -= p * p.ln();
                    }
                    if absent > 0 {
                        let p = f64::from(absent) / total;
                        h -= p * p.ln();
                    }
                    (h, samples.key_rank[k as usize], k)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut split = None;
            for &(_, _, k) in &keyed {
                let mut vals = per_key.remove(&k).unwrap_or_default();
                let absent = (end - start) - present[&k];
                vals.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.cmp(&a.1)).then(a.0.cmp(&b.0)));
                if absent > 0 {
                    // Presence first: the `present` child keeps the key undecided, so a rule
                    // can hold for every value of it (`?ref=*`) while its values may still be
                    // split one level down.
                    split = Some((k, Vec::new()));
                    break;
                }
                insert_sorted(&mut done, k);
                if vals.len() == 1 {
                    tree.nodes[node as usize]
                        .decisions
                        .push((k, Cond::Lit(vals[0].0)));
                    continue;
                }
                let salient = salient_count(&vals, config);
                let buckets = salient + usize::from(salient < vals.len()) + usize::from(absent > 0);
                if buckets <= 1 {
                    tree.nodes[node as usize].decisions.push((k, Cond::Any));
                    continue;
                }
                split = Some((k, vals[..salient].iter().map(|v| v.0).collect::<Vec<_>>()));
                break;
            }
            let Some((k, salient)) = split else { continue };
            if tree.nodes.len() + salient.len() + 2 > MAX_TREE_NODES {
                continue;
            }
            // Stable partition of the members into buckets: salient values, `*`, absent.
            let bucket_of = |u: u32| -> usize {
                match samples.get(u, k) {
                    None => salient.len() + 1,
                    Some(v) => salient
                        .iter()
                        .position(|s| *s == v)
                        .unwrap_or(salient.len()),
                }
            };
            let nb = salient.len() + 2;
            let mut sizes = vec![0u32; nb];
            for &u in &tree.order[start as usize..end as usize] {
                sizes[bucket_of(u)] += 1;
            }
            let mut offsets = vec![0u32; nb];
            for b in 1..nb {
                offsets[b] = offsets[b - 1] + sizes[b - 1];
            }
            scratch.clear();
            scratch.resize((end - start) as usize, 0);
            let mut cursor = offsets.clone();
            for &u in &tree.order[start as usize..end as usize] {
                let b = bucket_of(u);
                scratch[cursor[b] as usize] = u;
                cursor[b] += 1;
            }
            tree.order[start as usize..end as usize].copy_from_slice(&scratch);
            for b in 0..nb {
                if sizes[b] == 0 {
                    continue;
                }
                let cond = if b < salient.len() {
                    Cond::Lit(salient[b])
                } else if b == salient.len() {
                    Cond::Any
                } else {
                    Cond::Absent
                };
                let cs = start + offsets[b];
                let child = tree.push_node(
                    samples,
                    Some(node),
                    cs,
                    cs + sizes[b],
                    depth + 1,
                    vec![(k, cond)],
                );
                tree.nodes[node as usize].children.push(child);
                stack.push(Work {
                    node: child,
                    done: done.clone(),
                });
            }
        }
        // Leaves: deepest node per URL (children are pushed after parents, so later wins).
        for (id, nd) in tree.nodes.iter().enumerate() {
            for &u in &tree.order[nd.start as usize..nd.end as usize] {
                let cur = tree.leaf[u as usize] as usize;
                if tree.nodes[cur].depth <= nd.depth {
                    tree.leaf[u as usize] = id as u32;
                }
            }
        }
        tree
    }

    fn push_node(
        &mut self,
        samples: &Samples,
        parent: Option<u32>,
        start: u32,
        end: u32,
        depth: u32,
        decisions: Vec<(KeyId, Cond)>,
    ) -> u32 {
        let members = &self.order[start as usize..end as usize];
        let first_shape = members.first().map(|&u| samples.urls[u as usize].shape);
        let shape =
            first_shape.filter(|&s| members.iter().all(|&u| samples.urls[u as usize].shape == s));
        let mut clusters = 0;
        let mut last = u32::MAX;
        for &u in members {
            let c = samples.urls[u as usize].cluster;
            if c != last {
                clusters += 1;
                last = c;
            }
        }
        self.nodes.push(Node {
            parent,
            start,
            end,
            depth,
            decisions,
            children: Vec::new(),
            shape,
            clusters,
        });
        (self.nodes.len() - 1) as u32
    }

    /// Whether `a` is a proper ancestor of `b`.
    pub fn is_ancestor(&self, a: u32, b: u32) -> bool {
        let (na, nb) = (&self.nodes[a as usize], &self.nodes[b as usize]);
        a != b && na.depth < nb.depth && na.start <= nb.start && nb.end <= na.end
    }

    /// Conditions decided on the path from the root to `n`.
    pub fn conditions(&self, n: u32) -> FxHashMap<KeyId, Cond> {
        let mut out = FxHashMap::default();
        let mut cur = Some(n);
        while let Some(c) = cur {
            let nd = &self.nodes[c as usize];
            // Later decisions refine earlier ones (presence, then value).
            for &(k, cond) in nd.decisions.iter().rev() {
                out.entry(k).or_insert(cond);
            }
            cur = nd.parent;
        }
        out
    }

    /// Maximum depth.
    pub fn height(&self) -> u32 {
        self.nodes.iter().map(|n| n.depth).max().unwrap_or(0)
    }
}

fn insert_sorted(v: &mut Vec<KeyId>, k: KeyId) {
    if let Err(p) = v.binary_search(&k) {
        v.insert(p, k);
    }
}

/// A decline of the log-frequency curve smaller than this (the frequency does not even halve)
/// is not "distinct" (Figure 6): the curve is treated as flat, so three sections seen in 78,
/// 75 and 75 clusters are all salient instead of being cut after the first.
pub(crate) const MIN_DECLINE: f64 = std::f64::consts::LN_2;

/// Number of leading salient values among `vals` (sorted by distinct clusters, descending):
/// eq. 5's maximal drop of the log-frequency curve, with the guards of the module docs.
pub(crate) fn salient_count(vals: &[(ValId, u32, u32)], config: &LearnConfig) -> usize {
    let f: Vec<f64> = vals.iter().map(|v| f64::from(v.2.max(1))).collect();
    let cut = if f.len() == 1 {
        1
    } else {
        let mut best = 0.0;
        let mut at = 0;
        for i in 1..f.len() {
            let drop = f[i - 1].ln() - f[i].ln();
            if drop > best {
                best = drop;
                at = i;
            }
        }
        if best < MIN_DECLINE {
            // No distinct decline: the values are about equally frequent.
            f.len()
        } else {
            at
        }
    };
    let n = vals[..cut]
        .iter()
        .take_while(|v| v.2 >= config.min_salient_clusters)
        .count();
    if n > config.max_salient_values {
        // An identifier key, but a few values standing well above its plateau (at least a
        // halving, as `MIN_DECLINE`) are page types among the identifiers: `index.php` among
        // article titles (`/wiki/index.php?title=…` beside `/wiki/Title`), `tagged` among
        // question ids. They keep their own nodes, so a rule learned for the identifiers does
        // not reach them.
        let plateau = f64::from(vals[config.max_salient_values].2.max(1));
        vals[..n]
            .iter()
            .take_while(|v| f64::from(v.2).ln() - plateau.ln() >= MIN_DECLINE)
            .count()
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(c: &[u32]) -> Vec<(ValId, u32, u32)> {
        c.iter()
            .enumerate()
            .map(|(i, &c)| (i as u32, c, c))
            .collect()
    }

    #[test]
    fn salience_by_maximal_drop() {
        let cfg = LearnConfig::default();
        // Two directories then a long tail of ids.
        assert_eq!(salient_count(&vals(&[500, 300, 4, 3, 1, 1, 1]), &cfg), 2);
        // Flat curve of few frequent values: all salient.
        assert_eq!(salient_count(&vals(&[40, 40, 40]), &cfg), 3);
        // Nearly flat curve: all salient, not cut after a tiny decline.
        assert_eq!(salient_count(&vals(&[78, 75, 75]), &cfg), 3);
        // Flat curve of identifiers seen once: none.
        assert_eq!(salient_count(&vals(&[1; 10]), &cfg), 0);
        // Too many values: identifiers.
        assert_eq!(salient_count(&vals(&[5; 100]), &cfg), 0);
        // Identifiers seen in several clusters each (a question, its other orders and pages),
        // with a folder far above them: the folder alone stays salient.
        // (The curve's largest drop is after the identifiers, so the cut alone keeps them all.)
        let mut counts = vec![12u32];
        counts.extend([5u32; 80]);
        counts.extend([1u32; 30]);
        assert_eq!(salient_count(&vals(&counts), &cfg), 1);
        counts[0] = 8;
        assert_eq!(
            salient_count(&vals(&counts), &cfg),
            0,
            "not twice the plateau"
        );
        // One value seen in enough clusters.
        assert_eq!(salient_count(&vals(&[7]), &cfg), 1);
        assert_eq!(salient_count(&vals(&[2]), &cfg), 0);
    }
}
