//! Case-insensitive server generator: mixed-case paths that also answer in other cases,
//! directories equal to their default documents, and a wiki (optionally reachable by
//! `index.php?title=`) whose revisions and history views are hard negatives.

use std::collections::HashSet;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{capitalize, pick, title, word};
use crate::corpus::{DustRule, PageKind};

pub(super) struct CaseServer {
    base: String,
    sections: Vec<String>,
    ext: &'static str,
    default_docs: Vec<String>,
    dd_rule: usize,
    /// The wiki's alias layout, if it has one: (rule, uses `/w/index.php`).
    wiki: Option<(usize, bool)>,
    next_oldid: u64,
    used: HashSet<String>,
}

impl CaseServer {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        em.set_case_insensitive(rng.random_range(0.25..0.5));
        let mut names = vec![
            "index.html",
            "index.htm",
            "default.aspx",
            "Default.asp",
            "index.php",
            "home.html",
        ];
        names.shuffle(rng);
        let default_docs: Vec<String> = names
            .into_iter()
            .take(rng.random_range(1..=2))
            .map(str::to_string)
            .collect();
        let dd_rule = em.rule(
            DustRule::DefaultDocument {
                names: default_docs.clone(),
            },
            "a directory URL equals its default document".to_string(),
        );
        let wiki = if rng.random_bool(0.7) {
            let short = rng.random_bool(0.5);
            let (from, to) = if short {
                (
                    format!("{base}/w/index.php?title={{title}}"),
                    format!("{base}/wiki/{{title}}"),
                )
            } else {
                (
                    format!("{base}/index.php?title={{title}}"),
                    format!("{base}/wiki/{{title}}"),
                )
            };
            let rule = em.rule(
                DustRule::PathAlias { from, to },
                "wiki article by query title".to_string(),
            );
            Some((rule, short))
        } else {
            None
        };
        CaseServer {
            base: base.to_string(),
            sections: (0..rng.random_range(3..=8))
                .map(|_| capitalize(word(rng)))
                .collect(),
            ext: pick(rng, &[".aspx", ".html", ".htm", ""], ".aspx"),
            default_docs,
            dd_rule,
            wiki,
            next_oldid: rng.random_range(1_000..900_000),
            used: HashSet::new(),
        }
    }

    fn unique(&mut self, candidate: String) -> Option<String> {
        self.used
            .insert(candidate.to_ascii_lowercase())
            .then_some(candidate)
    }

    fn wiki_forms(&self, title: &str, extra: Option<(&str, String)>) -> Vec<Form> {
        let b = &self.base;
        let mut canon = UrlParts::new(format!("{b}/wiki/{title}"));
        if let Some((k, v)) = &extra {
            canon = canon.q(k, v.clone());
        }
        let mut forms = vec![(canon, None)];
        if let Some((rule, short)) = self.wiki {
            let script = if short {
                format!("{b}/w/index.php")
            } else {
                format!("{b}/index.php")
            };
            let mut alias = UrlParts::new(script).q("title", title);
            if let Some((k, v)) = extra {
                alias = alias.q(k, v);
            }
            forms.push((alias, Some(rule)));
        }
        forms_of(forms)
    }

    fn dir_forms(&self, dir: &str) -> Vec<Form> {
        let mut forms = vec![(UrlParts::new(format!("{}{dir}", self.base)), None)];
        for name in &self.default_docs {
            forms.push((
                UrlParts::new(format!("{}{dir}{name}", self.base)),
                Some(self.dd_rule),
            ));
        }
        forms_of(forms)
    }

    fn new_title(&mut self, rng: &mut ChaCha8Rng) -> String {
        for _ in 0..8 {
            let t = title(rng, 1..=3, "_");
            if let Some(t) = self.unique(format!("wiki:{t}")) {
                return t.trim_start_matches("wiki:").to_string();
            }
        }
        format!("Page_{}", self.used.len())
    }
}

impl Section for CaseServer {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let roll: f64 = rng.random();
        if roll < 0.4 {
            let t = self.new_title(rng);
            let article = em.content(rng, &self.wiki_forms(&t, None), PageKind::Article);
            for _ in 0..rng.random_range(0..=3) {
                self.next_oldid += rng.random_range(1..5_000);
                let forms = self.wiki_forms(&t, Some(("oldid", self.next_oldid.to_string())));
                em.sibling(rng, &article, &forms, PageKind::Article);
            }
            if rng.random_bool(0.3) {
                let forms = self.wiki_forms(&t, Some(("action", "history".to_string())));
                em.sibling(rng, &article, &forms, PageKind::History);
            }
        } else if roll < 0.6 {
            let section = self
                .sections
                .choose(rng)
                .cloned()
                .unwrap_or_else(|| "Home".into());
            let dir = if rng.random_bool(0.5) {
                format!("/{section}/")
            } else {
                format!("/{section}/{}/", title(rng, 1..=2, "-"))
            };
            if let Some(dir) = self.unique(dir) {
                em.content(rng, &self.dir_forms(&dir), PageKind::Listing);
            }
        } else {
            let section = self
                .sections
                .choose(rng)
                .cloned()
                .unwrap_or_else(|| "Home".into());
            let name = title(rng, 1..=3, "-");
            if let Some(path) = self.unique(format!("{}/{section}/{name}{}", self.base, self.ext)) {
                let kind = if rng.random_bool(0.5) {
                    PageKind::Product
                } else {
                    PageKind::Article
                };
                em.content(rng, &forms_of(vec![(UrlParts::new(path), None)]), kind);
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let section = self
            .sections
            .choose(rng)
            .cloned()
            .unwrap_or_else(|| "Home".into());
        let name = format!(
            "{}-{}",
            title(rng, 2..=2, "-"),
            rng.random_range(100..100_000)
        );
        forms_of(vec![(
            UrlParts::new(format!("{}/{section}/{name}{}", self.base, self.ext)),
            None,
        )])
    }

    fn variant(&self) -> String {
        format!(
            "case-insensitive:{}{}",
            self.default_docs.join("+"),
            if self.wiki.is_some() {
                "+wiki-alias"
            } else {
                "+wiki"
            }
        )
    }
}
