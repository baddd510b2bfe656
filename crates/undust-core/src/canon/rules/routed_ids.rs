//! An id written as the last segment of a menu route, read back as the query form of its page
//! ([`SiteAction::RoutedIdToQuery`](super::SiteAction::RoutedIdToQuery)).
//!
//! Joomla 3's search-engine-friendly URLs (and Joomla 4's with "Remove IDs from URLs" off) write
//! an article as its menu item's route and then `id-alias`: `/index.php/news/1607-a-title` (or
//! `/news/1607-a-title` with URL rewriting) is
//! `/index.php?option=com_content&view=article&id=1607`. The route is a name somebody gave a menu
//! item, different for every category, so no one directory holds the ids (a templated segment
//! needs one); but a host has few menu items, and every article under one of them is read the
//! same way. The query form is the canonical one: it is computable from the route form (the id
//! is all the query needs) while the route cannot be computed from the query.
//!
//! PrestaShop writes a product's category folder only when the product has a default
//! category (`/shoes/5-red-boots.html`, else `/5-red-boots.html`), and a host may drop the
//! folder altogether (another site action): the id directly under the directory is the empty
//! route, listed as `""` beside the others when the sample showed it there.
//!
//! A rule names the routes the sample showed it on, so a route of another component written the
//! same way (`/contact-us/5-jane`, a contact, not article 5) is never read as an article unless
//! the sample showed it there. It also names the file extension its segments were shown with
//! (`.html`, or none): software writes each page type with its own, and one route may hold two
//! types. PrestaShop writes a product `/fr/5-a-name.html` and a category `/fr/5-a-name` under the
//! same language folder, and product 5 is not category 5.

use super::files::file_extension;
use super::site::titled_id;

/// Most routes one rule lists: a host's menu is a few dozen items; a table larger than this is
/// not a menu.
pub const MAX_ROUTES: usize = 256;

/// A compiled routed id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RoutedId {
    /// Where the routes start: begins and ends with `/`.
    dir: String,
    /// The routes (one or more segments, no slash at either end), sorted.
    routes: Vec<String>,
    /// The path of the query form.
    script: String,
    /// The query form's parts other than the id's, in order.
    fixed: Vec<String>,
    /// The parameter holding the id.
    name: String,
    /// Where the id's part goes among `fixed`.
    at: usize,
    /// The file extension of the id's segment (`.html`, or empty for none); `None` (rule files
    /// written before it was recorded) reads every extension.
    extension: Option<String>,
}

impl RoutedId {
    pub(crate) fn new(
        dir: &str,
        routes: &[String],
        script: &str,
        fixed: &[String],
        name: &str,
        at: usize,
        extension: Option<&str>,
    ) -> Self {
        let mut routes = routes.to_vec();
        routes.sort_unstable();
        routes.dedup();
        RoutedId {
            dir: dir.to_owned(),
            routes,
            script: script.to_owned(),
            fixed: fixed.to_vec(),
            name: name.to_owned(),
            at: at.min(fixed.len()),
            extension: extension.map(str::to_owned),
        }
    }

    /// The query form of `path` when it is a listed route and a titled id (`N-title`,
    /// [`titled_id`]): the script and its query, the URL's own query after the form's parts.
    pub(crate) fn apply(&self, path: &str, query: Option<&str>) -> Option<(String, String)> {
        let (route, id, extension) = routed_id(&self.dir, path)?;
        if self.extension.as_deref().is_some_and(|e| e != extension) {
            return None;
        }
        self.routes
            .binary_search_by(|r| r.as_str().cmp(route))
            .ok()?;
        let own = query.filter(|q| !q.is_empty());
        let mut q = String::with_capacity(
            self.fixed.iter().map(|p| p.len() + 1).sum::<usize>()
                + self.name.len()
                + id.len()
                + 2
                + own.map_or(0, str::len),
        );
        let id_part = |q: &mut String| {
            q.push_str(&self.name);
            q.push('=');
            q.push_str(id);
        };
        for (i, part) in self.fixed.iter().enumerate() {
            if i == self.at {
                id_part(&mut q);
                q.push('&');
            }
            q.push_str(part);
            q.push('&');
        }
        if self.at >= self.fixed.len() {
            id_part(&mut q);
        } else {
            q.pop();
        }
        if let Some(own) = own {
            q.push('&');
            q.push_str(own);
        }
        Some((self.script.clone(), q))
    }
}

