//! WordPress: a post is `?p=N` and its pretty permalink (whose structure the site chooses:
//! `/%year%/%monthnum%/%postname%/`, `/%postname%/`, `/archives/%post_id%`,
//! `/%category%/%postname%/`), with and without the trailing slash, its AMP rendering (`/amp/`
//! or `?amp=1`) and comment-reply links (`?replytocom=N`). Pages are `?page_id=N` and `/slug/`.
//! Category archives are `?cat=N` and `/category/slug/`. Distinct: a post's second page
//! (`/slug/2/`), its comment feed (`/slug/feed/`), archive pagination (`/page/N/`).
//!
//! On sites that declare canonicals, a post's pages say what WordPress writes in their head:
//! the pretty permalink as `rel=canonical` and `/?p=N` as `rel=shortlink` (`wp_shortlink_wp_head`,
//! on singular views only: the post and its page 2, not archives; the comment feed is a feed).

use std::collections::HashSet;

use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Extra, ExtraPlace, Form, UrlParts};
use crate::corpus::words::slug;
use crate::corpus::{DustRule, PageKind};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Permalink {
    DatePostname,
    Postname,
    Archives,
    CategoryPostname,
}

pub(super) struct WordPress {
    base: String,
    permalink: Permalink,
    /// AMP: `/amp/` suffix (true) or `?amp=1` (false); None without the AMP plugin.
    amp: Option<bool>,
    categories: Vec<(u32, String)>,
    listed: HashSet<usize>,
    rules: [usize; 4],
    next_id: u64,
    date: (u32, u32),
    used: HashSet<String>,
}

impl WordPress {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let permalink = *[
            Permalink::DatePostname,
            Permalink::Postname,
            Permalink::Archives,
            Permalink::CategoryPostname,
        ]
        .choose(rng)
        .unwrap_or(&Permalink::Postname);
        let amp = rng.random_bool(0.6).then(|| rng.random_bool(0.6));
        let mut wp = WordPress {
            base: base.to_string(),
            permalink,
            amp,
            categories: (0..rng.random_range(3..=10))
                .map(|i| (i + 1, slug(rng, 1..=2)))
                .collect(),
            listed: HashSet::new(),
            rules: [0; 4],
            next_id: rng.random_range(10..20_000),
            date: (rng.random_range(2008..=2024), rng.random_range(1..=12)),
            used: HashSet::new(),
        };
        let pretty = wp.pretty("{id}", "{slug}", "{category}");
        wp.rules = [
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/")).q("p", "{id}"),
                &pretty,
                "post by id `?p=`",
            ),
            alias_rule(
                em,
                &WordPress::amp_of(&pretty, true),
                &pretty,
                "AMP rendering of a post",
            ),
            alias_rule(
                em,
                &UrlParts::new(pretty.path.trim_end_matches('/').to_string()),
                &pretty,
                "permalink without its trailing slash",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/")).q("cat", "{n}"),
                &UrlParts::new(format!("{base}/category/{{category}}/")),
                "category archive by id `?cat=`",
            ),
        ];
        // Reply links on every commented post: `?replytocom=<comment id>`.
        let values = (0..(em.cap / 10).clamp(4, 2_000))
            .map(|_| rng.random_range(100..900_000u32).to_string())
            .collect();
        em.add_extra(
            DustRule::IgnoreQueryKey {
                key: "replytocom".to_string(),
            },
            "comment reply link `replytocom`".to_string(),
            Extra {
                rule: 0,
                name: "replytocom".to_string(),
                place: ExtraPlace::Query,
                prob: rng.random_range(0.1..0.3),
                values,
            },
        );
        if rng.random_bool(0.5) {
            add_tracking(em, rng, 2);
        }
        wp
    }

    fn pretty(&self, id: &str, slug: &str, category: &str) -> UrlParts {
        let b = &self.base;
        let (y, m) = self.date;
        UrlParts::new(match self.permalink {
            Permalink::DatePostname => format!("{b}/{y}/{m:02}/{slug}/"),
            Permalink::Postname => format!("{b}/{slug}/"),
            Permalink::Archives => format!("{b}/archives/{id}"),
            Permalink::CategoryPostname => format!("{b}/{category}/{slug}/"),
        })
    }

    fn amp_of(pretty: &UrlParts, suffix: bool) -> UrlParts {
        if suffix {
            UrlParts::new(format!("{}/amp/", pretty.path.trim_end_matches('/')))
        } else {
            pretty.clone().q("amp", "1")
        }
    }

    fn post_forms(&self, id: u64, slug: &str, category: &str) -> Vec<Form> {
        let pretty = self.pretty(&id.to_string(), slug, category);
        let mut forms = vec![(pretty.clone(), None)];
        forms.push((
            UrlParts::new(format!("{}/", self.base)).q("p", id.to_string()),
            Some(self.rules[0]),
        ));
        if let Some(suffix) = self.amp {
            forms.push((WordPress::amp_of(&pretty, suffix), Some(self.rules[1])));
        }
        if pretty.path.ends_with('/') {
            forms.push((
                UrlParts::new(pretty.path.trim_end_matches('/').to_string()),
                Some(self.rules[2]),
            ));
        }
        forms_of(forms)
    }

    /// A page of the post that is not the post: page 2, the comment feed.
    fn sub_forms(&self, id: u64, slug: &str, category: &str, sub: &str) -> Vec<Form> {
        let pretty = self.pretty(&id.to_string(), slug, category);
        forms_of(vec![(
            UrlParts::new(format!("{}/{sub}/", pretty.path.trim_end_matches('/'))),
            None,
        )])
    }

    fn category_forms(&self, c: usize, page: u32) -> Vec<Form> {
        let (n, s) = &self.categories[c];
        let b = &self.base;
        if page > 1 {
            return forms_of(vec![
                (
                    UrlParts::new(format!("{b}/category/{s}/page/{page}/")),
                    None,
                ),
                (
                    UrlParts::new(format!("{b}/"))
                        .q("cat", n.to_string())
                        .q("paged", page.to_string()),
                    Some(self.rules[3]),
                ),
            ]);
        }
        forms_of(vec![
            (UrlParts::new(format!("{b}/category/{s}/")), None),
            (
                UrlParts::new(format!("{b}/")).q("cat", n.to_string()),
                Some(self.rules[3]),
            ),
        ])
    }

    /// Declares what the next page of post `id` says: its permalink canonical (the first form)
    /// and `/?p=N` its shortlink.
    fn declare_post(&self, em: &mut Emitter, id: u64, slug: &str, category: &str) {
        let forms = self.post_forms(id, slug, category);
        // The `?p=` form is always the second.
        em.declare_next(0, Some((forms.as_slice(), 1)));
    }

    fn new_post(&mut self, rng: &mut ChaCha8Rng) -> (u64, String, String) {
        self.next_id += rng.random_range(1..30);
        if rng.random_bool(0.2) {
            self.date.1 += 1;
            if self.date.1 > 12 {
                self.date = (self.date.0 + 1, 1);
            }
        }
        let category = self
            .categories
            .choose(rng)
            .map_or_else(|| "uncategorized".to_string(), |c| c.1.clone());
        let mut s = slug(rng, 2..=6);
        if !self.used.insert(s.clone()) {
            s = format!("{s}-{}", self.next_id);
            self.used.insert(s.clone());
        }
        (self.next_id, s, category)
    }
}

