//! Site-rule candidates for a front controller's other keys, once one of its keys has shown a
//! spelling: the software writes every key the same way, so what the sample proved on one key
//! needs only to be seen, not proved again, on its siblings.
//!
//! - A templated segment that spells the key's name ([`SiteAction::TemplatedSegmentToQuery`]
//!   with `before` = name + separator): SMF's output buffer writes `index.php?board=5.0` as
//!   `index.php/board,5.0.html` exactly as it writes `?topic=5.0` as `index.php/topic,5.0.html`.
//!   Another key the paths spell that way under the same directory, and that the script's own
//!   queries carry, gets the template.
//! - A default suffix ([`SiteAction::DefaultValueSuffix`]): SMF's request cleaner reads
//!   `board=5` as `board=5.0` as it reads `topic=5` as `topic=5.0`. Another key whose values the
//!   sample shows both bare and with a suffix of the learned kind gets the suffix.
//!
//! - An id written with its title ([`SiteAction::SlugInSegment`]): XenForo's router writes a
//!   forum as `/forums/a-title.5/` exactly as it writes a thread as `/threads/a-title.123/`.
//!   Another directory beside the learned one (one parent, one more segment) whose segments
//!   read as ids titled the same way gets the scheme.
//!
//! Boards are far fewer than topics (and forums than threads): a 20% sample shows few of them
//! written both ways, too few for the evidence a scheme needs on its own
//! ([`super::site::MIN_MOVED_ID_VALUES`] values).
//! `learn::site` measures these candidates like every other one, asks for one cluster that
//! shows the pair, and refuses them on one merge of different pages.

use std::borrow::Cow;

use rustc_hash::FxHashSet;

use super::segments::{read_by, with_bare_value};
use super::site::titled_id_samples;
use crate::canon::rules::site::{
    is_pair_number, query_safe_segment_value, titled_id, SegmentTemplate,
};
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (Cow<'a, str>, Option<Cow<'a, str>>);

/// Sibling candidates proposed per round, at most (a controller has a handful of keys).
const MAX_SIBLING_CANDIDATES: usize = 8;

