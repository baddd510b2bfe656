//! Site-rule candidates for an id written as the last segment of a menu route
//! ([`SiteAction::RoutedIdToQuery`]), found in pairs of addresses of one duplicate cluster and
//! then measured by `learn::site` like every other site action.
//!
//! Joomla 3's friendly URLs write an article as its menu item's route and `id-alias`
//! (`/index.php/news/1607-a-title`), and the front controller serves it without them
//! (`/index.php?option=com_content&view=article&id=1607`). The route differs from one menu item
//! to the next, so no one directory holds the ids, and the query form has parts of its own
//! (`option`, `view`) that the route form does not write. A cluster holding `S?…name=N…` beside
//! a path `D` + route + `/N-title` without a query proposes `(D, S, the other parts, name)` with
//! that route, for every directory `D` above the route; the shape needs
//! [`MIN_MOVED_ID_VALUES`] distinct ids over its routes, and lists only the routes shown, so a
//! route of another component written the same way (`/contact-us/5-jane`) is left alone unless
//! the sample joined it to the query form; the shape also holds the id segment's file extension
//! (none, or `.html`), so a page type written under the same routes with another one (a shop's
//! category `/fr/5-shoes` beside its product `/fr/5-red-boots.html`) is left alone too. Of the
//! directories the same pairs show, the deepest
//! is kept (the routes are then the shortest names of the menu items). An id directly under
//! the directory is the empty route (a shop's product outside any category folder, or once
//! another action dropped the folder: the route, proposed on the outputs, is read after it). A
//! shape shown under one route only is a directory (`/threads/5-title`), which the tree's rules
//! and the moved ids learn for every id under it; a menu is at least [`MIN_ROUTES`] routes.

use rustc_hash::{FxHashMap, FxHashSet};

use super::segments::query_without_part;
use super::site::{most_shown_first, SmallClusters, MIN_MOVED_ID_VALUES};
use crate::canon::rules::routed_ids::{routed_id, MAX_ROUTES};
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (std::borrow::Cow<'a, str>, Option<std::borrow::Cow<'a, str>>);

/// Fewest routes a shape must show: one route is a directory, not a menu.
const MIN_ROUTES: usize = 2;

/// Routed-id candidates tested per round (the most shown first).
const MAX_ROUTED_CANDIDATES: usize = 4;

/// Whether a query value is a bare number (all ASCII digits, at most 19): a database id.
fn is_numeric_id(v: &str) -> bool {
    !v.is_empty() && v.len() <= 19 && v.bytes().all(|b| b.is_ascii_digit())
}

