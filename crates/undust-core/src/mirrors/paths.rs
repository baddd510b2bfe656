//! URL string algorithms on paths (sections 3.2.2–3.2.4 of the paper): *paths* (whole paths as
//! terms), *prefix* (path prefixes ending in `/` or ending the path) and *shingles* (positional
//! word bigrams of the path).
//!
//! *paths* weighs a term `1 + log(maxdf / df)` and scores pairs by cosine. *prefix* and
//! *shingles* keep only a host's `10 log p` most frequent terms (`p` its URL count; at least 10
//! terms so that small hosts have a vector at all), weigh them like *paths*, and scale the dot
//! product by `1 / (0.1 + 0.15 (log n1 + log n2))` so that large hosts do not win by size (with
//! `log10`, a pair of 1,000-URL hosts scales by 1, as the paper says).

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64;

use super::summary::HostSummary;
use super::terms::{self, TermList, TermParams};
use super::Candidate;

/// Prefixes of a path ending in `/` or ending the path (`/a/b/c.html` gives `/`, `/a/`,
/// `/a/b/`, `/a/b/c.html`). The query is part of the last term.
pub fn prefixes(path: &str) -> impl Iterator<Item = &str> + '_ {
    let ends = path
        .char_indices()
        .filter(|&(_, c)| c == '/')
        .map(|(i, _)| i + 1);
    ends.chain(std::iter::once(path.len()))
        .filter(|&end| end > 0)
        .map(move |end| &path[..end])
}

/// Positional word bigrams of a path: words split at `/` and `.`, non-alphanumerics dropped,
/// digit runs written `*`, each pair tagged with the first word's position
/// (`conferences/dl99/advanceprogram.html` gives `conferences_dl*_0`, `dl*_advanceprogram_1`,
/// `advanceprogram_html_2`).
pub fn shingles(path: &str) -> Vec<String> {
    let path = path.split('?').next().unwrap_or(path);
    let words: Vec<String> = path
        .split(['/', '.'])
        .map(|w| {
            let mut out = String::new();
            let mut in_digits = false;
            for c in w.chars().filter(char::is_ascii_alphanumeric) {
                if c.is_ascii_digit() {
                    if !in_digits {
                        out.push('*');
                    }
                    in_digits = true;
                } else {
                    out.push(c.to_ascii_lowercase());
                    in_digits = false;
                }
            }
            out
        })
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .enumerate()
        .map(|(i, w)| format!("{}_{}_{i}", w[0], w[1]))
        .collect()
}

/// How many terms the term-frequency selection keeps for a host of `p` URLs.
fn kept_terms(p: u64) -> usize {
    ((10.0 * (p.max(1) as f64).log10()).ceil() as usize).max(10)
}

/// A host's most frequent terms (by how many of its paths produce them).
fn top_terms(h: &HostSummary, terms_of: impl Fn(&str, &mut Vec<u64>)) -> TermList {
    let mut tf: FxHashMap<u64, u32> = FxHashMap::default();
    let mut buf = Vec::new();
    for path in &h.paths {
        buf.clear();
        terms_of(path, &mut buf);
        buf.sort_unstable();
        buf.dedup();
        for &t in &buf {
            *tf.entry(t).or_default() += 1;
        }
    }
    let mut ranked: Vec<(u64, u32)> = tf.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(kept_terms(h.size()));
    ranked.into_iter().map(|(t, f)| (t, f64::from(f))).collect()
}

fn size_scale(hosts: &[HostSummary]) -> impl Fn(usize, usize, f64, f64, f64) -> f64 + '_ {
    move |a, b, dot, _, _| {
        let n1 = (hosts[a].size() as f64).log10();
        let n2 = (hosts[b].size() as f64).log10();
        dot / (0.1 + 0.15 * (n1 + n2))
    }
}

/// Algorithm *paths*.
pub fn rank_paths(hosts: &[HostSummary], params: &TermParams) -> Vec<Candidate> {
    let lists: Vec<TermList> = hosts
        .iter()
        .map(|h| {
            h.paths
                .iter()
                .map(|p| (xxh3_64(p.as_bytes()), 1.0))
                .collect()
        })
        .collect();
    terms::rank(
        &lists,
        params,
        terms::idf_weight(params.max_df),
        terms::cosine,
    )
}

/// Algorithm *prefix*.
pub fn rank_prefix(hosts: &[HostSummary], params: &TermParams) -> Vec<Candidate> {
    let lists: Vec<TermList> = hosts
        .iter()
        .map(|h| {
            top_terms(h, |path, out| {
                out.extend(prefixes(path).map(|p| xxh3_64(p.as_bytes())));
            })
        })
        .collect();
    terms::rank(
        &lists,
        params,
        terms::idf_weight(params.max_df),
        size_scale(hosts),
    )
}

/// Algorithm *shingles*.
pub fn rank_shingles(hosts: &[HostSummary], params: &TermParams) -> Vec<Candidate> {
    let lists: Vec<TermList> = hosts
        .iter()
        .map(|h| {
            top_terms(h, |path, out| {
                out.extend(shingles(path).iter().map(|s| xxh3_64(s.as_bytes())));
            })
        })
        .collect();
    terms::rank(
        &lists,
        params,
        terms::idf_weight(params.max_df),
        size_scale(hosts),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_shingles_follow_the_paper() {
        let p: Vec<&str> = prefixes("/a/b/c.html").collect();
        assert_eq!(p, ["/", "/a/", "/a/b/", "/a/b/c.html"]);
        assert_eq!(
            shingles("/conferences/dl99/advanceprogram.html"),
            [
                "conferences_dl*_0",
                "dl*_advanceprogram_1",
                "advanceprogram_html_2"
            ]
        );
        assert_eq!(kept_terms(1000), 30);
        assert_eq!(kept_terms(3), 10);
    }
}
