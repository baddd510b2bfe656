//! Site-rule candidates for a number in the URL that opens the page holding it
//! ([`SiteAction::PostToPage`]), found in pairs of addresses of one duplicate cluster and then
//! measured by `learn::site` like every other site action.
//!
//! Discourse serves `/t/slug/5/25` (the topic opened at post 25) as the page holding post 25:
//! `/t/slug/5?page=2` at 20 posts per page; NodeBB does the same with a page size of its own.
//! A cluster holding a path `T/M` (`M` a post number) beside the path `T` with the same query,
//! or with the same query and one more part `key=P` (`P` at least 2), shows post `M` on page 1
//! or on page `P` of thread `T`. The page size `k` is unknown, and each such pair bounds it:
//! `M / P <= k < M / (P - 1)` (`k >= M` on page 1). The pairs of every thread under one prefix
//! are intersected; an empty intersection (the pairs contradict any one page size) refuses
//! the shape, so a site whose numbers are not post numbers on pages never gets a rule from a
//! coincidence. Nothing is guessed: the rule keeps the range, and the engine rewrites a post
//! number only when every size of the range puts it on the same page.
//!
//! A shape needs [`MIN_MOVED_ID_VALUES`] distinct threads, at least one pair on page 1 (the
//! page form without a page, which page 1 is then written as), and fewer than two posts shown
//! without their page beside an address outside their thread; without a pair beyond the first
//! page, the range has no upper bound and only page 1 is written, for post numbers up to the
//! range's lower bound. Of the prefixes above the same threads, the deepest with the most
//! threads is kept: `/t/` rather than `/`, so a category's `/c/slug/5` is not read as a post of
//! a thread `/c/slug`.

use rustc_hash::{FxHashMap, FxHashSet};

use super::segments::query_without_part;
use super::site::{most_shown_first, SmallClusters, MIN_MOVED_ID_VALUES};
use crate::canon::rules::post_pages::{post_in_path, post_number, MAX_KEPT_SEGMENTS, MAX_PER_PAGE};
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (std::borrow::Cow<'a, str>, Option<std::borrow::Cow<'a, str>>);

/// Post-to-page candidates tested per round (the most shown first).
const MAX_POST_PAGE_CANDIDATES: usize = 4;

/// What the clusters show of one shape (prefix, kept segments).
#[derive(Default)]
struct Shown<'s> {
    /// The threads' addresses the pairs were shown on.
    threads: FxHashSet<&'s str>,
    /// Post numbers shown on page 1 (the page form without a page).
    first_page: Vec<u64>,
    /// Per query parameter, (post number, page) shown beyond the first page.
    beyond: FxHashMap<&'s str, Vec<(u64, u64)>>,
}

/// The page a query part writes: `key=P`, `P` a number of at least 2.
fn page_part(part: &str) -> Option<(&str, u64)> {
    let (key, value) = part.split_once('=')?;
    let page = post_number(value).filter(|&p| p >= 2)?;
    (!key.is_empty()).then_some((key, page))
}

/// The range of page sizes `[low, high]` that (post, page) pairs allow, `high` `None` without
/// a pair beyond page 1; `None` when they contradict every page size.
pub(super) fn page_size_range(
    first_page: &[u64],
    beyond: &[(u64, u64)],
) -> Option<(u64, Option<u64>)> {
    // Page 1 holds post M: k >= M. Page P holds post M: M / P <= k < M / (P - 1).
    let mut low = first_page.iter().copied().max().unwrap_or(1);
    let mut high: Option<u64> = None;
    for &(post, page) in beyond {
        low = low.max(post.div_ceil(page));
        let below = (post - 1) / (page - 1);
        high = Some(high.map_or(below, |h| h.min(below)));
    }
    match high {
        Some(h) if h < low => None,
        _ => Some((low, high)),
    }
}

