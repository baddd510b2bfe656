//! DokuWiki: how the wiki addresses one page, by its `userewrite` and `useslash` settings.
//!
//! A page id is `namespace:page` (lower case: DokuWiki's `cleanID` folds case, so a link
//! written `Wiki:Syntax` opens `wiki:syntax`). The script form `/doku.php?id=ns:page` always
//! works; `userewrite=1` (the shipped `.htaccess` rules) adds `/ns:page`, `userewrite=2` adds
//! `/doku.php/ns:page`, and with `useslash` the rewritten forms separate namespaces with `/`.
//! The default action `do=show` may be spelled out, search results link pages with the
//! highlight parameter `s[]=word`, and a namespace's id alone (`ns:`) opens its `start` page.
//! Distinct: old revisions (`rev=` a timestamp), the revisions list (`do=revisions`), the
//! backlinks (`do=backlink`) and the namespace index (`do=index`).

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Extra, ExtraPlace, Form, UrlParts};
use crate::corpus::words::{capitalize, join_words, word};
use crate::corpus::{DustRule, PageKind};

/// The script every DokuWiki URL can go through.
const SCRIPT: &str = "/doku.php";

pub(super) struct DokuWiki {
    base: String,
    /// The `userewrite` setting: 0 (script only), 1 (web server rewrites), 2 (path info).
    rewrite: u8,
    /// The `useslash` setting: namespaces separated by `/` in rewritten paths.
    slash: bool,
    namespaces: Vec<String>,
    /// Rules: script form, `do=show`, case folded by `cleanID`, namespace start page.
    rules: [usize; 4],
    next_rev: u64,
    used: HashSet<String>,
    indexed: HashSet<usize>,
}

