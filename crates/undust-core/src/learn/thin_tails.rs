//! Thin evidence for a default view written as trailing segments
//! ([`SiteAction::DefaultViewTail`](crate::canon::rules::SiteAction::DefaultViewTail)): the
//! evidence is pooled over the tail's route, not counted per page.
//!
//! `super::segments` proposes a tail once [`MIN_MOVED_ID_VALUES`] distinct pages show it beside
//! the page without it. A 20% sample fetches both addresses of one page for one page in
//! twenty-five, so a Discourse host with a dozen categories shows `/c/slug/5/l/latest` beside
//! `/c/slug/5` for one category if any, although the software writes the tail on every category
//! page. The evidence for "`/l/latest` is the default of the route" is every instance of the
//! route the sample holds; the evidence against is a sibling view (`/l/top`) that is the page.
//! So the tail is taken on [`MIN_THIN_TAIL_PAGES`] pages when the route shows it as a scheme
//! ([`route_shows_default`]):
//!
//! - the sample writes the tail after at least [`MIN_MOVED_ID_VALUES`] distinct paths (a form of
//!   the route, not a link of one page);
//! - the tail's last segment is one value of a view selector: for some path of the route, the
//!   sample holds a sibling (`P/l/top` beside `P/l/latest`) in another cluster than `P` and
//!   `P` + tail, and no sibling in theirs (views that differ, of which the tail names the one
//!   the bare path shows).
//!
//! One merge of different pages still refuses the tail (`learn::site`), and a tail that sits
//! with another page of its item (XenForo's `/latest`) is refused by `super::segments`.

use rustc_hash::{FxHashMap, FxHashSet};

use super::site::{SmallClusters, MIN_MOVED_ID_VALUES};

/// A sample's path and query under the accepted actions.
type Output<'a> = (std::borrow::Cow<'a, str>, Option<std::borrow::Cow<'a, str>>);

/// Distinct pages shown beside their tail that suffice when the route shows the tail as its
/// default ([`route_shows_default`]).
pub(super) const MIN_THIN_TAIL_PAGES: usize = 1;

/// Whether the sample shows `tail` as the default view of its route, so that fewer than
/// [`MIN_MOVED_ID_VALUES`] pages shown beside it suffice (see the module documentation).
pub(super) fn route_shows_default(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
    tail: &str,
) -> bool {
    // The tail's head (`/l/` of `/l/latest`) and the view it names (`latest`).
    let Some(slash) = tail.rfind('/') else {
        return false;
    };
    let (head, view) = (&tail[..=slash], &tail[slash + 1..]);
    if view.is_empty() {
        return false;
    }
    let written: FxHashSet<&str> = outputs
        .iter()
        .filter_map(|(path, _)| path.strip_suffix(tail).filter(|rest| rest.len() > 1))
        .collect();
    if written.len() < MIN_MOVED_ID_VALUES {
        return false;
    }
    // The cluster of each sample in a small cluster; others are alone or in a cluster too large
    // to pair, and are not compared.
    let cluster_of: FxHashMap<u32, u64> = clusters
        .iter()
        .flat_map(|(&c, members)| members.iter().map(move |&m| (m, c)))
        .collect();
    // Per (route path, query): the clusters of its default forms and of its sibling views, and
    // whether a form is alone (a cluster of its own).
    #[derive(Default)]
    struct Forms {
        default_clusters: FxHashSet<u64>,
        default_alone: bool,
        sibling_clusters: FxHashSet<u64>,
        sibling_alone: bool,
    }
    let mut forms: FxHashMap<(&str, Option<&str>), Forms> = FxHashMap::default();
    for (i, (path, query)) in outputs.iter().enumerate() {
        let path: &str = path;
        let (base, is_default) = if let Some(base) = path
            .strip_suffix(tail)
            .filter(|base| written.contains(base))
        {
            (base, true)
        } else if written.contains(path) {
            (path, true)
        } else if let Some(base) =
            sibling_base(path, head, view).filter(|base| written.contains(base))
        {
            (base, false)
        } else {
            continue;
        };
        let entry = forms.entry((base, query.as_deref())).or_default();
        let cluster = cluster_of.get(&(i as u32));
        match (is_default, cluster) {
            (true, Some(&c)) => {
                entry.default_clusters.insert(c);
            }
            (true, None) => entry.default_alone = true,
            (false, Some(&c)) => {
                entry.sibling_clusters.insert(c);
            }
            (false, None) => entry.sibling_alone = true,
        }
    }
    let mut differs = false;
    for f in forms.values() {
        let shown_default = f.default_alone || !f.default_clusters.is_empty();
        let shown_sibling = f.sibling_alone || !f.sibling_clusters.is_empty();
        if !(shown_default && shown_sibling) {
            continue;
        }
        if !f.default_clusters.is_disjoint(&f.sibling_clusters) {
            // A sibling view is the page: the views do not differ there.
            return false;
        }
        differs = true;
    }
    differs
}

