//! Term vector matching over an inverted index (section 3.2 of Bharat, Broder, Dean and
//! Henzinger): the engine behind the *hosts*, *paths*, *prefix*, *shingles*, *hconn1* and
//! *hconn2* algorithms, which differ only in their terms and weights.
//!
//! Candidate generation is not quadratic in hosts: only hosts sharing a term are ever compared,
//! and the paper's document-frequency restrictions bound each term's posting list (a term in
//! [`TermParams::max_df`] hosts or more is rejected; one in more than
//! [`TermParams::restrict_df`] hosts is kept in only that many of them, chosen by a seeded hash
//! rather than at random so that runs are reproducible). The work is therefore at most
//! `postings × restrict_df`. Scores are accumulated one host at a time into a small map and only
//! that host's best [`TermParams::top_k`] partners are kept, so memory is the postings plus
//! `hosts × top_k` pairs, never the pairs of a whole term-host matrix.

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::Candidate;

/// Document-frequency bounds and output size of one term-vector algorithm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TermParams {
    /// Terms in at least this many hosts are rejected (the paper's 100).
    pub max_df: usize,
    /// Terms in more hosts than this appear in the vectors of only this many (the paper's 25).
    pub restrict_df: usize,
    /// Best partners kept per host.
    pub top_k: usize,
    /// Seed of the choice of hosts that keep a restricted term.
    pub seed: u64,
}

impl Default for TermParams {
    fn default() -> Self {
        TermParams {
            max_df: 100,
            restrict_df: 25,
            top_k: 10,
            seed: 0x6d69_7272_6f72,
        }
    }
}

/// One host's terms: a term hash and a per-term factor the weight function may use (the number
/// of segments of a host name term, a term frequency).
pub type TermList = Vec<(u64, f64)>;

/// Ranks host pairs by the similarity of their term vectors.
///
/// `weight(df, factor)` is the weight of a term found in `df` hosts (before restriction);
/// `scale(a, b, dot, norm_a, norm_b)` turns the dot product of hosts `a` and `b` into the score
/// (cosine, or the paper's size normalization). Pairs with a score of zero or less are dropped.
pub fn rank(
    terms: &[TermList],
    params: &TermParams,
    weight: impl Fn(usize, f64) -> f64,
    scale: impl Fn(usize, usize, f64, f64, f64) -> f64,
) -> Vec<Candidate> {
    // Postings: term -> hosts.
    let mut postings: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for (h, list) in terms.iter().enumerate() {
        for &(t, _) in list {
            postings.entry(t).or_default().push(h as u32);
        }
    }
    let mut df: FxHashMap<u64, usize> = FxHashMap::default();
    for (t, hosts) in postings.iter_mut() {
        hosts.sort_unstable();
        hosts.dedup();
        df.insert(*t, hosts.len());
        if hosts.len() >= params.max_df {
            hosts.clear();
        } else if hosts.len() > params.restrict_df {
            let seed = params.seed ^ *t;
            hosts.sort_by_key(|&h| xxh3_64_with_seed(&h.to_le_bytes(), seed));
            hosts.truncate(params.restrict_df);
            hosts.sort_unstable();
        }
    }
    postings.retain(|_, hosts| hosts.len() > 1);
    // Weighted vectors (only terms that survived restriction in this host).
    let vectors: Vec<Vec<(u64, f64)>> = terms
        .iter()
        .enumerate()
        .map(|(h, list)| {
            let mut v: Vec<(u64, f64)> = list
                .iter()
                .filter_map(|&(t, factor)| {
                    let hosts = postings.get(&t)?;
                    hosts.binary_search(&(h as u32)).ok()?;
                    let w = weight(df.get(&t).copied().unwrap_or(1), factor);
                    (w > 0.0).then_some((t, w))
                })
                .collect();
            v.sort_unstable_by_key(|&(t, _)| t);
            v.dedup_by_key(|&mut (t, _)| t);
            v
        })
        .collect();
    let norms: Vec<f64> = vectors
        .iter()
        .map(|v| v.iter().map(|&(_, w)| w * w).sum::<f64>().sqrt())
        .collect();
    let mut best: FxHashMap<(u32, u32), f64> = FxHashMap::default();
    let mut acc: FxHashMap<u32, f64> = FxHashMap::default();
    for (a, v) in vectors.iter().enumerate() {
        acc.clear();
        for &(t, w) in v {
            let Some(hosts) = postings.get(&t) else {
                continue;
            };
            for &b in hosts {
                if b as usize != a {
                    *acc.entry(b).or_default() += w * w;
                }
            }
        }
        let mut scored: Vec<(u32, f64)> = acc
            .iter()
            .map(|(&b, &dot)| {
                let b_idx = b as usize;
                (b, scale(a, b_idx, dot, norms[a], norms[b_idx]))
            })
            .filter(|&(_, s)| s > 0.0 && s.is_finite())
            .collect();
        scored.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        for (b, s) in scored.into_iter().take(params.top_k) {
            let key = (a.min(b as usize) as u32, a.max(b as usize) as u32);
            let slot = best.entry(key).or_insert(s);
            *slot = slot.max(s);
        }
    }
    let mut out: Vec<Candidate> = best
        .into_iter()
        .map(|((a, b), score)| Candidate { a, b, score })
        .collect();
    super::sort_candidates(&mut out);
    out
}

/// Cosine similarity of two weighted vectors (the plain term-vector match).
pub fn cosine(_a: usize, _b: usize, dot: f64, norm_a: f64, norm_b: f64) -> f64 {
    if norm_a == 0.0 || norm_b == 0.0 {
        0.0
    } else {
        dot / (norm_a * norm_b)
    }
}

/// `1 + log(maxdf / df)` (the *paths* and *prefix* weight).
pub fn idf_weight(max_df: usize) -> impl Fn(usize, f64) -> f64 {
    move |df, _| 1.0 + (max_df as f64 / df.max(1) as f64).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_rare_terms_rank_first_and_common_terms_are_rejected() {
        // Hosts 0 and 1 share three rare terms; every host shares term 99.
        let mut terms: Vec<TermList> = (0..150).map(|_| vec![(99, 1.0)]).collect();
        terms[0].extend([(1, 1.0), (2, 1.0), (3, 1.0)]);
        terms[1].extend([(1, 1.0), (2, 1.0), (3, 1.0)]);
        terms[2].extend([(1, 1.0)]);
        let out = rank(&terms, &TermParams::default(), idf_weight(100), cosine);
        assert_eq!((out[0].a, out[0].b), (0, 1));
        assert!(out.iter().all(|c| c.a <= 2 && c.b <= 2), "{out:?}");
    }
}
