//! Case folding scoped to the path segments that showed it.
//!
//! A case-insensitive server (IIS on a Windows file system) answers a path in any case, down to
//! the file name; an application that looks up its first names case-insensitively answers only
//! those in any case: a forge finds `/Owner/Repo` by the lower-cased names, while the git paths
//! after them are case-sensitive (`xt_DSCP.h` beside `xt_dscp.h` in the Linux kernel), as are a
//! wiki's titles after a case-insensitive namespace. Lower-casing the whole path there merges
//! the case-twin files, which a fifth of the pages rarely shows side by side (thin evidence).
//!
//! So the evidence for lower-casing the path is read for where it lies: in each group of
//! duplicates the fold merged, the segment positions at which the addresses differ in case. The
//! scope is the deepest such position; when some merged address has segments after the scope,
//! written alike in every address of its page (the links recased the names, not the rest), the
//! fold is narrowed to the scope ([`SiteAction::LowercaseSegments`]); when the whole-path fold
//! is refused (case-distinct pages deeper in the path), the scope is tried as well. The narrower
//! fold is taken when it passes the guards of every site action on its own.

use rustc_hash::FxHashMap;

use super::{
    case_fold_accepted, measure, Evidence, LearnConfig, Parsed, Round, SiteAction, SiteRewriter,
    Tested,
};

/// Deepest segment position examined (a path deeper than this is folded whole or not at all).
const MAX_SCOPE: usize = 16;

/// The segments of a path after its leading slash.
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.strip_prefix('/').unwrap_or(path).split('/')
}

/// The scope the merged groups of a whole-path fold showed (segments from the first that must be
/// folded for every group to merge) and whether a merged address reaches past it with a segment
/// holding a letter; `None` when no group differed in case within [`MAX_SCOPE`] segments.
fn shown_scope(wide: &Evidence, moved: &[(u32, u64)], round: &Round<'_>) -> Option<(u16, bool)> {
    let new_hash: FxHashMap<u32, u64> = moved.iter().copied().collect();
    let mut groups: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    for &u in &wide.positive_samples {
        if let Some(&h) = new_hash.get(&u) {
            groups.entry(h).or_default().push(u);
        }
    }
    let mut scope = 0usize;
    let mut paths: Vec<Vec<&str>> = Vec::new();
    for (&h, changed) in &groups {
        paths.clear();
        paths.extend(
            changed
                .iter()
                .copied()
                .chain(round.by_hash.samples(h))
                .map(|u| segments(&round.outputs[u as usize].0).collect()),
        );
        let first = &paths[0];
        for other in &paths[1..] {
            for (i, (a, b)) in first.iter().zip(other).enumerate() {
                if a != b {
                    if i >= MAX_SCOPE {
                        return None;
                    }
                    scope = scope.max(i + 1);
                }
            }
        }
    }
    if scope == 0 {
        return None;
    }
    let beyond = wide.positive_samples.iter().any(|&u| {
        segments(&round.outputs[u as usize].0)
            .skip(scope)
            .any(|s| s.bytes().any(|b| b.is_ascii_alphabetic()))
    });
    Some((scope as u16, beyond))
}