impl DokuWiki {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let rewrite = match rng.random_range(0..10) {
            0..=3 => 0,
            4..=7 => 1,
            _ => 2,
        };
        let slash = rewrite != 0 && rng.random_bool(0.4);
        // Namespace names are distinct: one name is one namespace, with one start page.
        let mut names = HashSet::new();
        let namespaces = (0..rng.random_range(2..=6))
            .map(|_| word(rng).to_string())
            .filter(|name| names.insert(name.clone()))
            .collect();
        let mut wiki = DokuWiki {
            base: base.to_string(),
            rewrite,
            slash,
            namespaces,
            rules: [0; 4],
            next_rev: rng.random_range(1_200_000_000..1_700_000_000),
            used: HashSet::new(),
            indexed: HashSet::new(),
        };
        let canon = wiki.canonical("{id}");
        let script = UrlParts::new(format!("{base}{SCRIPT}")).q("id", "{id}");
        wiki.rules = [
            alias_rule(
                em,
                &script,
                &canon,
                "page through the script's `id=` parameter",
            ),
            alias_rule(
                em,
                &script.clone().q("do", "show"),
                &canon,
                "the default action `do=show` spelled out",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}{SCRIPT}")).q("id", "{Id}"),
                &canon,
                "page id in another case (`cleanID` folds it)",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}{SCRIPT}")).q("id", "{ns}:"),
                &wiki.canonical("{ns}:start"),
                "a namespace opens its `start` page",
            ),
        ];
        let highlight = "s[]";
        let values = (0..(em.cap / 12).clamp(4, 600))
            .map(|_| word(rng).to_string())
            .collect();
        em.add_extra(
            DustRule::IgnoreQueryKey {
                key: highlight.to_string(),
            },
            format!("search highlighting `{highlight}`"),
            Extra {
                rule: 0,
                name: highlight.to_string(),
                place: ExtraPlace::Query,
                prob: rng.random_range(0.05..0.2),
                values,
            },
        );
        wiki
    }

    /// The page's address as the wiki itself links it.
    fn canonical(&self, id: &str) -> UrlParts {
        let rewritten = if self.slash {
            id.replace(':', "/")
        } else {
            id.to_string()
        };
        match self.rewrite {
            0 => UrlParts::new(format!("{}{SCRIPT}", self.base)).q("id", id),
            1 => UrlParts::new(format!("{}/{rewritten}", self.base)),
            _ => UrlParts::new(format!("{}{SCRIPT}/{rewritten}", self.base)),
        }
    }

    fn script(&self, id: &str) -> UrlParts {
        UrlParts::new(format!("{}{SCRIPT}", self.base)).q("id", id)
    }

    /// Every address of the page `id`; `namespace` is set for a namespace's start page.
    fn page_forms(&self, id: &str, namespace: Option<&str>) -> Vec<Form> {
        let mut forms = vec![(self.canonical(id), None)];
        if self.rewrite != 0 {
            forms.push((self.script(id), Some(self.rules[0])));
        }
        forms.push((self.script(id).q("do", "show"), Some(self.rules[1])));
        let cased: String = id.split(':').map(capitalize).collect::<Vec<_>>().join(":");
        forms.push((self.script(&cased), Some(self.rules[2])));
        if let Some(ns) = namespace {
            forms.push((self.script(&format!("{ns}:")), Some(self.rules[3])));
        }
        forms_of(forms)
    }

    /// A view of the page other than the page itself (a revision, its history, backlinks):
    /// the canonical form with the view's parameters, and the script form with them.
    fn view_forms(&self, id: &str, params: &[(&str, String)]) -> Vec<Form> {
        let mut canon = self.canonical(id);
        let mut script = self.script(id);
        for (k, v) in params {
            canon = canon.q(k, v.clone());
            script = script.q(k, v.clone());
        }
        let mut forms = vec![(canon, None)];
        if self.rewrite != 0 {
            forms.push((script, Some(self.rules[0])));
        }
        forms_of(forms)
    }

    fn new_id(&mut self, rng: &mut ChaCha8Rng) -> String {
        for _ in 0..8 {
            let ns = &self.namespaces[rng.random_range(0..self.namespaces.len())];
            let page = join_words(rng, 1..=3, "_");
            // `ns:start` is the namespace's start page, emitted on its own.
            let is_start = page == "start";
            let id = if rng.random_bool(0.15) {
                page
            } else {
                format!("{ns}:{page}")
            };
            if !is_start && self.used.insert(id.clone()) {
                return id;
            }
        }
        let id = format!("page_{}", self.used.len());
        self.used.insert(id.clone());
        id
    }
}

impl Section for DokuWiki {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.1) {
            let n = rng.random_range(0..self.namespaces.len());
            if self.indexed.insert(n) {
                // A namespace's start page, and the namespace index beside it.
                let ns = self.namespaces[n].clone();
                let id = format!("{ns}:start");
                let start = em.content(rng, &self.page_forms(&id, Some(&ns)), PageKind::Listing);
                em.sibling(
                    rng,
                    &start,
                    &self.view_forms(&id, &[("do", "index".to_string())]),
                    PageKind::Listing,
                );
                return;
            }
        }
        let id = self.new_id(rng);
        let page = em.content(rng, &self.page_forms(&id, None), PageKind::Article);
        for _ in 0..rng.random_range(0..=3) {
            self.next_rev += rng.random_range(3_600..5_000_000);
            em.sibling(
                rng,
                &page,
                &self.view_forms(&id, &[("rev", self.next_rev.to_string())]),
                PageKind::Article,
            );
        }
        if rng.random_bool(0.3) {
            em.sibling(
                rng,
                &page,
                &self.view_forms(&id, &[("do", "revisions".to_string())]),
                PageKind::History,
            );
        }
        if rng.random_bool(0.15) {
            em.sibling(
                rng,
                &page,
                &self.view_forms(&id, &[("do", "backlink".to_string())]),
                PageKind::Listing,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let id = self.new_id(rng);
        self.page_forms(&id, None)
    }

    fn variant(&self) -> String {
        format!(
            "dokuwiki:userewrite={}{}",
            self.rewrite,
            if self.slash { "+useslash" } else { "" }
        )
    }
}
