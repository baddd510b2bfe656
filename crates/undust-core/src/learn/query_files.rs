//! Bundles for a page whose file name is written as the query string, with its id inside
//! ([`SiteAction::QueryValueToPath`] without a name, then [`SiteAction::TemplatedSegmentToQuery`]),
//! found in pairs of addresses of one duplicate cluster and then measured by `learn::site` as
//! one candidate.
//!
//! Forum software renders a thread a second time in a plain archive and names its pages like
//! files: MyBB's `archive/index.php/thread-5.html`, Discuz!'s `archiver/tid-5.html`. Where the
//! server passes no path info, or the archiver's links are not rewritten, the same file name
//! is the query string: `archive/index.php?thread-5.html`, `archiver/?tid-5.html&page=2`. Read
//! as parameters, that is one key without a value, different on every thread, so neither a
//! dropped parameter nor a templated segment reaches the thread it renders
//! (`showthread.php?tid=5`, `forum.php?mod=viewthread&tid=5`). Written as the path it stands
//! for (under the script's directory when the script is one, else as the script's path info)
//! it is the templated segment the path-info spelling shows, and neither action merges anything
//! alone: the file-name path is no address of the crawl.
//!
//! So the samples are read once with such a part moved into the path, the templated-segment
//! search (`super::segments`) runs on that reading, and each template it finds under a moved
//! part's directory is proposed together with the move. The template keeps its own threshold
//! ([`super::site::MIN_MOVED_ID_VALUES`] distinct ids), and one merge of different pages refuses
//! the bundle (`learn::site`).

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::segments::{query_without_part, templated_segments};
use super::site::SmallClusters;
use crate::canon::rules::site::{keyless_id, route_safe_value};
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (Cow<'a, str>, Option<Cow<'a, str>>);

