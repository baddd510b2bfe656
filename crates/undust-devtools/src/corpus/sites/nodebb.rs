//! NodeBB: a Node.js forum whose pages are Express routes with an id, a slug and an optional
//! index after it, rendered on the server for crawlers.
//!
//! What the model follows (read in NodeBB's `src/routes/index.js`, `src/routes/accounts.js`,
//! `src/controllers/topics.js`, `src/middleware/headers.js` and `install/data/defaults.json`):
//!
//! - A topic is `/topic/T/slug`, a category `/category/C/slug`; the controllers redirect
//!   `/topic/T` and `/category/C` (slug missing) to the slugged address, so both are crawled.
//! - Lists page with `?page=N`; the pager writes page 1 as `?page=1` too.
//! - `/topic/T/slug/N` opens the topic at post index N (notifications, teasers and `/post/PID`
//!   lead there: `/post/PID` redirects to it). With pagination on (`usePagination`), the page
//!   shown is the one holding N, `1 + (N - 1) / postsPerPage` (20 posts a page by default):
//!   the same content as that `?page=`. With the default infinite scroll, the server renders
//!   `postsPerPage` posts starting half a page before N, so N up to half a page is page 1,
//!   N at half a page past a page boundary is that next page, and any other N is a window of
//!   posts no page shows: another content.
//! - `?sort=oldest_to_newest` is the default order of a topic's posts and
//!   `?sort=recently_replied` of a category's topics; other sorts are other pages.
//! - `?lang=` renders the interface in that language (`autoLocale`); the default language
//!   (`en-GB` unless configured) is the plain page, another language another page (menus,
//!   buttons and dates translated; the corpus treats a page in another language as another
//!   content).
//! - A user is `/user/slug` with tabs (`/topics`, `/posts`, `/best`, `/followers`, ...), each
//!   another page; `/uid/U` and `/uid/U/tab` redirect to the slugged address.
//! - A topic's RSS feed (`/topic/T.rss`) is another content.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, thread_posts, Section};
use crate::corpus::emit::{Emitter, Form, PageChain, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::PageKind;

/// A topic's post orders besides the default `oldest_to_newest`.
const TOPIC_SORTS: &[&str] = &["newest_to_oldest", "most_votes"];
/// A category's topic orders besides the default `recently_replied`.
const CATEGORY_SORTS: &[&str] = &["recently_created", "most_posts", "most_votes", "most_views"];
/// Profile tabs besides the profile itself.
const TABS: &[&str] = &[
    "topics",
    "posts",
    "best",
    "followers",
    "following",
    "groups",
];
/// Interface languages besides the default.
const LANGUAGES: &[&str] = &["fr", "de", "es", "it", "nl", "pt-BR", "pl", "ru"];

/// Rule indices into `NodeBb::rules`.
const NO_SLUG: usize = 0;
const FIRST_PAGE: usize = 1;
const POST_INDEX: usize = 2;
const PERMALINK: usize = 3;
const DEFAULT_SORT: usize = 4;
const DEFAULT_LANG: usize = 5;
const USER_ID: usize = 6;

pub(super) struct NodeBb {
    base: String,
    /// Pagination on for guests (`usePagination`); off is NodeBB's default infinite scroll.
    paginated: bool,
    /// Posts per page (`postsPerPage`).
    per_page: u32,
    /// The forum's default language (`defaultLang`).
    default_lang: &'static str,
    categories: Vec<(u32, String)>,
    listed: Vec<bool>,
    rules: [usize; 7],
    next_topic: u64,
    next_post: u64,
    next_user: u64,
    userslugs: HashSet<String>,
}

impl NodeBb {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(rng, &["", "", "", "/forum", "/community"], "")
        );
        let mut categories: Vec<(u32, String)> = Vec::new();
        for _ in 0..rng.random_range(3..=12) {
            let c = rng.random_range(1..40);
            if !categories.iter().any(|(id, _)| *id == c) {
                categories.push((c, slug(rng, 1..=2)));
            }
        }
        let mut nodebb = NodeBb {
            paginated: rng.random_bool(0.4),
            per_page: *[20u32, 20, 20, 10, 15]
                .get(rng.random_range(0..5))
                .unwrap_or(&20),
            default_lang: pick(rng, &["en-GB", "en-GB", "en-US", "de", "fr"], "en-GB"),
            listed: vec![false; categories.len()],
            categories,
            rules: [0; 7],
            next_topic: rng.random_range(1..20_000),
            next_post: rng.random_range(1..200_000),
            next_user: rng.random_range(1..3_000),
            userslugs: HashSet::new(),
            base,
        };
        let b = nodebb.base.clone();
        let at = |path: &str| UrlParts::new(format!("{b}/{path}"));
        let topic = at("topic/{t}/{slug}");
        nodebb.rules = [
            alias_rule(
                em,
                &at("topic/{t}"),
                &topic,
                "a topic or category without its slug",
            ),
            alias_rule(
                em,
                &topic.clone().q("page", "1"),
                &topic,
                "the first page spelled out (`page=1`)",
            ),
            alias_rule(
                em,
                &at("topic/{t}/{slug}/{index}"),
                &topic.clone().q("page", "{page}"),
                "a post index opens the page holding it",
            ),
            alias_rule(
                em,
                &at("post/{pid}"),
                &at("topic/{t}/{slug}/{index}"),
                "a post's permalink redirects to its index",
            ),
            alias_rule(
                em,
                &topic.clone().q("sort", "oldest_to_newest"),
                &topic,
                "the default sort spelled out",
            ),
            alias_rule(
                em,
                &topic.clone().q("lang", nodebb.default_lang),
                &topic,
                "the default language spelled out (`lang=`)",
            ),
            alias_rule(
                em,
                &at("uid/{u}/{tab}"),
                &at("user/{userslug}/{tab}"),
                "a user by number",
            ),
        ];
        if rng.random_bool(0.3) {
            add_tracking(em, rng, 1);
        }
        nodebb
    }

    fn at(&self, path: &str) -> UrlParts {
        UrlParts::new(format!("{}/{path}", self.base))
    }

    /// `p` on page `page` (1 = first, written without `page`).
    fn paged(p: UrlParts, page: u32) -> UrlParts {
        if page > 1 {
            p.q("page", page.to_string())
        } else {
            p
        }
    }

    /// The post indices (1-based) that open page `page` (1 = first) of a topic of `length`
    /// posts, as this forum's pagination mode computes them.
    fn indices_of_page(&self, page: u32, length: u32) -> Vec<u32> {
        let pp = self.per_page;
        let range = if self.paginated {
            (page - 1) * pp + 1..=(page * pp).min(length)
        } else if page == 1 {
            // Infinite scroll starts half a page before the index: up to half a page is page 1.
            1..=pp.div_ceil(2).min(length)
        } else {
            // The one index whose window starts on this page's boundary.
            let n = (page - 1) * pp + pp.div_ceil(2);
            n..=n.min(length)
        };
        range.collect()
    }

    /// Page `page` (1 = first) of topic `t`, with the post indices and post ids linked to it.
    fn topic_forms(
        &self,
        t: u64,
        slug: &str,
        page: u32,
        indices: &[(u32, u64)],
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let slugged = self.at(&format!("topic/{t}/{slug}"));
        let mut forms = vec![(Self::paged(slugged.clone(), page), None)];
        let bare = self.at(&format!("topic/{t}"));
        forms.push((Self::paged(bare, page), Some(self.rules[NO_SLUG])));
        if page == 1 {
            forms.push((slugged.clone().q("page", "1"), Some(self.rules[FIRST_PAGE])));
            if rng.random_bool(0.3) {
                forms.push((
                    slugged.clone().q("sort", "oldest_to_newest"),
                    Some(self.rules[DEFAULT_SORT]),
                ));
            }
        }
        if rng.random_bool(0.2) {
            forms.push((
                Self::paged(slugged.clone(), page).q("lang", self.default_lang),
                Some(self.rules[DEFAULT_LANG]),
            ));
        }
        for (index, pid) in indices {
            forms.push((
                self.at(&format!("topic/{t}/{slug}/{index}")),
                Some(self.rules[POST_INDEX]),
            ));
            forms.push((self.at(&format!("post/{pid}")), Some(self.rules[PERMALINK])));
        }
        forms_of(forms)
    }

    fn topic(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_topic += rng.random_range(1..15);
        let t = self.next_topic;
        let slug = slug(rng, 2..=6);
        let (pids, pages) = thread_posts(rng, self.per_page, &mut self.next_post, 6);
        let length = pids.len() as u32;
        let mut chain = PageChain::default();
        let mut linked_elsewhere: Vec<(u32, u64)> = Vec::new();
        for page in 1..=pages {
            // Teasers link the last post; notifications and permalinks any other.
            let candidates = self.indices_of_page(page, length);
            let mut linked: Vec<(u32, u64)> = Vec::new();
            if rng.random_bool(0.35) && !candidates.is_empty() {
                let index = candidates[rng.random_range(0..candidates.len())];
                linked.push((index, pids[index as usize - 1]));
            }
            // Under infinite scroll most indices open a window no page shows.
            if !self.paginated && page == pages && length > self.per_page && rng.random_bool(0.4) {
                let index = length;
                if !candidates.contains(&index) {
                    linked_elsewhere.push((index, pids[index as usize - 1]));
                }
            }
            let forms = self.topic_forms(t, &slug, page, &linked, rng);
            chain.push(em, rng, &forms, PageKind::Thread);
        }
        let Some(first) = chain.first() else {
            return;
        };
        for (index, pid) in linked_elsewhere {
            let window = forms_of(vec![
                (self.at(&format!("topic/{t}/{slug}/{index}")), None),
                (self.at(&format!("post/{pid}")), Some(self.rules[PERMALINK])),
            ]);
            em.sibling(rng, &first, &window, PageKind::Thread);
        }
        if rng.random_bool(0.2) {
            let sort = pick(rng, TOPIC_SORTS, "newest_to_oldest");
            let sorted = self.at(&format!("topic/{t}/{slug}")).q("sort", sort);
            em.sibling(
                rng,
                &first,
                &forms_of(vec![(sorted, None)]),
                PageKind::Thread,
            );
        }
        if rng.random_bool(0.1) {
            let lang = pick(rng, LANGUAGES, "fr");
            if lang != self.default_lang {
                let other = self.at(&format!("topic/{t}/{slug}")).q("lang", lang);
                em.sibling(
                    rng,
                    &first,
                    &forms_of(vec![(other, None)]),
                    PageKind::Thread,
                );
            }
        }
        if rng.random_bool(0.1) {
            let feed = self.at(&format!("topic/{t}.rss"));
            em.sibling(
                rng,
                &first,
                &forms_of(vec![(feed, None)]),
                PageKind::Listing,
            );
        }
    }

    /// Page `page` of category `i`, sorted by `sort` (`None`: the default order).
    fn category_forms(&self, i: usize, page: u32, sort: Option<&str>) -> Vec<Form> {
        let (c, slug) = &self.categories[i];
        let slugged = self.at(&format!("category/{c}/{slug}"));
        if let Some(sort) = sort {
            return forms_of(vec![(Self::paged(slugged, page).q("sort", sort), None)]);
        }
        let mut forms = vec![
            (Self::paged(slugged.clone(), page), None),
            (
                Self::paged(self.at(&format!("category/{c}")), page),
                Some(self.rules[NO_SLUG]),
            ),
            (
                Self::paged(slugged.clone(), page).q("sort", "recently_replied"),
                Some(self.rules[DEFAULT_SORT]),
            ),
        ];
        if page == 1 {
            forms.push((slugged.q("page", "1"), Some(self.rules[FIRST_PAGE])));
        }
        forms_of(forms)
    }

    fn category(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, i: usize) {
        let first = em.content(rng, &self.category_forms(i, 1, None), PageKind::Listing);
        for page in 2..=rng.random_range(1..=4) {
            em.sibling(
                rng,
                &first,
                &self.category_forms(i, page, None),
                PageKind::Listing,
            );
        }
        if rng.random_bool(0.5) {
            let sort = pick(rng, CATEGORY_SORTS, "most_posts");
            em.sibling(
                rng,
                &first,
                &self.category_forms(i, 1, Some(sort)),
                PageKind::Listing,
            );
        }
    }

    fn user(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_user += rng.random_range(1..30);
        let u = self.next_user;
        // User slugs are unique (a username is), so one slug is one profile.
        let mut userslug = format!("{}{}", word(rng), rng.random_range(1..100));
        while !self.userslugs.insert(userslug.clone()) {
            userslug.push_str(&rng.random_range(0..10).to_string());
        }
        let forms = |tab: &str| {
            let tail = if tab.is_empty() {
                String::new()
            } else {
                format!("/{tab}")
            };
            forms_of(vec![
                (self.at(&format!("user/{userslug}{tail}")), None),
                (
                    self.at(&format!("uid/{u}{tail}")),
                    Some(self.rules[USER_ID]),
                ),
            ])
        };
        let profile = em.content(rng, &forms(""), PageKind::Article);
        // Each tab once: a tab is one page, whichever link reached it.
        let mut tabs: Vec<&str> = Vec::new();
        for _ in 0..rng.random_range(0..=2) {
            let tab = pick(rng, TABS, "topics");
            if !tabs.contains(&tab) {
                tabs.push(tab);
                em.sibling(rng, &profile, &forms(tab), PageKind::Listing);
            }
        }
    }
}

