//! Discuz! X3: the PHP forum of very many Chinese sites. A few front scripts take the page as
//! `mod=` (`forum.php?mod=viewthread&tid=T`, `forum.php?mod=forumdisplay&fid=F`,
//! `home.php?mod=space&uid=U`); the admin may turn on rewritten links per page type, which the
//! software writes by rewriting its own output and which server rules map back onto the scripts.
//!
//! What the model follows (read in X3.4/X3.5 sources: `source/function/function_core.php`
//! (`rewriteoutput`), the admin's `rewritedata()` (the shipped rules and the output patterns),
//! `source/module/forum/forum_viewthread.php`, `forum_forumdisplay.php`, `forum_redirect.php`,
//! `source/include/thread/thread_printable.php`, `source/module/home/home_space.php`,
//! `archiver/index.php`, `discuz_application` (`_init_mobile`, the `fromuid` promotion hook),
//! and the default templates `forum/viewthread.htm`, `forum/viewthread_node.htm`, `forum/forumdisplay_list.htm`):
//!
//! - Rewriting on (`forum_viewthread`, `forum_forumdisplay`): a thread link
//!   `forum.php?mod=viewthread&tid=T&extra=page%3DX&page=P` (the only shape the output pattern
//!   matches) is written `thread-T-P-X.html` and mapped back to that query. P is the thread's
//!   page (1 when absent); X, `{prevpage}`, is the forum listing page the link was on, which the
//!   thread page only uses for its "back to the list" link: any X is the same page. The scripts
//!   keep answering. A forum page is `forum-F-P.html` (`fid=F&page=P`); a forum given a key
//!   (`forumkeys`) is written with the key, `loadforum()` maps the key back, and its number keeps
//!   answering.
//! - `extra=` (the listing page and filter a link came from, URL-encoded) and `page=1` never
//!   change a thread page; listing links with a filter carry
//!   `extra=page%3D1%26filter%3Dtypeid%26typeid%3DN`, which no output pattern rewrites.
//! - `ordertype=1` shows the posts newest first (another page); `ordertype=2`, the link back from
//!   it, is the default order. `authorid=U` shows only that author's posts, counting its own
//!   pages and clamping a page past the last to the last: the author's links carry the page they
//!   were on (`tid=T&page=P&authorid=U`), so on one page of the author's posts (as modelled)
//!   every P is that page.
//! - `forum.php?mod=redirect&goto=findpost&ptid=T&pid=M` redirects to the page holding post M
//!   (`page = ceil(position / ppp)`), `forum.php?mod=redirect&tid=T&goto=lastpost` to the last
//!   page; `action=printable` renders the first 100 posts on one page: a one-page thread's page,
//!   any longer thread's another content.
//! - The archiver (`archiver/?tid-T.html`, `archiver/?fid-F.html`, `&page=P`; with its rewrite
//!   `archiver/tid-T.html?page=P`) runs the same viewthread/forumdisplay code with the same page
//!   sizes and only swaps the template: the same posts or threads in a plain page, modelled as
//!   the same content (as the corpus treats renderings). It reads the id from the first query
//!   pair, so there the order of the query is not free.
//! - `highlight=` (search results) marks words; `fromuid=U` (share links of a forum with visit
//!   promotion) credits U and changes nothing; a robot (`IS_ROBOT`) is always given the desktop
//!   pages, so `mobile=2`, `mobile=yes` and `mobile=no` are the page without them for a crawler.
//! - A member is `home.php?mod=space&uid=U` (rewritten `space-uid-U.html` under `home_space`, or
//!   by name `username=`/`space-username-N.html`); without `do=` it shows the profile
//!   (`do=profile`), or the space's home (`do=index`) when `homepagestyle` is on; other tabs
//!   (`do=blog`, `album`, `doing`, `share`, `friend`, linked `&view=me&from=space`) are other
//!   pages. Forum filters (`filter=typeid&typeid=`, `filter=lastpost&orderby=lastpost`,
//!   `filter=heat&orderby=heats`, `filter=hot`, `filter=digest&digest=1`,
//!   `filter=specialtype&specialtype=`) are other listings.
//!
//! Not checked or not modelled: the values of the forum's "more" date filter menu
//! (`filter=dateline&dateline=`), the exact keys of the space tab links and of the listing's
//! last-post link (`goto=lastpost`, whose redirect was read) were not read in a template; the
//! follow-feed space default (`follow` module on), `goto=nextnewset`/`nextoldset` (a
//! neighbouring thread), the touch pages a phone gets, admin edits of the rewrite templates, and
//! the `rel=canonical` Discuz writes (page 1 on every page of a thread) are left out. Sessions
//! live in cookies.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_ignored_param, add_word_param, alias_rule, forms_of, thread_posts, Section};
use crate::corpus::emit::{Emitter, Form, PageChain, UrlParts};
use crate::corpus::words::{pick, word};
use crate::corpus::{DustRule, PageKind};

