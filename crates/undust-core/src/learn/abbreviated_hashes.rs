//! Site-rule candidates for object ids written abbreviated ([`SiteAction::AbbreviatedHash`]):
//! git hosts (Gitea, GitLab, GitHub, cgit) answer a commit, a tree or a blob at its full
//! 40-digit id and at any unambiguous prefix of it, and their own pages link both
//! (`/o/r/commit/f3e1a67f98` in a list, the full id in the commit's permalink).
//!
//! Found in pairs of addresses of one duplicate cluster, with one query, whose paths differ in
//! one segment only: lowercase hexadecimal in both, one a prefix of the other
//! ([`abbreviation_of`]). The segment before it (`commit`) and the shorter length are proposed;
//! the shortest length shown for one segment is kept, so every longer spelling is cut to it.
//! A full id that begins with another segment's seven or more hexadecimal digits by chance is
//! as unlikely as a collision of that prefix, so one such pair is evidence of the scheme;
//! `learn::site` then measures the candidate like every site action, and one merge of different
//! pages refuses it.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::site::{most_shown_first, path_pairs_with_one_query, SmallClusters};
use crate::canon::rules::site::{
    abbreviate_hashes, is_object_id, MAX_HASH_ABBREVIATION, MIN_HASH_ABBREVIATION,
};
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (Cow<'a, str>, Option<Cow<'a, str>>);

/// Fewest digits of the full id an abbreviation is shown beside: a SHA-1 id.
const MIN_FULL_ID: usize = 40;

/// The segment before, and the length of, the abbreviation one of two paths writes where the
/// other writes the full object id, when the paths differ in that segment only; `None`
/// otherwise.
fn abbreviation_of<'p>(a: &'p str, b: &'p str) -> Option<(&'p str, usize)> {
    if a == b {
        return None;
    }
    let mut previous: Option<&str> = None;
    let mut found: Option<(&str, usize)> = None;
    let mut segments_b = b.split('/');
    for segment_a in a.split('/') {
        let segment_b = segments_b.next()?;
        if segment_a != segment_b {
            let (short, long) = if segment_a.len() < segment_b.len() {
                (segment_a, segment_b)
            } else {
                (segment_b, segment_a)
            };
            let abbreviated = found.is_none()
                && short.len() >= usize::from(MIN_HASH_ABBREVIATION)
                && short.len() <= usize::from(MAX_HASH_ABBREVIATION)
                && long.len() >= MIN_FULL_ID
                && long.starts_with(short)
                && is_object_id(long);
            if !abbreviated {
                return None;
            }
            found = Some((previous.filter(|p| !p.is_empty())?, short.len()));
        }
        previous = Some(segment_a);
    }
    if segments_b.next().is_some() {
        return None;
    }
    found
}

