//! Query parameters written as `key/value` path pairs after a script, recognized from the shape
//! of a host's paths ([`SiteAction::PathPairsToQuery`], `canon::rules::path_pairs`).
//!
//! osCommerce's search-engine safe URLs, Zen Cart's and Loaded Commerce's alike, write
//! `product_info.php?cPath=3_10&products_id=5` as `product_info.php/cPath/3_10/products_id/5`.
//! Read as a path, each such page is a path of its own, and a parameter that only sets the
//! breadcrumb (`cPath` beside `products_id`) is a path segment that no parameter rule can drop.
//! [`proposals`] finds the scripts whose path info is mostly whole pairs, written by several
//! paths, whose keys the same script also takes as query parameters in the sample: the site is
//! shown reading them as parameters. The caller checks what the reading merges against the
//! duplicate clusters, a single merge of different pages refusing it, as for
//! [`super::query_path`].

use rustc_hash::{FxHashMap, FxHashSet};
use url::Url;

use crate::canon::rules::files::names_a_page_file;
use crate::canon::rules::path_pairs::pairs_of;
use crate::canon::rules::SiteAction;

/// Distinct pair paths a script must show: one or two are a coincidence of a path that happens
/// to have an even number of word segments, several are how the site writes its links.
const MIN_PAIR_PATHS: usize = 3;
/// Share of a script's path-info samples that must be whole pairs: the script's path info is
/// its parameters, not a path with a pair-like tail now and then.
const MIN_PAIR_SHARE: f64 = 0.5;
/// Scripts proposed, the most shown first: a host routes through a handful of scripts.
const MAX_PAIR_SCRIPTS: usize = 8;

/// Per script (a page file, `canon::rules::files`): samples with path info, those whose path info is whole pairs, the distinct pair
/// paths and keys, and the keys the script takes in its query.
#[derive(Default)]
struct ScriptPairs<'a> {
    path_info: usize,
    written: Vec<u32>,
    paths: FxHashSet<&'a str>,
    keys: FxHashSet<&'a str>,
    query_keys: FxHashSet<&'a str>,
}

/// The end of the script in `path`: the first segment that names a page file
/// (`product_info.php`), when more segments follow it.
fn script_end(path: &str) -> Option<usize> {
    let mut start = 1;
    while let Some(len) = path[start..].find('/') {
        if names_a_page_file(&path[start..start + len]) {
            return Some(start + len);
        }
        start += len + 1;
    }
    None
}

/// [`SiteAction::PathPairsToQuery`] candidates of a host's samples (`urls`, in sample order),
/// each with the samples it changes, most shown first.
pub(super) fn proposals<'a>(urls: impl Iterator<Item = &'a Url>) -> Vec<(SiteAction, Vec<u32>)> {
    let mut scripts: FxHashMap<&'a str, ScriptPairs<'a>> = FxHashMap::default();
    for (i, url) in urls.enumerate() {
        let path = url.path();
        if let Some(query) = url.query() {
            // A script's own query: the keys it is shown to read as parameters.
            if names_a_page_file(&path[path.rfind('/').map_or(0, |s| s + 1)..]) {
                let entry = scripts.entry(path).or_default();
                for part in query.split('&') {
                    let name = part.split_once('=').map_or(part, |(n, _)| n);
                    if !name.is_empty() {
                        entry.query_keys.insert(name);
                    }
                }
            }
        }
        let Some(end) = script_end(path) else {
            continue;
        };
        let entry = scripts.entry(&path[..end]).or_default();
        entry.path_info += 1;
        let rest = &path[end + 1..];
        if let Some(pairs) = pairs_of(rest) {
            entry.written.push(i as u32);
            entry.paths.insert(rest);
            entry.keys.extend(pairs.iter().map(|&(key, _)| key));
        }
    }
    let mut shown: Vec<(&str, Vec<u32>)> = scripts
        .into_iter()
        .filter(|(_, s)| {
            s.paths.len() >= MIN_PAIR_PATHS
                && s.written.len() as f64 >= MIN_PAIR_SHARE * s.path_info as f64
                && s.keys.iter().any(|key| s.query_keys.contains(key))
        })
        .map(|(script, s)| (script, s.written))
        .collect();
    shown.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(b.0)));
    shown.truncate(MAX_PAIR_SCRIPTS);
    shown
        .into_iter()
        .map(|(script, written)| {
            let action = SiteAction::PathPairsToQuery {
                script: script.to_owned(),
            };
            (action, written)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proposed(list: &[&str]) -> Vec<(SiteAction, usize)> {
        let urls: Vec<Url> = list.iter().map(|u| Url::parse(u).unwrap()).collect();
        proposals(urls.iter())
            .into_iter()
            .map(|(a, s)| (a, s.len()))
            .collect()
    }

    #[test]
    fn a_script_writing_its_parameters_as_pairs_is_proposed() {
        let got = proposed(&[
            "http://s.example/catalog/product_info.php/cPath/3_10/products_id/5",
            "http://s.example/catalog/product_info.php/products_id/6",
            "http://s.example/catalog/product_info.php/manufacturers_id/2/products_id/7",
            "http://s.example/catalog/product_info.php?products_id=8",
            "http://s.example/catalog/index.php/cPath/3",
        ]);
        assert_eq!(
            got,
            vec![(
                SiteAction::PathPairsToQuery {
                    script: "/catalog/product_info.php".into(),
                },
                3
            )]
        );
    }

    #[test]
    fn pairs_the_script_never_takes_as_parameters_are_not_proposed() {
        // Path info that happens to be pairs (a wiki's subpages), its keys never in a query.
        assert!(proposed(&[
            "http://w.example/index.php/Help/Editing",
            "http://w.example/index.php/Help/Links",
            "http://w.example/index.php/Talk/Main",
            "http://w.example/index.php?title=Main&action=edit",
        ])
        .is_empty());
        // Mostly not pairs: a script whose path info is a path.
        assert!(proposed(&[
            "http://w.example/index.php/a/1",
            "http://w.example/index.php/a/2",
            "http://w.example/index.php/a/3",
            "http://w.example/index.php/docs/guide/install",
            "http://w.example/index.php/docs/guide/upgrade",
            "http://w.example/index.php/docs/guide/remove",
            "http://w.example/index.php/docs/faq/x",
            "http://w.example/index.php?a=1",
        ])
        .is_empty());
    }
}
