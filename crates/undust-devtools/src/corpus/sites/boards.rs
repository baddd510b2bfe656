//! Forum software as it forms its URLs: Discourse, phpBB 3 and vBulletin 3/4.
//!
//! - Discourse: a topic is `/t/slug/N` and `/t/N`; `/t/slug/N/M` opens it at post M, which the
//!   crawler view renders as the page holding that post (page 1 for M ≤ 20, `?page=2` beyond);
//!   share links add `?u=username`. Category `/c/slug/ID` ≡ `/c/slug/ID/l/latest`; `/l/top` is
//!   another listing. Distinct: `?page=N`, other topics.
//! - phpBB: `viewtopic.php?f=F&t=T` ≡ `viewtopic.php?t=T`, with `sid=` sessions and `hilit=`
//!   search highlighting; `start=` pages and `sk`/`sd` sorted forum listings are distinct.
//! - vBulletin: `showthread.php?t=T` ≡ `showthread.php?T-title` (friendly URLs, vB 3.8/4) ≡
//!   `/threads/T-title` (advanced friendly URLs), `s=` sessions, `highlight=`; `page=` and
//!   `/pageN` pages and `order`/`sort` listings are distinct; forums alike.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_session, add_word_param, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, ExtraPlace, Form, UrlParts};
use crate::corpus::words::{capitalize, pick, slug, title, word};
use crate::corpus::PageKind;

/// Posts per page of Discourse's crawler view.
const DISCOURSE_PAGE: u32 = 20;

pub(super) struct Discourse {
    base: String,
    rules: [usize; 3],
    categories: Vec<(u32, String)>,
    listed: HashSet<usize>,
    next_topic: u64,
}

impl Discourse {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let canon = UrlParts::new(format!("{base}/t/{{slug}}/{{id}}"));
        let rules = [
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/t/{{id}}")),
                &canon,
                "topic by id without its slug",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/t/{{slug}}/{{id}}/{{post}}")),
                &canon,
                "topic opened at a post of its first page",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/c/{{slug}}/{{id}}/l/latest")),
                &UrlParts::new(format!("{base}/c/{{slug}}/{{id}}")),
                "category's default `latest` view",
            ),
        ];
        add_word_param(em, rng, "u", "share link's user", (0.1, 0.3));
        Discourse {
            base: base.to_string(),
            rules,
            categories: (0..rng.random_range(3..=15))
                .map(|i| (i + 1, slug(rng, 1..=2)))
                .collect(),
            listed: HashSet::new(),
            next_topic: rng.random_range(100..90_000),
        }
    }

    fn topic_forms(
        &self,
        id: u64,
        s: &str,
        page: u32,
        posts: u32,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let b = &self.base;
        let paged = |p: UrlParts| {
            if page > 1 {
                p.q("page", page.to_string())
            } else {
                p
            }
        };
        let mut forms = vec![
            (paged(UrlParts::new(format!("{b}/t/{s}/{id}"))), None),
            (
                paged(UrlParts::new(format!("{b}/t/{id}"))),
                Some(self.rules[0]),
            ),
        ];
        // Post numbers on this page open it too.
        let first = (page - 1) * DISCOURSE_PAGE + 1;
        let last = (page * DISCOURSE_PAGE).min(posts);
        if last > first {
            for _ in 0..2 {
                let m = rng.random_range(first.max(2)..=last);
                forms.push((
                    UrlParts::new(format!("{b}/t/{s}/{id}/{m}")),
                    Some(self.rules[1]),
                ));
            }
        }
        forms_of(forms)
    }

    fn category_forms(&self, c: usize, view: &str, page: u32) -> Vec<Form> {
        let (id, s) = &self.categories[c];
        let b = &self.base;
        let paged = |p: UrlParts| {
            if page > 0 {
                p.q("page", page.to_string())
            } else {
                p
            }
        };
        if view == "latest" {
            forms_of(vec![
                (paged(UrlParts::new(format!("{b}/c/{s}/{id}"))), None),
                (
                    paged(UrlParts::new(format!("{b}/c/{s}/{id}/l/latest"))),
                    Some(self.rules[2]),
                ),
            ])
        } else {
            forms_of(vec![(
                paged(UrlParts::new(format!("{b}/c/{s}/{id}/l/{view}"))),
                None,
            )])
        }
    }
}

