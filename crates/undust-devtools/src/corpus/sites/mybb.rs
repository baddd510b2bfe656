//! MyBB 1.8: a PHP forum of one script per page type (`showthread.php`, `forumdisplay.php`,
//! `member.php`), with optional "search engine friendly" URLs that an `.htaccess` file maps
//! back onto the scripts.
//!
//! What the model follows (read in MyBB's `global.php`, `htaccess.txt`, `showthread.php` and
//! `forumdisplay.php`):
//!
//! - With `seourls` on, links are written `thread-T.html`, `thread-T-page-P.html`,
//!   `thread-T-post-M.html`, `thread-T-lastpost.html`, `post-M.html`, `forum-F.html`,
//!   `forum-F-page-P.html` and `user-U.html`; each `RewriteRule` maps one onto the script's query
//!   (`showthread.php?tid=T&page=P`, `...&pid=M`, `...&action=lastpost`, `showthread.php?pid=M`,
//!   `forumdisplay.php?fid=F&page=P`, `member.php?action=profile&uid=U`), which keeps answering.
//!   Without it only the query spellings exist.
//! - A post link (`pid=M`, with or without `tid`) opens the page of the thread that holds post M,
//!   counted with the posts per page (`postsperpage`, 20 unless changed): the same content as
//!   that page, which page known only from the thread, not from the URL. `action=lastpost`
//!   redirects to the last post's link, so it is the thread's last page.
//! - `page=1` is the first page; `mode=linear` is the default display mode, while
//!   `mode=threaded` shows one post with the reply tree: another page.
//! - `highlight=` (search results link threads with the searched words) marks words and changes
//!   nothing else.
//! - A forum's sort links write every listing option: `datecut=9999&prefix=0&sortby=X&order=Y`
//!   (after `?` on friendly URLs); at the defaults (`sortby=lastpost&order=desc`) that is the
//!   plain listing, any other sort another one, like later pages.
//! - The archive (`archive/index.php/thread-T.html`, or `archive/index.php?thread-T.html` where
//!   the server passes no path info; `showthread.php` links it through `build_archive_link`,
//!   whose body was not read) renders a thread's posts without the theme: modelled on one-page
//!   threads only, as the corpus treats renderings elsewhere.
//! - A member's profile and the search for the threads they started
//!   (`search.php?action=finduserthreads&uid=U`) are different pages.
//!
//! MyBB keeps its session in a cookie (`sid`), not in URLs, so no session parameter is modelled.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, add_word_param, alias_rule, forms_of, thread_posts, Section};
use crate::corpus::emit::{Emitter, Form, PageChain, UrlParts};
use crate::corpus::words::pick;
use crate::corpus::PageKind;

/// A forum's sort keys besides the default `lastpost`, with the order each link writes.
const SORTS: &[(&str, &str)] = &[
    ("subject", "asc"),
    ("starter", "asc"),
    ("started", "desc"),
    ("replies", "desc"),
    ("views", "desc"),
    ("lastpost", "asc"),
];

/// Rule indices into `MyBb::rules`.
const SCRIPT: usize = 0;
const FIRST_PAGE: usize = 1;
const POST_LINK: usize = 2;
const LAST_POST: usize = 3;
const LINEAR: usize = 4;
const DEFAULT_SORT: usize = 5;
const ARCHIVE: usize = 6;

pub(super) struct MyBb {
    base: String,
    /// Search-engine-friendly URLs (`seourls` with the `.htaccess` in place).
    seo: bool,
    /// How the archive is addressed: `None` when the crawl never reached it, else whether the
    /// server passes path info (`archive/index.php/thread-T.html`) or not (`?thread-T.html`).
    archive: Option<bool>,
    /// Posts per thread page (`postsperpage`).
    per_page: u32,
    forums: Vec<u32>,
    rules: [usize; 7],
    listed: HashSet<usize>,
    next_thread: u64,
    next_post: u64,
    next_user: u64,
}

