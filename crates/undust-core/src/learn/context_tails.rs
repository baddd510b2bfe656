//! Site-rule candidates for an item's page reached from a section of the site
//! ([`SiteAction::ContextTail`]): the segments after an item's id name where the visitor came
//! from, and the page is the item's whatever they say. Piwigo writes a photo as
//! `picture.php?/123/category/5`, `/123/most_visited` or `/123/tags/4-sea` (the section only
//! changes the links to the previous and next photo); Magento writes a product as
//! `/catalog/product/view/id/5/category/3`.
//!
//! Found in pairs of addresses of one duplicate cluster, with one query, whose paths share a
//! directory and an item segment starting with a digit and differ after it, each continuing
//! with a tail that names a section or ending there ([`context_item_end`]). A section is a name
//! the site uses for many items: a tail whose first segment the pairs show beside one item only
//! is the item's own (NodeBB's `/topic/5/its-title/27`, the title and the position of post 27,
//! which is the topic's first page only while the topic is short). A directory is proposed when
//! at least [`MIN_MOVED_ID_VALUES`] distinct items show it with sections, then measured by
//! `learn::site` like every other site action; one merge of different pages refuses it (a
//! thread's `/threads/5/page-2` is its second page, not thread 5 reached from `page-2`).

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};

use super::site::{
    most_shown_first, path_pairs_with_one_query, SmallClusters, MIN_MOVED_ID_VALUES,
};
use crate::canon::rules::site::{context_item_end, is_context_tail};
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (Cow<'a, str>, Option<Cow<'a, str>>);

/// Context-tail candidates tested per round (the most shown first).
const MAX_CONTEXT_CANDIDATES: usize = 4;

/// The directory and item segment two paths of one page share, when they differ only in what
/// follows the item: `(dir, item)` for `dir` + `item` + tail (or nothing) in both, `dir` at
/// least one segment, `item` the first segment after it that starts with an ASCII digit, each
/// non-empty tail a section ([`is_context_tail`]) and the two tails different.
fn shared_item<'p>(a: &'p str, b: &'p str) -> Option<(&'p str, &'p str)> {
    // The first segment after the first one that starts with a digit: the item.
    let mut start = a.get(1..)?.find('/')? + 2;
    loop {
        let end = a[start..].find('/').map_or(a.len(), |s| start + s);
        let segment = &a[start..end];
        if segment.starts_with(|c: char| c.is_ascii_digit()) {
            let (dir, item) = (&a[..start], segment);
            let tail_a = &a[end..];
            let tail_b = b.strip_prefix(&a[..end])?;
            if tail_a == tail_b
                || !(tail_b.is_empty() || tail_b.starts_with('/'))
                || !(tail_a.is_empty() || is_context_tail(tail_a))
                || !(tail_b.is_empty() || is_context_tail(tail_b))
            {
                return None;
            }
            return Some((dir, item));
        }
        if end == a.len() {
            return None;
        }
        start = end + 1;
    }
}

/// The first segment of the tail of `path` after its item (which ends at byte `at`), empty
/// when nothing follows the item.
fn section(path: &str, at: usize) -> &str {
    path[at..].split('/').nth(1).unwrap_or("")
}