impl Section for Discourse {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.1) && self.listed.len() < self.categories.len() {
            let c = rng.random_range(0..self.categories.len());
            if self.listed.insert(c) {
                let first =
                    em.content(rng, &self.category_forms(c, "latest", 0), PageKind::Listing);
                let view = pick(rng, &["top", "new", "hot"], "top");
                em.sibling(
                    rng,
                    &first,
                    &self.category_forms(c, view, 0),
                    PageKind::Listing,
                );
                for page in 1..rng.random_range(1..=4) {
                    em.sibling(
                        rng,
                        &first,
                        &self.category_forms(c, "latest", page),
                        PageKind::Listing,
                    );
                }
                return;
            }
        }
        self.next_topic += rng.random_range(1..8);
        let id = self.next_topic;
        let s = slug(rng, 2..=6);
        let posts = if rng.random_bool(0.8) {
            rng.random_range(1..=DISCOURSE_PAGE)
        } else {
            rng.random_range(DISCOURSE_PAGE + 1..=4 * DISCOURSE_PAGE)
        };
        let forms = self.topic_forms(id, &s, 1, posts, rng);
        let first = em.content(rng, &forms, PageKind::Thread);
        for page in 2..=posts.div_ceil(DISCOURSE_PAGE) {
            let forms = self.topic_forms(id, &s, page, posts, rng);
            em.sibling(rng, &first, &forms, PageKind::Thread);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let id = self.next_topic + rng.random_range(1_000_000..2_000_000);
        self.topic_forms(id, &slug(rng, 3..=3), 1, 1, rng)
    }

    fn variant(&self) -> String {
        "discourse".to_string()
    }
}

pub(super) struct PhpBb {
    base: String,
    rule: usize,
    per_page: u32,
    forums: u32,
    listed: HashSet<u32>,
    next_topic: u64,
}

impl PhpBb {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(rng, &["", "/forum", "/phpBB3", "/board"], "")
        );
        let rule = alias_rule(
            em,
            &UrlParts::new(format!("{base}/viewtopic.php")).q("t", "{t}"),
            &UrlParts::new(format!("{base}/viewtopic.php"))
                .q("f", "{f}")
                .q("t", "{t}"),
            "topic without its forum id",
        );
        add_session(em, rng, "sid", ExtraPlace::Query, 32);
        add_word_param(em, rng, "hilit", "search highlighting", (0.05, 0.2));
        PhpBb {
            base,
            rule,
            per_page: pick(rng, &["10", "15", "20", "25"], "20")
                .parse()
                .unwrap_or(20),
            forums: rng.random_range(3..=40),
            listed: HashSet::new(),
            next_topic: rng.random_range(1..60_000),
        }
    }

    fn topic_forms(&self, t: u64, f: u32, page: u32) -> Vec<Form> {
        let start = |p: UrlParts| {
            if page > 1 {
                p.q("start", ((page - 1) * self.per_page).to_string())
            } else {
                p
            }
        };
        let script = format!("{}/viewtopic.php", self.base);
        forms_of(vec![
            (
                start(
                    UrlParts::new(script.clone())
                        .q("f", f.to_string())
                        .q("t", t.to_string()),
                ),
                None,
            ),
            (
                start(UrlParts::new(script).q("t", t.to_string())),
                Some(self.rule),
            ),
        ])
    }

    fn forum_forms(&self, f: u32, page: u32, sort: Option<(&str, &str)>) -> Vec<Form> {
        let mut p = UrlParts::new(format!("{}/viewforum.php", self.base)).q("f", f.to_string());
        if let Some((sk, sd)) = sort {
            p = p.q("sk", sk).q("sd", sd);
        }
        if page > 1 {
            p = p.q("start", ((page - 1) * self.per_page).to_string());
        }
        forms_of(vec![(p, None)])
    }
}

impl Section for PhpBb {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.1) && self.listed.len() < self.forums as usize {
            let f = rng.random_range(1..=self.forums);
            if self.listed.insert(f) {
                let first = em.content(rng, &self.forum_forms(f, 1, None), PageKind::Listing);
                let sk = pick(rng, &["a", "r", "s", "v"], "r");
                let sd = pick(rng, &["a", "d"], "a");
                em.sibling(
                    rng,
                    &first,
                    &self.forum_forms(f, 1, Some((sk, sd))),
                    PageKind::Listing,
                );
                for page in 2..=rng.random_range(1..=5) {
                    em.sibling(
                        rng,
                        &first,
                        &self.forum_forms(f, page, None),
                        PageKind::Listing,
                    );
                }
                return;
            }
        }
        self.next_topic += rng.random_range(1..6);
        let t = self.next_topic;
        let f = rng.random_range(1..=self.forums);
        let first = em.content(rng, &self.topic_forms(t, f, 1), PageKind::Thread);
        if rng.random_bool(0.3) {
            for page in 2..=rng.random_range(2..=6) {
                em.sibling(rng, &first, &self.topic_forms(t, f, page), PageKind::Thread);
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let t = self.next_topic + rng.random_range(1_000_000..2_000_000);
        self.topic_forms(t, rng.random_range(1..=self.forums), 1)
    }

    fn variant(&self) -> String {
        format!("phpbb:{}", self.base)
    }
}

pub(super) struct VBulletin {
    base: String,
    /// Friendly URL styles in use: `showthread.php?T-title` and/or `/threads/T-title`.
    friendly: bool,
    advanced: bool,
    rules: [usize; 4],
    forums: Vec<String>,
    listed: HashSet<usize>,
    next_thread: u64,
}