/// Post-to-page candidates the clusters show under the accepted actions (`outputs`), each with
/// the samples whose path it reads.
pub(super) fn post_pages(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    let mut shown: FxHashMap<(&str, u16), Shown<'_>> = FxHashMap::default();
    // Samples shown beside a page of their thread.
    let mut paired: FxHashSet<u32> = FxHashSet::default();
    for members in clusters.values() {
        for &a in members {
            let (path, query) = &outputs[a as usize];
            let path: &str = path;
            let Some(slash) = path.rfind('/') else {
                continue;
            };
            let (thread, last) = (&path[..slash], &path[slash + 1..]);
            let Some(post) = post_number(last).filter(|_| !thread.is_empty()) else {
                continue;
            };
            let own = query.as_deref().unwrap_or("");
            for &b in members {
                let (page_path, page_query) = &outputs[b as usize];
                if b == a || page_path.as_ref() != thread {
                    continue;
                }
                let page_query = page_query.as_deref().unwrap_or("");
                let page = if page_query == own {
                    None
                } else {
                    let found = page_query.split('&').enumerate().find_map(|(at, part)| {
                        let (key, page) = page_part(part)?;
                        (query_without_part(page_query, at) == own).then_some((key, page))
                    });
                    match found {
                        Some(found) => Some(found),
                        None => continue,
                    }
                };
                paired.insert(a);
                // Every prefix above the thread's segments: `/`, `/t/`, …
                for (at, _) in thread.match_indices('/') {
                    let prefix = &path[..=at];
                    let segments = thread[at + 1..].split('/').count();
                    if segments == 0 || segments > usize::from(MAX_KEPT_SEGMENTS) {
                        continue;
                    }
                    if thread[at + 1..].split('/').any(str::is_empty) {
                        continue;
                    }
                    let entry = shown.entry((prefix, segments as u16)).or_default();
                    entry.threads.insert(thread);
                    match page {
                        None => entry.first_page.push(post),
                        Some((key, page)) => {
                            entry.beyond.entry(key).or_default().push((post, page));
                        }
                    }
                }
            }
        }
    }
    // Per depth of the thread's address, the prefix whose pairs show the most threads, the
    // deepest on a tie.
    let mut best: FxHashMap<usize, (usize, &str, u16, Shown<'_>)> = FxHashMap::default();
    for ((prefix, kept), found) in shown {
        let threads = found.threads.len();
        if threads < MIN_MOVED_ID_VALUES || found.first_page.is_empty() {
            continue;
        }
        let depth = prefix.matches('/').count() + usize::from(kept);
        let better =
            |(n, p, _, _): &(usize, &str, u16, Shown<'_>)| (threads, prefix.len()) > (*n, p.len());
        if best.get(&depth).is_none_or(better) {
            best.insert(depth, (threads, prefix, kept, found));
        }
    }
    let mut out: Vec<(usize, SiteAction, Vec<u32>)> = Vec::new();
    for (threads, prefix, kept, found) in best.into_values() {
        // The parameter most pairs write their page in; ties by name, so the choice does not
        // depend on hashing.
        let key = found
            .beyond
            .iter()
            .max_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| b.0.cmp(a.0)))
            .map(|(key, pairs)| (*key, pairs.as_slice()));
        let (key, beyond) = key.unwrap_or(("", &[]));
        // Pairs that contradict every page size refuse the shape: no guess.
        let Some((low, high)) = page_size_range(&found.first_page, beyond) else {
            continue;
        };
        let max = u64::from(MAX_PER_PAGE);
        if low > max || high.is_some_and(|h| h > max) {
            continue;
        }
        let action = SiteAction::PostToPage {
            prefix: prefix.to_owned(),
            kept,
            key: key.to_owned(),
            per_page_min: low as u32,
            per_page_max: high.map(|h| h as u32),
        };
        let samples: Vec<u32> = outputs
            .iter()
            .enumerate()
            .filter(|(_, (path, _))| post_in_path(prefix, kept, path).is_some())
            .map(|(i, _)| i as u32)
            .collect();
        // A post opens the page holding it, so the addresses it shares a content with are its
        // thread's. A post shown, without its page, beside an address outside its thread opens
        // something else: NodeBB's infinite scroll renders a window of posts around the one
        // asked for, which only the post's permalink (`/post/PID`) shares, however well the few
        // posts that do open a page fit a page size. Two such clusters refuse the shape (one
        // mislabelled cluster cannot).
        if posts_beside_other_addresses(outputs, clusters, &samples, &paired) >= 2 {
            continue;
        }
        out.push((threads, action, samples));
    }
    let mut ranked = most_shown_first(out);
    ranked.truncate(MAX_POST_PAGE_CANDIDATES);
    ranked
}

