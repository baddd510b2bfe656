//! Deployable rule selection (Lei et al., section 5.3).
//!
//! **Graph strategy** (S_graph). Vertices are the tree nodes of qualified candidate rules;
//! edges are the rules (weight `1 - fpr`) plus a link from each vertex to its nearest ancestor
//! vertex (weight 1: a descendant can always be normalized to its ancestor's format). Rows are
//! normalized into the transition matrix of eq. 7 and the node volumes (member URL counts)
//! flow by power iteration. A vertex without out-edges keeps its energy (self loop). We damp
//! the walk like PageRank, `π ← d·Pᵀπ + (1-d)·π⁰` with `d = 0.85`, so it converges on periodic
//! graphs, and stop after `max_walk_iterations` or when the change is below 1e-9 of the mass.
//!
//! Every source node then keeps its rule to its most popular target, but only if that target
//! is strictly more popular than itself (ties broken by node id, a strict total order);
//! otherwise it is a destination and loses its outgoing rules. Hence every kept rule goes
//! *up* a strict order, so **no chain of rules can loop, by construction**. Rules covered by a
//! rule on an ancestor node are dropped (Figure 7b), and chains are concatenated into direct
//! rules (Figure 8d-e).
//!
//! **Naive strategy** (S_naive): per source node the rule of least fpr (7a), ancestor rules
//! over descendant rules (7b), and the least-supported rule of each remaining cycle removed
//! until none is left (7c).
//!
//! After either strategy the learner breaks every cycle of the "could match the output of"
//! graph (least-supported rule first); the engine applies the remaining acyclic chains to a
//! fixpoint within the longest chain's length, so the result is idempotent and cannot loop.

use rustc_hash::FxHashMap;

use super::config::LearnConfig;

/// A rule as the selection sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RuleEdge {
    pub s: u32,
    pub t: u32,
    pub fpr: f64,
    pub support: u32,
}

/// Tree facts the selection needs.
pub(crate) trait Hierarchy {
    /// Whether `a` is a proper ancestor of `b`.
    fn is_ancestor(&self, a: u32, b: u32) -> bool;
    /// Depth of `n` (root 0).
    fn depth(&self, n: u32) -> u32;
    /// Member URLs of `n`.
    fn volume(&self, n: u32) -> f64;
}

/// Stationary popularity of the vertices of eq. 7 (see the module docs).
pub(crate) fn popularity<H: Hierarchy>(
    edges: &[RuleEdge],
    h: &H,
    config: &LearnConfig,
) -> FxHashMap<u32, f64> {
    let mut vertices: Vec<u32> = edges.iter().flat_map(|e| [e.s, e.t]).collect();
    vertices.sort_unstable();
    vertices.dedup();
    let index: FxHashMap<u32, usize> = vertices.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    let n = vertices.len();
    let mut out: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for e in edges {
        out[index[&e.s]].push((index[&e.t], (1.0 - e.fpr).max(1e-6)));
    }
    for (i, &v) in vertices.iter().enumerate() {
        let nearest = vertices
            .iter()
            .filter(|&&a| h.is_ancestor(a, v))
            .max_by_key(|&&a| h.depth(a));
        if let Some(a) = nearest {
            out[i].push((index[a], 1.0));
        }
    }
    for row in &mut out {
        let total: f64 = row.iter().map(|x| x.1).sum();
        for x in row.iter_mut() {
            x.1 /= total;
        }
    }
    let pi0: Vec<f64> = vertices.iter().map(|&v| h.volume(v)).collect();
    let mass: f64 = pi0.iter().sum();
    let mut pi = pi0.clone();
    let d = config.damping.clamp(0.0, 1.0);
    for _ in 0..config.max_walk_iterations {
        let mut next: Vec<f64> = pi0.iter().map(|x| (1.0 - d) * x).collect();
        for (i, row) in out.iter().enumerate() {
            if row.is_empty() {
                next[i] += d * pi[i];
            }
            for &(j, p) in row {
                next[j] += d * p * pi[i];
            }
        }
        let change: f64 = next.iter().zip(&pi).map(|(a, b)| (a - b).abs()).sum();
        pi = next;
        if change <= 1e-9 * mass.max(1.0) {
            break;
        }
    }
    vertices.into_iter().zip(pi).collect()
}

fn rank(pi: &FxHashMap<u32, f64>, v: u32) -> (f64, u32) {
    (pi.get(&v).copied().unwrap_or(0.0), v)
}

