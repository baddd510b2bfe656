//! Forum generator: vBulletin-, phpBB- and path-style forums with session ids in the query,
//! as `;name=` path parameters or as ASP.NET `/(S(...))` segments; threads with pages, listings
//! with pages and sort orders (the hard negatives).

use std::collections::HashSet;

use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_session, forms_of, pattern, Section};
use crate::corpus::emit::{Emitter, ExtraPlace, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::{DustRule, PageKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ForumStyle {
    VBulletin,
    PhpBb,
    Paths,
}

pub(super) struct Forum {
    style: ForumStyle,
    base: String,
    forums: u32,
    forum_slugs: Vec<String>,
    listed: HashSet<u32>,
    next_thread: u64,
    per_page: u32,
    sort: (String, String),
    alias_rule: Option<usize>,
    session: String,
}

impl Forum {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let style = *[ForumStyle::VBulletin, ForumStyle::PhpBb, ForumStyle::Paths]
            .choose(rng)
            .unwrap_or(&ForumStyle::PhpBb);
        let forums = rng.random_range(3..=30);
        let forum_slugs = (0..forums).map(|_| slug(rng, 2..=2)).collect();
        let sort = match style {
            ForumStyle::VBulletin => pick(
                rng,
                &["order=desc", "sort=replycount", "sort=views"],
                "order=desc",
            ),
            ForumStyle::PhpBb => pick(rng, &["sk=t", "sd=a", "sk=r"], "sk=t"),
            ForumStyle::Paths => pick(
                rng,
                &["sort=newest", "sort=oldest", "order=popular"],
                "sort=newest",
            ),
        };
        let (k, v) = sort.split_once('=').unwrap_or(("sort", "newest"));
        let mut forum = Forum {
            style,
            base: base.to_string(),
            forums,
            forum_slugs,
            listed: HashSet::new(),
            next_thread: rng.random_range(1..50_000),
            per_page: *[10u32, 15, 20, 25].choose(rng).unwrap_or(&20),
            sort: (k.to_string(), v.to_string()),
            alias_rule: None,
            session: String::new(),
        };
        // Session ids: where and how they are named depends on the software.
        let (name, place, len) = match style {
            ForumStyle::VBulletin => (
                pick(rng, &["s", "sid", "sessionhash", "sessid"], "s").to_string(),
                ExtraPlace::Query,
                32,
            ),
            ForumStyle::PhpBb => {
                let name = if rng.random_bool(0.7) {
                    "sid".to_string()
                } else {
                    format!("{}_sid", &word(rng)[..3])
                };
                (name, ExtraPlace::Query, 32)
            }
            ForumStyle::Paths => {
                if rng.random_bool(0.5) {
                    (
                        pick(rng, &["jsessionid", "phpsessid", "sessionid"], "jsessionid")
                            .to_string(),
                        ExtraPlace::PathParam,
                        32,
                    )
                } else {
                    ("S".to_string(), ExtraPlace::PathPrefix, 24)
                }
            }
        };
        add_session(em, rng, &name, place, len);
        forum.session = name;
        if rng.random_bool(0.6) {
            let alias = forum.thread_parts(1, "{t}", "{f}", "{slug}", true);
            let canon = forum.thread_parts(1, "{t}", "{f}", "{slug}", false);
            forum.alias_rule = Some(em.rule(
                DustRule::PathAlias {
                    from: pattern(&alias),
                    to: pattern(&canon),
                },
                "alternative thread URL layout".to_string(),
            ));
        }
        forum
    }

    fn thread_parts(&self, page: u32, t: &str, f: &str, slug: &str, alias: bool) -> UrlParts {
        let b = &self.base;
        match self.style {
            ForumStyle::VBulletin => {
                if alias {
                    let suffix = if page > 1 {
                        format!("/page{page}")
                    } else {
                        String::new()
                    };
                    UrlParts::new(format!("{b}/threads/{t}-{slug}{suffix}"))
                } else {
                    let p = UrlParts::new(format!("{b}/showthread.php")).q("t", t);
                    if page > 1 {
                        p.q("page", page.to_string())
                    } else {
                        p
                    }
                }
            }
            ForumStyle::PhpBb => {
                let p = UrlParts::new(format!("{b}/viewtopic.php"));
                let p = if alias {
                    p.q("t", t)
                } else {
                    p.q("f", f).q("t", t)
                };
                if page > 1 {
                    p.q("start", ((page - 1) * self.per_page).to_string())
                } else {
                    p
                }
            }
            ForumStyle::Paths => {
                let suffix = if page > 1 {
                    format!("/page-{page}")
                } else {
                    String::new()
                };
                if alias {
                    UrlParts::new(format!("{b}/topic/{t}{suffix}"))
                } else {
                    UrlParts::new(format!("{b}/topic/{t}/{slug}{suffix}"))
                }
            }
        }
    }

    fn thread_forms(&self, t: u64, f: u32, slug: &str, page: u32) -> Vec<Form> {
        let (t, f) = (t.to_string(), f.to_string());
        let mut forms = vec![(self.thread_parts(page, &t, &f, slug, false), None)];
        if let Some(rule) = self.alias_rule {
            forms.push((self.thread_parts(page, &t, &f, slug, true), Some(rule)));
        }
        forms_of(forms)
    }

    fn listing_forms(&self, f: u32, page: u32, sorted: bool) -> Vec<Form> {
        let b = &self.base;
        let mut p = match self.style {
            ForumStyle::VBulletin => {
                let p = UrlParts::new(format!("{b}/forumdisplay.php")).q("f", f.to_string());
                if page > 1 {
                    p.q("page", page.to_string())
                } else {
                    p
                }
            }
            ForumStyle::PhpBb => {
                let p = UrlParts::new(format!("{b}/viewforum.php")).q("f", f.to_string());
                if page > 1 {
                    p.q("start", ((page - 1) * self.per_page).to_string())
                } else {
                    p
                }
            }
            ForumStyle::Paths => {
                let s = self
                    .forum_slugs
                    .get(f as usize)
                    .map_or("general", String::as_str);
                let suffix = if page > 1 {
                    format!("/page-{page}")
                } else {
                    String::new()
                };
                UrlParts::new(format!("{b}/forum/{f}-{s}{suffix}"))
            }
        };
        if sorted {
            p = p.q(&self.sort.0, self.sort.1.clone());
        }
        forms_of(vec![(p, None)])
    }
}

impl Section for Forum {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.12) && self.listed.len() < self.forums as usize {
            let f = rng.random_range(0..self.forums);
            if self.listed.insert(f) {
                let first = em.content(rng, &self.listing_forms(f, 1, false), PageKind::Listing);
                em.sibling(
                    rng,
                    &first,
                    &self.listing_forms(f, 1, true),
                    PageKind::Listing,
                );
                for page in 2..=rng.random_range(1..=6) {
                    em.sibling(
                        rng,
                        &first,
                        &self.listing_forms(f, page, false),
                        PageKind::Listing,
                    );
                }
                return;
            }
        }
        self.next_thread += rng.random_range(1..6);
        let t = self.next_thread;
        let f = rng.random_range(0..self.forums);
        let s = slug(rng, 2..=5);
        let pages = if rng.random_bool(0.7) {
            1
        } else {
            rng.random_range(2..=6)
        };
        let first = em.content(rng, &self.thread_forms(t, f, &s, 1), PageKind::Thread);
        for page in 2..=pages {
            em.sibling(
                rng,
                &first,
                &self.thread_forms(t, f, &s, page),
                PageKind::Thread,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let t = self.next_thread + rng.random_range(1_000_000..2_000_000);
        self.thread_forms(t, rng.random_range(0..self.forums), &slug(rng, 3..=3), 1)
    }

    fn variant(&self) -> String {
        let style = match self.style {
            ForumStyle::VBulletin => "vbulletin",
            ForumStyle::PhpBb => "phpbb",
            ForumStyle::Paths => "paths",
        };
        format!("forum:{style}:{}", self.session)
    }
}
