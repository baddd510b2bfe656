//! Joomla: one article under its search-engine-friendly route and through the front controller.
//!
//! With SEF URLs on (the default since 1.6) an article is `/index.php/{menu}/{id}-{alias}`, or
//! `/{menu}/{id}-{alias}` when the site also turns URL rewriting on, which still answers the
//! `/index.php/...` form; Joomla 4's modern router can drop the ids (`/{menu}/{alias}`), and the
//! "suffix" option adds `.html` while the route without it still resolves. The non-SEF address
//! `/index.php?option=com_content&view=article&id={id}:{alias}&catid={cat}&Itemid={item}` shows
//! the same article whatever the alias part and whichever menu item (`Itemid`) it is shown
//! under. A category blog is its menu item's route, `/index.php?Itemid={item}` and the non-SEF
//! `view=category&layout=blog` address. Distinct: other articles, category pages (`?start=N`,
//! `limitstart=N` in non-SEF form), the category's feed (`format=feed`), and the menu items
//! themselves (`Itemid` alone names a page).

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::slug;
use crate::corpus::PageKind;

/// Articles per category blog page (a per-site setting; 10 is common).
const BLOG_PAGE: u32 = 10;

/// The home menu item's id in a default installation.
const HOME_ITEMID: u32 = 101;

pub(super) struct Joomla {
    base: String,
    /// `/index.php` before every route when URL rewriting is off; empty when on.
    prefix: &'static str,
    /// Whether routes end in `.html` (the "Add Suffix to URL" option).
    suffix: bool,
    /// Whether routes carry ids (`5-alias`, the legacy router) or only aliases (modern router).
    ids: bool,
    /// Categories: (id, alias, menu item id).
    categories: Vec<(u32, String, u32)>,
    /// Rules: non-SEF article, non-SEF without alias or under another menu item, `/index.php`
    /// before a rewritten route, route without its suffix, category blog by menu item.
    rules: [usize; 5],
    listed: HashSet<usize>,
    next_id: u64,
    used: HashSet<String>,
}