fn higher(a: (f64, u32), b: (f64, u32)) -> bool {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).is_gt()
}

/// S_graph: indices of the kept rules (before chain concatenation).
pub(crate) fn graph<H: Hierarchy>(edges: &[RuleEdge], h: &H, config: &LearnConfig) -> Vec<usize> {
    let pi = popularity(edges, h, config);
    let mut by_source: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for (i, e) in edges.iter().enumerate() {
        by_source.entry(e.s).or_default().push(i);
    }
    let mut kept = Vec::new();
    let mut sources: Vec<u32> = by_source.keys().copied().collect();
    sources.sort_unstable();
    for s in sources {
        let rules = &by_source[&s];
        let best = rules
            .iter()
            .copied()
            .filter(|&i| edges[i].t != s)
            .max_by(|&a, &b| {
                let (ea, eb) = (&edges[a], &edges[b]);
                rank(&pi, ea.t)
                    .0
                    .total_cmp(&rank(&pi, eb.t).0)
                    .then(eb.fpr.total_cmp(&ea.fpr))
                    .then(ea.t.cmp(&eb.t))
            });
        match best {
            Some(b) if higher(rank(&pi, edges[b].t), rank(&pi, s)) => kept.push(b),
            // A destination: keeps only its rule to itself, if any (least fpr).
            _ => {
                if let Some(own) = rules
                    .iter()
                    .copied()
                    .filter(|&i| edges[i].t == s)
                    .min_by(|&a, &b| edges[a].fpr.total_cmp(&edges[b].fpr).then(a.cmp(&b)))
                {
                    kept.push(own);
                }
            }
        }
    }
    drop_covered(edges, kept, h)
}

/// Figure 7b: a rule whose source has an ancestor that is the source of a kept rule is
/// redundant (the ancestor's pattern matches all its URLs).
fn drop_covered<H: Hierarchy>(edges: &[RuleEdge], kept: Vec<usize>, h: &H) -> Vec<usize> {
    let sources: Vec<u32> = kept.iter().map(|&i| edges[i].s).collect();
    kept.into_iter()
        .filter(|&i| !sources.iter().any(|&a| h.is_ancestor(a, edges[i].s)))
        .collect()
}

