//! Simple Machines Forum (SMF 2.x): one front controller, `index.php`, whose parameters are
//! glued with semicolons, and whose topic and board ids carry the page offset after a dot.
//!
//! A topic is `index.php?topic=N.S`, S the offset of the first message shown (0, then multiples
//! of the messages per page, `defaultMaxMessages`, 15 unless changed), a board
//! `index.php?board=B.S` (20 topics a page). The request cleaner splits the id at its dot and
//! takes offset 0 when there is none, so `topic=N` is `topic=N.0`. With "search engine friendly
//! URLs" (`queryless_urls`, Apache or Lighttpd only) the output buffer rewrites every link whose
//! query starts with `board=` or `topic=` into a path, `;` and `&` becoming `/` and `=` a comma:
//! `index.php/topic,N.S.html`, `index.php/board,B.0/sort,subject.html`; both spellings are
//! served, so crawls hold both. Further parameters follow the id after semicolons:
//!
//! - `topic=N.msgM` (written with `#msgM`, which crawlers drop) opens the page that holds message
//!   M: the same content as one of the topic's pages, which one known only from the topic's
//!   length, not from the URL (board listings link every topic's last message this way);
//! - `;wap2` is the WAP2 mobile rendering of the page (a rendering of the same messages, as the
//!   corpus treats renderings elsewhere; modelled on one-page topics only, since the mobile
//!   layout pages by its own count);
//! - `;all` shows every message of a long topic on one page and `action=printpage;topic=N.0` the
//!   whole topic laid out for printing: other contents than any one page;
//! - on a board, `;sort=subject` (`starter`, `replies`, `views`, with `;desc`) are other
//!   listings, and later offsets other pages.
//!
//! Visitors without cookies (crawlers among them) get `PHPSESSID` in every link of a page
//! (`index.php?PHPSESSID=…&topic=…`; redirects glue it with `;` instead, a spelling left out
//! here, where the order of the parameters does not matter).

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_session, add_tracking, alias_rule, forms_of, thread_posts, Section};
use crate::corpus::emit::{Emitter, ExtraPlace, Form, PageChain, UrlParts};
use crate::corpus::words::pick;
use crate::corpus::PageKind;

/// Topics per board page (SMF's `defaultMaxTopics`).
const TOPICS_PER_PAGE: u32 = 20;

/// Board sort keys (the column headers of a message index).
const SORTS: &[&str] = &["subject", "starter", "replies", "views", "last_post"];

pub(super) struct Smf {
    base: String,
    /// Whether links are written as `index.php/topic,N.S.html` (`queryless_urls`).
    queryless: bool,
    /// Messages per topic page.
    per_page: u32,
    boards: Vec<u32>,
    /// Rules: query spelling of a queryless link, offset left out, message link, WAP2.
    rules: [usize; 4],
    listed: HashSet<usize>,
    next_topic: u64,
    next_message: u64,
}