impl Section for NodeBb {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let i = rng.random_range(0..self.categories.len());
        if rng.random_bool(0.12) && !self.listed[i] {
            self.listed[i] = true;
            self.category(em, rng, i);
        } else if rng.random_bool(0.1) {
            self.user(em, rng);
        } else {
            self.topic(em, rng);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let t = self.next_topic + rng.random_range(1_000_000..2_000_000);
        let slug = slug(rng, 2..=4);
        self.topic_forms(t, &slug, 1, &[], rng)
    }

    fn variant(&self) -> String {
        format!(
            "nodebb{}+{}{}+{}",
            self.base,
            if self.paginated {
                "paginated"
            } else {
                "infinite"
            },
            self.per_page,
            self.default_lang
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::family_tests::{
        assert_irrelevant_keys_keep_the_content, check_family, ids_of,
    };
    use crate::corpus::SiteKind;

    #[test]
    fn nodebb_generates_its_scheme() {
        let (mut bare, mut indexed, mut windows, mut languages) = (0, 0, 0, 0);
        let mut modes = std::collections::BTreeSet::new();
        for site in check_family(SiteKind::NodeBb) {
            assert_irrelevant_keys_keep_the_content(&site);
            let infinite = site.variant.contains("+infinite");
            modes.insert(infinite);
            let ids = ids_of(&site);
            // Each topic's first page by its slugged address: `/topic/T` -> (slug, id).
            let mut slugged = std::collections::HashMap::new();
            for (url, id) in &ids {
                if let Some((head, rest)) = url.split_once("/topic/") {
                    if let [t, slug] = rest.split('/').collect::<Vec<_>>().as_slice() {
                        if !slug.contains(['?', '.']) {
                            slugged.insert(format!("{head}/topic/{t}"), (*slug, *id));
                        }
                    }
                }
            }
            for (url, id) in &ids {
                // A topic without its slug is the slugged topic.
                if let Some((_, other)) = slugged.get(url) {
                    assert_eq!(other, id, "{url}");
                    bare += 1;
                }
                // A post index is the page holding it, or under infinite scroll a window of
                // posts that no page shows.
                let Some((topic, index)) = url.rsplit_once('/') else {
                    continue;
                };
                let Some(base) = topic.rsplit_once('/').map(|(b, _)| b) else {
                    continue;
                };
                if let (true, Some((_, page1))) =
                    (index.chars().all(|c| c.is_ascii_digit()), slugged.get(base))
                {
                    let page2 = ids.get(&format!("{topic}?page=2"));
                    if page1 == id || page2 == Some(id) {
                        indexed += 1;
                    } else if infinite {
                        windows += 1;
                    }
                }
                // Another interface language is another page.
                if let Some((plain, lang)) = url.split_once("?lang=") {
                    let lang = lang.split('&').next().unwrap_or(lang);
                    let default = site.variant.ends_with(&format!("+{lang}"));
                    if let (false, Some(other)) = (default, ids.get(plain)) {
                        assert_ne!(other, id, "{url}");
                        languages += 1;
                    }
                }
            }
        }
        assert!(
            bare > 0 && indexed > 0 && windows > 0 && languages > 0 && modes.len() == 2,
            "bare {bare}, indexed {indexed}, windows {windows}, languages {languages}, modes {modes:?}"
        );
    }
}
