//! IIS / ASP.NET: the file system and the database collation are case-insensitive, so paths,
//! query keys and query values answer in any case (`/Products/Details.aspx?ID=5` ≡
//! `/products/details.aspx?id=5`); a folder is its default document (`/News/` ≡
//! `/News/Default.aspx`); the cookie probe `AspxAutoDetectCookieSupport=1` is irrelevant.
//! Distinct: other ids, `page=` pages, `sort=` orders, `lang=` languages.

use std::collections::HashSet;

use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{forms_of, Section};
use crate::corpus::emit::{Emitter, Extra, ExtraPlace, Form, UrlParts};
use crate::corpus::words::{capitalize, pick, title, word};
use crate::corpus::{DustRule, PageKind};

pub(super) struct AspNet {
    base: String,
    sections: Vec<(String, String, String)>,
    default_doc: &'static str,
    dd_rule: usize,
    listed: HashSet<usize>,
    next_id: u64,
}

impl AspNet {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        em.set_case_insensitive_query(rng.random_range(0.2..0.45));
        let default_doc = pick(
            rng,
            &["Default.aspx", "default.aspx", "Default.asp", "index.aspx"],
            "Default.aspx",
        );
        let dd_rule = em.rule(
            DustRule::DefaultDocument {
                names: vec![default_doc.to_string()],
            },
            "a folder equals its default document".to_string(),
        );
        if rng.random_bool(0.5) {
            em.add_extra(
                DustRule::IgnoreQueryKey {
                    key: "AspxAutoDetectCookieSupport".to_string(),
                },
                "cookie probe `AspxAutoDetectCookieSupport`".to_string(),
                Extra {
                    rule: 0,
                    name: "AspxAutoDetectCookieSupport".to_string(),
                    place: ExtraPlace::Query,
                    prob: rng.random_range(0.1..0.3),
                    values: vec!["1".to_string()],
                },
            );
        }
        // Sections: (folder, detail page, id key), e.g. (`Products`, `Details.aspx`, `ID`).
        let pages = [
            "Details.aspx",
            "View.aspx",
            "Item.aspx",
            "Show.aspx",
            "Article.aspx",
        ];
        let keys = ["ID", "Id", "ItemID", "ArticleId", "pid"];
        // Folder names are distinct case-insensitively: one folder is one section on IIS.
        let mut folders = HashSet::new();
        let sections = (0..rng.random_range(2..=5))
            .map(|_| {
                (
                    capitalize(word(rng)),
                    pick(rng, &pages, "Details.aspx").to_string(),
                    pick(rng, &keys, "ID").to_string(),
                )
            })
            .filter(|(folder, _, _)| folders.insert(folder.to_ascii_lowercase()))
            .collect();
        AspNet {
            base: base.to_string(),
            sections,
            default_doc,
            dd_rule,
            listed: HashSet::new(),
            next_id: rng.random_range(1..50_000),
        }
    }

    fn folder_forms(&self, s: usize, extra: &[(&str, String)]) -> Vec<Form> {
        let folder = &self.sections[s].0;
        let mut dir = UrlParts::new(format!("{}/{folder}/", self.base));
        let mut doc = UrlParts::new(format!("{}/{folder}/{}", self.base, self.default_doc));
        for (k, v) in extra {
            dir = dir.q(k, v.clone());
            doc = doc.q(k, v.clone());
        }
        forms_of(vec![(dir, None), (doc, Some(self.dd_rule))])
    }

    fn detail_forms(&self, s: usize, id: u64, extra: Option<(&str, String)>) -> Vec<Form> {
        let (folder, page, key) = &self.sections[s];
        let mut p = UrlParts::new(format!("{}/{folder}/{page}", self.base)).q(key, id.to_string());
        if let Some((k, v)) = extra {
            p = p.q(k, v);
        }
        forms_of(vec![(p, None)])
    }
}

impl Section for AspNet {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let s = rng.random_range(0..self.sections.len());
        if rng.random_bool(0.12) && self.listed.insert(s) {
            let first = em.content(rng, &self.folder_forms(s, &[]), PageKind::Listing);
            let sort = pick(rng, &["Name", "Price", "Date"], "Name").to_string();
            em.sibling(
                rng,
                &first,
                &self.folder_forms(s, &[("sort", sort)]),
                PageKind::Listing,
            );
            for page in 2..=rng.random_range(1..=4) {
                em.sibling(
                    rng,
                    &first,
                    &self.folder_forms(s, &[("page", page.to_string())]),
                    PageKind::Listing,
                );
            }
            return;
        }
        self.next_id += rng.random_range(1..20);
        let id = self.next_id;
        let kind = *[PageKind::Article, PageKind::Product]
            .choose(rng)
            .unwrap_or(&PageKind::Article);
        let first = em.content(rng, &self.detail_forms(s, id, None), kind);
        if rng.random_bool(0.15) {
            let lang = pick(rng, &["fr", "de", "es", "nl"], "fr").to_string();
            em.sibling(
                rng,
                &first,
                &self.detail_forms(s, id, Some(("lang", lang))),
                kind,
            );
        }
        if rng.random_bool(0.1) {
            // A page whose title is its key, e.g. `/Help/Topic.aspx?name=Printing_Setup`.
            let name = title(rng, 1..=3, "_");
            em.sibling(
                rng,
                &first,
                &self.detail_forms(s, id, Some(("name", name))),
                kind,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let s = rng.random_range(0..self.sections.len());
        self.detail_forms(
            s,
            self.next_id + rng.random_range(1_000_000..2_000_000),
            None,
        )
    }

    fn variant(&self) -> String {
        format!("aspnet:{}", self.default_doc)
    }
}
