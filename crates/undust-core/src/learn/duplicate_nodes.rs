//! Duplicate nodes (Lei et al., Algorithm 2, section 5.2.1).
//!
//! An inverted index from each duplicate cluster to the tree nodes holding its URLs lists, for
//! every cluster, the node pairs it is common to; accumulating over clusters gives each pair's
//! overlap (eq. 6) in time linear in the index size, without looking at node pairs that share
//! nothing. We accept a pair when eq. 6 *or* the share of the smaller node's URLs in common
//! clusters reaches `o_min`: eq. 6 divides by both node sizes, so a small variant node whose
//! URLs all have duplicates in a large node would otherwise be missed (proofing still vets
//! every rule). A node paired with itself (`s = t`) uses the node's duplicate rate
//! `1 - clusters/urls` instead, since `overlap(s, s) = 1`.
//!
//! The coverage and the duplicate rate are read against the duplication the sample shows at all
//! (the share of training URLs with another URL of their cluster in training): the paper learned
//! from a crawl fetched in full, where a variant node's every URL sits beside its duplicate; a
//! crawler's 20% sample shows a URL beside its duplicate about a fifth as often, and fixed
//! thresholds then found only the page types with many forms per page. Eq. 6 keeps the paper's
//! reading. Pairs still come only from clusters two nodes share, so a host that shows little
//! duplication yields few pairs, and proofing's support thresholds are unchanged.
//!
//! Only nodes with a single key set take part (a rule's patterns must be closed); ancestor and
//! descendant pairs are skipped (they are related by the tree, not by duplicates). Singleton
//! clusters are common to no two disjoint nodes and are skipped; clusters spread over more than
//! `MAX_NODES_PER_CLUSTER` nodes are skipped as noise.

use rustc_hash::FxHashMap;

use super::config::{LearnConfig, MAX_EVIDENCE_CLUSTERS, MAX_NODES_PER_CLUSTER};
use super::key::Samples;
use super::tree::Tree;

/// A pair of duplicate nodes (possibly `s == t`) with the clusters common to both.
#[derive(Clone, Debug)]
pub(crate) struct DuplicatePair {
    pub s: u32,
    pub t: u32,
    /// Overlap (eq. 6), or the duplicate rate when `s == t`.
    pub score: f64,
    /// Common clusters (at most `MAX_EVIDENCE_CLUSTERS`).
    pub evidence: Vec<u32>,
}

#[derive(Default)]
struct Acc {
    /// URLs of s in common clusters.
    urls: u64,
    /// URLs of t in common clusters.
    urls_t: u64,
    evidence: Vec<u32>,
}

/// Statistics for the report.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DupStats {
    pub clusters_skipped: usize,
}

/// Algorithm 2.
pub(crate) fn find(
    samples: &Samples,
    tree: &Tree,
    config: &LearnConfig,
) -> (Vec<DuplicatePair>, DupStats) {
    let mut stats = DupStats::default();
    let mut pairs: FxHashMap<(u32, u32), Acc> = FxHashMap::default();
    let mut selfs: FxHashMap<u32, Acc> = FxHashMap::default();
    let mut in_cluster: FxHashMap<u32, u64> = FxHashMap::default();
    let mut with_mates = 0u64;
    for c in 0..samples.cluster_count {
        let urls = samples.cluster(c);
        if urls.len() < 2 {
            continue;
        }
        with_mates += urls.len() as u64;
        in_cluster.clear();
        for &u in urls {
            // Closed-pattern ancestors of the URL's leaf.
            let mut cur = Some(tree.leaf[u as usize]);
            while let Some(n) = cur {
                let nd = &tree.nodes[n as usize];
                if nd.shape.is_none() {
                    break;
                }
                *in_cluster.entry(n).or_default() += 1;
                cur = nd.parent;
            }
        }
        if in_cluster.len() > MAX_NODES_PER_CLUSTER {
            stats.clusters_skipped += 1;
            continue;
        }
        let mut nodes: Vec<(u32, u64)> = in_cluster.iter().map(|(&n, &k)| (n, k)).collect();
        nodes.sort_unstable();
        for (i, &(s, ns)) in nodes.iter().enumerate() {
            if ns >= 2 {
                let acc = selfs.entry(s).or_default();
                if acc.evidence.len() < MAX_EVIDENCE_CLUSTERS {
                    acc.evidence.push(c);
                }
                acc.urls += ns;
            }
            for &(t, nt) in &nodes[i + 1..] {
                if tree.is_ancestor(s, t) || tree.is_ancestor(t, s) {
                    continue;
                }
                let acc = pairs.entry((s, t)).or_default();
                acc.urls += ns;
                acc.urls_t += nt;
                if acc.evidence.len() < MAX_EVIDENCE_CLUSTERS {
                    acc.evidence.push(c);
                }
            }
        }
    }
    let visible = visible_share(with_mates, samples.urls.len());
    let mut out = Vec::new();
    for ((s, t), acc) in pairs {
        let (size_s, size_t) = (
            f64::from(tree.nodes[s as usize].size()),
            f64::from(tree.nodes[t as usize].size()),
        );
        let eq6 = (acc.urls + acc.urls_t) as f64 / (size_s + size_t);
        // Coverage of the smaller node: a small variant node (`?from=rss`) whose every URL
        // has its duplicate in a large node (`/article/*`, mostly pages without variants) has
        // a low eq. 6 overlap although the rule between them is certain.
        // Measured against the duplicates the sample can show at all (`visible_share`): a
        // variant node of a 20% sample has its duplicate beside it on about the host's share,
        // however certain the rule.
        let coverage = if size_s <= size_t {
            acc.urls as f64 / size_s
        } else {
            acc.urls_t as f64 / size_t
        } / visible;
        let overlap = eq6.max(coverage);
        if overlap >= config.o_min {
            out.push(DuplicatePair {
                s,
                t,
                score: overlap,
                evidence: acc.evidence,
            });
        }
    }
    for (s, acc) in selfs {
        let nd = &tree.nodes[s as usize];
        // Against the sample's visible duplication too: a node whose every page appears twice
        // shows a rate of 1/2 when crawled in full and of about half the visible share when
        // sampled.
        let dup_rate = (1.0 - f64::from(nd.clusters) / f64::from(nd.size())) / visible;
        if dup_rate >= config.dup_rate_min {
            out.push(DuplicatePair {
                s,
                t: s,
                score: dup_rate,
                evidence: acc.evidence,
            });
        }
    }
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then((a.s, a.t).cmp(&(b.s, b.t)))
    });
    (out, stats)
}

/// The share of the host's training URLs that share their cluster with another training URL
/// (at most 1, and never 0): how much duplication the sample shows at all. A crawl fetched in
/// full shows most of a site's duplicates together; a 20% sample shows a URL beside its
/// duplicate about a fifth as often, and node coverage is judged against that.
fn visible_share(with_mates: u64, urls: usize) -> f64 {
    if urls == 0 || with_mates == 0 {
        1.0
    } else {
        (with_mates as f64 / urls as f64).min(1.0)
    }
}