/// The part of `query` that is a file name written as the query string, with its position:
/// one part without `=`, readable as one path segment ([`route_safe_value`], no `/`: a route
/// with folders is `super::query_path`'s), holding a digit (an id for a template to read), and
/// not an id followed by a title (`?142097-Title`, [`keyless_id`]'s).
fn file_in_query(query: &str) -> Option<(usize, &str)> {
    let mut found = None;
    for (i, part) in query.split('&').enumerate() {
        if part.contains('=') || part.is_empty() {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some((i, part));
    }
    let (at, part) = found?;
    let file = !part.contains('/')
        && route_safe_value(part)
        && part.bytes().any(|b| b.is_ascii_digit())
        && keyless_id(part).is_none();
    file.then_some((at, part))
}

/// Where a script's query-string file names are written as a path: under the script when it is
/// a directory (`/archiver/`), else as its path info (`/archive/index.php/`).
fn file_directory(script: &str) -> String {
    if script.ends_with('/') {
        script.to_owned()
    } else {
        format!("{script}/")
    }
}

/// Bundles of a query-string file name moved into the path and the template that reads the id
/// in it, the most shown first (as [`templated_segments`] orders them), each with the samples
/// the template reads. `taken` says whether an action is accepted already: a bundle naming one
/// is left to the single searches.
pub(super) fn query_file_bundles(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
    taken: impl Fn(&SiteAction) -> bool,
) -> Vec<(Vec<SiteAction>, Vec<u32>)> {
    // Directory written -> script whose query-string file names it holds, `None` when two
    // scripts write into one directory (`/a/` and `/a`'s path info): no move names both.
    let mut scripts: FxHashMap<String, Option<&str>> = FxHashMap::default();
    // Samples with such a file name, read with it moved (most hosts have none: nothing is
    // copied for them).
    let mut moved: Vec<(usize, Output<'_>)> = Vec::new();
    for (i, (path, query)) in outputs.iter().enumerate() {
        let Some(q) = query.as_deref() else { continue };
        let Some((at, file)) = file_in_query(q) else {
            continue;
        };
        let script: &str = path;
        let dir = file_directory(script);
        let rest = query_without_part(q, at);
        moved.push((
            i,
            (
                Cow::Owned(format!("{dir}{file}")),
                (!rest.is_empty()).then_some(Cow::Owned(rest)),
            ),
        ));
        scripts
            .entry(dir)
            .and_modify(|held| {
                if *held != Some(script) {
                    *held = None;
                }
            })
            .or_insert(Some(script));
    }
    if moved.is_empty() {
        return Vec::new();
    }
    let mut read: Vec<Output<'_>> = outputs
        .iter()
        .map(|(path, query)| {
            (
                Cow::Borrowed(path.as_ref()),
                query.as_deref().map(Cow::Borrowed),
            )
        })
        .collect();
    for (i, output) in moved {
        read[i] = output;
    }
    templated_segments(&read, clusters)
        .into_iter()
        .filter_map(|(template, samples)| {
            let SiteAction::TemplatedSegmentToQuery { dir, .. } = &template else {
                return None;
            };
            let script = (*scripts.get(dir)?)?;
            let moved = SiteAction::QueryValueToPath {
                path: script.to_owned(),
                name: String::new(),
                prefix: dir.clone(),
                namespace_separator: None,
            };
            (!taken(&moved) && !taken(&template)).then(|| (vec![moved, template], samples))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{learned, lu};
    use super::super::LabelledUrl;
    use super::*;

    /// A Discuz!-like forum whose archiver links are not rewritten: thread pages
    /// (`forum.php?mod=viewthread&tid=N`, later pages `&page=2`), most of them also fetched as
    /// the archiver's `archiver/?tid-N.html` (`&page=2`), forum listings likewise
    /// (`mod=forumdisplay&fid=F`, `archiver/?fid-F.html`). `same` says whether thread `n`'s
    /// archiver rendering is the thread (false: another content, as a wrongly served page).
    fn archiver_forum(same: impl Fn(u64) -> bool) -> Vec<LabelledUrl> {
        let b = "http://bbs.example/bbs";
        let mut s = Vec::new();
        for n in 200..260u64 {
            let c = n * 10;
            if n % 3 != 0 {
                s.push(lu(&format!("{b}/forum.php?mod=viewthread&tid={n}"), c));
            }
            if n % 3 != 1 {
                let archived = if same(n) { c } else { c + 9 };
                s.push(lu(&format!("{b}/archiver/?tid-{n}.html"), archived));
            }
            if n % 4 == 0 {
                s.push(lu(
                    &format!("{b}/forum.php?mod=viewthread&tid={n}&page=2"),
                    c + 2,
                ));
                s.push(lu(&format!("{b}/archiver/?tid-{n}.html&page=2"), c + 2));
            }
        }
        for f in 2..14u64 {
            s.push(lu(
                &format!("{b}/forum.php?mod=forumdisplay&fid={f}"),
                90_000 + f,
            ));
            s.push(lu(&format!("{b}/archiver/?fid-{f}.html"), 90_000 + f));
        }
        s
    }

    #[test]
    fn a_file_name_written_as_the_query_is_read_as_the_page_it_renders() {
        let (actions, canon) = learned(&archiver_forum(|_| true));
        assert!(
            actions.contains(&SiteAction::QueryValueToPath {
                path: "/bbs/archiver/".into(),
                name: String::new(),
                prefix: "/bbs/archiver/".into(),
                namespace_separator: None,
            }),
            "{actions:?}"
        );
        let b = "http://bbs.example/bbs";
        // Threads and forums never seen in training.
        assert_eq!(
            canon(&format!("{b}/archiver/?tid-7.html")),
            canon(&format!("{b}/forum.php?mod=viewthread&tid=7"))
        );
        assert_eq!(
            canon(&format!("{b}/archiver/?tid-7.html&page=3")),
            canon(&format!("{b}/forum.php?mod=viewthread&tid=7&page=3"))
        );
        assert_eq!(
            canon(&format!("{b}/archiver/?fid-9.html")),
            canon(&format!("{b}/forum.php?mod=forumdisplay&fid=9"))
        );
        // Another thread, and another page of the thread, stay apart.
        assert_ne!(
            canon(&format!("{b}/archiver/?tid-7.html")),
            canon(&format!("{b}/forum.php?mod=viewthread&tid=8"))
        );
        assert_ne!(
            canon(&format!("{b}/archiver/?tid-7.html&page=2")),
            canon(&format!("{b}/forum.php?mod=viewthread&tid=7"))
        );
    }

    #[test]
    fn a_file_name_whose_page_is_another_content_is_not_read_as_the_thread() {
        // Every fifth thread's archiver page is another content.
        let (actions, canon) = learned(&archiver_forum(|n| n % 5 != 0));
        let b = "http://bbs.example/bbs";
        assert_ne!(
            canon(&format!("{b}/archiver/?tid-7.html")),
            canon(&format!("{b}/forum.php?mod=viewthread&tid=7")),
            "{actions:?}"
        );
    }

    #[test]
    fn a_file_name_is_the_one_part_without_a_value() {
        assert_eq!(file_in_query("tid-5.html&page=2"), Some((0, "tid-5.html")));
        assert_eq!(file_in_query("page=2&tid-5.html"), Some((1, "tid-5.html")));
        assert_eq!(
            file_in_query("thread-5401.html"),
            Some((0, "thread-5401.html"))
        );
        // No id, two names, a route with folders, an id with its title: not a file name.
        assert_eq!(file_in_query("print"), None);
        assert_eq!(file_in_query("tid-5.html&fid-2.html"), None);
        assert_eq!(file_in_query("threads/a.5/"), None);
        assert_eq!(file_in_query("142097-some-title"), None);
        assert_eq!(file_in_query("t=5"), None);
    }

    #[test]
    fn a_directory_holds_its_files_and_a_script_its_path_info() {
        assert_eq!(file_directory("/bbs/archiver/"), "/bbs/archiver/");
        assert_eq!(
            file_directory("/forum/archive/index.php"),
            "/forum/archive/index.php/"
        );
    }
}