/// The path a sibling view of a tail is under: `path` is that path, `head` and one segment other
/// than `view` (`/c/x/5/l/top` with head `/l/` and view `latest` is under `/c/x/5`).
fn sibling_base<'p>(path: &'p str, head: &str, view: &str) -> Option<&'p str> {
    let (dir, last) = path.rsplit_once('/')?;
    if last.is_empty() || last == view {
        return None;
    }
    let with_slash = &path[..dir.len() + 1];
    let base = with_slash.strip_suffix(head)?;
    (base.len() > 1).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{learned, lu};
    use super::super::LabelledUrl;
    use crate::canon::rules::SiteAction;

    /// A Discourse-like board as a 20% sample shows it: of six categories, one fetched under
    /// both spellings (`/c/slug/N` and `/c/slug/N/l/latest`), the others under one, `top`
    /// views fetched beside two of them. `latest_is` gives the cluster of category 1's latest
    /// view, `top_is` that of category 2's top view, from the category's own cluster.
    fn board(latest_is: impl Fn(u64) -> u64, top_is: impl Fn(u64) -> u64) -> Vec<LabelledUrl> {
        let b = "https://talk.example";
        let mut s = Vec::new();
        for id in 1..=6u64 {
            let c = id * 10;
            let cat = format!("{b}/c/area-{id}/{id}");
            match id {
                1 => {
                    s.push(lu(&cat, c));
                    s.push(lu(&format!("{cat}/l/latest"), latest_is(c)));
                }
                2 | 3 => {
                    s.push(lu(&cat, c));
                    s.push(lu(&format!("{cat}/l/top"), top_is(c)));
                }
                _ => s.push(lu(&format!("{cat}/l/latest"), c)),
            }
            s.push(lu(&format!("{cat}/l/latest?page=2"), c + 2));
        }
        s
    }

    #[test]
    fn a_default_view_is_learned_from_its_route_on_thin_evidence() {
        let (actions, canon) = learned(&board(|c| c, |c| c + 1));
        assert!(
            actions.contains(&SiteAction::DefaultViewTail {
                tail: "/l/latest".into()
            }),
            "{actions:?}"
        );
        let b = "https://talk.example";
        assert_eq!(
            canon(&format!("{b}/c/new-area/77/l/latest")),
            format!("{b}/c/new-area/77")
        );
        assert_ne!(
            canon(&format!("{b}/c/new-area/77/l/top")),
            canon(&format!("{b}/c/new-area/77"))
        );
    }

    #[test]
    fn a_thin_default_view_is_refused_when_a_sibling_or_a_sample_contradicts_it() {
        let tail = |actions: &[SiteAction]| {
            actions
                .iter()
                .any(|a| matches!(a, SiteAction::DefaultViewTail { .. }))
        };
        // The one category shown both ways is another page under the tail.
        let (actions, _) = learned(&board(|c| c + 3, |c| c + 1));
        assert!(!tail(&actions), "{actions:?}");
        // The sibling view is the page too: the tail selects nothing the sample shows.
        let (actions, _) = learned(&board(|c| c, |c| c));
        assert!(!tail(&actions), "{actions:?}");
        // Without a sibling view fetched, one page is a coincidence.
        let alone: Vec<LabelledUrl> = board(|c| c, |c| c + 1)
            .into_iter()
            .filter(|l| !l.url.ends_with("/l/top"))
            .collect();
        let (actions, _) = learned(&alone);
        assert!(!tail(&actions), "{actions:?}");
    }
}