/// The route, the id and the segment's file extension (empty for none, [`file_extension`]) of
/// `path` under `dir`: `dir` + route + `/` + segment, the route one or more non-empty segments,
/// or `dir` + segment, the empty route; the segment is an id before a title ([`titled_id`]).
/// The software writes the title; a bare number is not read, so a path another action writes
/// with the id alone (a moved id's `/news/5`) is never a route again and the rewrite stays a
/// fixpoint.
pub fn routed_id<'p>(dir: &str, path: &'p str) -> Option<(&'p str, &'p str, &'p str)> {
    let rest = path.strip_prefix(dir)?;
    let (route, segment) = match rest.rfind('/') {
        Some(slash) => (&rest[..slash], &rest[slash + 1..]),
        None => ("", rest),
    };
    // A slash before the segment leaves a route of non-empty segments.
    if segment.len() < rest.len() && route.split('/').any(str::is_empty) {
        return None;
    }
    let extension = file_extension(segment).unwrap_or("");
    Some((route, titled_id(segment, '-', true)?, extension))
}

/// Why a routed id of a rule file is malformed, or `None`.
pub fn routed_id_error(
    dir: &str,
    routes: &[String],
    script: &str,
    fixed: &[String],
    name: &str,
    at: usize,
    extension: Option<&str>,
) -> Option<&'static str> {
    if !dir.starts_with('/') || !dir.ends_with('/') || dir.contains(['?', '#']) {
        return Some("a routed id's directory starts and ends with / and has no ? or #");
    }
    if routes.is_empty() || routes.len() > MAX_ROUTES {
        return Some("a routed id lists between 1 and 256 routes");
    }
    let route_ok =
        |r: &String| r.is_empty() || (!r.contains(['?', '#']) && !r.split('/').any(str::is_empty));
    if !routes.iter().all(route_ok) {
        return Some("a route is empty, or one or more non-empty segments without ? or #");
    }
    if !script.starts_with('/') || script.contains(['?', '#']) {
        return Some("a routed id's script starts with / and has no ? or #");
    }
    // The query form must not read as a route again, so the rewrite is a fixpoint.
    if routed_id(dir, script).is_some_and(|(route, _, _)| routes.iter().any(|r| r == route)) {
        return Some("a routed id's script must not itself be a listed route and an id");
    }
    if name.is_empty() || name.contains(['&', '=', '#']) {
        return Some("a routed id's parameter name is non-empty without & = #");
    }
    let part_ok = |p: &String| !p.is_empty() && !p.contains(['&', '#']);
    if !fixed.iter().all(part_ok) || at > fixed.len() {
        return Some("a routed id's fixed query parts are non-empty without & or #, and its position is among them");
    }
    if extension.is_some_and(|e| !e.is_empty() && !super::site::is_extension(e)) {
        return Some("a routed id's extension is empty or a dot and 1 to 8 letters or digits");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joomla() -> RoutedId {
        RoutedId::new(
            "/index.php/",
            &["news".into(), "blog/tech".into()],
            "/index.php",
            &["option=com_content".into(), "view=article".into()],
            "id",
            2,
            Some(""),
        )
    }

    #[test]
    fn an_article_under_a_listed_route_is_its_query_form() {
        let r = joomla();
        let form = |p: &str, q: Option<&str>| r.apply(p, q);
        let want = Some((
            "/index.php".to_owned(),
            "option=com_content&view=article&id=1607".to_owned(),
        ));
        assert_eq!(form("/index.php/news/1607-a-title", None), want);
        // A bare id is not the software's route form (another action may write it).
        assert_eq!(form("/index.php/news/1607", None), None);
        // Nested menu items are routes of several segments.
        assert_eq!(
            form("/index.php/blog/tech/12-gadget-review", Some("start=5")).map(|(_, q)| q),
            Some("option=com_content&view=article&id=12&start=5".to_owned())
        );
        // Not a listed route, not an id, no route at all, a typed reference or a date.
        assert_eq!(form("/index.php/contact-us/5-jane", None), None);
        assert_eq!(form("/index.php/news/a-title", None), None);
        // The empty route is read only where listed.
        assert_eq!(form("/index.php/1607-a-title", None), None);
        assert_eq!(form("/index.php/news/2024-05", None), None);
        assert_eq!(form("/index.php//news/5-five-things", None), None);
        assert_eq!(form("/other/news/5-five-things", None), None);
    }

    #[test]
    fn an_id_directly_under_the_directory_is_the_empty_route_where_listed() {
        // A shop's product under its category's folder, or under none.
        let shop = RoutedId::new(
            "/",
            &["".into(), "shoes".into()],
            "/index.php",
            &["controller=product".into()],
            "id_product",
            0,
            Some(".html"),
        );
        let q = |p: &str| shop.apply(p, None).map(|(_, q)| q);
        let want = Some("id_product=5&controller=product".to_owned());
        assert_eq!(q("/5-red-boots.html"), want);
        assert_eq!(q("/shoes/5-red-boots.html"), want);
        assert_eq!(q("/boots/5-red-boots.html"), None);
        assert_eq!(q("/5-red-boots"), None);
        assert_eq!(q("/"), None);
        assert_eq!(q("//5-red-boots.html"), None);
        assert!(routed_id_error("/", &["".into()], "/index.php", &[], "id", 0, None).is_none());
        // The script itself never reads as a route and an id.
        assert_eq!(routed_id("/", "/index.php"), None);
    }

    #[test]
    fn the_id_is_written_where_the_query_form_has_it() {
        let first = RoutedId::new("/", &["n".into()], "/", &["a=1".into()], "id", 0, None);
        assert_eq!(first.apply("/n/3-three-pigs", None).unwrap().1, "id=3&a=1");
        let only = RoutedId::new("/", &["n".into()], "/index.php", &[], "id", 0, None);
        assert_eq!(only.apply("/n/3-three-pigs", Some("")).unwrap().1, "id=3");
    }

    #[test]
    fn a_route_reads_only_the_extension_it_was_shown_with() {
        // A shop's product under a language folder, and a category under the same folder.
        let product = |extension: Option<&str>| {
            RoutedId::new(
                "/",
                &["fr".into(), "fr/shoes".into()],
                "/index.php",
                &["controller=product".into()],
                "id_product",
                0,
                extension,
            )
        };
        let html = product(Some(".html"));
        let q = |r: &RoutedId, p: &str| r.apply(p, None).map(|(_, q)| q);
        let want = Some("id_product=5&controller=product".to_owned());
        assert_eq!(q(&html, "/fr/5-red-boots.html"), want);
        assert_eq!(q(&html, "/fr/shoes/5-red-boots.html"), want);
        // Category 5, written without the extension, is not product 5; nor another type.
        assert_eq!(q(&html, "/fr/5-boots-and-shoes"), None);
        assert_eq!(q(&html, "/fr/5-boots.php"), None);
        // Shown without one, it reads only segments without one.
        let bare = product(Some(""));
        assert_eq!(q(&bare, "/fr/5-boots-and-shoes"), want);
        assert_eq!(q(&bare, "/fr/5-red-boots.html"), None);
        // A rule file written before extensions were recorded reads every one.
        let any = product(None);
        assert_eq!(q(&any, "/fr/5-red-boots.html"), want);
        assert_eq!(q(&any, "/fr/5-boots-and-shoes"), want);
        let extension = |e: &str| {
            routed_id_error("/", &["fr".into()], "/index.php", &[], "id", 0, Some(e)).is_none()
        };
        assert!(extension("") && extension(".html") && extension(".php5"));
        assert!(!extension("html") && !extension(".") && !extension(".a-b"));
    }

    #[test]
    fn malformed_routed_ids_are_named() {
        let ok = |dir: &str, routes: &[&str], script: &str, fixed: &[&str], at: usize| {
            let routes: Vec<String> = routes.iter().map(|s| s.to_string()).collect();
            let fixed: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
            routed_id_error(dir, &routes, script, &fixed, "id", at, None).is_none()
        };
        assert!(ok(
            "/index.php/",
            &["news"],
            "/index.php",
            &["view=article"],
            1
        ));
        assert!(!ok("index.php/", &["news"], "/index.php", &[], 0));
        assert!(!ok("/", &[], "/index.php", &[], 0));
        assert!(!ok("/", &["news/"], "/index.php", &[], 0));
        assert!(!ok("/", &["/news"], "/index.php", &[], 0));
        assert!(!ok("/", &["news"], "index.php", &[], 0));
        assert!(!ok("/", &["news"], "/news/5-five-things", &[], 0));
        assert!(!ok("/", &["news"], "/index.php", &["a&b"], 0));
        assert!(!ok("/", &["news"], "/index.php", &["a=1"], 2));
    }
}
