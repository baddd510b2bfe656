//! Paths written as the query string, recognized from the shape of a host's queries.
//!
//! Some software routes every page through one script whose query string is the page's path:
//! Piwigo's `picture.php?/123/category/5-name` and `index.php?/category/5/start-15`
//! (`section_init.inc.php` reads the first query key as the path, or `PATH_INFO` when
//! `question_mark_in_urls` is off), CodeIgniter's `index.php?/blog/view/5`
//! (`URI::_parse_request_uri` takes a query starting with `/` as the URI when the request's path
//! is the script). Read as parameters, every such page is one query key without a value, so no
//! node of the pattern tree repeats and nothing about the pages is learned.
//!
//! [`proposals`] finds the scripts whose queries are mostly such paths and proposes
//! [`SiteAction::QueryPath`] for each, which reads them as path segments (the rewriter writes
//! `/picture.php/123/category/5`, the path-info spelling of the same page): the site rules
//! learned next and the pattern tree then see segments, and the engine applies the same action
//! before them. The recognition is by shape, not by duplicates: the action is a reading of the
//! URL, and what it may merge (a page written both ways) is checked against the duplicate
//! clusters by the caller, a single merge of different pages refusing it.

use rustc_hash::{FxHashMap, FxHashSet};
use url::Url;

use crate::canon::rules::site::query_path_part;
use crate::canon::rules::SiteAction;

/// Share of a script's samples with a query whose query starts with a path
/// ([`query_path_part`]): the script's queries are paths, not an option of some pages (a
/// `?/x` link among `?id=…` pages is not a scheme).
pub(super) const MIN_QUERY_PATH_SHARE: f64 = 0.5;
/// Distinct paths a script's queries must write: one or two such queries are a coincidence,
/// several are the way the site routes.
pub(super) const MIN_QUERY_PATHS: usize = 3;
/// Scripts proposed, the most shown first: a host routes through a handful of scripts.
const MAX_QUERY_PATH_SCRIPTS: usize = 8;

/// Per script: samples with a query, and the samples and distinct paths of queries that are paths.
#[derive(Default)]
struct ScriptQueries<'a> {
    queried: usize,
    written: Vec<u32>,
    paths: FxHashSet<&'a str>,
}