/// S_naive: indices of the kept rules.
pub(crate) fn naive<H: Hierarchy>(edges: &[RuleEdge], h: &H) -> Vec<usize> {
    // 7a: one rule per source, the least false-positive one.
    let mut best: FxHashMap<u32, usize> = FxHashMap::default();
    for (i, e) in edges.iter().enumerate() {
        let better = match best.get(&e.s) {
            None => true,
            Some(&j) => {
                let o = &edges[j];
                e.fpr
                    .total_cmp(&o.fpr)
                    .then(o.support.cmp(&e.support))
                    .then(e.t.cmp(&o.t))
                    .is_lt()
            }
        };
        if better {
            best.insert(e.s, i);
        }
    }
    let mut kept: Vec<usize> = best.into_values().collect();
    kept.sort_unstable();
    // 7b: ancestors over descendants.
    let mut kept = drop_covered(edges, kept, h);
    // 7c: each source now has one rule, so rules form a functional graph; break every cycle at
    // its least-supported rule.
    loop {
        let next: FxHashMap<u32, usize> = kept.iter().map(|&i| (edges[i].s, i)).collect();
        let mut cycle = None;
        'search: for &start in &kept {
            let mut seen: Vec<usize> = Vec::new();
            let mut cur = start;
            loop {
                if let Some(p) = seen.iter().position(|&x| x == cur) {
                    cycle = Some(seen[p..].to_vec());
                    break 'search;
                }
                seen.push(cur);
                let e = &edges[cur];
                if e.t == e.s {
                    break;
                }
                match next.get(&e.t) {
                    Some(&n) => cur = n,
                    None => break,
                }
            }
        }
        let Some(cycle) = cycle else { break };
        if let Some(&victim) = cycle
            .iter()
            .min_by(|&&a, &&b| edges[a].support.cmp(&edges[b].support).then(b.cmp(&a)))
        {
            kept.retain(|&i| i != victim);
        } else {
            break;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small hand-made tree: parent links, volumes.
    struct Toy {
        parent: Vec<Option<u32>>,
        volume: Vec<f64>,
    }

    impl Hierarchy for Toy {
        fn is_ancestor(&self, a: u32, b: u32) -> bool {
            let mut cur = self.parent[b as usize];
            while let Some(c) = cur {
                if c == a {
                    return true;
                }
                cur = self.parent[c as usize];
            }
            false
        }
        fn depth(&self, n: u32) -> u32 {
            let mut d = 0;
            let mut cur = self.parent[n as usize];
            while let Some(c) = cur {
                d += 1;
                cur = self.parent[c as usize];
            }
            d
        }
        fn volume(&self, n: u32) -> f64 {
            self.volume[n as usize]
        }
    }

    fn edge(s: u32, t: u32, fpr: f64, support: u32) -> RuleEdge {
        RuleEdge { s, t, fpr, support }
    }

    /// Nodes: 0 root; 1..=6 children of 0; 7 child of 1.
    fn toy() -> Toy {
        Toy {
            parent: vec![
                None,
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(0),
                Some(1),
            ],
            volume: vec![1000.0, 100.0, 300.0, 50.0, 80.0, 60.0, 40.0, 30.0],
        }
    }

    fn check_resolved(edges: &[RuleEdge], kept: &[usize], h: &Toy) {
        // No two rules from one source.
        let mut sources: Vec<u32> = kept.iter().map(|&i| edges[i].s).collect();
        sources.sort_unstable();
        let before = sources.len();
        sources.dedup();
        assert_eq!(before, sources.len(), "two rules share a source");
        // No covered rule.
        for &i in kept {
            for &j in kept {
                assert!(
                    !h.is_ancestor(edges[i].s, edges[j].s),
                    "rule {j} covered by {i}"
                );
            }
        }
        // No cycle: following rules from any source terminates.
        for &i in kept {
            let mut cur = edges[i].t;
            let mut steps = 0;
            while let Some(&j) = kept
                .iter()
                .find(|&&j| edges[j].s == cur && edges[j].t != cur)
            {
                cur = edges[j].t;
                steps += 1;
                assert!(steps <= kept.len(), "cycle through rule {i}");
            }
        }
    }

    fn figure_7() -> Vec<RuleEdge> {
        vec![
            // (a) two rules from one source (node 3 to nodes 2 and 4).
            edge(3, 2, 0.0, 50),
            edge(3, 4, 0.01, 50),
            // (b) node 1 is an ancestor of node 7; both have rules.
            edge(1, 2, 0.0, 100),
            edge(7, 5, 0.0, 30),
            // (c) a circle 4 -> 5 -> 6 -> 4.
            edge(4, 5, 0.0, 80),
            edge(5, 6, 0.0, 60),
            edge(6, 4, 0.0, 40),
        ]
    }

    #[test]
    fn figure_7_conflicts_resolved_by_graph() {
        let h = toy();
        let edges = figure_7();
        let kept = graph(&edges, &h, &LearnConfig::default());
        check_resolved(&edges, &kept, &h);
        // The popular node 2 is a destination, reached from 3 and 1.
        assert!(
            kept.iter().any(|&i| edges[i].s == 3 && edges[i].t == 2),
            "{kept:?}"
        );
        assert!(
            kept.iter().any(|&i| edges[i].s == 1 && edges[i].t == 2),
            "{kept:?}"
        );
        // In the circle at least the most popular node is a destination.
        let circle_kept = kept
            .iter()
            .filter(|&&i| [4, 5, 6].contains(&edges[i].s))
            .count();
        assert!((1..=2).contains(&circle_kept), "{kept:?}");
    }

    #[test]
    fn figure_7_conflicts_resolved_by_naive() {
        let h = toy();
        let edges = figure_7();
        let kept = naive(&edges, &h);
        check_resolved(&edges, &kept, &h);
        // 7a keeps the least-fpr rule of node 3; 7c drops the least-supported circle rule.
        assert!(kept.contains(&0));
        assert!(!kept.contains(&1));
        assert!(!kept.contains(&6));
        assert!(!kept.contains(&3), "covered by the ancestor's rule");
    }

    #[test]
    fn random_walk_prefers_popular_sinks() {
        let h = toy();
        let edges = vec![edge(3, 2, 0.0, 1), edge(4, 2, 0.0, 1), edge(2, 3, 0.0, 1)];
        let pi = popularity(&edges, &h, &LearnConfig::default());
        assert!(pi[&2] > pi[&3] && pi[&2] > pi[&4]);
        let total: f64 = pi.values().sum();
        assert!(total.is_finite() && total > 0.0);
    }
}