/// Forum listing filters besides thread types, as the listing's tabs and menus write them.
const FILTERS: &[&[(&str, &str)]] = &[
    &[("filter", "lastpost"), ("orderby", "lastpost")],
    &[("filter", "heat"), ("orderby", "heats")],
    &[("filter", "hot")],
    &[("filter", "digest"), ("digest", "1")],
    &[("filter", "specialtype"), ("specialtype", "poll")],
    &[("filter", "specialtype"), ("specialtype", "reward")],
    &[("filter", "dateline"), ("dateline", "86400")],
    &[("filter", "dateline"), ("dateline", "604800")],
];
/// Space tabs besides the profile and the space's home.
const TABS: &[&str] = &["blog", "album", "doing", "share", "friend"];

/// Rule indices into `Discuz::rules`.
const SCRIPT: usize = 0;
const PREVPAGE: usize = 1;
const FIRST_PAGE: usize = 2;
const EXTRA: usize = 3;
const DEFAULT_ORDER: usize = 4;
const FIND_POST: usize = 5;
const LAST_POST: usize = 6;
const PRINTABLE: usize = 7;
const ARCHIVE: usize = 8;
const AUTHOR_PAGE: usize = 9;
const FORUM_SCRIPT: usize = 10;
const FORUM_FIRST_PAGE: usize = 11;
const FORUM_KEY: usize = 12;
const FORUM_ARCHIVE: usize = 13;
const SPACE_SCRIPT: usize = 14;
const SPACE_DEFAULT: usize = 15;
const SPACE_USERNAME: usize = 16;

struct Board {
    id: u32,
    /// The forum's key (`forumkeys`), written in its rewritten links instead of the number.
    key: Option<String>,
    /// Pages of its listing.
    pages: u32,
    /// Its thread types (`typeid`).
    types: Vec<u32>,
    listed: bool,
}

/// The links that reach one thread page besides its plain address.
#[derive(Default)]
struct Links {
    /// Rewritten links from listing page X (X > 1).
    prevpages: Vec<u32>,
    /// `extra=` values of script links.
    extras: Vec<String>,
    /// Posts on the page linked through `goto=findpost`.
    posts: Vec<u64>,
    /// The last post's `goto=lastpost` link (last page only).
    last: bool,
    /// The archiver renders the thread.
    archived: bool,
    /// `action=printable` (a one-page thread's only page).
    printable: bool,
    /// `ordertype=2` spelled out (first page).
    default_order: bool,
}

pub(super) struct Discuz {
    base: String,
    /// Rewritten thread and forum links (`forum_viewthread`, `forum_forumdisplay`).
    rewrite: bool,
    /// Rewritten member links (`home_space`).
    space_rewrite: bool,
    /// `None` when the crawl never reached the archiver, else whether its links are rewritten.
    archiver: Option<bool>,
    /// Posts per thread page (`postperpage`).
    per_page: u32,
    /// The space page without `do=` shows the space's home (`homepagestyle`), not the profile.
    space_home: bool,
    boards: Vec<Board>,
    rules: [usize; 17],
    next_thread: u64,
    next_post: u64,
    next_user: u64,
    usernames: HashSet<String>,
}