impl VBulletin {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!("{base}{}", pick(rng, &["", "/forums", "/vb", "/forum"], ""));
        let friendly = rng.random_bool(0.7);
        let advanced = !friendly || rng.random_bool(0.5);
        let thread = UrlParts::new(format!("{base}/showthread.php")).q("t", "{t}");
        let forum = UrlParts::new(format!("{base}/forumdisplay.php")).q("f", "{f}");
        let rules = [
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/showthread.php?{{t}}-{{title}}")),
                &thread,
                "thread by friendly URL",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/threads/{{t}}-{{title}}")),
                &thread,
                "thread by advanced friendly URL",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/forumdisplay.php?{{f}}-{{title}}")),
                &forum,
                "forum by friendly URL",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/forums/{{f}}-{{title}}")),
                &forum,
                "forum by advanced friendly URL",
            ),
        ];
        let name = pick(rng, &["s", "s", "sessionhash"], "s");
        add_session(em, rng, name, ExtraPlace::Query, 32);
        add_word_param(em, rng, "highlight", "search highlighting", (0.05, 0.2));
        VBulletin {
            base,
            friendly,
            advanced,
            rules,
            forums: (0..rng.random_range(3..=30))
                .map(|_| title(rng, 1..=3, "-"))
                .collect(),
            listed: HashSet::new(),
            next_thread: rng.random_range(1..400_000),
        }
    }

    /// Thread (or else forum) forms: the script with `?t=`/`?f=`, and the friendly forms.
    fn forms(
        &self,
        thread: bool,
        id: u64,
        title: &str,
        page: u32,
        extra: Option<(&str, &str)>,
    ) -> Vec<Form> {
        let (script, key, folder, rules) = if thread {
            (
                "showthread.php",
                "t",
                "threads",
                (self.rules[0], self.rules[1]),
            )
        } else {
            (
                "forumdisplay.php",
                "f",
                "forums",
                (self.rules[2], self.rules[3]),
            )
        };
        let b = &self.base;
        let tail = |mut p: UrlParts| {
            if let Some((k, v)) = extra {
                p = p.q(k, v);
            }
            if page > 1 {
                p = p.q("page", page.to_string());
            }
            p
        };
        let mut forms = vec![(
            tail(UrlParts::new(format!("{b}/{script}")).q(key, id.to_string())),
            None,
        )];
        if self.friendly {
            // `showthread.php?123-Title`: a query of one key without a value.
            let mut p = tail(UrlParts::new(format!("{b}/{script}")));
            p.query.insert(0, (format!("{id}-{title}"), String::new()));
            forms.push((p, Some(rules.0)));
        }
        if self.advanced {
            let suffix = if page > 1 {
                format!("/page{page}")
            } else {
                String::new()
            };
            let mut p = UrlParts::new(format!("{b}/{folder}/{id}-{title}{suffix}"));
            if let Some((k, v)) = extra {
                p = p.q(k, v);
            }
            forms.push((p, Some(rules.1)));
        }
        forms_of(forms)
    }
}

impl Section for VBulletin {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.1) && self.listed.len() < self.forums.len() {
            let f = rng.random_range(0..self.forums.len());
            if self.listed.insert(f) {
                let name = self.forums[f].clone();
                let id = f as u64 + 2;
                let first = em.content(
                    rng,
                    &self.forms(false, id, &name, 1, None),
                    PageKind::Listing,
                );
                let order = if rng.random_bool(0.5) {
                    ("order", "asc")
                } else {
                    (
                        "sort",
                        pick(rng, &["replycount", "views", "title"], "views"),
                    )
                };
                em.sibling(
                    rng,
                    &first,
                    &self.forms(false, id, &name, 1, Some(order)),
                    PageKind::Listing,
                );
                for page in 2..=rng.random_range(1..=5) {
                    em.sibling(
                        rng,
                        &first,
                        &self.forms(false, id, &name, page, None),
                        PageKind::Listing,
                    );
                }
                return;
            }
        }
        self.next_thread += rng.random_range(1..10);
        let t = self.next_thread;
        let name = title(rng, 2..=6, "-");
        let first = em.content(rng, &self.forms(true, t, &name, 1, None), PageKind::Thread);
        if rng.random_bool(0.3) {
            for page in 2..=rng.random_range(2..=6) {
                em.sibling(
                    rng,
                    &first,
                    &self.forms(true, t, &name, page, None),
                    PageKind::Thread,
                );
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let t = self.next_thread + rng.random_range(1_000_000..2_000_000);
        let name = capitalize(word(rng));
        self.forms(true, t, &name, 1, None)
    }

    fn variant(&self) -> String {
        format!(
            "vbulletin:{}{}{}",
            self.base,
            if self.friendly { "+friendly" } else { "" },
            if self.advanced { "+advanced" } else { "" }
        )
    }
}