/// Candidates for abbreviated object ids, each with the samples whose path holds an object id
/// after the proposed segment: searched in the clusters' distinct outputs, the most shown
/// first.
pub(super) fn abbreviated_hashes(
    outputs: &[Output<'_>],
    distinct: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    // Most hosts write no object id at all: their clusters are passed after one look at each
    // path.
    let full_id = |u: u32| {
        outputs[u as usize]
            .0
            .split('/')
            .any(|segment| segment.len() >= MIN_FULL_ID && is_object_id(segment))
    };
    // Segment before the id -> (shortest abbreviation, clusters showing one).
    let mut proposals: FxHashMap<&str, (usize, usize)> = FxHashMap::default();
    for members in distinct.values() {
        if members.len() < 2 || !members.iter().any(|&u| full_id(u)) {
            continue;
        }
        let mut shown_here: Vec<&str> = Vec::new();
        for (path_a, path_b) in path_pairs_with_one_query(outputs, members) {
            let Some((after, length)) = abbreviation_of(path_a, path_b) else {
                continue;
            };
            let entry = proposals.entry(after).or_insert((length, 0));
            entry.0 = entry.0.min(length);
            if !shown_here.contains(&after) {
                shown_here.push(after);
                entry.1 += 1;
            }
        }
    }
    let out = proposals
        .into_iter()
        .map(|(after, (length, clusters))| {
            // At most MAX_HASH_ABBREVIATION (39): checked in `abbreviation_of`.
            let length = u8::try_from(length).unwrap_or(MAX_HASH_ABBREVIATION);
            // The samples the engine's own cut changes.
            let rule = [(after.to_owned(), length)];
            let samples = outputs
                .iter()
                .enumerate()
                .filter(|(_, (path, _))| abbreviate_hashes(&rule, path).is_some())
                .map(|(i, _)| i as u32)
                .collect();
            let action = SiteAction::AbbreviatedHash {
                after: after.to_owned(),
                length,
            };
            (clusters, action, samples)
        })
        .collect();
    most_shown_first(out)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{learned, lu};
    use super::super::LabelledUrl;
    use super::*;

    const FULL: &str = "f3e1a67f984c504e29c5293461d29721d5924f03";

    #[test]
    fn an_abbreviation_beside_its_full_id_is_found() {
        let full = format!("/o/r/commit/{FULL}");
        assert_eq!(
            abbreviation_of("/o/r/commit/f3e1a67f98", &full),
            Some(("commit", 10))
        );
        assert_eq!(
            abbreviation_of(&full, "/o/r/commit/f3e1a67"),
            Some(("commit", 7))
        );
        let deep = format!("/o/r/src/commit/{FULL}/a.md");
        assert_eq!(
            abbreviation_of("/o/r/src/commit/f3e1a67f98/a.md", &deep),
            Some(("commit", 10))
        );
    }

    #[test]
    fn other_differences_are_no_abbreviation() {
        let full = format!("/o/r/commit/{FULL}");
        // Too short to be told from a number, not a prefix, another directory too, capitals.
        assert_eq!(abbreviation_of("/o/r/commit/f3e1a6", &full), None);
        assert_eq!(abbreviation_of("/o/r/commit/a3e1a67f98", &full), None);
        assert_eq!(abbreviation_of("/o/x/commit/f3e1a67f98", &full), None);
        let upper = full.to_uppercase();
        assert_eq!(abbreviation_of("/O/R/COMMIT/F3E1A67F98", &upper), None);
        // Both short: two abbreviations of unknown ids.
        assert_eq!(
            abbreviation_of("/o/r/commit/f3e1a67", "/o/r/commit/f3e1a67f98"),
            None
        );
        // A path one segment longer.
        assert_eq!(abbreviation_of("/o/r/commit/f3e1a67f98/x", &full), None);
    }

    #[test]
    fn the_shortest_abbreviation_shown_is_proposed_with_the_samples_holding_ids() {
        let full = |i: usize| format!("/o/r/commit/{i:x}{}", &FULL[1..]);
        let outputs: Vec<Output<'_>> = vec![
            (Cow::Owned(full(1)), None),
            (Cow::Owned(full(1)[..22].to_owned()), None),
            (Cow::Owned(full(2)), None),
            (Cow::Owned(full(2)[..19].to_owned()), None),
            (Cow::Borrowed("/o/r/issues"), None),
        ];
        let distinct: SmallClusters = [(1, vec![0, 1]), (2, vec![2, 3]), (3, vec![4])]
            .into_iter()
            .collect();
        let got = abbreviated_hashes(&outputs, &distinct);
        assert_eq!(
            got,
            vec![(
                SiteAction::AbbreviatedHash {
                    after: "commit".into(),
                    length: 7,
                },
                vec![0, 1, 2],
            )]
        );
    }

    /// A git host's commits under their full ids, in several repositories, and the one commit
    /// in `shown` of them also under its ten-digit abbreviation (a fifth of the pages seldom
    /// holds both links of more). `same` says whether those pairs are one page.
    fn git_host(shown: usize, same: bool) -> Vec<LabelledUrl> {
        let b = "https://git.example";
        let mut s = Vec::new();
        for repo in 0..6u64 {
            for commit in 0..12u64 {
                let x = (repo * 1000 + commit + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let id = format!("{x:016x}{:016x}{:08x}", x.rotate_left(17) ^ 0x5555, x >> 32);
                let page = repo * 100 + commit;
                s.push(lu(&format!("{b}/o/r{repo}/commit/{id}"), page));
                if repo < shown as u64 && commit == 0 {
                    let other = if same { page } else { page + 50 };
                    s.push(lu(&format!("{b}/o/r{repo}/commit/{}", &id[..10]), other));
                }
            }
            s.push(lu(&format!("{b}/o/r{repo}/issues"), repo * 100 + 99));
        }
        s
    }

    #[test]
    fn an_abbreviation_shown_beside_its_full_id_is_learned_for_every_repository() {
        let (actions, canon) = learned(&git_host(1, true));
        let want = SiteAction::AbbreviatedHash {
            after: "commit".into(),
            length: 10,
        };
        assert!(actions.contains(&want), "{actions:?}");
        // Another repository, a commit the sample does not hold.
        let full = "f3e1a67f984c504e29c5293461d29721d5924f03";
        assert_eq!(
            canon(&format!("https://git.example/o/r9/commit/{full}")),
            canon("https://git.example/o/r9/commit/f3e1a67f98")
        );
    }

    #[test]
    fn an_abbreviation_shown_as_another_page_is_refused() {
        let (actions, _) = learned(&git_host(1, false));
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, SiteAction::AbbreviatedHash { .. })),
            "{actions:?}"
        );
    }
}
