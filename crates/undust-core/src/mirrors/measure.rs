//! Precision and recall of a ranking of host pairs against known mirrors, as the paper reports
//! them (section 4.2): precision at rank `k` (share of the top `k` pairs that are mirrors) and
//! recall (share of all mirror pairs found in the ranking; the paper has only *relative* recall
//! because nobody knows all mirrors of the Web, a corpus does).

use rustc_hash::FxHashSet;

use super::Candidate;

/// Precision and recall of one ranking.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct RankingQuality {
    /// Pairs ranked.
    pub ranked: usize,
    /// Ranked pairs that are mirrors.
    pub correct: usize,
    /// Mirror pairs known.
    pub truth: usize,
    /// `correct / ranked` over the whole ranking.
    pub precision: f64,
    /// `correct / truth`.
    pub recall: f64,
    /// Precision of the top `truth` pairs (R-precision: the ranking's head as long as the
    /// answer).
    pub r_precision: f64,
}

/// Scores a ranking against the set of true mirror pairs (`(a, b)` with `a < b`).
pub fn quality(ranking: &[Candidate], truth: &FxHashSet<(u32, u32)>) -> RankingQuality {
    let is_true = |c: &Candidate| truth.contains(&(c.a.min(c.b), c.a.max(c.b)));
    let correct = ranking.iter().filter(|c| is_true(c)).count();
    let head = ranking
        .iter()
        .take(truth.len())
        .filter(|c| is_true(c))
        .count();
    let ratio = |x: usize, y: usize| if y == 0 { 0.0 } else { x as f64 / y as f64 };
    RankingQuality {
        ranked: ranking.len(),
        correct,
        truth: truth.len(),
        precision: ratio(correct, ranking.len()),
        recall: ratio(correct, truth.len()),
        r_precision: ratio(head, truth.len()),
    }
}