/// Posts among `samples` not shown beside a page of their thread (`paired`) whose cluster holds
/// an address outside the thread (the path before the post number).
fn posts_beside_other_addresses(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
    samples: &[u32],
    paired: &FxHashSet<u32>,
) -> usize {
    let posts: FxHashSet<u32> = samples
        .iter()
        .copied()
        .filter(|s| !paired.contains(s))
        .collect();
    let mut found = 0;
    for members in clusters.values() {
        for &a in members.iter().filter(|a| posts.contains(a)) {
            let path: &str = &outputs[a as usize].0;
            let thread = &path[..path.rfind('/').unwrap_or(0)];
            let in_thread = |other: &str| {
                other
                    .strip_prefix(thread)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            };
            found += usize::from(
                members
                    .iter()
                    .any(|&b| b != a && !in_thread(&outputs[b as usize].0)),
            );
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use crate::learn::test_support::host;

    use super::*;

    fn thread_pages(action: &SiteAction) -> (String, u16, String, u32, Option<u32>) {
        match action {
            SiteAction::PostToPage {
                prefix,
                kept,
                key,
                per_page_min,
                per_page_max,
            } => (
                prefix.clone(),
                *kept,
                key.clone(),
                *per_page_min,
                *per_page_max,
            ),
            other => panic!("not a post-to-page rule: {other}"),
        }
    }

    #[test]
    fn the_page_size_is_bounded_by_every_pair() {
        // Page 1 holds 20; page 2 holds 21 and 40; page 3 holds 41.
        assert_eq!(
            page_size_range(&[20], &[(21, 2), (40, 2), (41, 3)]),
            Some((20, Some(20)))
        );
        assert_eq!(page_size_range(&[12], &[(30, 2)]), Some((15, Some(29))));
        assert_eq!(page_size_range(&[7, 12], &[]), Some((12, None)));
        // Post 25 on page 1 (k >= 25) and post 24 on page 2 (k < 24): no page size does both.
        assert_eq!(page_size_range(&[25], &[(24, 2)]), None);
    }

    /// NodeBB under its default infinite scroll (the "newfamilies" family at stop 26, seed 42):
    /// a post index renders a window of posts around it, which is a page only where the window
    /// happens to start a page. The pairs fit a page size of 18 to 22; the windows, shown
    /// beside their permalinks (`/post/PID`) and not beside a page, refuse the shape.
    #[test]
    fn posts_opening_windows_beside_their_permalinks_are_no_pages() {
        let mut groups: Vec<Vec<String>> = Vec::new();
        for t in 0..4u32 {
            groups.push(vec![format!("/topic/{t}"), format!("/topic/{t}/5")]);
            groups.push(vec![format!("/topic/{t}?page=2"), format!("/topic/{t}/31")]);
        }
        let aligned: Vec<Vec<&str>> = groups
            .iter()
            .map(|g| g.iter().map(String::as_str).collect())
            .collect();
        let mut shown: Vec<&[&str]> = aligned.iter().map(Vec::as_slice).collect();
        let learned = post_pages(&host(&shown).0, &host(&shown).1);
        assert_eq!(learned.len(), 1, "the pairs alone fit: {learned:?}");
        let windows: [&[&str]; 2] = [
            &["/topic/1/44", "/post/9012"],
            &["/topic/2/47", "/post/9277"],
        ];
        shown.extend(windows);
        let (outputs, clusters) = host(&shown);
        let got = post_pages(&outputs, &clusters);
        assert!(got.is_empty(), "{got:?}");
        // One such cluster is no scheme of the site (a mislabelled cluster cannot refuse it).
        shown.pop();
        let (outputs, clusters) = host(&shown);
        assert_eq!(post_pages(&outputs, &clusters).len(), 1);
    }

    #[test]
    fn posts_open_the_page_of_their_thread() {
        let (outputs, clusters) = host(&[
            &["/t/5", "/t/5/3", "/t/5/20"],
            &["/t/5?page=2", "/t/5/21"],
            &["/t/8", "/t/8/14"],
            &["/t/9", "/t/9/2"],
            &["/t/9?page=3", "/t/9/57"],
            &["/c/news/4", "/c/news/4/l/latest"],
            &["/t/10/99"],
        ]);
        let got = post_pages(&outputs, &clusters);
        assert_eq!(got.len(), 1, "{got:?}");
        // k >= 20 (page 1 holds 20), k <= 20 (post 21 is on page 2).
        assert_eq!(
            thread_pages(&got[0].0),
            ("/t/".into(), 1, "page".into(), 20, Some(20))
        );
        // The samples it reads: every post under /t/, not the category.
        assert_eq!(got[0].1, vec![1, 2, 4, 6, 8, 10, 13]);
        let engine = crate::canon::rules::SiteRewriter::new([&got[0].0]);
        let form = |p: &str| {
            let (path, query, _) = engine.rewrite_parts(p, None);
            match query {
                Some(q) => format!("{path}?{q}"),
                None => path.into_owned(),
            }
        };
        // An unseen thread's posts, on their pages.
        assert_eq!(form("/t/10/99"), "/t/10?page=5");
        assert_eq!(form("/t/10/1"), "/t/10");
        assert_eq!(form("/c/news/4"), "/c/news/4");
    }

    #[test]
    fn contradicting_pairs_refuse_the_shape() {
        // Post 25 on page 1 of one thread, post 24 on page 2 of another: no one page size.
        let (outputs, clusters) = host(&[
            &["/t/5", "/t/5/25"],
            &["/t/6?page=2", "/t/6/24"],
            &["/t/7", "/t/7/4"],
        ]);
        assert!(post_pages(&outputs, &clusters).is_empty());
    }

    #[test]
    fn a_post_between_the_bounds_is_left_alone_and_thin_samples_write_page_one_only() {
        // Page 1 holds 12 and page 2 holds 30: k in [15, 29].
        let (outputs, clusters) = host(&[
            &["/t/5", "/t/5/12"],
            &["/t/6?page=2", "/t/6/30"],
            &["/t/7", "/t/7/4"],
        ]);
        let got = post_pages(&outputs, &clusters);
        assert_eq!(
            thread_pages(&got[0].0),
            ("/t/".into(), 1, "page".into(), 15, Some(29))
        );
        let engine = crate::canon::rules::SiteRewriter::new([&got[0].0]);
        let form = |p: &str| {
            let (path, query, _) = engine.rewrite_parts(p, None);
            (path.into_owned(), query.map(|q| q.into_owned()))
        };
        assert_eq!(form("/t/9/15"), ("/t/9".into(), None));
        // Page 1 at k = 20, page 2 at k = 15: left as it is.
        assert_eq!(form("/t/9/20"), ("/t/9/20".into(), None));
        assert_eq!(form("/t/9/30"), ("/t/9".into(), Some("page=2".into())));
        // Page 2 at k = 29, page 3 at k = 15.
        assert_eq!(form("/t/9/40"), ("/t/9/40".into(), None));

        // Only page 1 shown: posts up to the largest shown are page 1, nothing beyond.
        let (outputs, clusters) = host(&[
            &["/t/5", "/t/5/12"],
            &["/t/6", "/t/6/3"],
            &["/t/7", "/t/7/4"],
        ]);
        let got = post_pages(&outputs, &clusters);
        assert_eq!(
            thread_pages(&got[0].0),
            ("/t/".into(), 1, String::new(), 12, None)
        );
        let engine = crate::canon::rules::SiteRewriter::new([&got[0].0]);
        let (path, _, _) = engine.rewrite_parts("/t/9/11", None);
        assert_eq!(path, "/t/9");
        let (path, _, _) = engine.rewrite_parts("/t/9/13", None);
        assert_eq!(path, "/t/9/13");
    }

    #[test]
    fn two_threads_are_no_scheme_and_a_page_without_its_first_is_no_evidence() {
        let (outputs, clusters) = host(&[&["/t/5", "/t/5/12"], &["/t/6?page=2", "/t/6/30"]]);
        assert!(post_pages(&outputs, &clusters).is_empty());
        // Never the page form without a page: how page 1 is written is unknown.
        let (outputs, clusters) = host(&[
            &["/t/5?page=2", "/t/5/25"],
            &["/t/6?page=2", "/t/6/30"],
            &["/t/7?page=3", "/t/7/50"],
        ]);
        assert!(post_pages(&outputs, &clusters).is_empty());
    }
}
