//! Content confirmation: cheap signals propose host pairs, content decides.
//!
//! An [`Alignment`] says "path `prefix_a + x` on host `a` is path `prefix_b + x` on host `b`"
//! (both prefixes empty for whole-host mirrors; one of them a folder for a mirror network host
//! serving the site under a path, `mirror.example.edu/pub/site/x` ≡ `site.org/x`). [`confirm`]
//! walks the fetched pages of `a` under its prefix, looks up the aligned path on `b`, and compares
//! their content marks: template-stripped fingerprints (a mirror with its own template still
//! matches; near-duplicates within the simhash distance count, so a stale copy with a changed
//! date line matches) or payload digests.
//!
//! An alignment is a mirror only when (see [`ConfirmConfig`]):
//!
//! - pages of at least `min_matches` *distinct* contents match (one home page, or one image
//!   copied everywhere, is not a mirror);
//! - matching pages are at least `min_match_ratio` of the compared pages (sites on the same
//!   software share path shapes and ids but not content; a host redirecting everything to
//!   another's home page serves the same page under every path, which mismatches);
//! - one side's paths are mostly found on the other (`min_containment`): a partial or stale
//!   mirror holds a subset of the site, while sibling subdomains sharing an "about" and a
//!   "privacy" page each have most of their paths to themselves.
//!
//! [`content_alignments`] is the bottom-up proposer: pages with equal strong content on two
//! hosts vote for the alignment of their paths (equal paths, or one path a suffix of the other
//! at a segment boundary); content held by many hosts (a shared library, a stock page) is
//! skipped, as the paper skips frequent terms.

use rustc_hash::{FxHashMap, FxHashSet};

use super::summary::{Comparison, HostSummary};

/// Two hosts' paths aligned by a prefix each.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Alignment {
    /// First host (index into the summaries).
    pub a: u32,
    /// Folder of `a` the aligned paths live under (`""`, or `/pub/site`: no trailing slash).
    pub prefix_a: String,
    /// Second host.
    pub b: u32,
    /// Folder of `b`.
    pub prefix_b: String,
}

impl Alignment {
    /// Whole-host alignment of `a` and `b`.
    pub fn hosts(a: u32, b: u32) -> Self {
        Alignment {
            a: a.min(b),
            prefix_a: String::new(),
            b: a.max(b),
            prefix_b: String::new(),
        }
    }
}

/// Thresholds of content confirmation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConfirmConfig {
    /// Fewest distinct matching contents.
    pub min_matches: usize,
    /// Smallest share of matching pages among compared pages.
    pub min_match_ratio: f64,
    /// Smallest share of one side's paths found on the other.
    pub min_containment: f64,
    /// Largest simhash distance of near-duplicate pages (the cluster index's default).
    pub max_distance: u32,
    /// Content found on more hosts than this does not propose alignments.
    pub content_max_hosts: usize,
    /// Fewest pages voting for a content-proposed alignment.
    pub min_votes: usize,
    /// Most paths walked per side when confirming (bounds the work per pair).
    pub max_paths_compared: usize,
}

impl Default for ConfirmConfig {
    fn default() -> Self {
        ConfirmConfig {
            min_matches: 3,
            min_match_ratio: 0.7,
            min_containment: 0.25,
            max_distance: 3,
            content_max_hosts: 25,
            min_votes: 2,
            max_paths_compared: 5_000,
        }
    }
}

/// What content says about an alignment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairEvidence {
    /// Compared pages with matching strong content.
    pub matches: u64,
    /// Distinct contents among the matches.
    pub distinct_matches: u64,
    /// Compared pages whose content is equal but too small to count.
    pub weak_matches: u64,
    /// Compared pages with different content.
    pub mismatches: u64,
    /// Largest share of one side's paths (under its prefix) found on the other.
    pub containment: f64,
    /// A few matching paths (as on host `a`), for the operator.
    pub examples: Vec<String>,
}

impl PairEvidence {
    /// Whether the evidence makes the alignment a mirror.
    pub fn confirmed(&self, config: &ConfirmConfig) -> bool {
        let compared = self.matches + self.mismatches;
        self.distinct_matches as usize >= config.min_matches
            && compared > 0
            && self.matches as f64 >= config.min_match_ratio * compared as f64
            && self.containment >= config.min_containment
    }
}

/// The part of `path` under folder `prefix` (`""` matches everything), starting with `/`.
fn under<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    let rest = path.strip_prefix(prefix)?;
    rest.starts_with('/').then_some(rest)
}

/// Share of `x`'s paths under `px` that exist on `y` under `py`.
fn containment(x: &HostSummary, px: &str, y: &HostSummary, py: &str, cap: usize) -> f64 {
    let mut total = 0usize;
    let mut found = 0usize;
    let mut buf = String::new();
    for path in &x.paths {
        let Some(rest) = under(path, px) else {
            continue;
        };
        total += 1;
        buf.clear();
        buf.push_str(py);
        buf.push_str(rest);
        found += usize::from(y.paths.contains(buf.as_str()));
        if total >= cap {
            break;
        }
    }
    if total == 0 {
        0.0
    } else {
        found as f64 / total as f64
    }
}