impl Joomla {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let rewriting = rng.random_bool(0.5);
        let categories: Vec<(u32, String, u32)> = (0..rng.random_range(3..=9))
            .map(|i| {
                (
                    i + 2,
                    slug(rng, 1..=2),
                    HOME_ITEMID + 1 + i * rng.random_range(1..4),
                )
            })
            .collect();
        let mut j = Joomla {
            base: base.to_string(),
            prefix: if rewriting { "" } else { "/index.php" },
            suffix: rng.random_bool(0.3),
            ids: rng.random_bool(0.6),
            categories,
            rules: [0; 5],
            listed: HashSet::new(),
            next_id: rng.random_range(1..3_000),
            used: HashSet::new(),
        };
        let route = UrlParts::new(format!("{base}{}/{{menu}}/{{id}}-{{alias}}", j.prefix));
        let nonsef = UrlParts::new(format!("{base}/index.php"))
            .q("option", "com_content")
            .q("view", "article");
        j.rules = [
            alias_rule(
                em,
                &nonsef
                    .clone()
                    .q("id", "{id}:{alias}")
                    .q("catid", "{cat}")
                    .q("Itemid", "{item}"),
                &route,
                "article through the front controller without SEF",
            ),
            alias_rule(
                em,
                &nonsef.clone().q("id", "{id}").q("Itemid", "{other}"),
                &route,
                "non-SEF article without its alias or under another menu item",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/index.php/{{menu}}/{{id}}-{{alias}}")),
                &route,
                "`/index.php` before a rewritten route",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}{}/{{menu}}/{{id}}-{{alias}}", j.prefix)),
                &UrlParts::new(format!("{base}{}/{{menu}}/{{id}}-{{alias}}.html", j.prefix)),
                "route without its `.html` suffix",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/index.php")).q("Itemid", "{item}"),
                &UrlParts::new(format!("{base}{}/{{menu}}", j.prefix)),
                "category blog by its menu item id",
            ),
        ];
        if rng.random_bool(0.4) {
            add_tracking(em, rng, 2);
        }
        j
    }

    /// `route` under the site's prefix, with the suffix option applied to the last segment.
    fn routed(&self, route: &str, suffixed: bool) -> UrlParts {
        let suffix = if suffixed { ".html" } else { "" };
        UrlParts::new(format!("{}{}{route}{suffix}", self.base, self.prefix))
    }

    fn article_forms(&self, c: usize, id: u64, alias: &str) -> Vec<Form> {
        let (catid, menu, item) = &self.categories[c];
        let segment = if self.ids {
            format!("{id}-{alias}")
        } else {
            alias.to_string()
        };
        let route = format!("/{menu}/{segment}");
        let nonsef = UrlParts::new(format!("{}/index.php", self.base))
            .q("option", "com_content")
            .q("view", "article");
        let mut forms = vec![
            (self.routed(&route, self.suffix), None),
            (
                nonsef
                    .clone()
                    .q("id", format!("{id}:{alias}"))
                    .q("catid", catid.to_string())
                    .q("Itemid", item.to_string()),
                Some(self.rules[0]),
            ),
            (
                nonsef
                    .q("id", id.to_string())
                    .q("Itemid", HOME_ITEMID.to_string()),
                Some(self.rules[1]),
            ),
        ];
        if self.prefix.is_empty() {
            let suffix = if self.suffix { ".html" } else { "" };
            forms.push((
                UrlParts::new(format!("{}/index.php{route}{suffix}", self.base)),
                Some(self.rules[2]),
            ));
        }
        if self.suffix {
            forms.push((self.routed(&route, false), Some(self.rules[3])));
        }
        forms_of(forms)
    }

    /// Page `page` (0 = first) of category `c`'s blog, or its feed.
    fn category_forms(&self, c: usize, page: u32, feed: bool) -> Vec<Form> {
        let (catid, menu, item) = &self.categories[c];
        // The SEF route pages with `start`, the front controller with `limitstart`.
        let view = |p: UrlParts, page_key: &str| {
            if feed {
                p.q("format", "feed").q("type", "rss")
            } else if page > 0 {
                p.q(page_key, (page * BLOG_PAGE).to_string())
            } else {
                p
            }
        };
        let route = view(self.routed(&format!("/{menu}"), false), "start");
        let by_item = view(
            UrlParts::new(format!("{}/index.php", self.base)).q("Itemid", item.to_string()),
            "limitstart",
        );
        let nonsef = view(
            UrlParts::new(format!("{}/index.php", self.base))
                .q("option", "com_content")
                .q("view", "category")
                .q("layout", "blog")
                .q("id", catid.to_string())
                .q("Itemid", item.to_string()),
            "limitstart",
        );
        forms_of(vec![
            (route, None),
            (by_item, Some(self.rules[4])),
            (nonsef, Some(self.rules[0])),
        ])
    }

    fn new_article(&mut self, rng: &mut ChaCha8Rng) -> (u64, String) {
        self.next_id += rng.random_range(1..6);
        let mut alias = slug(rng, 2..=5);
        if !self.used.insert(alias.clone()) {
            alias = format!("{alias}-{}", self.used.len());
            self.used.insert(alias.clone());
        }
        (self.next_id, alias)
    }
}

impl Section for Joomla {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let c = rng.random_range(0..self.categories.len());
        if rng.random_bool(0.12) && self.listed.insert(c) {
            let first = em.content(rng, &self.category_forms(c, 0, false), PageKind::Listing);
            for page in 1..rng.random_range(1..=5) {
                em.sibling(
                    rng,
                    &first,
                    &self.category_forms(c, page, false),
                    PageKind::Listing,
                );
            }
            if rng.random_bool(0.4) {
                em.sibling(
                    rng,
                    &first,
                    &self.category_forms(c, 0, true),
                    PageKind::Listing,
                );
            }
            // Another category's blog: its menu item is another page.
            let other = (c + 1) % self.categories.len();
            if other != c && self.listed.insert(other) {
                em.sibling(
                    rng,
                    &first,
                    &self.category_forms(other, 0, false),
                    PageKind::Listing,
                );
            }
            return;
        }
        let (id, alias) = self.new_article(rng);
        let article = em.content(rng, &self.article_forms(c, id, &alias), PageKind::Article);
        if rng.random_bool(0.2) {
            let (id, alias) = self.new_article(rng);
            em.sibling(
                rng,
                &article,
                &self.article_forms(c, id, &alias),
                PageKind::Article,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let c = rng.random_range(0..self.categories.len());
        let (id, alias) = self.new_article(rng);
        self.article_forms(c, id + 1_000_000, &alias)
    }

    fn variant(&self) -> String {
        format!(
            "joomla:{}{}{}",
            if self.prefix.is_empty() {
                "rewrite"
            } else {
                "index.php"
            },
            if self.ids { "+ids" } else { "" },
            if self.suffix { "+html" } else { "" }
        )
    }
}
