//! XenForo 2: how the forum addresses threads and forums, with or without full friendly URLs.
//!
//! An item's route is `type/title.id/` (`threads/`, `forums/`): the title is decoration and the
//! id is the item, so `threads/123/` (and any other title) is redirected to the canonical
//! `threads/real-title.123/`, as is the route without its trailing slash. Without the "Use full
//! friendly URLs" option the route is the whole query string of `index.php`
//! (`/index.php?threads/title.123/`, a query key without a value); with it the `index.php?`
//! form still routes. A thread's pages are `page-N`; a post's link `threads/title.123/post-456`
//! opens the page the post is on and `threads/title.123/latest` the last page. A forum listing
//! takes the sort keys `order=` and `direction=`. Distinct: thread pages after the first, forum
//! pages, sort orders and members' profiles.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::PageKind;

/// Messages per thread page (XenForo's default `messagesPerPage`).
const POSTS_PER_PAGE: u32 = 20;

/// A route under `index.php?` (friendly URLs off) or as the path (on).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Routing {
    FullFriendly,
    QueryString,
}

pub(super) struct XenForo {
    base: String,
    routing: Routing,
    /// Rules: item by id without its title, the other routing's form, route without its trailing
    /// slash, a post's link, the `latest` link.
    rules: [usize; 5],
    forums: Vec<String>,
    listed: HashSet<usize>,
    next_thread: u64,
    next_post: u64,
    next_member: u64,
}

impl XenForo {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!("{base}{}", pick(rng, &["", "/community", "/forum"], ""));
        let routing = if rng.random_bool(0.75) {
            Routing::FullFriendly
        } else {
            Routing::QueryString
        };
        let mut forum = XenForo {
            base,
            routing,
            rules: [0; 5],
            forums: (0..rng.random_range(3..=25))
                .map(|_| slug(rng, 1..=3))
                .collect(),
            listed: HashSet::new(),
            next_thread: rng.random_range(10..200_000),
            next_post: rng.random_range(100..2_000_000),
            next_member: rng.random_range(1..50_000),
        };
        let canon = forum.route(routing, "threads/{title}.{id}/");
        let other = match routing {
            Routing::FullFriendly => Routing::QueryString,
            Routing::QueryString => Routing::FullFriendly,
        };
        forum.rules = [
            alias_rule(
                em,
                &forum.route(routing, "threads/{id}/"),
                &canon,
                "thread by id without its title",
            ),
            alias_rule(
                em,
                &forum.route(other, "threads/{title}.{id}/"),
                &canon,
                "the other routing's form",
            ),
            alias_rule(
                em,
                &forum.route(routing, "threads/{title}.{id}"),
                &canon,
                "route without its trailing slash",
            ),
            alias_rule(
                em,
                &forum.route(routing, "threads/{title}.{id}/post-{post}"),
                &canon,
                "a post's link opens the page it is on",
            ),
            alias_rule(
                em,
                &forum.route(routing, "threads/{title}.{id}/latest"),
                &canon,
                "the `latest` link opens the last page",
            ),
        ];
        forum
    }

    /// `route` (no leading `/`) as this forum links it under `routing`.
    fn route(&self, routing: Routing, route: &str) -> UrlParts {
        match routing {
            Routing::FullFriendly => UrlParts::new(format!("{}/{route}", self.base)),
            Routing::QueryString => {
                let mut p = UrlParts::new(format!("{}/index.php", self.base));
                p.query.push((route.to_string(), String::new()));
                p
            }
        }
    }

    /// Every address of page `page` of a thread of `pages` pages whose posts on that page include
    /// `posts`.
    fn thread_forms(
        &self,
        id: u64,
        title: &str,
        page: u32,
        pages: u32,
        posts: &[u64],
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let suffix = if page > 1 {
            format!("page-{page}")
        } else {
            String::new()
        };
        let item = format!("threads/{title}.{id}/");
        let mut forms = vec![(self.route(self.routing, &format!("{item}{suffix}")), None)];
        if page == 1 {
            forms.push((
                self.route(self.routing, &format!("threads/{id}/")),
                Some(self.rules[0]),
            ));
            forms.push((
                self.route(self.routing, &format!("threads/{title}.{id}")),
                Some(self.rules[2]),
            ));
        }
        let other = match self.routing {
            Routing::FullFriendly => Routing::QueryString,
            Routing::QueryString => Routing::FullFriendly,
        };
        if self.routing == Routing::QueryString || rng.random_bool(0.5) {
            forms.push((
                self.route(other, &format!("{item}{suffix}")),
                Some(self.rules[1]),
            ));
        }
        for post in posts {
            forms.push((
                self.route(self.routing, &format!("{item}post-{post}")),
                Some(self.rules[3]),
            ));
        }
        if page == pages {
            forms.push((
                self.route(self.routing, &format!("{item}latest")),
                Some(self.rules[4]),
            ));
        }
        forms_of(forms)
    }

    /// A forum's listing: page `page`, sorted by `order` when given.
    fn forum_forms(&self, f: usize, page: u32, order: Option<(&str, &str)>) -> Vec<Form> {
        let id = f + 2;
        let title = &self.forums[f];
        let suffix = if page > 1 {
            format!("page-{page}")
        } else {
            String::new()
        };
        let with_order = |mut p: UrlParts| {
            if let Some((field, direction)) = order {
                p = p.q("order", field).q("direction", direction);
            }
            p
        };
        let mut forms = vec![(
            with_order(self.route(self.routing, &format!("forums/{title}.{id}/{suffix}"))),
            None,
        )];
        if page == 1 {
            forms.push((
                with_order(self.route(self.routing, &format!("forums/{id}/"))),
                Some(self.rules[0]),
            ));
        }
        forms_of(forms)
    }
}

