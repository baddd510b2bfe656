//! Documentation mirror generator: the same pages under several path prefixes (`/mirror1`,
//! `/archive` vs `/archive3`, root vs `/mirror/x`); versions and languages are hard negatives.

use std::collections::HashSet;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Section;
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::{DustRule, PageKind};

pub(super) struct Docs {
    base: String,
    mirrors: Vec<String>,
    mirror_rule: usize,
    root: String,
    versions: Vec<String>,
    langs: Vec<String>,
    sections: Vec<String>,
    ext: &'static str,
    used: HashSet<String>,
    indexed: HashSet<(usize, usize)>,
}

impl Docs {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let mirrors: Vec<String> = match rng.random_range(0..4) {
            0 => (1..=rng.random_range(2..=4))
                .map(|i| format!("/mirror{i}"))
                .collect(),
            // The paper's Figure 4: `archive` and `archive3` serve the same files.
            1 => {
                let w = pick(rng, &["archive", "arch", "files"], "archive");
                let mut m = vec![format!("/{w}")];
                for i in 2..=rng.random_range(2..=4) {
                    m.push(format!("/{w}{i}"));
                }
                m
            }
            2 => vec![String::new(), format!("/mirror/{}", word(rng))],
            _ => {
                let a = word(rng);
                let b = word(rng);
                let b = if a == b { "backup" } else { b };
                vec![format!("/pub/{a}"), format!("/mirrors/{b}")]
            }
        };
        let mut mirrors = mirrors;
        if rng.random_bool(0.5) {
            mirrors.shuffle(rng);
        }
        let mirror_rule = em.rule(
            DustRule::MirrorPrefix {
                prefixes: mirrors.iter().map(|m| format!("{base}{m}")).collect(),
            },
            "the same documentation is mirrored under several path prefixes".to_string(),
        );
        let n_versions = rng.random_range(2..=5);
        let major = rng.random_range(0..4);
        let versions = match rng.random_range(0..3) {
            0 => (0..n_versions)
                .map(|i| format!("v{}", major + i + 1))
                .collect(),
            1 => (0..n_versions)
                .map(|i| format!("{}.{}", major + 1, i))
                .collect(),
            _ => (0..n_versions)
                .map(|i| format!("release-{}", major + i + 1))
                .collect(),
        };
        let langs = if rng.random_bool(0.6) {
            let mut all = vec!["en", "de", "fr", "ja", "es", "pt-br", "zh-cn"];
            all.shuffle(rng);
            all.into_iter()
                .take(rng.random_range(2..=4))
                .map(str::to_string)
                .collect()
        } else {
            Vec::new()
        };
        Docs {
            base: base.to_string(),
            mirrors,
            mirror_rule,
            root: pick(rng, &["docs", "manual", "doc", "reference"], "docs").to_string(),
            versions,
            langs,
            sections: (0..rng.random_range(3..=10))
                .map(|_| word(rng).to_string())
                .collect(),
            ext: pick(rng, &[".html", ".htm", "", "/"], ".html"),
            used: HashSet::new(),
            indexed: HashSet::new(),
        }
    }

    fn prefix(&self, v: usize, l: usize) -> String {
        let version = self.versions.get(v).map_or("latest", String::as_str);
        match self.langs.get(l) {
            Some(lang) => format!("/{}/{version}/{lang}", self.root),
            None => format!("/{}/{version}", self.root),
        }
    }

    fn forms(&self, rel: &str) -> Vec<Form> {
        self.mirrors
            .iter()
            .enumerate()
            .map(|(i, m)| Form {
                parts: UrlParts::new(format!("{}{m}{rel}", self.base)),
                rule: (i > 0).then_some(self.mirror_rule),
            })
            .collect()
    }

    fn page_rel(&self, v: usize, l: usize, page: &str) -> String {
        format!("{}/{page}{}", self.prefix(v, l), self.ext)
    }

    fn new_page(&mut self, rng: &mut ChaCha8Rng) -> String {
        for _ in 0..8 {
            let section = self
                .sections
                .choose(rng)
                .map_or("guide", String::as_str)
                .to_string();
            let page = format!("{section}/{}", slug(rng, 1..=3));
            if self.used.insert(page.clone()) {
                return page;
            }
        }
        format!("misc/page-{}", self.used.len())
    }
}

impl Section for Docs {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let n_langs = self.langs.len().max(1);
        if rng.random_bool(0.05) && self.indexed.len() < self.versions.len() * n_langs {
            let key = (
                rng.random_range(0..self.versions.len()),
                rng.random_range(0..n_langs),
            );
            if self.indexed.insert(key) {
                let rel = format!("{}/", self.prefix(key.0, key.1));
                em.content(rng, &self.forms(&rel), PageKind::Listing);
                return;
            }
        }
        let page = self.new_page(rng);
        // Pages exist in a contiguous range of versions and some languages.
        let v_count = rng.random_range(1..=self.versions.len().clamp(1, 3));
        let v_start = rng.random_range(0..=self.versions.len().saturating_sub(v_count));
        let l_count = rng.random_range(1..=n_langs.min(3));
        let first = em.content(
            rng,
            &self.forms(&self.page_rel(v_start, 0, &page)),
            PageKind::Doc,
        );
        for v in v_start..v_start + v_count {
            for l in 0..l_count {
                if (v, l) == (v_start, 0) {
                    continue;
                }
                let forms = self.forms(&self.page_rel(v, l, &page));
                if v == v_start || l == 0 {
                    // Differs from the first only in version or only in language.
                    em.sibling(rng, &first, &forms, PageKind::Doc);
                } else {
                    em.content(rng, &forms, PageKind::Doc);
                }
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let page = self.new_page(rng);
        self.forms(&self.page_rel(0, 0, &page))
    }

    fn variant(&self) -> String {
        format!(
            "docs:{}x{}:{}",
            self.mirrors.len(),
            self.versions.len(),
            self.langs.len()
        )
    }
}