/// Candidates for sections dropped after an item's segment, each with the samples the action
/// reads ([`context_item_end`]): searched in the clusters' distinct outputs.
pub(super) fn context_tails(
    outputs: &[Output<'_>],
    distinct: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    // dir -> (item, the first segment of each of the two tails, empty for none) of each pair.
    let mut pairs: FxHashMap<&str, Vec<(&str, [&str; 2])>> = FxHashMap::default();
    for members in distinct.values() {
        for (path_a, path_b) in path_pairs_with_one_query(outputs, members) {
            let Some((dir, item)) =
                shared_item(path_a, path_b).or_else(|| shared_item(path_b, path_a))
            else {
                continue;
            };
            let at = dir.len() + item.len();
            pairs
                .entry(dir)
                .or_default()
                .push((item, [section(path_a, at), section(path_b, at)]));
        }
    }
    let mut out: Vec<(usize, SiteAction, Vec<u32>)> = Vec::new();
    for (dir, pairs) in pairs {
        // A section is shown beside two items at least.
        let mut items_of: FxHashMap<&str, FxHashSet<&str>> = FxHashMap::default();
        for &(item, sections) in &pairs {
            for section in sections.into_iter().filter(|s| !s.is_empty()) {
                items_of.entry(section).or_default().insert(item);
            }
        }
        let is_section = |s: &str| s.is_empty() || items_of.get(s).is_some_and(|i| i.len() >= 2);
        let items: FxHashSet<&str> = pairs
            .iter()
            .filter(|(_, sections)| sections.iter().all(|s| is_section(s)))
            .map(|&(item, _)| item)
            .collect();
        if items.len() < MIN_MOVED_ID_VALUES {
            continue;
        }
        let samples: Vec<u32> = outputs
            .iter()
            .enumerate()
            .filter(|(_, (path, _))| context_item_end(dir, path).is_some())
            .map(|(i, _)| i as u32)
            .collect();
        out.push((
            items.len(),
            SiteAction::ContextTail {
                dir: dir.to_owned(),
            },
            samples,
        ));
    }
    let mut ranked = most_shown_first(out);
    ranked.truncate(MAX_CONTEXT_CANDIDATES);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sections_of_one_item_share_it() {
        assert_eq!(
            shared_item(
                "/g/picture.php/123/category/5",
                "/g/picture.php/123/most_visited"
            ),
            Some(("/g/picture.php/", "123"))
        );
        assert_eq!(
            shared_item("/g/picture.php/123", "/g/picture.php/123/tags/4-sea"),
            Some(("/g/picture.php/", "123"))
        );
        assert_eq!(
            shared_item("/g/picture.php/123/tags/4-sea", "/g/picture.php/123"),
            Some(("/g/picture.php/", "123"))
        );
    }

    /// NodeBB seed 122 from a fifth of its pages: a topic's title and a post's position
    /// (`/topic/5/its-title/27`) were read as a section the topic was reached from, because
    /// short topics show them beside the topic; the topic's first page and its second were
    /// merged (78 pairs of different pages). Sections are shared by items, titles are not.
    #[test]
    fn a_tail_beside_one_item_only_is_the_items_own_not_a_section() {
        let propose = |paths: &[(String, u64)]| {
            let outputs: Vec<Output<'_>> = paths
                .iter()
                .map(|(p, _)| (Cow::Borrowed(p.as_str()), None))
                .collect();
            let mut distinct: SmallClusters = FxHashMap::default();
            for (i, (_, cluster)) in paths.iter().enumerate() {
                distinct.entry(*cluster).or_default().push(i as u32);
            }
            context_tails(&outputs, &distinct)
                .into_iter()
                .map(|(action, _)| action)
                .collect::<Vec<_>>()
        };
        let mut gallery = Vec::new();
        let mut topics = Vec::new();
        for n in 11..15u64 {
            let section = ["category/5", "most_visited"][n as usize % 2];
            gallery.push((format!("/g/picture.php/{n}"), n));
            gallery.push((format!("/g/picture.php/{n}/{section}"), n));
            topics.push((format!("/forum/topic/{n}"), n));
            topics.push((format!("/forum/topic/{n}/title-of-{n}/27"), n));
        }
        assert_eq!(
            propose(&gallery),
            vec![SiteAction::ContextTail {
                dir: "/g/picture.php/".into()
            }]
        );
        assert_eq!(propose(&topics), vec![]);
    }

    #[test]
    fn a_number_after_the_item_or_another_item_is_no_section() {
        // A post or page number is a position, not a section.
        assert_eq!(shared_item("/t/123/4", "/t/123"), None);
        // Another item.
        assert_eq!(shared_item("/p/123/x", "/p/1234/x"), None);
        // No directory before the item.
        assert_eq!(shared_item("/2024/05/a", "/2024/06/a"), None);
        // One path.
        assert_eq!(shared_item("/p/5/a", "/p/5/a"), None);
    }
}