impl Section for XenForo {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.1) && self.listed.len() < self.forums.len() {
            let f = rng.random_range(0..self.forums.len());
            if self.listed.insert(f) {
                let first = em.content(rng, &self.forum_forms(f, 1, None), PageKind::Listing);
                let field = pick(rng, &["reply_count", "view_count", "title"], "title");
                let direction = pick(rng, &["asc", "desc"], "desc");
                em.sibling(
                    rng,
                    &first,
                    &self.forum_forms(f, 1, Some((field, direction))),
                    PageKind::Listing,
                );
                for page in 2..rng.random_range(2..=5) {
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
        if rng.random_bool(0.08) {
            // A member's profile: its own content, one form per routing.
            self.next_member += rng.random_range(1..40);
            let route = format!("members/{}.{}/", word(rng), self.next_member);
            em.content(
                rng,
                &forms_of(vec![(self.route(self.routing, &route), None)]),
                PageKind::Article,
            );
            return;
        }
        self.next_thread += rng.random_range(1..6);
        let id = self.next_thread;
        let title = slug(rng, 2..=7);
        let posts = if rng.random_bool(0.75) {
            rng.random_range(1..=POSTS_PER_PAGE)
        } else {
            rng.random_range(POSTS_PER_PAGE + 1..=5 * POSTS_PER_PAGE)
        };
        let pages = posts.div_ceil(POSTS_PER_PAGE);
        let first_post = self.next_post;
        self.next_post += u64::from(posts) + rng.random_range(0..50);
        let mut first = None;
        for page in 1..=pages {
            // One or two posts of this page are linked on their own.
            let on_page = (page - 1) * POSTS_PER_PAGE..(page * POSTS_PER_PAGE).min(posts);
            let linked: Vec<u64> = (0..rng.random_range(0..=2))
                .map(|_| first_post + u64::from(rng.random_range(on_page.clone())))
                .collect();
            let forms = self.thread_forms(id, &title, page, pages, &linked, rng);
            match &first {
                None => first = Some(em.content(rng, &forms, PageKind::Thread)),
                Some(of) => {
                    em.sibling(rng, of, &forms, PageKind::Thread);
                }
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let id = self.next_thread + rng.random_range(1_000_000..2_000_000);
        self.thread_forms(id, &slug(rng, 3..=3), 1, 1, &[], rng)
    }

    fn variant(&self) -> String {
        match self.routing {
            Routing::FullFriendly => format!("xenforo:friendly{}", self.base),
            Routing::QueryString => format!("xenforo:index.php?{}", self.base),
        }
    }
}