/// Compares the aligned pages of two hosts.
pub fn confirm(hosts: &[HostSummary], al: &Alignment, config: &ConfirmConfig) -> PairEvidence {
    let (x, y) = (&hosts[al.a as usize], &hosts[al.b as usize]);
    let mut ev = PairEvidence::default();
    let mut distinct: FxHashSet<u64> = FxHashSet::default();
    let mut target = String::new();
    let mut walked = 0usize;
    let mut pages: Vec<(&String, _)> = x.pages.iter().collect();
    pages.sort_unstable_by(|p, q| p.0.cmp(q.0));
    for (path, page) in pages {
        let Some(rest) = under(path, &al.prefix_a) else {
            continue;
        };
        walked += 1;
        if walked > config.max_paths_compared {
            break;
        }
        target.clear();
        target.push_str(&al.prefix_b);
        target.push_str(rest);
        let Some(other) = y.pages.get(target.as_str()) else {
            continue;
        };
        let mut best = Comparison::Mismatch;
        let mut matched = None;
        for m in &page.marks {
            for n in &other.marks {
                match m.compare(n, config.max_distance) {
                    Comparison::Match => {
                        best = Comparison::Match;
                        matched = Some(m.exact);
                    }
                    Comparison::WeakMatch if best == Comparison::Mismatch => {
                        best = Comparison::WeakMatch;
                    }
                    _ => {}
                }
            }
        }
        match best {
            Comparison::Match => {
                ev.matches += 1;
                if let Some(exact) = matched {
                    distinct.insert(exact);
                }
                if ev.examples.len() < 3 {
                    ev.examples.push(path.clone());
                }
            }
            Comparison::WeakMatch => ev.weak_matches += 1,
            Comparison::Mismatch => ev.mismatches += 1,
        }
    }
    ev.distinct_matches = distinct.len() as u64;
    let cap = config.max_paths_compared;
    ev.containment = containment(x, &al.prefix_a, y, &al.prefix_b, cap).max(containment(
        y,
        &al.prefix_b,
        x,
        &al.prefix_a,
        cap,
    ));
    ev
}

/// How path `pa` on one host aligns with path `pb` on another: equal, or one a suffix of the
/// other at a segment boundary (the rest is the longer one's folder prefix).
pub fn align_paths(pa: &str, pb: &str) -> Option<(String, String)> {
    if pa.contains('?') || pb.contains('?') {
        return (pa == pb).then(|| (String::new(), String::new()));
    }
    if pa == pb {
        return Some((String::new(), String::new()));
    }
    let folder = |long: &str, short: &str| -> Option<String> {
        let head = long.strip_suffix(short)?;
        (short.starts_with('/') && !head.is_empty() && !head.ends_with('/'))
            .then(|| head.to_owned())
    };
    if let Some(head) = folder(pa, pb) {
        return Some((head, String::new()));
    }
    folder(pb, pa).map(|head| (String::new(), head))
}

/// Alignments proposed by equal strong content on two hosts, with their votes, most votes
/// first.
pub fn content_alignments(
    hosts: &[HostSummary],
    config: &ConfirmConfig,
) -> Vec<(Alignment, usize)> {
    let mut by_content: FxHashMap<u64, Vec<(u32, &str)>> = FxHashMap::default();
    for (h, summary) in hosts.iter().enumerate() {
        for (path, page) in &summary.pages {
            for m in page.marks.iter().filter(|m| m.strong) {
                by_content
                    .entry(m.exact)
                    .or_default()
                    .push((h as u32, path.as_str()));
            }
        }
    }
    let mut votes: FxHashMap<Alignment, usize> = FxHashMap::default();
    for mut holders in by_content.into_values() {
        holders.sort_unstable();
        holders.dedup();
        let mut distinct: Vec<u32> = holders.iter().map(|&(h, _)| h).collect();
        distinct.dedup();
        if distinct.len() < 2 || distinct.len() > config.content_max_hosts {
            continue;
        }
        // A content that is on many paths of one host (a catch-all host) does not align paths.
        if holders.len() > 2 * distinct.len() {
            continue;
        }
        for (i, &(ha, pa)) in holders.iter().enumerate() {
            for &(hb, pb) in &holders[i + 1..] {
                if ha == hb {
                    continue;
                }
                if let Some((xa, xb)) = align_paths(pa, pb) {
                    *votes
                        .entry(Alignment {
                            a: ha,
                            prefix_a: xa,
                            b: hb,
                            prefix_b: xb,
                        })
                        .or_default() += 1;
                }
            }
        }
    }
    let mut out: Vec<(Alignment, usize)> = votes
        .into_iter()
        .filter(|&(_, v)| v >= config.min_votes)
        .collect();
    out.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_align_at_segment_boundaries_only() {
        assert_eq!(
            align_paths("/a/b.html", "/a/b.html"),
            Some((String::new(), String::new()))
        );
        assert_eq!(
            align_paths("/pub/site/a/b.html", "/a/b.html"),
            Some(("/pub/site".to_owned(), String::new()))
        );
        assert_eq!(
            align_paths("/", "/pub/site/"),
            Some((String::new(), "/pub/site".to_owned()))
        );
        assert_eq!(align_paths("/xa/b.html", "/a/b.html"), None);
        assert_eq!(align_paths("/a?x=1", "/b/a?x=1"), None);
    }
}
