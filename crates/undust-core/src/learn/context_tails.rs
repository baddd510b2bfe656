//! Site-rule candidates for an item's page reached from a section of the site
//! ([`SiteAction::ContextTail`]): the segments after an item's id name where the visitor came
//! from, and the page is the item's whatever they say. Piwigo writes a photo as
//! `picture.php?/123/category/5`, `/123/most_visited` or `/123/tags/4-sea` (the section only
//! changes the links to the previous and next photo); Magento writes a product as
//! `/catalog/product/view/id/5/category/3`.
//!
//! Found in pairs of addresses of one duplicate cluster, with one query, whose paths share a
//! directory and an item segment starting with a digit and differ after it, each continuing
//! with a tail that names a section or ending there ([`context_item_end`]). A directory is
//! proposed when at least [`MIN_MOVED_ID_VALUES`] distinct items show it, then measured by
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

/// Candidates for sections dropped after an item's segment, each with the samples the action
/// reads ([`context_item_end`]): searched in the clusters' distinct outputs.
pub(super) fn context_tails(
    outputs: &[Output<'_>],
    distinct: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    // dir -> distinct items shown with two spellings.
    let mut proposals: FxHashMap<&str, FxHashSet<&str>> = FxHashMap::default();
    for members in distinct.values() {
        for (path_a, path_b) in path_pairs_with_one_query(outputs, members) {
            if let Some((dir, item)) =
                shared_item(path_a, path_b).or_else(|| shared_item(path_b, path_a))
            {
                proposals.entry(dir).or_default().insert(item);
            }
        }
    }
    let mut out: Vec<(usize, SiteAction, Vec<u32>)> = Vec::new();
    for (dir, items) in proposals {
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