impl Discuz {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(rng, &["", "", "/bbs", "/bbs", "/forum", "/discuz"], "")
        );
        let rewrite = rng.random_bool(0.55);
        let keyed = rewrite && rng.random_bool(0.25);
        let mut boards: Vec<Board> = Vec::new();
        let mut next_type = rng.random_range(1..20);
        for _ in 0..rng.random_range(4..=16) {
            let id = rng.random_range(2..90);
            if boards.iter().any(|b| b.id == id) {
                continue;
            }
            let mut key = (keyed && rng.random_bool(0.6)).then(|| word(rng).to_string());
            if key
                .as_ref()
                .is_some_and(|k| boards.iter().any(|b| b.key.as_ref() == Some(k)))
            {
                key = None;
            }
            let types = (0..rng.random_range(0..=4))
                .map(|_| {
                    next_type += rng.random_range(1..4);
                    next_type
                })
                .collect();
            boards.push(Board {
                id,
                key,
                pages: rng.random_range(1..=5),
                types,
                listed: false,
            });
        }
        let archiver = rng
            .random_bool(0.6)
            .then(|| rewrite && rng.random_bool(0.5));
        let mut discuz = Discuz {
            rewrite,
            space_rewrite: rewrite && rng.random_bool(0.6),
            archiver,
            per_page: *[10u32, 10, 10, 15, 20, 20, 30]
                .get(rng.random_range(0..7))
                .unwrap_or(&10),
            space_home: rng.random_bool(0.3),
            boards,
            rules: [0; 17],
            next_thread: rng.random_range(1..200_000),
            next_post: rng.random_range(1..2_000_000),
            next_user: rng.random_range(1..100_000),
            usernames: HashSet::new(),
            base,
        };
        let b = discuz.base.clone();
        let at = |p: &str| UrlParts::new(format!("{b}/{p}"));
        let script = |m: &str| at("forum.php").q("mod", m);
        let viewthread = script("viewthread").q("tid", "{t}");
        let forumdisplay = script("forumdisplay").q("fid", "{f}");
        let space = UrlParts::new(format!("{b}/home.php"))
            .q("mod", "space")
            .q("uid", "{u}");
        let default_tab = if discuz.space_home {
            "index"
        } else {
            "profile"
        };
        discuz.rules = [
            alias_rule(
                em,
                &viewthread.clone().q("page", "{p}"),
                &at("thread-{t}-{p}-1.html"),
                "the script behind a rewritten thread link",
            ),
            alias_rule(
                em,
                &at("thread-{t}-{p}-{x}.html"),
                &at("thread-{t}-{p}-1.html"),
                "the listing page a rewritten thread link came from (`{prevpage}`)",
            ),
            alias_rule(
                em,
                &viewthread.clone().q("page", "1"),
                &viewthread,
                "the first page spelled out (`page=1`)",
            ),
            em.rule(
                DustRule::IgnoreQueryKey {
                    key: "extra".to_string(),
                },
                "the listing page and filter a thread link came from (`extra=`)".to_string(),
            ),
            alias_rule(
                em,
                &viewthread.clone().q("ordertype", "2"),
                &viewthread,
                "the default post order spelled out (`ordertype=2`)",
            ),
            alias_rule(
                em,
                &script("redirect")
                    .q("goto", "findpost")
                    .q("ptid", "{t}")
                    .q("pid", "{m}"),
                &viewthread.clone().q("page", "{p}"),
                "a post's link redirects to the page holding it",
            ),
            alias_rule(
                em,
                &script("redirect").q("tid", "{t}").q("goto", "lastpost"),
                &viewthread.clone().q("page", "{last}"),
                "the last post's link redirects to the last page",
            ),
            alias_rule(
                em,
                &script("viewthread")
                    .q("action", "printable")
                    .q("tid", "{t}"),
                &viewthread,
                "the printable view of a one-page thread",
            ),
            alias_rule(
                em,
                &at("archiver/").q("tid-{t}.html", "").q("page", "{p}"),
                &viewthread.clone().q("page", "{p}"),
                "the archiver's rendering of a thread page",
            ),
            alias_rule(
                em,
                &viewthread.clone().q("page", "{p}").q("authorid", "{u}"),
                &viewthread.clone().q("page", "1").q("authorid", "{u}"),
                "one author's posts: a page past their last page is their last page",
            ),
            alias_rule(
                em,
                &forumdisplay.clone().q("page", "{p}"),
                &at("forum-{f}-{p}.html"),
                "the script behind a rewritten forum link",
            ),
            alias_rule(
                em,
                &forumdisplay.clone().q("page", "1"),
                &forumdisplay,
                "a forum's first page spelled out (`page=1`)",
            ),
            alias_rule(
                em,
                &forumdisplay.clone().q("page", "{p}"),
                &at("forum-{key}-{p}.html"),
                "a forum's number where its key is written",
            ),
            alias_rule(
                em,
                &at("archiver/").q("fid-{f}.html", "").q("page", "{p}"),
                &forumdisplay.clone().q("page", "{p}"),
                "the archiver's rendering of a forum page",
            ),
            alias_rule(
                em,
                &space,
                &at("space-uid-{u}.html"),
                "the script behind a rewritten member link",
            ),
            alias_rule(
                em,
                &space.clone().q("do", default_tab),
                &space,
                "the space's default tab spelled out (`do=`)",
            ),
            alias_rule(
                em,
                &at("home.php").q("mod", "space").q("username", "{name}"),
                &space,
                "a member by name",
            ),
        ];
        add_word_param(em, rng, "highlight", "search highlighting", (0.02, 0.1));
        if rng.random_bool(0.5) {
            // Share links of a forum that credits visits it brings (`promotion_visit`).
            let values = (0..(em.cap / 20).clamp(4, 300))
                .map(|_| rng.random_range(1..200_000u32).to_string())
                .collect();
            let prob = rng.random_range(0.02..0.08);
            add_ignored_param(
                em,
                "fromuid",
                "the member a share link credits (`fromuid`)".to_string(),
                prob,
                values,
            );
        }
        if rng.random_bool(0.5) {
            let prob = rng.random_range(0.02..0.06);
            add_ignored_param(
                em,
                "mobile",
                "a robot is always given the desktop page (`mobile=`)".to_string(),
                prob,
                ["2", "2", "yes", "no"].map(String::from).to_vec(),
            );
        }
        if discuz.archiver.is_some() {
            // The archiver reads the id from the start of the query string.
            em.first_query_pair_fixed = true;
        }
        discuz
    }

    fn path(&self, file: &str) -> UrlParts {
        UrlParts::new(format!("{}/{file}", self.base))
    }

    fn rule(&self, r: usize) -> Option<usize> {
        Some(self.rules[r])
    }

    fn viewthread(&self, t: u64) -> UrlParts {
        self.path("forum.php")
            .q("mod", "viewthread")
            .q("tid", t.to_string())
    }

    /// `p` on page `page` (1 = first, written without `page`).
    fn paged(p: UrlParts, page: u32) -> UrlParts {
        if page > 1 {
            p.q("page", page.to_string())
        } else {
            p
        }
    }

    /// The archiver's address of `what-N.html` on page `page`: its query form, and the
    /// rewritten one when the archiver's links are rewritten.
    fn archive(&self, what: &str, n: String, page: u32) -> Vec<UrlParts> {
        let mut out = Vec::new();
        if self.archiver == Some(true) {
            out.push(Self::paged(
                self.path(&format!("archiver/{what}-{n}.html")),
                page,
            ));
        }
        out.push(Self::paged(
            self.path("archiver/").q(&format!("{what}-{n}.html"), ""),
            page,
        ));
        out
    }

    /// An `extra=` value of a link from forum `board`'s listing: its page, or (never rewritten)
    /// a filtered listing's first page.
    fn extra_value(&self, rng: &mut ChaCha8Rng, board: &Board, plain: bool) -> String {
        let ty = board.types.first().copied();
        match rng.random_range(0..5) {
            0 if ty.is_some() => format!(
                "page%3D1%26filter%3Dtypeid%26typeid%3D{}",
                board.types[rng.random_range(0..board.types.len())]
            ),
            1 => "page%3D1%26filter%3Dlastpost%26orderby%3Dlastpost".to_string(),
            2 => "page%3D1%26filter%3Ddigest%26digest%3D1".to_string(),
            _ if plain => format!("page%3D{}", rng.random_range(1..=board.pages)),
            _ => "page%3D1%26filter%3Dlastpost%26orderby%3Dlastpost".to_string(),
        }
    }

    /// Page `page` (1 = first) of thread `t`, with the links that reach it.
    fn thread_forms(&self, t: u64, page: u32, links: &Links) -> Vec<Form> {
        let script = self.viewthread(t);
        let mut forms = Vec::new();
        if self.rewrite {
            forms.push((self.path(&format!("thread-{t}-{page}-1.html")), None));
            forms.push((Self::paged(script.clone(), page), self.rule(SCRIPT)));
        } else {
            forms.push((Self::paged(script.clone(), page), None));
        }
        for x in &links.extras {
            // One step from the first form only where that is the script.
            let rule = if self.rewrite { None } else { self.rule(EXTRA) };
            forms.push((
                Self::paged(script.clone().q("extra", x.as_str()), page),
                rule,
            ));
        }
        for x in &links.prevpages {
            forms.push((
                self.path(&format!("thread-{t}-{page}-{x}.html")),
                self.rule(PREVPAGE),
            ));
        }
        if links.archived {
            for p in self.archive("tid", t.to_string(), page) {
                forms.push((p, self.rule(ARCHIVE)));
            }
        }
        for m in &links.posts {
            let redirect = self
                .path("forum.php")
                .q("mod", "redirect")
                .q("goto", "findpost")
                .q("ptid", t.to_string())
                .q("pid", m.to_string());
            forms.push((redirect, self.rule(FIND_POST)));
        }
        if links.last {
            let redirect = self
                .path("forum.php")
                .q("mod", "redirect")
                .q("tid", t.to_string())
                .q("goto", "lastpost");
            forms.push((redirect, self.rule(LAST_POST)));
        }
        if page == 1 {
            let step = |r: usize| if self.rewrite { None } else { self.rule(r) };
            forms.push((script.clone().q("page", "1"), step(FIRST_PAGE)));
            if links.default_order {
                forms.push((script.clone().q("ordertype", "2"), step(DEFAULT_ORDER)));
                if let Some(x) = links.extras.first() {
                    forms.push((
                        script.clone().q("extra", x.as_str()).q("ordertype", "2"),
                        None,
                    ));
                }
            }
            if links.printable {
                forms.push((self.printable(t), self.rule(PRINTABLE)));
            }
        }
        forms_of(forms)
    }

    fn printable(&self, t: u64) -> UrlParts {
        self.path("forum.php")
            .q("mod", "viewthread")
            .q("action", "printable")
            .q("tid", t.to_string())
    }

    fn thread(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_thread += rng.random_range(1..12);
        let t = self.next_thread;
        let board = &self.boards[rng.random_range(0..self.boards.len())];
        let (posts, pages) = thread_posts(rng, self.per_page, &mut self.next_post, 6);
        let length = posts.len() as u32;
        let archived = self.archiver.is_some() && rng.random_bool(0.35);
        let mut chain = PageChain::default();
        for page in 1..=pages {
            let on_page = &posts[((page - 1) * self.per_page) as usize
                ..(page * self.per_page).min(length) as usize];
            let mut links = Links {
                archived,
                last: page == pages && rng.random_bool(0.45),
                printable: pages == 1 && rng.random_bool(0.2),
                default_order: page == 1 && rng.random_bool(0.1),
                ..Links::default()
            };
            // Listing links: rewritten ones name the listing page, script ones carry `extra`.
            for _ in 0..rng.random_range(0..=2) {
                if self.rewrite && board.pages > 1 && rng.random_bool(0.6) {
                    let x = rng.random_range(2..=board.pages);
                    if !links.prevpages.contains(&x) {
                        links.prevpages.push(x);
                    }
                } else {
                    let x = self.extra_value(rng, board, !self.rewrite);
                    if !links.extras.contains(&x) {
                        links.extras.push(x);
                    }
                }
            }
            // A reply's number links its post (the first post's links the thread).
            let replies: Vec<u64> = on_page.iter().copied().filter(|m| *m != posts[0]).collect();
            if !replies.is_empty() && rng.random_bool(0.25) {
                links
                    .posts
                    .push(replies[rng.random_range(0..replies.len())]);
            }
            let forms = self.thread_forms(t, page, &links);
            chain.push(em, rng, &forms, PageKind::Thread);
        }
        let Some(first) = chain.first() else {
            return;
        };
        let script = self.viewthread(t);
        // Newest first: the first post then the last ones, no page of the thread.
        if pages > 1 && rng.random_bool(0.2) {
            let mut forms = vec![(script.clone().q("ordertype", "1"), None)];
            let x = self.extra_value(rng, board, true);
            forms.push((
                script.clone().q("extra", x).q("ordertype", "1"),
                self.rule(EXTRA),
            ));
            em.sibling(rng, &first, &forms_of(forms), PageKind::Thread);
        }
        // The printable view of a longer thread holds more posts than any page.
        if pages > 1 && rng.random_bool(0.12) {
            let forms = forms_of(vec![(self.printable(t), None)]);
            em.sibling(rng, &first, &forms, PageKind::Thread);
        }
        // One author's posts (fewer than a page), linked from each page they posted on.
        if length >= 3 && rng.random_bool(0.15) {
            let u = rng.random_range(1..self.next_user + 1_000);
            let mut on: Vec<u32> = (1..=pages).filter(|_| rng.random_bool(0.5)).collect();
            if on.is_empty() {
                on.push(1);
            }
            let forms: Vec<_> = on
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let url = script
                        .clone()
                        .q("page", p.to_string())
                        .q("authorid", u.to_string());
                    (url, (i > 0).then(|| self.rules[AUTHOR_PAGE]))
                })
                .collect();
            em.sibling(rng, &first, &forms_of(forms), PageKind::Thread);
        }
    }

    /// Page `page` of forum `i`'s plain listing.
    fn forum_forms(&self, i: usize, page: u32) -> Vec<Form> {
        let board = &self.boards[i];
        let id = board.id.to_string();
        let display = |fid: &str| {
            self.path("forum.php")
                .q("mod", "forumdisplay")
                .q("fid", fid)
        };
        let mut forms = Vec::new();
        if self.rewrite {
            let name = board.key.clone().unwrap_or_else(|| id.clone());
            forms.push((self.path(&format!("forum-{name}-{page}.html")), None));
            forms.push((
                display(&name).q("page", page.to_string()),
                self.rule(FORUM_SCRIPT),
            ));
            if board.key.is_some() {
                forms.push((
                    display(&id).q("page", page.to_string()),
                    self.rule(FORUM_KEY),
                ));
            }
            if page == 1 {
                forms.push((display(&id), None));
            }
        } else {
            forms.push((Self::paged(display(&id), page), None));
            if page == 1 {
                forms.push((display(&id).q("page", "1"), self.rule(FORUM_FIRST_PAGE)));
            }
        }
        if self.archiver.is_some() {
            for p in self.archive("fid", id, page) {
                forms.push((p, self.rule(FORUM_ARCHIVE)));
            }
        }
        forms_of(forms)
    }

    fn forum(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, i: usize) {
        self.boards[i].listed = true;
        let first = em.content(rng, &self.forum_forms(i, 1), PageKind::Listing);
        let mut chain_prev = first.clone();
        for page in 2..=self.boards[i].pages {
            chain_prev = em.sibling(
                rng,
                &chain_prev,
                &self.forum_forms(i, page),
                PageKind::Listing,
            );
        }
        let board = &self.boards[i];
        let plain = self
            .path("forum.php")
            .q("mod", "forumdisplay")
            .q("fid", board.id.to_string());
        let mut filters: Vec<Vec<(String, String)>> = Vec::new();
        for _ in 0..rng.random_range(0..=3) {
            let filter: Vec<(String, String)> = if !board.types.is_empty() && rng.random_bool(0.4) {
                let ty = board.types[rng.random_range(0..board.types.len())];
                vec![
                    ("filter".to_string(), "typeid".to_string()),
                    ("typeid".to_string(), ty.to_string()),
                ]
            } else {
                FILTERS[rng.random_range(0..FILTERS.len())]
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            };
            if !filters.contains(&filter) {
                filters.push(filter);
            }
        }
        for filter in filters {
            let url = filter
                .iter()
                .fold(plain.clone(), |p, (k, v)| p.q(k, v.as_str()));
            em.sibling(rng, &first, &forms_of(vec![(url, None)]), PageKind::Listing);
        }
    }

    fn member(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_user += rng.random_range(1..60);
        let u = self.next_user.to_string();
        let mut name = format!("{}{}", word(rng), rng.random_range(1..1000));
        while !self.usernames.insert(name.clone()) {
            name.push_str(&rng.random_range(0..10).to_string());
        }
        let space = self.path("home.php").q("mod", "space").q("uid", u.as_str());
        let by_name = self
            .path("home.php")
            .q("mod", "space")
            .q("username", name.as_str());
        let (default_tab, other_tab) = if self.space_home {
            ("index", "profile")
        } else {
            ("profile", "index")
        };
        let mut forms = Vec::new();
        if self.space_rewrite {
            forms.push((self.path(&format!("space-uid-{u}.html")), None));
            forms.push((space.clone(), self.rule(SPACE_SCRIPT)));
            forms.push((space.clone().q("do", default_tab), None));
            if rng.random_bool(0.3) {
                forms.push((
                    self.path(&format!("space-username-{name}.html")),
                    self.rule(SPACE_USERNAME),
                ));
                forms.push((by_name, None));
            }
        } else {
            forms.push((space.clone(), None));
            forms.push((space.clone().q("do", default_tab), self.rule(SPACE_DEFAULT)));
            if rng.random_bool(0.3) {
                forms.push((by_name, self.rule(SPACE_USERNAME)));
            }
        }
        let profile = em.content(rng, &forms_of(forms), PageKind::Article);
        if rng.random_bool(0.35) {
            let other = forms_of(vec![(space.clone().q("do", other_tab), None)]);
            em.sibling(rng, &profile, &other, PageKind::Article);
        }
        let mut tabs: Vec<&str> = Vec::new();
        for _ in 0..rng.random_range(0..=2) {
            let tab = pick(rng, TABS, "blog");
            if !tabs.contains(&tab) {
                tabs.push(tab);
                let url = space
                    .clone()
                    .q("do", tab)
                    .q("view", "me")
                    .q("from", "space");
                em.sibling(
                    rng,
                    &profile,
                    &forms_of(vec![(url, None)]),
                    PageKind::Listing,
                );
            }
        }
    }
}