/// Routed-id candidates the clusters show under the accepted actions (`outputs`), each with the
/// samples whose path it reads.
pub(super) fn routed_ids(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    // (dir, script, the query form's other parts, name, position, extension) -> route -> ids
    // shown.
    type Shape<'s> = (&'s str, &'s str, String, &'s str, usize, &'s str);
    let mut shown: FxHashMap<Shape<'_>, FxHashMap<&str, FxHashSet<&str>>> = FxHashMap::default();
    for members in clusters.values() {
        for &a in members {
            let (script, query) = &outputs[a as usize];
            let script: &str = script;
            let Some(q) = query.as_deref() else { continue };
            for (at, part) in q.split('&').enumerate() {
                let Some((name, value)) = part.split_once('=') else {
                    continue;
                };
                if name.is_empty() || !is_numeric_id(value) {
                    continue;
                }
                for &b in members {
                    let (path, own_query) = &outputs[b as usize];
                    let path: &str = path;
                    // The route form writes the page with the id alone: no query of its own.
                    if b == a
                        || path == script
                        || own_query.as_deref().is_some_and(|q| !q.is_empty())
                    {
                        continue;
                    }
                    // Every directory above the route: `/`, `/index.php/`, …
                    for (slash, _) in path.match_indices('/') {
                        let dir = &path[..=slash];
                        match routed_id(dir, path) {
                            Some((route, id, extension)) if id == value => {
                                let rest = query_without_part(q, at);
                                shown
                                    .entry((dir, script, rest, name, at, extension))
                                    .or_default()
                                    .entry(route)
                                    .or_default()
                                    .insert(id);
                            }
                            Some(_) => {}
                            None => break,
                        }
                    }
                }
            }
        }
    }
    // Per query form, the directory whose routes show the most ids; on a tie, the one whose
    // routes show the most (route, id) pairs, then the deepest. Every path under a deeper
    // directory is under the shallower one too, with a route one segment longer, so the
    // shallower shows more pairs only where it reads paths the deeper cannot: a shop's product
    // under a language folder and directly under the root (`/en/shoes/5-x.html`, `/5-x.html`)
    // is read at `/` (routes `en/shoes` and the empty route), not at `/en/`. Where both read
    // the same pairs (Joomla's `/index.php/news/5-x`; a product under its category folder and
    // directly under the language folder, `/en/shoes/5-x.html` and `/en/5-x.html`), the
    // deepest gives the shortest route names.
    type Form<'s> = (&'s str, String, &'s str, usize, &'s str);
    type Best<'s> = (usize, usize, &'s str, Vec<&'s str>);
    let mut best: FxHashMap<Form<'_>, Best<'_>> = FxHashMap::default();
    for ((dir, script, rest, name, at, extension), routes) in shown {
        let ids: FxHashSet<&str> = routes.values().flatten().copied().collect();
        if ids.len() < MIN_MOVED_ID_VALUES || !(MIN_ROUTES..=MAX_ROUTES).contains(&routes.len()) {
            continue;
        }
        let pairs: usize = routes.values().map(FxHashSet::len).sum();
        let mut listed: Vec<&str> = routes.into_keys().collect();
        listed.sort_unstable();
        let better = |(n, p, d, _): &Best<'_>| (ids.len(), pairs, dir.len()) > (*n, *p, d.len());
        let form = (script, rest, name, at, extension);
        if best.get(&form).is_none_or(better) {
            best.insert(form, (ids.len(), pairs, dir, listed));
        }
    }
    let mut out: Vec<(usize, SiteAction, Vec<u32>)> = Vec::new();
    for ((script, rest, name, at, extension), (ids, _, dir, routes)) in best {
        let listed: FxHashSet<&str> = routes.iter().copied().collect();
        let samples: Vec<u32> = outputs
            .iter()
            .enumerate()
            .filter(|(_, (path, _))| {
                routed_id(dir, path)
                    .is_some_and(|(route, _, e)| listed.contains(route) && e == extension)
            })
            .map(|(i, _)| i as u32)
            .collect();
        let fixed: Vec<String> = if rest.is_empty() {
            Vec::new()
        } else {
            rest.split('&').map(str::to_owned).collect()
        };
        let action = SiteAction::RoutedIdToQuery {
            dir: dir.to_owned(),
            routes: routes.iter().map(|r| (*r).to_owned()).collect(),
            script: script.to_owned(),
            fixed,
            name: name.to_owned(),
            at,
            extension: Some(extension.to_owned()),
        };
        out.push((ids, action, samples));
    }
    let mut ranked = most_shown_first(out);
    ranked.truncate(MAX_ROUTED_CANDIDATES);
    ranked
}

#[cfg(test)]
mod tests {
    use crate::learn::test_support::host;

    use super::*;

    const ARTICLE: &str = "/index.php?option=com_content&view=article&id=";