/// The scoped form of a whole-path fold ([`SiteAction::LowercasePath`]) once it was measured
/// (`wide`, moving `wide_moved`, on `may_change`): [`SiteAction::LowercaseSegments`] of the
/// scope its merged groups showed, tested on the samples with an upper-case letter inside the
/// scope, when an address merged reaches past the scope or the whole-path fold is refused; `None`
/// when the whole-path fold is judged as it is.
pub(super) fn scoped_case(
    candidate: &SiteAction,
    wide: &Evidence,
    wide_moved: &[(u32, u64)],
    config: &LearnConfig,
    (parsed, rewriter, round): (&[Parsed], &SiteRewriter, &Round<'_>),
    may_change: &[u32],
) -> Option<Tested> {
    if *candidate != SiteAction::LowercasePath || wide.positive_samples.is_empty() {
        return None;
    }
    let (scope, beyond) = shown_scope(wide, wide_moved, round)?;
    if !beyond && case_fold_accepted(wide, config) {
        return None;
    }
    let inside: Vec<u32> = may_change
        .iter()
        .copied()
        .filter(|&u| {
            segments(&round.outputs[u as usize].0)
                .take(usize::from(scope))
                .any(|s| s.bytes().any(|b| b.is_ascii_uppercase()))
        })
        .collect();
    let action = SiteAction::LowercaseSegments { segments: scope };
    let mut with = rewriter.clone();
    with.add(&action);
    let (evidence, moved) = measure(parsed, &with, round, &inside, None, false);
    case_fold_accepted(&evidence, config).then_some((action, with, evidence, moved))
}

#[cfg(test)]
mod tests {
    use super::super::{learn, SiteOutcome};
    use crate::canon::rules::{SiteAction, SiteRewriter};
    use crate::learn::{LabelledUrl, LearnConfig};
    use url::Url;

    fn lu(url: String, cluster: u64) -> LabelledUrl {
        LabelledUrl { url, cluster }
    }

    fn actions(out: &SiteOutcome) -> Vec<&SiteAction> {
        out.rules.iter().map(|r| &r.action).collect()
    }

    /// A forge: owners and repositories found in any case, the files after them case-sensitive;
    /// with `twins`, files whose names differ only in case, shown as different pages at `depth`
    /// (2: right after the repository, 4: in a tree).
    fn forge(twins: Option<usize>) -> Vec<LabelledUrl> {
        let mut s = Vec::new();
        for o in 0..12u64 {
            let (upper, lower) = (format!("/Owner{o}/Repo{o}"), format!("/owner{o}/repo{o}"));
            s.push(lu(format!("https://c.example{upper}"), o));
            s.push(lu(format!("https://c.example{lower}"), o));
            let file = format!("/src/main/file{o}.c");
            s.push(lu(format!("https://c.example{upper}{file}"), 100 + o));
            s.push(lu(format!("https://c.example{lower}{file}"), 100 + o));
            let tree = match twins {
                Some(2) => String::new(),
                _ => "/src/main".into(),
            };
            if twins.is_some() {
                s.push(lu(
                    format!("https://c.example{upper}{tree}/Kconfig"),
                    200 + o,
                ));
                s.push(lu(
                    format!("https://c.example{upper}{tree}/kconfig"),
                    300 + o,
                ));
            }
        }
        s
    }

    #[test]
    fn case_is_folded_only_in_the_segments_that_showed_it() {
        for twins in [None, Some(4)] {
            let out = learn(&forge(twins), &LearnConfig::default());
            assert_eq!(
                actions(&out),
                [&SiteAction::LowercaseSegments { segments: 2 }],
                "{twins:?}"
            );
            let rewriter = SiteRewriter::new(actions(&out));
            let file = Url::parse("https://c.example/Owner1/Repo1/src/main/xt_DSCP.h").unwrap();
            assert_eq!(
                rewriter.rewrite(&file).as_deref(),
                Some("https://c.example/owner1/repo1/src/main/xt_DSCP.h")
            );
        }
    }

    #[test]
    fn a_scope_that_reaches_case_distinct_pages_is_refused() {
        // The duplicates differ in case down to the third segment (`/Owner/Repo/Docs`), so the
        // scope is three segments, and there the samples show case twins (`Kconfig` beside
        // `kconfig` right after the repository): neither that scope nor the whole path.
        let mut s = forge(Some(2));
        for o in 0..12u64 {
            s.push(lu(
                format!("https://c.example/Owner{o}/Repo{o}/Docs"),
                400 + o,
            ));
            s.push(lu(
                format!("https://c.example/owner{o}/repo{o}/docs"),
                400 + o,
            ));
        }
        let out = learn(&s, &LearnConfig::default());
        assert!(
            !actions(&out).iter().any(|a| matches!(
                a,
                SiteAction::LowercasePath | SiteAction::LowercaseSegments { .. }
            )),
            "{:?}",
            actions(&out)
        );
    }

    #[test]
    fn a_case_insensitive_server_still_folds_the_whole_path() {
        let mut s = Vec::new();
        for i in 0..12u64 {
            s.push(lu(format!("https://i.example/Products/Item{i}.aspx"), i));
            s.push(lu(format!("https://i.example/products/item{i}.aspx"), i));
        }
        let out = learn(&s, &LearnConfig::default());
        assert_eq!(actions(&out), [&SiteAction::LowercasePath]);
    }

    /// A small host: a folder and its stylesheet each captured under two spellings, the rest of
    /// its pages once. `extra` adds another folder under both spellings, either one page
    /// (`Some(true)`) or two different ones (`Some(false)`).
    fn small_host(pairs: u64, extra: Option<bool>) -> Vec<LabelledUrl> {
        let mut s = Vec::new();
        for (i, file) in ["", "site.css"].iter().enumerate().take(pairs as usize) {
            s.push(lu(format!("http://s.example/Wop/{file}"), i as u64));
            s.push(lu(format!("http://s.example/wop/{file}"), i as u64));
        }
        for i in 0..20u64 {
            s.push(lu(format!("http://s.example/wop/page{i}.html"), 100 + i));
        }
        if let Some(same) = extra {
            s.push(lu("http://s.example/Kort/".into(), 200));
            s.push(lu(
                "http://s.example/kort/".into(),
                if same { 200 } else { 201 },
            ));
        }
        s
    }

    #[test]
    fn two_pages_under_two_spellings_fold_the_case_and_a_contrary_page_refuses_it() {
        let folds = |s: &[LabelledUrl]| -> bool {
            learn(s, &LearnConfig::default()).rules.iter().any(|r| {
                matches!(
                    r.action,
                    SiteAction::LowercasePath | SiteAction::LowercaseSegments { .. }
                )
            })
        };
        assert!(folds(&small_host(2, None)));
        assert!(folds(&small_host(2, Some(true))));
        // One page under two spellings may be a link's accident (a symbolic link, an alias).
        assert!(!folds(&small_host(1, None)));
        // Two folders that differ only in case are a case-sensitive server's.
        assert!(!folds(&small_host(2, Some(false))));
    }
}
