//! Bugzilla: a bug tracker whose bugs are CGI scripts keyed by number, with export formats,
//! saved-search context and sortable searches.
//!
//! A bug is `show_bug.cgi?id=N`. Installations that rewrite short links (bugzilla.mozilla.org's
//! `/N`) answer the bare number with the same bug, and a bug with an alias answers
//! `show_bug.cgi?id={alias}` too (the alias is an opaque name: no rule on the URL can map it to
//! the number). "Format for printing" is `show_bug.cgi?format=multiple&id=N`: the same bug and
//! comments in a plain layout (the corpus treats print renderings as the same content, as for
//! news). A bug opened from a search result carries the search's `list_id` (Bugzilla 4.0 and
//! later remember the list for the "next/previous in list" links), which does not change the bug.
//! Template selection is `format` plus `ctype`: `ctype=xml` is the XML export (the
//! `bugzilla.dtd` document), other data, so distinct, as are the bug's activity log
//! (`show_activity.cgi?id=N`) and its attachments (`attachment.cgi?id=M` is the file,
//! `&action=edit` its details page). A search is `buglist.cgi?product=..&component=..` with
//! `query_format=advanced` when it came from the advanced form (no effect on the results);
//! its sort (`order=`) and its formats (`ctype=csv`, `ctype=atom`) are distinct pages.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::PageKind;

/// Sort orders the search results page offers (column lists, as `buglist.cgi` writes them).
const ORDERS: &[&str] = &[
    "bug_id",
    "changeddate,bug_id",
    "priority,bug_severity",
    "bug_status,priority,assigned_to,bug_id",
];

pub(super) struct Bugzilla {
    base: String,
    /// Whether `/N` is rewritten to the bug (a per-installation rewrite rule).
    short_links: bool,
    /// (product, components) of the installation.
    products: Vec<(String, Vec<String>)>,
    /// Rules: short link, print format, search context `list_id`, alias, search-form marker.
    rules: [usize; 5],
    searched: HashSet<(usize, usize)>,
    next_bug: u64,
    next_attachment: u64,
    next_list: u64,
    aliases: HashSet<String>,
}

impl Bugzilla {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!("{base}{}", pick(rng, &["", "/bugzilla", "/bugs"], ""));
        let products = (0..rng.random_range(2..=6))
            .map(|_| {
                let components = (0..rng.random_range(2..=8))
                    .map(|_| slug(rng, 1..=2))
                    .collect();
                (slug(rng, 1..=2), components)
            })
            .collect();
        let mut bz = Bugzilla {
            short_links: rng.random_bool(0.5),
            products,
            rules: [0; 5],
            searched: HashSet::new(),
            next_bug: rng.random_range(1..900_000),
            next_attachment: rng.random_range(1..400_000),
            next_list: rng.random_range(1..9_000_000),
            aliases: HashSet::new(),
            base,
        };
        let show = bz.show("{id}");
        bz.rules = [
            alias_rule(
                em,
                &UrlParts::new(format!("{}/{{id}}", bz.base)),
                &show,
                "short link `/N` rewritten to the bug",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{}/show_bug.cgi", bz.base))
                    .q("format", "multiple")
                    .q("id", "{id}"),
                &show,
                "format for printing",
            ),
            alias_rule(
                em,
                &bz.show("{id}").q("list_id", "{list}"),
                &show,
                "the search a bug was opened from (`list_id`)",
            ),
            alias_rule(em, &bz.show("{alias}"), &show, "a bug by its alias"),
            alias_rule(
                em,
                &UrlParts::new(format!("{}/buglist.cgi", bz.base))
                    .q("query_format", "advanced")
                    .q("product", "{product}"),
                &UrlParts::new(format!("{}/buglist.cgi", bz.base)).q("product", "{product}"),
                "`query_format=advanced` (which form the search came from)",
            ),
        ];
        if rng.random_bool(0.3) {
            add_tracking(em, rng, 1);
        }
        bz
    }

    fn show(&self, id: &str) -> UrlParts {
        UrlParts::new(format!("{}/show_bug.cgi", self.base)).q("id", id)
    }

    /// Every address of bug `id`; `lists` are the searches it was opened from.
    fn bug_forms(&self, id: u64, alias: Option<&str>, lists: &[u64]) -> Vec<Form> {
        let n = id.to_string();
        let mut forms = vec![
            (self.show(&n), None),
            (
                UrlParts::new(format!("{}/show_bug.cgi", self.base))
                    .q("format", "multiple")
                    .q("id", n.as_str()),
                Some(self.rules[1]),
            ),
        ];
        if self.short_links {
            forms.push((
                UrlParts::new(format!("{}/{n}", self.base)),
                Some(self.rules[0]),
            ));
        }
        for list in lists {
            forms.push((
                self.show(&n).q("list_id", list.to_string()),
                Some(self.rules[2]),
            ));
        }
        if let Some(alias) = alias {
            forms.push((self.show(alias), Some(self.rules[3])));
        }
        forms_of(forms)
    }

    /// A search of product `p` (component `c`), sorted by `order` (`None`: the default),
    /// in `ctype` (`None`: HTML).
    fn search_forms(
        &self,
        p: usize,
        c: usize,
        order: Option<&str>,
        ctype: Option<&str>,
    ) -> Vec<Form> {
        let (product, components) = &self.products[p];
        let with = |mut parts: UrlParts| {
            parts = parts
                .q("product", product.as_str())
                .q("component", components[c].as_str())
                .q("resolution", "---");
            if let Some(order) = order {
                parts = parts.q("order", order);
            }
            if let Some(ctype) = ctype {
                parts = parts.q("ctype", ctype);
            }
            parts
        };
        let plain = UrlParts::new(format!("{}/buglist.cgi", self.base));
        forms_of(vec![
            (with(plain.clone()), None),
            (
                with(plain.q("query_format", "advanced")),
                Some(self.rules[4]),
            ),
        ])
    }
}