impl MyBb {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(
                rng,
                &["", "", "/forum", "/forums", "/mybb", "/community"],
                ""
            )
        );
        let mut forums: Vec<u32> = Vec::new();
        for _ in 0..rng.random_range(3..=14) {
            let f = rng.random_range(2..80);
            if !forums.contains(&f) {
                forums.push(f);
            }
        }
        let archive = rng.random_bool(0.5).then(|| rng.random_bool(0.7));
        let mut mybb = MyBb {
            seo: rng.random_bool(0.6),
            archive,
            per_page: *[20u32, 20, 20, 10, 15, 25]
                .get(rng.random_range(0..6))
                .unwrap_or(&20),
            forums,
            rules: [0; 7],
            listed: HashSet::new(),
            next_thread: rng.random_range(1..30_000),
            next_post: rng.random_range(1..300_000),
            next_user: rng.random_range(1..5_000),
            base,
        };
        let b = mybb.base.clone();
        let thread = |rest: &str| UrlParts::new(format!("{b}/showthread.php?{rest}"));
        let script = UrlParts::new(format!("{b}/showthread.php")).q("tid", "{t}");
        mybb.rules = [
            alias_rule(
                em,
                &script,
                &UrlParts::new(format!("{b}/thread-{{t}}.html")),
                "the script behind a search-engine-friendly link",
            ),
            alias_rule(
                em,
                &script.clone().q("page", "1"),
                &script,
                "the first page spelled out (`page=1`)",
            ),
            alias_rule(
                em,
                &thread("tid={t}&pid={m}"),
                &thread("tid={t}&page={p}"),
                "a post link opens the page holding the post",
            ),
            alias_rule(
                em,
                &script.clone().q("action", "lastpost"),
                &thread("tid={t}&page={last}"),
                "the last post's link opens the last page",
            ),
            alias_rule(
                em,
                &script.clone().q("mode", "linear"),
                &script,
                "the default display mode spelled out (`mode=linear`)",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{b}/forumdisplay.php"))
                    .q("fid", "{f}")
                    .q("datecut", "9999")
                    .q("prefix", "0")
                    .q("sortby", "lastpost")
                    .q("order", "desc"),
                &UrlParts::new(format!("{b}/forumdisplay.php")).q("fid", "{f}"),
                "a forum's default listing options spelled out",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{b}/archive/index.php/thread-{{t}}.html")),
                &script,
                "the archive rendering of a one-page thread",
            ),
        ];
        add_word_param(em, rng, "highlight", "search highlighting", (0.03, 0.12));
        if rng.random_bool(0.25) {
            add_tracking(em, rng, 1);
        }
        mybb
    }

    /// One spelling of a page: its friendly path (if friendly URLs have one for it) and its
    /// script form, with `rule` for why it equals the page's first spelling. On friendly sites
    /// the script form of the first spelling differs by the rewrite alone; the script forms of
    /// the other spellings differ by the rewrite and their own rule (no single-rule example).
    fn spell(
        &self,
        forms: &mut Vec<(UrlParts, Option<usize>)>,
        friendly: Option<UrlParts>,
        script: UrlParts,
        rule: Option<usize>,
    ) {
        match friendly.filter(|_| self.seo) {
            Some(path) => {
                let first = forms.is_empty();
                forms.push((path, rule));
                let script_rule = if first {
                    Some(self.rules[SCRIPT])
                } else {
                    None
                };
                forms.push((script, script_rule));
            }
            None => forms.push((script, rule)),
        }
    }

    fn path(&self, file: &str) -> UrlParts {
        UrlParts::new(format!("{}/{file}", self.base))
    }

    fn showthread(&self) -> UrlParts {
        self.path("showthread.php")
    }

    /// Page `page` (1 = first) of thread `t`: the posts linked on it, whether it is the last
    /// page, whether the archive renders it.
    fn thread_forms(
        &self,
        t: u64,
        page: u32,
        last: bool,
        linked: &[u64],
        archived: bool,
    ) -> Vec<Form> {
        let mut forms = Vec::new();
        let by_tid = self.showthread().q("tid", t.to_string());
        if page == 1 {
            self.spell(
                &mut forms,
                Some(self.path(&format!("thread-{t}.html"))),
                by_tid.clone(),
                None,
            );
            self.spell(
                &mut forms,
                Some(self.path(&format!("thread-{t}-page-1.html"))),
                by_tid.clone().q("page", "1"),
                Some(self.rules[FIRST_PAGE]),
            );
            let linear = if self.seo {
                self.path(&format!("thread-{t}.html")).q("mode", "linear")
            } else {
                by_tid.clone().q("mode", "linear")
            };
            forms.push((linear, Some(self.rules[LINEAR])));
        } else {
            self.spell(
                &mut forms,
                Some(self.path(&format!("thread-{t}-page-{page}.html"))),
                by_tid.clone().q("page", page.to_string()),
                None,
            );
        }
        for m in linked {
            let rule = Some(self.rules[POST_LINK]);
            self.spell(
                &mut forms,
                Some(self.path(&format!("thread-{t}-post-{m}.html"))),
                by_tid.clone().q("pid", m.to_string()),
                rule,
            );
            self.spell(
                &mut forms,
                Some(self.path(&format!("post-{m}.html"))),
                self.showthread().q("pid", m.to_string()),
                rule,
            );
        }
        if last {
            self.spell(
                &mut forms,
                Some(self.path(&format!("thread-{t}-lastpost.html"))),
                by_tid.clone().q("action", "lastpost"),
                Some(self.rules[LAST_POST]),
            );
        }
        if archived {
            let archive = match self.archive {
                Some(true) => self.path(&format!("archive/index.php/thread-{t}.html")),
                _ => self
                    .path("archive/index.php")
                    .q(&format!("thread-{t}.html"), ""),
            };
            forms.push((archive, Some(self.rules[ARCHIVE])));
        }
        forms_of(forms)
    }

    /// The threaded view of thread `t` (one post and the reply tree): not any page of it.
    fn threaded_forms(&self, t: u64) -> Vec<Form> {
        let by_tid = self.showthread().q("tid", t.to_string());
        let first = if self.seo {
            self.path(&format!("thread-{t}.html")).q("mode", "threaded")
        } else {
            by_tid.q("mode", "threaded")
        };
        forms_of(vec![(first, None)])
    }

    /// Page `page` of forum `f` in the default order, or sorted by `sort`.
    fn forum_forms(&self, f: u32, page: u32, sort: Option<(&str, &str)>) -> Vec<Form> {
        let by_fid = self.path("forumdisplay.php").q("fid", f.to_string());
        let friendly = if page > 1 {
            self.path(&format!("forum-{f}-page-{page}.html"))
        } else {
            self.path(&format!("forum-{f}.html"))
        };
        let paged = |p: UrlParts| {
            if page > 1 {
                p.q("page", page.to_string())
            } else {
                p
            }
        };
        // The sort links' options, after the friendly path or the script's `fid`.
        let options = |p: UrlParts, (sortby, order): (&str, &str)| {
            p.q("datecut", "9999")
                .q("prefix", "0")
                .q("sortby", sortby)
                .q("order", order)
        };
        let mut forms = Vec::new();
        match sort {
            Some(sort) => self.spell(
                &mut forms,
                Some(options(friendly, sort)),
                options(paged(by_fid), sort),
                None,
            ),
            None => {
                self.spell(
                    &mut forms,
                    Some(friendly.clone()),
                    paged(by_fid.clone()),
                    None,
                );
                self.spell(
                    &mut forms,
                    Some(options(friendly, ("lastpost", "desc"))),
                    options(paged(by_fid), ("lastpost", "desc")),
                    Some(self.rules[DEFAULT_SORT]),
                );
            }
        }
        forms_of(forms)
    }

    fn thread(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_thread += rng.random_range(1..20);
        let t = self.next_thread;
        let (posts, pages) = thread_posts(rng, self.per_page, &mut self.next_post, 8);
        let length = posts.len() as u32;
        let mut chain = PageChain::default();
        for page in 1..=pages {
            let on_page = &posts[((page - 1) * self.per_page) as usize
                ..(page * self.per_page).min(length) as usize];
            // Forum listings link the last post; search results and quotes any other.
            let mut linked = Vec::new();
            if page == pages && rng.random_bool(0.4) {
                linked.extend(on_page.last());
            }
            if rng.random_bool(0.25) {
                linked.push(on_page[rng.random_range(0..on_page.len())]);
            }
            linked.dedup();
            let last = page == pages && rng.random_bool(0.5);
            let archived = pages == 1 && self.archive.is_some() && rng.random_bool(0.4);
            let forms = self.thread_forms(t, page, last, &linked, archived);
            chain.push(em, rng, &forms, PageKind::Thread);
        }
        if let Some(first) = chain.first() {
            if rng.random_bool(0.15) {
                em.sibling(rng, &first, &self.threaded_forms(t), PageKind::Thread);
            }
        }
    }

    fn forum(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, i: usize) {
        let f = self.forums[i];
        let first = em.content(rng, &self.forum_forms(f, 1, None), PageKind::Listing);
        for page in 2..=rng.random_range(1..=5) {
            em.sibling(
                rng,
                &first,
                &self.forum_forms(f, page, None),
                PageKind::Listing,
            );
        }
        if rng.random_bool(0.6) {
            let sort = SORTS[rng.random_range(0..SORTS.len())];
            em.sibling(
                rng,
                &first,
                &self.forum_forms(f, 1, Some(sort)),
                PageKind::Listing,
            );
        }
    }

    fn member(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_user += rng.random_range(1..40);
        let u = self.next_user.to_string();
        let mut forms = Vec::new();
        self.spell(
            &mut forms,
            Some(self.path(&format!("user-{u}.html"))),
            self.path("member.php")
                .q("action", "profile")
                .q("uid", u.clone()),
            None,
        );
        let profile = em.content(rng, &forms_of(forms), PageKind::Article);
        if rng.random_bool(0.4) {
            let threads = self
                .path("search.php")
                .q("action", "finduserthreads")
                .q("uid", u);
            em.sibling(
                rng,
                &profile,
                &forms_of(vec![(threads, None)]),
                PageKind::Listing,
            );
        }
    }
}