impl Section for Discuz {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let i = rng.random_range(0..self.boards.len());
        if rng.random_bool(0.12) && !self.boards[i].listed {
            self.forum(em, rng, i);
        } else if rng.random_bool(0.1) {
            self.member(em, rng);
        } else {
            self.thread(em, rng);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let t = self.next_thread + rng.random_range(1_000_000..2_000_000);
        self.thread_forms(t, 1, &Links::default())
    }

    fn variant(&self) -> String {
        format!(
            "discuz{}{}{}{}{}+ppp{}+{}",
            self.base,
            if self.rewrite { "+rewrite" } else { "" },
            if self.space_rewrite { "+space" } else { "" },
            if self.boards.iter().any(|b| b.key.is_some()) {
                "+keys"
            } else {
                ""
            },
            match self.archiver {
                Some(true) => "+archiver-rewrite",
                Some(false) => "+archiver",
                None => "",
            },
            self.per_page,
            if self.space_home { "home" } else { "profile" }
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

    use super::super::family_tests::{
        assert_irrelevant_keys_keep_the_content, check_family, ids_of,
    };
    use crate::corpus::{generate, CorpusConfig, Site, SiteKind};

    /// The part of `url` before `?` and its query pairs.
    fn split(url: &str) -> Option<(&str, HashMap<&str, &str>)> {
        let (head, query) = url.split_once('?')?;
        let pairs = query
            .split('&')
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        Some((head, pairs))
    }

    /// Checks the scheme's truth on `site`, counting each kind of pair it found.
    fn check_scheme(site: &Site, seen: &mut BTreeMap<&'static str, usize>) {
        let ids = ids_of(site);
        // Threads with a second page, by any spelling of a later page.
        let mut longer: HashSet<String> = HashSet::new();
        for url in ids.keys() {
            if let Some((_, rest)) = url.split_once("/thread-") {
                if let [t, p, _] = rest.split('-').collect::<Vec<_>>()[..] {
                    if p != "1" {
                        longer.insert(t.to_string());
                    }
                }
            }
            if let Some((_, q)) = split(url) {
                if let (Some(t), Some(p), false) =
                    (q.get("tid"), q.get("page"), q.contains_key("authorid"))
                {
                    if *p != "1" && q.get("mod") == Some(&"viewthread") {
                        longer.insert(t.to_string());
                    }
                }
            }
        }
        let mut count = |what: &'static str| *seen.entry(what).or_insert(0) += 1;
        for (url, id) in &ids {
            // `thread-T-P-X.html` is `thread-T-P-1.html`, which is the script's page P.
            if let Some((head, rest)) = url.split_once("/thread-") {
                let parts: Vec<&str> = rest.trim_end_matches(".html").split('-').collect();
                if let [t, p, x] = parts[..] {
                    let canonical = format!("{head}/thread-{t}-{p}-1.html");
                    if x != "1" {
                        if let Some(other) = ids.get(&canonical) {
                            assert_eq!(other, id, "{url}");
                            count("prevpage");
                        }
                    } else {
                        let script = format!("{head}/forum.php?mod=viewthread&tid={t}");
                        let script = if p == "1" {
                            script
                        } else {
                            format!("{script}&page={p}")
                        };
                        if let Some(other) = ids.get(&script) {
                            assert_eq!(other, id, "{url}");
                            count("rewritten");
                        }
                        if let (true, Some(other)) =
                            (p == "1", ids.get(&format!("{head}/thread-{t}-2-1.html")))
                        {
                            assert_ne!(other, id, "{url}");
                            count("paged");
                        }
                    }
                }
            }
            let Some((head, q)) = split(url) else {
                continue;
            };
            match (q.get("mod").copied(), q.get("tid")) {
                (Some("viewthread"), Some(t)) => {
                    let plain = format!("{head}?mod=viewthread&tid={t}");
                    let of_page = match q.get("page").filter(|p| **p != "1") {
                        Some(p) => format!("{plain}&page={p}"),
                        None => plain.clone(),
                    };
                    if q.get("ordertype") == Some(&"1") {
                        // Newest first is no page of the thread.
                        if let Some(other) = ids.get(&plain) {
                            assert_ne!(other, id, "{url}");
                            count("reversed");
                        }
                    } else if q.contains_key("authorid") {
                        // One author's posts are not the thread's page.
                        if let Some(other) = ids.get(&of_page) {
                            assert_ne!(other, id, "{url}");
                            count("author");
                        }
                    } else if q.contains_key("action") {
                        // The printable view is the page of a one-page thread only.
                        if let (true, Some(other)) = (q.len() >= 3, ids.get(&plain)) {
                            if other == id {
                                assert!(!longer.contains(*t), "{url}");
                                count("printable");
                            }
                        }
                    } else if q.contains_key("extra") || q.get("ordertype") == Some(&"2") {
                        // `extra` and `ordertype=2` keep the page.
                        if let Some(other) = ids.get(&of_page) {
                            assert_eq!(other, id, "{url}");
                            count("extra");
                        }
                    }
                }
                (Some("forumdisplay"), _) if q.contains_key("filter") => {
                    let plain = format!("{head}?mod=forumdisplay&fid={}", q["fid"]);
                    if let Some(other) = ids.get(&plain) {
                        assert_ne!(other, id, "{url}");
                        count("filtered");
                    }
                }
                (Some("space"), _) if q.contains_key("do") && q.contains_key("uid") => {
                    let plain = format!("{head}?mod=space&uid={}", q["uid"]);
                    let default = if site.variant.ends_with("+home") {
                        "index"
                    } else {
                        "profile"
                    };
                    if let Some(other) = ids.get(&plain) {
                        if q["do"] == default && !q.contains_key("view") {
                            assert_eq!(other, id, "{url}");
                            count("default tab");
                        } else {
                            assert_ne!(other, id, "{url}");
                            count("space tab");
                        }
                    }
                }
                _ => {}
            }
            // The archiver's page is the thread's page.
            if let Some(root) = head.strip_suffix("/archiver/") {
                if let Some((t, _)) = url
                    .split_once("?tid-")
                    .and_then(|(_, r)| r.split_once(".html"))
                {
                    let mut page = format!("{root}/forum.php?mod=viewthread&tid={t}");
                    if let Some(p) = q.get("page") {
                        page = format!("{page}&page={p}");
                    }
                    if let Some(other) = ids.get(&page) {
                        assert_eq!(other, id, "{url}");
                        count("archived");
                    }
                }
            }
        }
    }

    #[test]
    fn discuz_generates_its_scheme() {
        let mut seen = BTreeMap::new();
        for site in check_family(SiteKind::Discuz) {
            assert_irrelevant_keys_keep_the_content(&site);
            check_scheme(&site, &mut seen);
        }
        // More, smaller sites: every host option is drawn on some seed, and the scheme holds
        // under each.
        let mut options = BTreeSet::new();
        for seed in 0..40 {
            let config = CorpusConfig::new(seed, 1)
                .with_kinds(&[SiteKind::Discuz])
                .with_pages(300, 300);
            let site = generate(&config).sites.remove(0);
            assert_irrelevant_keys_keep_the_content(&site);
            let index = site.content_index();
            for e in &site.expected {
                for (a, b) in &e.examples {
                    assert_eq!(index[a.as_str()], index[b.as_str()], "{a} {b}");
                }
            }
            for (a, b) in &site.hard_negatives {
                assert_ne!(index[a.as_str()], index[b.as_str()], "{a} {b}");
            }
            check_scheme(&site, &mut seen);
            let variant = &site.variant;
            for option in [
                "+rewrite",
                "+space",
                "+keys",
                "+archiver+",
                "+archiver-rewrite",
                "+home",
                "+profile",
                "/bbs",
            ] {
                if variant.contains(option) {
                    options.insert(option);
                }
            }
            if !variant.contains("+rewrite") {
                options.insert("no rewrite");
            }
            if !variant.contains("+archiver") {
                options.insert("no archiver");
            }
            options.insert(if variant.contains("+ppp10+") {
                "ppp10"
            } else {
                "ppp other"
            });
        }
        assert_eq!(options.len(), 12, "{options:?}");
        for what in [
            "prevpage",
            "rewritten",
            "paged",
            "reversed",
            "author",
            "printable",
            "extra",
            "filtered",
            "default tab",
            "space tab",
            "archived",
        ] {
            assert!(
                seen.get(what).is_some_and(|n| *n > 0),
                "no {what}: {seen:?}"
            );
        }
    }
}