impl Section for Bugzilla {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.12) {
            let p = rng.random_range(0..self.products.len());
            let c = rng.random_range(0..self.products[p].1.len());
            if self.searched.insert((p, c)) {
                let first =
                    em.content(rng, &self.search_forms(p, c, None, None), PageKind::Listing);
                let order = pick(rng, ORDERS, "bug_id");
                em.sibling(
                    rng,
                    &first,
                    &self.search_forms(p, c, Some(order), None),
                    PageKind::Listing,
                );
                let ctype = pick(rng, &["csv", "atom"], "atom");
                em.sibling(
                    rng,
                    &first,
                    &self.search_forms(p, c, None, Some(ctype)),
                    PageKind::Listing,
                );
                return;
            }
        }
        self.next_bug += rng.random_range(1..40);
        let id = self.next_bug;
        let alias = if rng.random_bool(0.08) {
            let a = format!("{}-{}", word(rng), rng.random_range(2..99));
            self.aliases.insert(a.clone()).then_some(a)
        } else {
            None
        };
        let lists: Vec<u64> = (0..rng.random_range(0..=3))
            .map(|_| {
                self.next_list += rng.random_range(1..500);
                self.next_list
            })
            .collect();
        let bug = em.content(
            rng,
            &self.bug_forms(id, alias.as_deref(), &lists),
            PageKind::Thread,
        );
        let n = id.to_string();
        if rng.random_bool(0.3) {
            let xml = self.show(&n).q("ctype", "xml");
            em.sibling(rng, &bug, &forms_of(vec![(xml, None)]), PageKind::Article);
        }
        if rng.random_bool(0.2) {
            let activity =
                UrlParts::new(format!("{}/show_activity.cgi", self.base)).q("id", n.as_str());
            em.sibling(
                rng,
                &bug,
                &forms_of(vec![(activity, None)]),
                PageKind::History,
            );
        }
        if rng.random_bool(0.25) {
            self.next_attachment += rng.random_range(1..30);
            let attachment = UrlParts::new(format!("{}/attachment.cgi", self.base))
                .q("id", self.next_attachment.to_string());
            let file = em.sibling(
                rng,
                &bug,
                &forms_of(vec![(attachment.clone(), None)]),
                PageKind::Article,
            );
            em.sibling(
                rng,
                &file,
                &forms_of(vec![(attachment.q("action", "edit"), None)]),
                PageKind::Article,
            );
        }
        if rng.random_bool(0.15) {
            // The next bug filed, often on the same problem: another content, same template.
            self.next_bug += rng.random_range(1..4);
            em.sibling(
                rng,
                &bug,
                &self.bug_forms(self.next_bug, None, &[]),
                PageKind::Thread,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let id = self.next_bug + rng.random_range(1_000_000..2_000_000);
        self.bug_forms(id, None, &[])
    }

    fn variant(&self) -> String {
        format!(
            "bugzilla{}{}",
            self.base,
            if self.short_links { "+short-links" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::family_tests::{check_family, ids_of};
    use crate::corpus::SiteKind;

    #[test]
    fn bugzilla_generates_its_scheme() {
        for site in check_family(SiteKind::Bugzilla) {
            let ids = ids_of(&site);
            let mut print = 0;
            let mut xml = 0;
            for (url, id) in &ids {
                let Some(rest) = url.split_once("show_bug.cgi?").map(|(_, q)| q) else {
                    continue;
                };
                // Print format is the bug itself; the XML export is other content.
                if let Some(n) = rest.strip_prefix("format=multiple&id=") {
                    let plain = url.replace(rest, &format!("id={n}"));
                    if let Some(plain_id) = ids.get(&plain) {
                        assert_eq!(plain_id, id, "{url} vs {plain}");
                        print += 1;
                    }
                }
                if let Some(n) = rest.strip_suffix("&ctype=xml") {
                    let plain = url.replace(rest, n);
                    if let Some(plain_id) = ids.get(&plain) {
                        assert_ne!(plain_id, id, "{url} vs {plain}");
                        xml += 1;
                    }
                }
            }
            assert!(
                print > 0 && xml > 0,
                "{}: print {print}, xml {xml}",
                site.variant
            );
        }
    }
}
