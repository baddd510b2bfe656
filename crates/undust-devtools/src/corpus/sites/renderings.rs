//! News sites with several renderings of one story: AMP (`/amp/...`, `....amp.html`,
//! `?outputType=amp`), print (`?print=true`, `/print/...`), mobile (`?m=1` as Blogger does,
//! `/m/...`, `?mobile=1`), and the story's short id link (`/story/ID` ≡ `/section/slug-ID.html`):
//! the id moves from the end of a slug into its own segment. Feed and social tracking
//! parameters are irrelevant. Distinct: other stories, live-blog pages (`?page=2`), comments.

use std::collections::HashSet;

use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::PageKind;

#[derive(Clone, Copy)]
enum Render {
    Prefix(&'static str),
    AmpHtml,
    Query(&'static str, &'static str),
}

impl Render {
    fn apply(self, p: &UrlParts) -> UrlParts {
        match self {
            Render::Prefix(s) => UrlParts {
                path: format!("{s}{}", p.path),
                query: p.query.clone(),
            },
            Render::AmpHtml => UrlParts {
                path: p.path.replace(".html", ".amp.html"),
                query: p.query.clone(),
            },
            Render::Query(k, v) => p.clone().q(k, v),
        }
    }
}

pub(super) struct Renderings {
    base: String,
    renders: Vec<(Render, usize)>,
    short: Option<(&'static str, usize)>,
    sections: Vec<String>,
    next_id: u64,
    used: HashSet<String>,
}

impl Renderings {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let example = UrlParts::new(format!("{base}/{{section}}/{{slug}}-{{id}}.html"));
        let mut renders = Vec::new();
        let amp = *[
            Render::Prefix("/amp"),
            Render::AmpHtml,
            Render::Query("outputType", "amp"),
        ]
        .choose(rng)
        .unwrap_or(&Render::AmpHtml);
        let print = *[
            Render::Query("print", "true"),
            Render::Prefix("/print"),
            Render::Query("view", "print"),
        ]
        .choose(rng)
        .unwrap_or(&Render::Query("print", "true"));
        let mobile = *[
            Render::Query("m", "1"),
            Render::Prefix("/m"),
            Render::Query("mobile", "1"),
        ]
        .choose(rng)
        .unwrap_or(&Render::Query("m", "1"));
        for (r, what, p) in [
            (amp, "AMP", 0.8),
            (print, "print", 0.6),
            (mobile, "mobile", 0.6),
        ] {
            if rng.random_bool(p) {
                let rule = alias_rule(
                    em,
                    &r.apply(&example),
                    &example,
                    &format!("{what} rendering of a story"),
                );
                renders.push((r, rule));
            }
        }
        if renders.is_empty() {
            let rule = alias_rule(
                em,
                &amp.apply(&example),
                &example,
                "AMP rendering of a story",
            );
            renders.push((amp, rule));
        }
        let short = rng.random_bool(0.6).then(|| {
            let folder = pick(rng, &["/story", "/a", "/s", "/news"], "/story");
            let rule = alias_rule(
                em,
                &UrlParts::new(format!("{base}{folder}/{{id}}")),
                &example,
                "short link by story id",
            );
            (folder, rule)
        });
        add_tracking(em, rng, 3);
        Renderings {
            base: base.to_string(),
            renders,
            short,
            sections: (0..rng.random_range(3..=8))
                .map(|_| word(rng).to_string())
                .collect(),
            next_id: rng.random_range(100_000..90_000_000),
            used: HashSet::new(),
        }
    }

    fn story_forms(
        &self,
        section: &str,
        s: &str,
        id: u64,
        tail: Option<(&str, &str)>,
    ) -> Vec<Form> {
        let b = &self.base;
        let with = |p: UrlParts| match tail {
            Some((k, v)) => p.q(k, v),
            None => p,
        };
        let canon = UrlParts::new(format!("{b}/{section}/{s}-{id}.html"));
        let mut forms = vec![(with(canon.clone()), None)];
        for &(r, rule) in &self.renders {
            forms.push((with(r.apply(&canon)), Some(rule)));
        }
        if let Some((folder, rule)) = self.short {
            forms.push((with(UrlParts::new(format!("{b}{folder}/{id}"))), Some(rule)));
        }
        forms_of(forms)
    }

    fn new_story(&mut self, rng: &mut ChaCha8Rng) -> (String, String, u64) {
        self.next_id += rng.random_range(1..400);
        let section = self
            .sections
            .choose(rng)
            .cloned()
            .unwrap_or_else(|| "news".into());
        let mut s = slug(rng, 3..=7);
        if !self.used.insert(s.clone()) {
            s = format!("{s}-x");
        }
        (section, s, self.next_id)
    }
}

impl Section for Renderings {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let (section, s, id) = self.new_story(rng);
        let story = em.content(
            rng,
            &self.story_forms(&section, &s, id, None),
            PageKind::Article,
        );
        if rng.random_bool(0.15) {
            for page in 2..=rng.random_range(2..=4) {
                let page = page.to_string();
                em.sibling(
                    rng,
                    &story,
                    &self.story_forms(&section, &s, id, Some(("page", &page))),
                    PageKind::Article,
                );
            }
        }
        if rng.random_bool(0.2) {
            em.sibling(
                rng,
                &story,
                &self.story_forms(&section, &s, id, Some(("comments", "all"))),
                PageKind::Listing,
            );
        }
        if rng.random_bool(0.3) {
            let (section, s, id) = self.new_story(rng);
            em.sibling(
                rng,
                &story,
                &self.story_forms(&section, &s, id, None),
                PageKind::Article,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let (section, s, id) = self.new_story(rng);
        self.story_forms(&section, &s, id, None)
    }

    fn variant(&self) -> String {
        format!(
            "news-renderings:{}{}",
            self.renders.len(),
            if self.short.is_some() { "+short" } else { "" }
        )
    }
}
