//! News generator: stories under date, section or id layouts with AMP and print variants;
//! other stories of the same day, article page 2 and comment pages are the hard negatives.

use std::collections::HashSet;

use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, forms_of, pattern, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::{DustRule, PageKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transform {
    PathPrefix(&'static str),
    PathSuffix(&'static str),
    Query(&'static str, &'static str),
}

impl Transform {
    fn apply(self, rel: &UrlParts) -> UrlParts {
        let mut p = rel.clone();
        match self {
            Transform::PathPrefix(s) => p.path = format!("{s}{}", p.path),
            Transform::PathSuffix(s) => p.path = format!("{}{s}", p.path.trim_end_matches('/')),
            Transform::Query(k, v) => p = p.q(k, v),
        }
        p
    }
}

pub(super) struct News {
    base: String,
    layout: u8,
    sections: Vec<String>,
    listed: HashSet<usize>,
    variants: Vec<(Transform, usize)>,
    comments: Transform,
    page_key: String,
    date: (u32, u32, u32),
    next_id: u64,
    used: HashSet<String>,
}

impl News {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let mut news = News {
            base: base.to_string(),
            layout: rng.random_range(0..5),
            sections: (0..rng.random_range(3..=9))
                .map(|_| word(rng).to_string())
                .collect(),
            listed: HashSet::new(),
            variants: Vec::new(),
            comments: *[
                Transform::PathSuffix("/comments"),
                Transform::Query("comments", "all"),
                Transform::Query("show", "comments"),
            ]
            .choose(rng)
            .unwrap_or(&Transform::PathSuffix("/comments")),
            page_key: pick(rng, &["page", "pg", "p"], "page").to_string(),
            date: (
                rng.random_range(2009..=2025),
                rng.random_range(1..=12),
                rng.random_range(1..=28),
            ),
            next_id: rng.random_range(10_000..9_000_000),
            used: HashSet::new(),
        };
        news.sections.sort();
        news.sections.dedup();
        let placeholders = ("{yyyy}".to_string(), "{mm}".to_string(), "{dd}".to_string());
        let example = news.story_rel_str("{section}", placeholders, "{slug}", "{id}");
        if rng.random_bool(0.85) {
            let amp = *[
                Transform::PathPrefix("/amp"),
                Transform::PathSuffix("/amp"),
                Transform::Query("output", "amp"),
                Transform::Query("amp", "1"),
            ]
            .choose(rng)
            .unwrap_or(&Transform::PathPrefix("/amp"));
            let rule = em.rule(
                DustRule::PathAlias {
                    from: pattern(&news.absolute(&amp.apply(&example))),
                    to: pattern(&news.absolute(&example)),
                },
                "AMP version of a story".to_string(),
            );
            news.variants.push((amp, rule));
        }
        // A news site without an AMP version has at least a print version.
        if news.variants.is_empty() || rng.random_bool(0.7) {
            let print = *[
                Transform::PathSuffix("/print"),
                Transform::Query("print", "1"),
                Transform::Query("view", "print"),
                Transform::PathPrefix("/print"),
            ]
            .choose(rng)
            .unwrap_or(&Transform::PathSuffix("/print"));
            let rule = em.rule(
                DustRule::PathAlias {
                    from: pattern(&news.absolute(&print.apply(&example))),
                    to: pattern(&news.absolute(&example)),
                },
                "print version of a story".to_string(),
            );
            news.variants.push((print, rule));
        }
        if rng.random_bool(0.5) {
            add_tracking(em, rng, 2);
        }
        news
    }

    /// The story path relative to the section base.
    fn story_rel(
        &self,
        section: &str,
        (y, m, d): (u32, u32, u32),
        slug: &str,
        id: &str,
    ) -> UrlParts {
        let date = (y.to_string(), format!("{m:02}"), format!("{d:02}"));
        self.story_rel_str(section, date, slug, id)
    }

    /// `story_rel` with the date as text, so rule patterns can use `{yyyy}/{mm}/{dd}`.
    fn story_rel_str(
        &self,
        section: &str,
        (y, m, d): (String, String, String),
        slug: &str,
        id: &str,
    ) -> UrlParts {
        match self.layout {
            0 => UrlParts::new(format!("/{y}/{m}/{d}/{slug}")),
            1 => UrlParts::new(format!("/{section}/{y}/{m}/{d}/{slug}")),
            2 => UrlParts::new(format!("/news/{slug}-{id}")),
            3 => UrlParts::new(format!("/article/{id}/{slug}")),
            _ => UrlParts::new(format!("/{section}/{slug}-{id}.html")),
        }
    }

    fn absolute(&self, rel: &UrlParts) -> UrlParts {
        UrlParts {
            path: format!("{}{}", self.base, rel.path),
            query: rel.query.clone(),
        }
    }

    /// Canonical plus AMP/print forms of `rel` (a story, its page n, or its comments).
    fn forms(&self, rel: &UrlParts) -> Vec<Form> {
        let mut forms = vec![Form {
            parts: self.absolute(rel),
            rule: None,
        }];
        for &(t, rule) in &self.variants {
            forms.push(Form {
                parts: self.absolute(&t.apply(rel)),
                rule: Some(rule),
            });
        }
        forms
    }

    fn new_story(&mut self, rng: &mut ChaCha8Rng) -> UrlParts {
        for _ in 0..8 {
            let section = self
                .sections
                .choose(rng)
                .cloned()
                .unwrap_or_else(|| "news".into());
            let s = slug(rng, 3..=7);
            self.next_id += rng.random_range(1..500);
            let rel = self.story_rel(&section, self.date, &s, &self.next_id.to_string());
            if self.used.insert(rel.path.clone()) {
                return rel;
            }
        }
        self.next_id += 1;
        self.story_rel(
            "news",
            self.date,
            &format!("story-{}", self.next_id),
            &self.next_id.to_string(),
        )
    }

    fn advance_date(&mut self, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.4) {
            let (y, m, d) = &mut self.date;
            *d += 1;
            if *d > 28 {
                *d = 1;
                *m += 1;
            }
            if *m > 12 {
                *m = 1;
                *y += 1;
            }
        }
    }
}

impl Section for News {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.08) && self.listed.len() < self.sections.len() {
            let i = rng.random_range(0..self.sections.len());
            if self.listed.insert(i) {
                let s = &self.sections[i];
                let listing = |page: u32| {
                    let path = if page > 1 {
                        format!("{}/{s}/page/{page}", self.base)
                    } else {
                        format!("{}/{s}/", self.base)
                    };
                    forms_of(vec![(UrlParts::new(path), None)])
                };
                let first = em.content(rng, &listing(1), PageKind::Listing);
                for page in 2..=rng.random_range(1..=5) {
                    em.sibling(rng, &first, &listing(page), PageKind::Listing);
                }
                return;
            }
        }
        self.advance_date(rng);
        let mut previous = None;
        for _ in 0..rng.random_range(1..=3) {
            let rel = self.new_story(rng);
            let story = match &previous {
                // Another story of the same day: a hard negative of the first.
                Some(prev) => em.sibling(rng, prev, &self.forms(&rel), PageKind::Article),
                None => em.content(rng, &self.forms(&rel), PageKind::Article),
            };
            if rng.random_bool(0.2) {
                for page in 2..=rng.random_range(2..=4) {
                    let paged = rel.clone().q(&self.page_key, page.to_string());
                    em.sibling(rng, &story, &self.forms(&paged), PageKind::Article);
                }
            }
            if rng.random_bool(0.25) {
                em.sibling(
                    rng,
                    &story,
                    &self.forms(&self.comments.apply(&rel)),
                    PageKind::Listing,
                );
            }
            previous.get_or_insert(story);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let rel = self.new_story(rng);
        self.forms(&rel)
    }

    fn variant(&self) -> String {
        let layout = [
            "date",
            "section-date",
            "news-slug-id",
            "article-id-slug",
            "section-slug-id-html",
        ];
        format!(
            "news:{}+{}",
            layout.get(self.layout as usize).unwrap_or(&"date"),
            self.variants.len()
        )
    }
}