impl Section for MyBb {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let i = rng.random_range(0..self.forums.len());
        if rng.random_bool(0.12) && self.listed.insert(i) {
            self.forum(em, rng, i);
        } else if rng.random_bool(0.1) {
            self.member(em, rng);
        } else {
            self.thread(em, rng);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let t = self.next_thread + rng.random_range(1_000_000..2_000_000);
        self.thread_forms(t, 1, false, &[], false)
    }

    fn variant(&self) -> String {
        format!(
            "mybb{}{}{}+ppp{}",
            self.base,
            if self.seo { "+seo" } else { "" },
            match self.archive {
                Some(true) => "+archive",
                Some(false) => "+archive?",
                None => "",
            },
            self.per_page
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
    fn mybb_generates_its_scheme() {
        let (mut rewritten, mut sorted, mut threaded, mut paged) = (0, 0, 0, 0);
        for site in check_family(SiteKind::MyBb) {
            assert_irrelevant_keys_keep_the_content(&site);
            let ids = ids_of(&site);
            for (url, id) in &ids {
                // A friendly thread link and the script it is rewritten to are one page.
                if let Some((head, rest)) = url.split_once("/thread-") {
                    if let Some(t) = rest
                        .strip_suffix(".html")
                        .filter(|t| t.chars().all(|c| c.is_ascii_digit()))
                    {
                        if let Some(other) = ids.get(&format!("{head}/showthread.php?tid={t}")) {
                            assert_eq!(other, id, "{url}");
                            rewritten += 1;
                        }
                        // Page 2 is another content than page 1.
                        if let Some(other) = ids.get(&format!("{head}/thread-{t}-page-2.html")) {
                            assert_ne!(other, id, "{url}");
                            paged += 1;
                        }
                    }
                }
                // The threaded view is not the first page; another sort is another listing.
                if let Some(plain) = url
                    .strip_suffix("?mode=threaded")
                    .or_else(|| url.strip_suffix("&mode=threaded"))
                {
                    if let Some(other) = ids.get(plain) {
                        assert_ne!(other, id, "{url}");
                        threaded += 1;
                    }
                }
                // Another sort is another listing than the forum's plain first page.
                if let Some((head, query)) = url.split_once('?') {
                    let pairs: Vec<(&str, &str)> =
                        query.split('&').filter_map(|p| p.split_once('=')).collect();
                    let value = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|p| p.1);
                    if let Some(sortby) = value("sortby") {
                        let plain = match value("fid") {
                            Some(f) => format!("{head}?fid={f}"),
                            None => head.to_string(),
                        };
                        let default = sortby == "lastpost" && value("order") == Some("desc");
                        if let (false, Some(other)) = (default, ids.get(&plain)) {
                            assert_ne!(other, id, "{url}");
                            sorted += 1;
                        }
                    }
                }
            }
        }
        assert!(
            rewritten > 0 && sorted > 0 && threaded > 0 && paged > 0,
            "rewritten {rewritten}, sorted {sorted}, threaded {threaded}, paged {paged}"
        );
    }
}