impl Smf {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(rng, &["", "/forum", "/forums", "/smf"], "")
        );
        let mut boards: Vec<u32> = Vec::new();
        for _ in 0..rng.random_range(3..=12) {
            let b = rng.random_range(1..60);
            if !boards.contains(&b) {
                boards.push(b);
            }
        }
        let mut smf = Smf {
            queryless: rng.random_bool(0.5),
            per_page: *[15u32, 15, 20, 25]
                .get(rng.random_range(0..4))
                .unwrap_or(&15),
            boards,
            rules: [0; 4],
            listed: HashSet::new(),
            next_topic: rng.random_range(1..40_000),
            next_message: rng.random_range(1..400_000),
            base,
        };
        let script = format!("{}/index.php", smf.base);
        let query = |v: &str| UrlParts::new(script.clone()).q("topic", v);
        smf.rules = [
            alias_rule(
                em,
                &query("{n}.{start}"),
                &UrlParts::new(format!("{script}/topic,{{n}}.{{start}}.html")),
                "the query spelling of a search-engine-friendly link",
            ),
            alias_rule(
                em,
                &query("{n}"),
                &query("{n}.0"),
                "a topic or board without its offset",
            ),
            alias_rule(
                em,
                &query("{n}.msg{m}"),
                &query("{n}.{start}"),
                "a message link opens the page holding it",
            ),
            alias_rule(
                em,
                &query("{n}.0;wap2"),
                &query("{n}.0"),
                "the WAP2 mobile rendering",
            ),
        ];
        if rng.random_bool(0.6) {
            add_session(em, rng, "PHPSESSID", ExtraPlace::Query, 32);
        }
        if rng.random_bool(0.3) {
            add_tracking(em, rng, 1);
        }
        smf
    }

    /// `index.php?{key}={value}` spelled as the site writes it: the query, or on queryless
    /// sites the path the output buffer makes of it.
    fn pretty(&self, key: &str, value: &str) -> UrlParts {
        let value: String = value
            .chars()
            .map(|c| match c {
                ';' | '&' => '/',
                '=' => ',',
                c => c,
            })
            .collect();
        UrlParts::new(format!("{}/index.php/{key},{value}.html", self.base))
    }

    fn query(&self, key: &str, value: &str) -> UrlParts {
        UrlParts::new(format!("{}/index.php", self.base)).q(key, value)
    }

    /// The forms of one content from its spellings `(key=value, rule)`, the first spelling the
    /// one the site links. On queryless sites each spelling has its path and its query form.
    fn forms(&self, spellings: &[(&str, String, Option<usize>)]) -> Vec<Form> {
        let mut forms = Vec::new();
        for (i, (key, value, rule)) in spellings.iter().enumerate() {
            if self.queryless {
                forms.push((self.pretty(key, value), *rule));
                // The query spelling of the linked form differs by the rewrite alone; of the
                // other spellings, by the rewrite and their own rule (no single-rule example).
                let rule = if i == 0 { Some(self.rules[0]) } else { None };
                forms.push((self.query(key, value), rule));
            } else {
                forms.push((self.query(key, value), *rule));
            }
        }
        forms_of(forms)
    }

    /// Page `page` of topic `n`: its offset, the messages linked on it, whether the topic has a
    /// single page.
    fn topic_forms(&self, n: u64, page: u32, messages: &[u64], single: bool) -> Vec<Form> {
        let start = page * self.per_page;
        let mut spellings = vec![("topic", format!("{n}.{start}"), None)];
        if page == 0 {
            spellings.push(("topic", n.to_string(), Some(self.rules[1])));
        }
        for m in messages {
            spellings.push(("topic", format!("{n}.msg{m}"), Some(self.rules[2])));
        }
        if single {
            spellings.push(("topic", format!("{n}.0;wap2"), Some(self.rules[3])));
        }
        self.forms(&spellings)
    }

    /// Page `page` of board `b`, sorted by `sort` (`None`: the default order).
    fn board_forms(&self, b: u32, page: u32, sort: Option<&str>) -> Vec<Form> {
        let start = page * TOPICS_PER_PAGE;
        match sort {
            Some(sort) => self.forms(&[("board", format!("{b}.{start};sort={sort}"), None)]),
            None if page == 0 => self.forms(&[
                ("board", format!("{b}.0"), None),
                ("board", b.to_string(), Some(self.rules[1])),
            ]),
            None => self.forms(&[("board", format!("{b}.{start}"), None)]),
        }
    }

    fn topic(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_topic += rng.random_range(1..30);
        let n = self.next_topic;
        let (messages, pages) = thread_posts(rng, self.per_page, &mut self.next_message, 6);
        let length = messages.len() as u32;
        let single = pages == 1;
        let mut chain = PageChain::default();
        for page in 0..pages {
            let on_page = &messages[(page * self.per_page) as usize
                ..((page + 1) * self.per_page).min(length) as usize];
            // Board listings link the last message; quotes and searches link any other.
            let mut linked = Vec::new();
            if page + 1 == pages && rng.random_bool(0.5) {
                linked.extend(on_page.last());
            }
            if rng.random_bool(0.2) {
                linked.push(on_page[rng.random_range(0..on_page.len())]);
            }
            linked.dedup();
            let wap2 = single && rng.random_bool(0.3);
            let forms = self.topic_forms(n, page, &linked, wap2);
            chain.push(em, rng, &forms, PageKind::Thread);
        }
        let Some(first) = chain.first() else {
            return;
        };
        if !single && rng.random_bool(0.3) {
            let all = self.forms(&[("topic", format!("{n}.0;all"), None)]);
            em.sibling(rng, &first, &all, PageKind::Thread);
        }
        if rng.random_bool(0.15) {
            // Not rewritten on queryless sites: the query starts with `action=`.
            let print = forms_of(vec![(
                self.query("action", &format!("printpage;topic={n}.0")),
                None,
            )]);
            em.sibling(rng, &first, &print, PageKind::Article);
        }
    }
}