impl Section for WordPress {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.1) && self.listed.len() < self.categories.len() {
            let c = rng.random_range(0..self.categories.len());
            if self.listed.insert(c) {
                let first = em.content(rng, &self.category_forms(c, 1), PageKind::Listing);
                for page in 2..=rng.random_range(1..=5) {
                    em.sibling(
                        rng,
                        &first,
                        &self.category_forms(c, page),
                        PageKind::Listing,
                    );
                }
                return;
            }
        }
        let (id, s, category) = self.new_post(rng);
        self.declare_post(em, id, &s, &category);
        let post = em.content(rng, &self.post_forms(id, &s, &category), PageKind::Article);
        if rng.random_bool(0.15) {
            self.declare_post(em, id, &s, &category);
            em.sibling(
                rng,
                &post,
                &self.sub_forms(id, &s, &category, "2"),
                PageKind::Article,
            );
        }
        if rng.random_bool(0.25) {
            em.sibling(
                rng,
                &post,
                &self.sub_forms(id, &s, &category, "feed"),
                PageKind::Listing,
            );
        }
        if rng.random_bool(0.1) {
            // Another post of the same day, a hard negative of this one.
            let (id, s, category) = self.new_post(rng);
            self.declare_post(em, id, &s, &category);
            em.sibling(
                rng,
                &post,
                &self.post_forms(id, &s, &category),
                PageKind::Article,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let (id, s, category) = self.new_post(rng);
        self.post_forms(id, &s, &category)
    }

    fn variant(&self) -> String {
        let p = match self.permalink {
            Permalink::DatePostname => "date-postname",
            Permalink::Postname => "postname",
            Permalink::Archives => "archives-id",
            Permalink::CategoryPostname => "category-postname",
        };
        let amp = match self.amp {
            Some(true) => "+amp-path",
            Some(false) => "+amp-query",
            None => "",
        };
        format!("wordpress:{p}{amp}:{}", word_of(&self.base))
    }
}

fn word_of(base: &str) -> &str {
    if base.is_empty() {
        "root"
    } else {
        base
    }
}