    #[test]
    fn articles_under_menu_routes_are_read_as_their_query_form() {
        let a = |id: u32| format!("{ARTICLE}{id}");
        let (a1, a2, a3) = (a(1607), a(1612), a(88));
        let (outputs, clusters) = host(&[
            &[&a1, "/index.php/news/1607-plastic-track"],
            &[&a2, "/index.php/news/1612-season-build"],
            &[&a3, "/index.php/blog/tech/88-gadget-review"],
            &["/index.php/contact-us/5-jane"],
            &["/index.php/news/1700-unseen-article"],
        ]);
        let got = routed_ids(&outputs, &clusters);
        let want = SiteAction::RoutedIdToQuery {
            dir: "/index.php/".into(),
            routes: vec!["blog/tech".into(), "news".into()],
            script: "/index.php".into(),
            fixed: vec!["option=com_content".into(), "view=article".into()],
            name: "id".into(),
            at: 2,
            extension: Some(String::new()),
        };
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, want);
        // The samples it reads: the listed routes' ids, not the contact.
        assert_eq!(got[0].1, vec![1, 3, 5, 7]);
        let engine = crate::canon::rules::SiteRewriter::new([&want]);
        let form = |p: &str| {
            let (path, query, _) = engine.rewrite_parts(p, None);
            format!("{path}?{}", query.unwrap_or_default())
        };
        assert_eq!(form("/index.php/news/1700-unseen-article"), a(1700));
        assert_eq!(
            form("/index.php/contact-us/5-jane"),
            "/index.php/contact-us/5-jane?"
        );
    }

    #[test]
    fn a_route_form_is_read_with_the_extension_it_was_shown_with() {
        // PrestaShop: products under a language folder (with or without their category), and
        // categories under the same folder, written without `.html`.
        let p = |id: u32| format!("/index.php?id_product={id}&controller=product");
        let (p1, p2, p3) = (p(11), p(12), p(13));
        let (outputs, clusters) = host(&[
            &[&p1, "/fr/11-red-boots.html"],
            &[&p2, "/fr/shoes/12-blue-boots.html"],
            &[&p3, "/fr/13-green-boots.html"],
            &[
                "/fr/12-summer-shoes",
                "/index.php?id_category=12&controller=category",
            ],
            &["/fr/14-winter-shoes"],
        ]);
        let got = routed_ids(&outputs, &clusters);
        assert_eq!(got.len(), 1, "{got:?}");
        let SiteAction::RoutedIdToQuery { extension, .. } = &got[0].0 else {
            panic!("{got:?}");
        };
        assert_eq!(extension.as_deref(), Some(".html"));
        // It reads the products, not the categories.
        assert_eq!(got[0].1, vec![1, 3, 5]);
        let engine = crate::canon::rules::SiteRewriter::new([&got[0].0]);
        let (path, query, _) = engine.rewrite_parts("/fr/12-summer-shoes", None);
        assert_eq!((path.as_ref(), query), ("/fr/12-summer-shoes", None));
    }

    #[test]
    fn the_directory_read_is_the_one_whose_routes_show_the_most_pairs() {
        // A product is linked under its category folder and directly under the language
        // folder: `/en/` reads both as `/` does, with the shorter routes (`shoes`, and the
        // empty route for `/en/11-red-boots.html`).
        let p = |id: u32| format!("/index.php?id_product={id}&controller=product");
        let (p1, p2, p3) = (p(11), p(12), p(13));
        let (outputs, clusters) = host(&[
            &[&p1, "/en/shoes/11-red-boots.html", "/en/11-red-boots.html"],
            &[&p2, "/en/hats/12-blue-cap.html", "/en/12-blue-cap.html"],
            &[&p3, "/en/shoes/13-green-boots.html"],
        ]);
        let got = routed_ids(&outputs, &clusters);
        assert_eq!(got.len(), 1, "{got:?}");
        let SiteAction::RoutedIdToQuery { dir, routes, .. } = &got[0].0 else {
            panic!("{got:?}");
        };
        assert_eq!(dir, "/en/");
        assert_eq!(routes, &["", "hats", "shoes"]);
    }

    #[test]
    fn a_product_outside_any_folder_is_read_under_the_empty_route() {
        // Under the root and under category folders: only `/` reads them all.
        let p = |id: u32| format!("/index.php?id_product={id}&controller=product");
        let (p1, p2, p3) = (p(11), p(12), p(13));
        let (outputs, clusters) = host(&[
            &[&p1, "/11-red-boots.html"],
            &[&p2, "/hats/12-blue-cap.html"],
            &[&p3, "/13-green-boots.html", "/en/shoes/13-green-boots.html"],
        ]);
        let got = routed_ids(&outputs, &clusters);
        assert_eq!(got.len(), 1, "{got:?}");
        let SiteAction::RoutedIdToQuery { dir, routes, .. } = &got[0].0 else {
            panic!("{got:?}");
        };
        assert_eq!(dir, "/");
        assert_eq!(routes, &["", "en/shoes", "hats"]);
    }

    #[test]
    fn one_route_is_a_directory_not_a_menu() {
        let (outputs, clusters) = host(&[
            &["/showthread.php?t=1", "/threads/1-first-thread"],
            &["/showthread.php?t=2", "/threads/2-second-thread"],
            &["/showthread.php?t=3", "/threads/3-third-thread"],
        ]);
        assert!(routed_ids(&outputs, &clusters).is_empty());
    }

    #[test]
    fn two_ids_are_no_scheme_and_a_route_with_a_query_is_no_evidence() {
        let (outputs, clusters) = host(&[
            &["/index.php?view=article&id=1", "/news/1-first-news"],
            &["/index.php?view=article&id=2", "/blog/2-second-post"],
            &["/index.php?view=article&id=3", "/news/3-third-news?print=1"],
        ]);
        assert!(routed_ids(&outputs, &clusters).is_empty());
    }
}
