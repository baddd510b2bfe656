//! The paper's *combined* ranking (section 4.2.2): the union of the top results of *IP4*,
//! *prefix*, *hconn2*, *paths* and *hosts*, sorted by how many of them found a pair, ties to the
//! pair with the best (lowest) rank in any of them.

use rustc_hash::FxHashMap;

use super::{Candidate, Technique};

/// The algorithms the paper combines.
pub const PARTS: [Technique; 5] = [
    Technique::Ip4,
    Technique::Prefix,
    Technique::Hconn2,
    Technique::Paths,
    Technique::Hosts,
];

/// Combines rankings, each cut at `top` results. The score is the number of rankings holding
/// the pair plus a fraction that orders ties by best rank.
pub fn combine(rankings: &[Vec<Candidate>], top: usize) -> Vec<Candidate> {
    let mut found: FxHashMap<(u32, u32), (u32, usize)> = FxHashMap::default();
    for ranking in rankings {
        for (rank, c) in ranking.iter().take(top).enumerate() {
            let e = found.entry((c.a, c.b)).or_insert((0, usize::MAX));
            e.0 += 1;
            e.1 = e.1.min(rank);
        }
    }
    let mut out: Vec<Candidate> = found
        .into_iter()
        .map(|((a, b), (count, best))| Candidate {
            a,
            b,
            score: f64::from(count) + 1.0 / (2.0 + best as f64),
        })
        .collect();
    super::sort_candidates(&mut out);
    out
}
