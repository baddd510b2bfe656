//! Connectivity algorithms (sections 3.3 and 3.4 of the paper).
//!
//! - *conn* filters the output of *paths*: for a candidate pair it tests the common fetched
//!   paths with the most out-links (up to `n` from each host); a path is equivalent when a
//!   fraction `f` of the union of both versions' out-links is common (links within a host are
//!   compared as relative paths, see [`super::summary::PageSummary::links`]), and the pair stays
//!   when a fraction `m` of the tested paths is equivalent. The paper's `n = 10`, `f = 0.9`,
//!   `m = 0.75` are the defaults. A pair with no common fetched path cannot be tested and is
//!   dropped, as a failed test.
//! - *hconn1* and *hconn2* match hosts by the hosts they link to (the host graph), keeping each
//!   host's `10 log p` heaviest out-edges. The paper implements *hconn1*'s weights (1 up to
//!   in-degree 25, falling as `25 / in` beyond) by letting a term appear in only 25 hosts' vectors
//!   chosen at random; [`super::terms`] does exactly that restriction, so the weight itself is 1
//!   for *hconn1* and `1 + log(maxin / in)` for *hconn2*.

use rustc_hash::FxHashSet;
use xxhash_rust::xxh3::xxh3_64;

use super::summary::{HostSummary, PageSummary};
use super::terms::{self, TermList, TermParams};
use super::Candidate;

/// Parameters of *conn*.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConnParams {
    /// Paths tested from each host (the paper's `n`).
    pub paths_per_host: usize,
    /// Share of the union of out-links that must be common for a path to be equivalent (`f`).
    pub link_agreement: f64,
    /// Share of tested paths that must be equivalent for the pair to stay (`m`).
    pub path_agreement: f64,
}

impl Default for ConnParams {
    fn default() -> Self {
        ConnParams {
            paths_per_host: 10,
            link_agreement: 0.9,
            path_agreement: 0.75,
        }
    }
}

fn links_agree(x: &PageSummary, y: &PageSummary, f: f64) -> bool {
    let a: FxHashSet<u64> = x.links.iter().copied().collect();
    let b: FxHashSet<u64> = y.links.iter().copied().collect();
    let union = a.union(&b).count();
    union > 0 && a.intersection(&b).count() as f64 >= f * union as f64
}

/// Whether *conn* keeps a pair.
pub fn conn_keeps(a: &HostSummary, b: &HostSummary, params: &ConnParams) -> bool {
    let mut tested: Vec<&str> = Vec::new();
    for (x, y) in [(a, b), (b, a)] {
        let mut common: Vec<(&str, usize)> = x
            .pages
            .iter()
            .filter(|(p, page)| !page.links.is_empty() && y.pages.contains_key(p.as_str()))
            .map(|(p, page)| (p.as_str(), page.links.len()))
            .collect();
        common.sort_by(|p, q| q.1.cmp(&p.1).then(p.0.cmp(q.0)));
        for (p, _) in common.into_iter().take(params.paths_per_host) {
            if !tested.contains(&p) {
                tested.push(p);
            }
        }
    }
    if tested.is_empty() {
        return false;
    }
    let equivalent = tested
        .iter()
        .filter(|p| links_agree(&a.pages[**p], &b.pages[**p], params.link_agreement))
        .count();
    equivalent as f64 >= params.path_agreement * tested.len() as f64
}

/// Algorithm *conn*: the *paths* ranking with the pairs that fail the link test removed.
pub fn rank_conn(
    hosts: &[HostSummary],
    paths: &[Candidate],
    params: &ConnParams,
) -> Vec<Candidate> {
    paths
        .iter()
        .filter(|c| conn_keeps(&hosts[c.a as usize], &hosts[c.b as usize], params))
        .copied()
        .collect()
}

/// The host graph terms of one host: its heaviest out-edges.
fn edge_terms(h: &HostSummary) -> TermList {
    let mut edges: Vec<(&String, u32)> = h
        .link_hosts
        .iter()
        .filter(|(target, _)| **target != h.host)
        .map(|(t, &w)| (t, w))
        .collect();
    edges.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let keep = ((10.0 * (h.size() as f64).log10()).ceil() as usize).max(10);
    edges
        .into_iter()
        .take(keep)
        .map(|(t, w)| (xxh3_64(t.as_bytes()), f64::from(w)))
        .collect()
}

/// Algorithm *hconn1* (`second = false`) or *hconn2* (`second = true`).
pub fn rank_hconn(hosts: &[HostSummary], params: &TermParams, second: bool) -> Vec<Candidate> {
    let lists: Vec<TermList> = hosts.iter().map(edge_terms).collect();
    // In-degree is the term's document frequency; terms of the whole graph are kept
    // (restriction does the *hconn1* weighting), hence no rejection by `max_df`.
    let params = TermParams {
        max_df: usize::MAX,
        ..*params
    };
    let max_in = {
        let mut seen: rustc_hash::FxHashMap<u64, usize> = rustc_hash::FxHashMap::default();
        for list in &lists {
            for &(t, _) in list {
                *seen.entry(t).or_default() += 1;
            }
        }
        seen.values().copied().max().unwrap_or(1)
    };
    terms::rank(
        &lists,
        &params,
        move |df, _| {
            if second {
                1.0 + (max_in as f64 / df.max(1) as f64).ln()
            } else {
                1.0
            }
        },
        terms::cosine,
    )
}