impl Section for Smf {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let i = rng.random_range(0..self.boards.len());
        if rng.random_bool(0.12) && self.listed.insert(i) {
            let b = self.boards[i];
            let first = em.content(rng, &self.board_forms(b, 0, None), PageKind::Listing);
            for page in 1..rng.random_range(1..=4) {
                em.sibling(
                    rng,
                    &first,
                    &self.board_forms(b, page, None),
                    PageKind::Listing,
                );
            }
            if rng.random_bool(0.5) {
                let mut sort = pick(rng, SORTS, "subject").to_string();
                if rng.random_bool(0.5) {
                    sort.push_str(";desc");
                }
                em.sibling(
                    rng,
                    &first,
                    &self.board_forms(b, 0, Some(&sort)),
                    PageKind::Listing,
                );
            }
            return;
        }
        self.topic(em, rng);
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let n = self.next_topic + rng.random_range(1_000_000..2_000_000);
        self.topic_forms(n, 0, &[], false)
    }

    fn variant(&self) -> String {
        format!(
            "smf{}{}",
            self.base,
            if self.queryless { "+queryless" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::family_tests::{check_family, ids_of};
    use crate::corpus::SiteKind;

    #[test]
    fn smf_generates_its_scheme() {
        let (mut spelled, mut wap2, mut printed) = (0, 0, 0);
        for site in check_family(SiteKind::Smf) {
            let ids = ids_of(&site);
            for (url, id) in &ids {
                // A queryless link and its query spelling are one page.
                if let Some((head, rest)) = url.split_once("/index.php/topic,") {
                    let Some(value) = rest.strip_suffix(".html") else {
                        continue;
                    };
                    let query = format!("{head}/index.php?topic={}", value.replace('/', ";"));
                    if let Some(other) = ids.get(&query) {
                        assert_eq!(other, id, "{url} vs {query}");
                        spelled += 1;
                    }
                }
                if let Some(page) = url.strip_suffix(";wap2") {
                    if let Some(other) = ids.get(page) {
                        assert_eq!(other, id, "{url} vs {page}");
                        wap2 += 1;
                    }
                }
                // The print layout of a topic is not its first page.
                if let Some((head, topic)) = url.split_once("?action=printpage;") {
                    if let Some(other) = ids.get(&format!("{head}?{topic}")) {
                        assert_ne!(other, id, "{url}");
                        printed += 1;
                    }
                }
                // Every page offset is its own content.
                if let Some((head, start)) = url.rsplit_once(".") {
                    if start.chars().all(|c| c.is_ascii_digit()) && start != "0" {
                        if let Some(other) = ids.get(&format!("{head}.0")) {
                            assert_ne!(other, id, "{url}");
                        }
                    }
                }
            }
        }
        assert!(
            spelled > 0 && wap2 > 0 && printed > 0,
            "spelled {spelled}, wap2 {wap2}, printed {printed}"
        );
    }
}