/// Whether `key` can be a parameter name spelled inside a path segment: a short word.
fn is_key_word(key: &str) -> bool {
    (1..=24).contains(&key.len())
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && key.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Candidates for the siblings of the accepted templates and default suffixes, each with the
/// samples it may change.
pub(super) fn sibling_keys(
    outputs: &[Output<'_>],
    accepted: &[SiteAction],
) -> Vec<(SiteAction, Vec<u32>)> {
    let mut out: Vec<(SiteAction, Vec<u32>)> = Vec::new();
    for action in accepted {
        match action {
            SiteAction::TemplatedSegmentToQuery {
                dir,
                before,
                after,
                script,
                name,
                numbers,
                fixed,
                titled: false,
            } => {
                let Some(separator) = before.strip_prefix(name.as_str()) else {
                    continue;
                };
                if separator.is_empty() || separator.bytes().any(|b| b.is_ascii_alphanumeric()) {
                    continue;
                }
                // Keys the script's own queries carry.
                let mut keys: FxHashSet<&str> = FxHashSet::default();
                for (path, query) in outputs {
                    if path.as_ref() != script.as_str() {
                        continue;
                    }
                    for part in query.as_deref().into_iter().flat_map(|q| q.split('&')) {
                        if let Some((key, _)) = part.split_once('=') {
                            keys.insert(key);
                        }
                    }
                }
                // Keys the paths spell as the template does.
                let mut spelled: Vec<&str> = Vec::new();
                for (path, _) in outputs {
                    let Some(segment) = path.strip_prefix(dir.as_str()) else {
                        continue;
                    };
                    let Some(body) = segment.strip_suffix(after.as_str()) else {
                        continue;
                    };
                    let Some((key, value)) = body.split_once(separator) else {
                        continue;
                    };
                    if key != name
                        && !segment.contains('/')
                        && is_key_word(key)
                        && keys.contains(key)
                        && query_safe_segment_value(value)
                        && (!numbers || is_pair_number(value))
                        && !spelled.contains(&key)
                    {
                        spelled.push(key);
                    }
                }
                for key in spelled {
                    let sibling = SiteAction::TemplatedSegmentToQuery {
                        dir: dir.clone(),
                        before: format!("{key}{separator}"),
                        after: after.clone(),
                        script: script.clone(),
                        name: key.to_owned(),
                        numbers: *numbers,
                        fixed: fixed.clone(),
                        titled: false,
                    };
                    // The script itself must not read as the template (the rule file refuses it).
                    if SegmentTemplate::of(&sibling).is_none_or(|t| t.reads(script)) {
                        continue;
                    }
                    let samples = read_by(&sibling, outputs);
                    out.push((sibling, samples));
                }
            }
            SiteAction::DefaultValueSuffix { name, suffix } => {
                // The learned suffix's kind: its literal start and whether digits follow.
                let literal: String = suffix.chars().take_while(|c| !c.is_ascii_digit()).collect();
                let mut bare: FxHashSet<&str> = FxHashSet::default();
                let mut completed: FxHashSet<&str> = FxHashSet::default();
                for (_, query) in outputs {
                    for part in query.as_deref().into_iter().flat_map(|q| q.split('&')) {
                        let Some((key, value)) = part.split_once('=') else {
                            continue;
                        };
                        if key == name || !is_key_word(key) {
                            continue;
                        }
                        let digits = value.bytes().take_while(u8::is_ascii_digit).count();
                        if digits == 0 || digits > 19 {
                            continue;
                        }
                        let rest = &value[digits..];
                        if rest.is_empty() {
                            bare.insert(key);
                        } else if rest.starts_with(literal.as_str())
                            && rest[literal.len()..].bytes().all(|b| b.is_ascii_digit())
                        {
                            completed.insert(key);
                        }
                    }
                }
                let mut keys: Vec<&str> = bare.intersection(&completed).copied().collect();
                keys.sort_unstable();
                for key in keys {
                    let samples = with_bare_value(outputs, key);
                    out.push((
                        SiteAction::DefaultValueSuffix {
                            name: key.to_owned(),
                            suffix: suffix.clone(),
                        },
                        samples,
                    ));
                }
            }
            SiteAction::SlugInSegment {
                prefix,
                separator,
                id_first,
            } => {
                // `/forum/threads/` -> `/forum/`: the directory's parent, ending with `/`.
                let Some(parent) = prefix
                    .strip_suffix('/')
                    .and_then(|p| p.rfind('/').map(|slash| &prefix[..=slash]))
                else {
                    continue;
                };
                // Directories beside it whose next segment reads as a titled id.
                let mut beside: Vec<&str> = Vec::new();
                for (path, _) in outputs {
                    let Some(rest) = path.strip_prefix(parent) else {
                        continue;
                    };
                    let Some((dir, after)) = rest.split_once('/') else {
                        continue;
                    };
                    let sibling = &path[..parent.len() + dir.len() + 1];
                    let segment = after.split('/').next().unwrap_or("");
                    if sibling != prefix.as_str()
                        && is_key_word(dir)
                        && !beside.contains(&sibling)
                        && titled_id(segment, *separator, *id_first).is_some()
                    {
                        beside.push(sibling);
                    }
                }
                beside.sort_unstable();
                for sibling in beside {
                    let samples = titled_id_samples(outputs, sibling, *separator, *id_first);
                    out.push((
                        SiteAction::SlugInSegment {
                            prefix: sibling.to_owned(),
                            separator: *separator,
                            id_first: *id_first,
                        },
                        samples,
                    ));
                }
            }
            _ => {}
        }
    }
    out.retain(|(candidate, _)| !accepted.contains(candidate));
    out.truncate(MAX_SIBLING_CANDIDATES);
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{learned, lu};
    use super::super::LabelledUrl;
    use crate::canon::rules::SiteAction;

    /// An SMF-like forum: topics in both spellings on many pages, its few boards mostly in the
    /// path form, one board shown in both spellings and one bare beside its offset. `board_same`
    /// says whether those two boards' pairs are one page.
    fn forum(board_same: bool) -> Vec<LabelledUrl> {
        let b = "http://smf.example/forum/index.php";
        let mut s = Vec::new();
        for n in 100..160u64 {
            let first = n * 10;
            s.push(lu(&format!("{b}/topic,{n}.0.html"), first));
            if n % 2 == 0 {
                s.push(lu(&format!("{b}?topic={n}.0"), first));
            }
            if n % 3 == 0 {
                s.push(lu(&format!("{b}?topic={n}"), first));
            }
        }
        for board in 1..8u64 {
            let page = 100_000 + board * 10;
            s.push(lu(&format!("{b}/board,{board}.0.html"), page));
            s.push(lu(&format!("{b}/board,{board}.20.html"), page + 1));
        }
        let other = |c: u64| if board_same { c } else { c + 5 };
        s.push(lu(&format!("{b}?board=3.0"), other(100_030)));
        s.push(lu(&format!("{b}?board=5"), 100_050));
        s.push(lu(&format!("{b}?board=5.0"), other(100_050)));
        s
    }

    #[test]
    fn a_board_shown_once_in_both_spellings_gets_its_topics_template_and_default() {
        let (actions, canon) = learned(&forum(true));
        let board = SiteAction::TemplatedSegmentToQuery {
            dir: "/forum/index.php/".into(),
            before: "board,".into(),
            after: ".html".into(),
            script: "/forum/index.php".into(),
            name: "board".into(),
            numbers: false,
            fixed: String::new(),
            titled: false,
        };
        let default = SiteAction::DefaultValueSuffix {
            name: "board".into(),
            suffix: ".0".into(),
        };
        assert!(actions.contains(&board), "{actions:?}");
        assert!(actions.contains(&default), "{actions:?}");
        let b = "http://smf.example/forum/index.php";
        assert_eq!(
            canon(&format!("{b}/board,9.0.html")),
            format!("{b}?board=9.0")
        );
        assert_eq!(canon(&format!("{b}?board=9")), format!("{b}?board=9.0"));
        assert_ne!(
            canon(&format!("{b}/board,9.20.html")),
            canon(&format!("{b}?board=9.0"))
        );
    }

    #[test]
    fn a_sibling_contradicted_by_its_one_pair_is_refused() {
        let (actions, _) = learned(&forum(false));
        assert!(
            !actions.iter().any(|a| matches!(
                a,
                SiteAction::TemplatedSegmentToQuery { name, .. }
                    | SiteAction::DefaultValueSuffix { name, .. } if name == "board"
            )),
            "{actions:?}"
        );
    }

    /// A XenForo-like forum: many threads written with and without their titles
    /// (`/threads/a-title.123/`), few forums, one of them shown both ways; `forum_same` says
    /// whether that pair is one page.
    fn titled_forum(forum_same: bool) -> Vec<LabelledUrl> {
        let b = "http://xf.example/community";
        let mut s = Vec::new();
        for t in 100..140u64 {
            s.push(lu(&format!("{b}/threads/word-{t}-title.{t}/"), t));
            if t % 2 == 0 {
                s.push(lu(&format!("{b}/threads/{t}/"), t));
            }
            s.push(lu(
                &format!("{b}/threads/word-{t}-title.{t}/page-2"),
                t + 1000,
            ));
        }
        for f in 1..6u64 {
            s.push(lu(&format!("{b}/forums/board-{f}-name.{f}/"), 5000 + f));
            s.push(lu(
                &format!("{b}/forums/board-{f}-name.{f}/page-2"),
                5100 + f,
            ));
        }
        let pair = if forum_same { 5003 } else { 5200 };
        s.push(lu(&format!("{b}/forums/3/"), pair));
        s
    }

    #[test]
    fn a_forum_shown_once_with_and_without_its_title_gets_the_threads_scheme() {
        let (actions, canon) = learned(&titled_forum(true));
        let forums = SiteAction::SlugInSegment {
            prefix: "/community/forums/".into(),
            separator: '.',
            id_first: false,
        };
        assert!(actions.contains(&forums), "{actions:?}");
        let b = "http://xf.example/community";
        assert_eq!(
            canon(&format!("{b}/forums/other-name.9/")),
            canon(&format!("{b}/forums/9/"))
        );
        let (actions, _) = learned(&titled_forum(false));
        assert!(!actions.contains(&forums), "{actions:?}");
    }
}
