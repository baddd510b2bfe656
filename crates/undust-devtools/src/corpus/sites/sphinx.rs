//! Sphinx documentation hosted like Read the Docs: `/{lang}/{version}/{page}.html`, where
//! `latest` (or `stable`) serves the current version's build, so `/en/latest/x.html` ≡
//! `/en/4.2/x.html`; a folder is its `index.html`; `?highlight=word` (search highlighting) is
//! irrelevant; with the `dirhtml` builder pages are folders (`/x/` ≡ `/x/index.html`). Older
//! versions and other languages are distinct.

use std::collections::HashSet;

use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Extra, ExtraPlace, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::{DustRule, PageKind};

pub(super) struct Sphinx {
    base: String,
    alias: &'static str,
    current: String,
    old: Vec<String>,
    langs: Vec<&'static str>,
    dirhtml: bool,
    rules: [usize; 2],
    sections: Vec<String>,
    used: HashSet<String>,
}

impl Sphinx {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let major = rng.random_range(1..9);
        let n = rng.random_range(1..=4);
        let current = format!("{major}.{n}");
        let old = (0..n).map(|i| format!("{major}.{i}")).collect();
        let alias = pick(rng, &["latest", "stable"], "latest");
        let langs = if rng.random_bool(0.5) {
            vec!["en", pick(rng, &["ja", "fr", "zh_CN", "de", "es"], "ja")]
        } else {
            vec!["en"]
        };
        let mut s = Sphinx {
            base: base.to_string(),
            alias,
            current,
            old,
            langs,
            dirhtml: rng.random_bool(0.3),
            rules: [0; 2],
            sections: (0..rng.random_range(2..=6))
                .map(|_| word(rng).to_string())
                .collect(),
            used: HashSet::new(),
        };
        s.rules = [
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/{{lang}}/{alias}/{{page}}")),
                &UrlParts::new(format!("{base}/{{lang}}/{}/{{page}}", s.current)),
                "the `latest` alias serves the current version",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/{{lang}}/{{version}}/{{folder}}/index.html")),
                &UrlParts::new(format!("{base}/{{lang}}/{{version}}/{{folder}}/")),
                "a folder is its index document",
            ),
        ];
        let values = (0..40).map(|_| word(rng).to_string()).collect();
        em.add_extra(
            DustRule::IgnoreQueryKey {
                key: "highlight".to_string(),
            },
            "search highlighting `highlight`".to_string(),
            Extra {
                rule: 0,
                name: "highlight".to_string(),
                place: ExtraPlace::Query,
                prob: rng.random_range(0.05..0.2),
                values,
            },
        );
        s
    }

    /// Forms of `page` (a path without suffix, or "" for a folder's index) in `lang`/`version`.
    fn forms(&self, lang: &str, version: &str, folder: &str, page: &str) -> Vec<Form> {
        let b = &self.base;
        let at = |v: &str| -> Vec<(UrlParts, bool)> {
            let dir = format!("{b}/{lang}/{v}/{folder}");
            if page.is_empty() || self.dirhtml {
                let dir = if page.is_empty() {
                    dir
                } else {
                    format!("{dir}{page}/")
                };
                vec![
                    (UrlParts::new(dir.clone()), false),
                    (UrlParts::new(format!("{dir}index.html")), true),
                ]
            } else {
                vec![(UrlParts::new(format!("{dir}{page}.html")), false)]
            }
        };
        let mut forms = Vec::new();
        for (p, index) in at(version) {
            forms.push((p, index.then_some(self.rules[1])));
        }
        if version == self.current {
            for (p, _) in at(self.alias) {
                forms.push((p, Some(self.rules[0])));
            }
        }
        forms_of(forms)
    }

    fn new_page(&mut self, rng: &mut ChaCha8Rng) -> (String, String) {
        for _ in 0..8 {
            let folder = match self.sections.choose(rng) {
                Some(s) if rng.random_bool(0.7) => format!("{s}/"),
                _ => String::new(),
            };
            let page = slug(rng, 1..=2);
            if self.used.insert(format!("{folder}{page}")) {
                return (folder, page);
            }
        }
        (String::new(), format!("page-{}", self.used.len()))
    }
}

impl Section for Sphinx {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let (folder, page) = if rng.random_bool(0.1) {
            let folder = self
                .sections
                .choose(rng)
                .map_or(String::new(), |s| format!("{s}/"));
            // Keyed without the slash: with `dirhtml` a page `x` is the folder `x/`, so a
            // section `x/` and a page `x` beside it would be two pages at one address.
            if !self.used.insert(folder.trim_end_matches('/').to_owned()) {
                return;
            }
            (folder, String::new())
        } else {
            self.new_page(rng)
        };
        let lang = self.langs[0];
        let current = self.current.clone();
        let first = em.content(
            rng,
            &self.forms(lang, &current, &folder, &page),
            PageKind::Doc,
        );
        for v in self.old.clone() {
            if rng.random_bool(0.4) {
                em.sibling(
                    rng,
                    &first,
                    &self.forms(lang, &v, &folder, &page),
                    PageKind::Doc,
                );
            }
        }
        for lang in self.langs.clone().into_iter().skip(1) {
            if rng.random_bool(0.4) {
                em.sibling(
                    rng,
                    &first,
                    &self.forms(lang, &current, &folder, &page),
                    PageKind::Doc,
                );
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let (folder, page) = self.new_page(rng);
        self.forms("en", &self.current.clone(), &folder, &page)
    }

    fn variant(&self) -> String {
        format!(
            "sphinx:{}={}{}",
            self.alias,
            self.current,
            if self.dirhtml { "+dirhtml" } else { "" }
        )
    }
}