/// [`SiteAction::QueryPath`] candidates of a host's samples (`urls`, in sample order), each with
/// the samples it changes, most shown first. A script's canonical form is written back in the
/// query spelling ([`SiteAction::QueryPath`]'s `written_back`) unless the samples write its
/// path-info spelling more often: the spelling the site writes is the one it serves.
pub(super) fn proposals<'a>(
    urls: impl Iterator<Item = &'a Url> + Clone,
) -> Vec<(SiteAction, Vec<u32>)> {
    let mut scripts: FxHashMap<&'a str, ScriptQueries<'a>> = FxHashMap::default();
    for (i, url) in urls.clone().enumerate() {
        let Some(query) = url.query() else { continue };
        let path = url.path();
        // A script is a file: `/?/x` read as `//x` would not be a path of the same page.
        if path.ends_with('/') {
            continue;
        }
        let entry = scripts.entry(path).or_default();
        entry.queried += 1;
        if let Some((written, _)) = query_path_part(query) {
            entry.written.push(i as u32);
            entry.paths.insert(written);
        }
    }
    let mut shown: Vec<(&str, Vec<u32>)> = scripts
        .into_iter()
        .filter(|(_, s)| {
            s.paths.len() >= MIN_QUERY_PATHS
                && s.written.len() as f64 >= MIN_QUERY_PATH_SHARE * s.queried as f64
        })
        .map(|(path, s)| (path, s.written))
        .collect();
    shown.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(b.0)));
    shown.truncate(MAX_QUERY_PATH_SCRIPTS);
    if shown.is_empty() {
        return Vec::new();
    }
    // Samples in the path-info spelling (`script/…`) of each script shown.
    let mut path_info = vec![0usize; shown.len()];
    for url in urls {
        let path = url.path();
        for (count, (script, _)) in path_info.iter_mut().zip(&shown) {
            if path.len() > script.len()
                && path.starts_with(script)
                && path.as_bytes()[script.len()] == b'/'
            {
                *count += 1;
            }
        }
    }
    shown
        .into_iter()
        .zip(path_info)
        .map(|((path, written), path_info)| {
            let action = SiteAction::QueryPath {
                path: path.to_owned(),
                written_back: written.len() >= path_info,
            };
            (action, written)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<Url> {
        list.iter().map(|u| Url::parse(u).unwrap()).collect()
    }

    fn proposed(list: &[&str]) -> Vec<(SiteAction, usize)> {
        proposals(urls(list).iter())
            .into_iter()
            .map(|(a, s)| (a, s.len()))
            .collect()
    }

    #[test]
    fn a_script_whose_queries_are_paths_is_proposed() {
        let got = proposed(&[
            "http://g.example/picture.php?/1/category/5",
            "http://g.example/picture.php?/2-img_7/category/5&metadata",
            "http://g.example/picture.php?/3",
            "http://g.example/picture.php?utm_source=x",
            "http://g.example/index.php?/category/5",
            "http://g.example/index.php",
        ]);
        assert_eq!(
            got,
            vec![(
                SiteAction::QueryPath {
                    path: "/picture.php".into(),
                    written_back: true,
                },
                3
            )]
        );
    }

    #[test]
    fn the_spelling_the_site_writes_more_is_the_canonical_one() {
        let queries = [
            "http://g.example/picture.php?/1/category/5",
            "http://g.example/picture.php?/2/category/5",
            "http://g.example/picture.php?/3",
        ];
        let path_info = [
            "http://g.example/picture.php/1/category/5",
            "http://g.example/picture.php/4",
            "http://g.example/picture.php/5",
            "http://g.example/picture.php/6/category/7",
        ];
        // Mostly queries (a default Piwigo, which does not route the path-info spelling):
        // written back; mostly path-info (`question_mark_in_urls` off, CodeIgniter with
        // rewriting): kept as path-info.
        let mostly_queries: Vec<&str> = queries.iter().chain(&path_info[..1]).copied().collect();
        let mostly_path_info: Vec<&str> = queries.iter().chain(&path_info).copied().collect();
        for (list, written_back) in [(mostly_queries, true), (mostly_path_info, false)] {
            assert_eq!(
                proposed(&list),
                vec![(
                    SiteAction::QueryPath {
                        path: "/picture.php".into(),
                        written_back,
                    },
                    3
                )],
                "{list:?}"
            );
        }
    }

    #[test]
    fn parameters_routes_without_a_slash_and_rare_paths_are_not_proposed() {
        // Ordinary parameters, XenForo-style routes (no leading `/`, handled as a moved
        // value), a path query on a minority of a script's queries, too few distinct paths,
        // a directory rather than a script, and paths that do not read as segments.
        for list in [
            &[
                "http://a.example/index.php?id=1",
                "http://a.example/index.php?id=2",
                "http://a.example/index.php?id=3",
            ][..],
            &[
                "http://a.example/index.php?threads/a.1/",
                "http://a.example/index.php?threads/b.2/",
                "http://a.example/index.php?threads/c.3/",
            ],
            &[
                "http://a.example/index.php?/a",
                "http://a.example/index.php?/b",
                "http://a.example/index.php?/c",
                "http://a.example/index.php?id=1",
                "http://a.example/index.php?id=2",
                "http://a.example/index.php?id=3",
                "http://a.example/index.php?id=4",
            ],
            &[
                "http://a.example/index.php?/a",
                "http://a.example/index.php?/b",
                "http://a.example/index.php?/a&x=1",
            ],
            &[
                "http://a.example/?/a",
                "http://a.example/?/b",
                "http://a.example/?/c",
            ],
            &[
                "http://a.example/index.php?/a=1",
                "http://a.example/index.php?/a//b",
                "http://a.example/index.php?/../c",
                "http://a.example/index.php?/d+e",
            ],
        ] {
            assert_eq!(proposed(list), vec![], "{list:?}");
        }
    }
}
