//! TYPO3: an enterprise PHP CMS whose pages form a tree, each page answering by its id through
//! the front script (`index.php?id=N`) and by a speaking path: from version 9 the core's site
//! routing (a `slug` per page and language, route enhancers for plugins), before it the RealURL
//! extension. News are records of the `georgringer/news` Extbase plugin shown on a detail page.
//!
//! What the model follows (read in TYPO3's `typo3/sysext/core/Classes/Routing/PageRouter.php`,
//! `SiteMatcher.php`, `PageUriMatcher.php`, `Enhancer/PageTypeDecorator.php`,
//! `Enhancer/PluginEnhancer.php`, `typo3/sysext/frontend/Classes/Middleware/PageResolver.php`,
//! `PageArgumentValidator.php`, `Page/CacheHashCalculator.php` and the default `cacheHash`
//! configuration; in RealURL's `Classes/Decoder/UrlDecoder.php` and
//! `Classes/Configuration/AutomaticConfigurator.php`; in news' routing and RealURL documentation,
//! its `LinkViewHelper.php`, its pagination partial and paginate widget template):
//!
//! - A page is its speaking path (per page and language, kept as the site has it) and
//!   `index.php?id=N`, also `/?id=N`: an `id` in the query takes precedence over the path. `L=0`
//!   (the default language) and `type=0` (the default page type) spelled out are the same page;
//!   `&L=1` is the page in the site's second language, which also has its own path under the
//!   language's prefix (`/de/...`): another content. `type=98` (a print page type, on sites that
//!   configure one) is another rendering, written `?type=98` after the path (the page type
//!   decorator leaves unmapped types in the query). `no_cache=1` renders the same page uncached.
//! - Suffixes (v9+ `PageType` decorator): with none, a slug written with a trailing slash still
//!   resolves (the router retries without it, no redirect); with `default: '/'` or `.html` the
//!   other spellings resolve too, since a path without the decoration is matched as it is. The
//!   site root with `.html` is `/index.html` (the decorator's `index`), `/` serving it too.
//!   RealURL's usual configuration (`appendMissingSlash: ifNotFile,redirect`,
//!   `acceptHTMLsuffix`) serves `/a/b/`, `/a/b.html` and (by a redirect) `/a/b` alike.
//! - A news item is `tx_news_pi1[news]=N` (with `[controller]=News&[action]=detail` unless the
//!   site sets `skipControllerAndAction`) and a `cHash` on the detail page. The cHash is a hash
//!   of the page id and the relevant arguments, so it does not depend on their order or on how
//!   the brackets are written (v9+ link building percent-encodes them, older typolinks wrote them
//!   raw); the same arguments on `index.php?id=<detail page>` are the same item. With the news
//!   route enhancer and its title aspect the item is `/<detail page>/<path segment>`, and the
//!   query spelling keeps answering. RealURL sites use news' `fixedPostVars` example
//!   (`/<detail page>/<title>/`). A wrong cHash is a 404 (`pageNotFoundOnCHashError` defaults
//!   to on), and so is a missing one for Extbase arguments in 8.5 to 10 and with
//!   `cacheHash.enforceValidation`: neither is modelled (no page is served).
//! - The news list pages with `tx_news_pi1[currentPage]=K` (news with core pagination, which
//!   also links page 1 that way, with `[action]=list&[controller]=News`) or the paginate widget's
//!   `tx_news_pi1[@widget_0][currentPage]=K` (which links page 1 without arguments); routed as
//!   `/<list>/page-K`, RealURL as `/<list>/page/K/`. Later pages, category filters
//!   (`[overwriteDemand][categories]=C`, routed `/<list>/<category>`) and the RSS feed (page type
//!   9818: `feed.xml` in the `PageType` map, `feed.rss` for RealURL) are other contents.
//! - Tracking parameters are drawn from the default `cacheHash.excludedParameters` (`utm_*`,
//!   `gclid`, `fbclid`, `msclkid`, `pk_campaign`, `pk_kwd`), which never ask for a cHash.
//!
//! Per host (in `variant()`): core routing or RealURL, the suffix style, one to three languages,
//! whether the news route enhancer is configured, the pagination kind, `skipControllerAndAction`,
//! a print page type, the feed, the detail view on the list page, an installation folder.
//!
//! Not checked in code: that `?id=N&L=K` still selects the language on the newest versions
//! (read in 9.5's `SiteMatcher`), the exact order Extbase writes a list link's arguments in,
//! and how RealURL writes arguments it leaves in the query (modelled raw, like older typolinks).

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use xxhash_rust::xxh3::xxh3_128;

use super::{add_ignored_param, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitted, Emitter, Form, PageChain, UrlParts};
use crate::corpus::words::{hex, pick, slug, word};
use crate::corpus::{DustRule, PageKind};

/// Language sets of a site, the default language (id 0) first.
const SINGLE_LANGUAGES: &[&[&str]] = &[&["en"], &["de"], &["fr"], &["nl"]];
const MULTI_LANGUAGES: &[&[&str]] = &[
    &["en", "de"],
    &["de", "en"],
    &["de", "en", "fr"],
    &["en", "de", "fr"],
    &["fr", "en"],
    &["nl", "en"],
    &["en", "es"],
    &["it", "en", "de"],
];
/// The default `cacheHash.excludedParameters` besides `L`: never part of a cHash.
const CHASH_EXCLUDED: &[&str] = &[
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
    "gclid",
    "fbclid",
    "msclkid",
    "pk_campaign",
    "pk_kwd",
];

/// How a site closes its page paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Suffix {
    /// The slug as it is (`/about-us/team`).
    Bare,
    /// A trailing slash (`/about-us/team/`).
    Slash,
    /// `.html` (`/about-us/team.html`).
    Html,
}

impl Suffix {
    fn name(self) -> &'static str {
        match self {
            Suffix::Bare => "bare",
            Suffix::Slash => "slash",
            Suffix::Html => "html",
        }
    }
}

/// A page of the tree: its uid and its path (slug) in each language, `""` for the root.
struct Page {
    uid: u32,
    paths: Vec<String>,
    depth: u32,
}

struct Category {
    uid: u32,
    slugs: Vec<String>,
    listed: bool,
}

/// Expected-rule indices of a site.
struct Rules {
    id_script: usize,
    id_root: usize,
    id_l0: usize,
    id_type0: usize,
    id_lang: usize,
    /// Per [`Suffix`] (as index): the rule of that spelling when it is not the site's own.
    suffix: [usize; 3],
    root_index: usize,
    plugin_query: usize,
    plugin_id: usize,
    brackets: usize,
    order: usize,
    full_args: usize,
    first_page: usize,
    print_id: usize,
    feed_id: usize,
}

pub(super) struct Typo3 {
    base: String,
    /// Core site routing (v9+); else RealURL.
    core: bool,
    suffix: Suffix,
    /// Language codes, the default first; a language's id is its index.
    languages: Vec<&'static str>,
    /// The news route enhancer is configured (core only; RealURL sites always rewrite news).
    news_routed: bool,
    /// The paginate widget's `@widget_0` (else news' core pagination with `currentPage`).
    widget: bool,
    /// News links carry only `tx_news_pi1[news]` (`skipControllerAndAction`).
    skip_ca: bool,
    /// A print page type (98) is configured.
    print: bool,
    /// The news RSS feed (page type 9818) is configured.
    feed: bool,
    /// The list plugin shows the detail view on its own page.
    detail_on_list: bool,
    /// Stands for the installation's `encryptionKey` in cHashes.
    salt: u64,
    pages: Vec<Page>,
    /// Paths taken, per language.
    used: Vec<HashSet<String>>,
    news_slugs: Vec<HashSet<String>>,
    list: usize,
    detail: usize,
    categories: Vec<Category>,
    rules: Rules,
    next_uid: u32,
    next_news: u64,
    home_done: bool,
    list_first: Vec<Option<Emitted>>,
    list_done: Vec<bool>,
}

/// The news list page's and detail page's slugs in a language.
fn news_words(code: &str, rng: &mut ChaCha8Rng) -> (&'static str, &'static str) {
    match code {
        "de" => (
            pick(rng, &["aktuelles", "news", "presse"], "news"),
            "artikel",
        ),
        "fr" => (
            pick(rng, &["actualites", "presse"], "actualites"),
            "article",
        ),
        "nl" => (pick(rng, &["nieuws", "actueel"], "nieuws"), "artikel"),
        "es" => ("noticias", "articulo"),
        "it" => ("notizie", "articolo"),
        _ => (
            pick(rng, &["news", "press", "newsroom", "blog"], "news"),
            "detail",
        ),
    }
}

/// A plugin argument name with its brackets (and `@`) percent-encoded, as v9+ links write it.
fn encode(key: &str) -> String {
    key.replace('@', "%40")
        .replace('[', "%5B")
        .replace(']', "%5D")
}

/// `p` with plugin arguments `args` (names raw or percent-encoded) and `cHash`.
fn with_args(p: UrlParts, args: &[(String, String)], encoded: bool, chash: &str) -> UrlParts {
    let mut p = p;
    for (k, v) in args {
        let key = if encoded { encode(k) } else { k.clone() };
        p = p.q(&key, v.clone());
    }
    p.q("cHash", chash)
}

fn arg(key: &str, value: impl ToString) -> (String, String) {
    (key.to_string(), value.to_string())
}

impl Typo3 {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(rng, &["", "", "", "", "", "/cms", "/web"], "")
        );
        let core = rng.random_bool(0.7);
        let suffix = if core {
            match rng.random_range(0..20) {
                0..=8 => Suffix::Bare,
                9..=14 => Suffix::Slash,
                _ => Suffix::Html,
            }
        } else if rng.random_bool(0.6) {
            Suffix::Slash
        } else {
            Suffix::Html
        };
        let sets = if rng.random_bool(0.4) {
            SINGLE_LANGUAGES
        } else {
            MULTI_LANGUAGES
        };
        let languages = sets[rng.random_range(0..sets.len())].to_vec();
        let news_routed = core && rng.random_bool(0.75);
        let widget = !core || rng.random_bool(0.35);
        let skip_ca = !news_routed && rng.random_bool(0.3);
        let n = languages.len();
        let mut used: Vec<HashSet<String>> = vec![HashSet::new(); n];
        // Language prefixes are taken in the default language's tree.
        for code in &languages[1..] {
            used[0].insert(format!("/{code}"));
        }
        let mut t = Typo3 {
            base,
            core,
            suffix,
            news_routed,
            widget,
            skip_ca,
            print: rng.random_bool(0.35),
            feed: rng.random_bool(0.5),
            detail_on_list: rng.random_bool(0.3),
            salt: rng.random(),
            pages: vec![Page {
                uid: 1,
                paths: vec![String::new(); n],
                depth: 0,
            }],
            used,
            news_slugs: vec![HashSet::new(); n],
            list: 0,
            detail: 0,
            categories: Vec::new(),
            rules: Rules {
                id_script: 0,
                id_root: 0,
                id_l0: 0,
                id_type0: 0,
                id_lang: 0,
                suffix: [0; 3],
                root_index: 0,
                plugin_query: 0,
                plugin_id: 0,
                brackets: 0,
                order: 0,
                full_args: 0,
                first_page: 0,
                print_id: 0,
                feed_id: 0,
            },
            next_uid: 1,
            next_news: rng.random_range(1..500),
            home_done: false,
            list_first: vec![None; n],
            list_done: vec![false; n],
            languages,
        };
        // The news pages: the list under the root, the detail page under it (or the list itself).
        let words: Vec<(&str, &str)> = t
            .languages
            .clone()
            .iter()
            .map(|code| news_words(code, rng))
            .collect();
        t.list = t.add_page(
            rng,
            0,
            &words.iter().map(|w| w.0.to_string()).collect::<Vec<_>>(),
        );
        t.detail = if t.detail_on_list {
            t.list
        } else {
            t.add_page(
                rng,
                t.list,
                &words.iter().map(|w| w.1.to_string()).collect::<Vec<_>>(),
            )
        };
        let mut cid = rng.random_range(1..20);
        let mut taken = HashSet::new();
        for _ in 0..rng.random_range(3..=8) {
            let slugs: Vec<String> = (0..n).map(|_| slug(rng, 1..=2)).collect();
            if taken.insert(slugs[0].clone()) {
                t.categories.push(Category {
                    uid: cid,
                    slugs,
                    listed: false,
                });
                cid += rng.random_range(1..4);
            }
        }
        t.rules = t.register(em);
        if rng.random_bool(0.6) {
            add_cache_hash_excluded(em, rng);
        }
        if rng.random_bool(0.4) {
            let prob = rng.random_range(0.02..0.08);
            add_ignored_param(
                em,
                "no_cache",
                "`no_cache=1` renders the same page uncached".to_string(),
                prob,
                vec!["1".to_string()],
            );
        }
        t
    }

    /// The site's expected rules, documented by example layouts.
    fn register(&self, em: &mut Emitter) -> Rules {
        let b = &self.base;
        let at = |rest: &str| UrlParts::new(format!("{b}{rest}"));
        let script = at("/index.php").q("id", "{uid}");
        let style = |path: &str, s: Suffix| match s {
            Suffix::Bare => at(path),
            Suffix::Slash => at(&format!("{path}/")),
            Suffix::Html => at(&format!("{path}.html")),
        };
        let canonical_page = style("/{page-path}", self.suffix);
        let mut suffix = [0; 3];
        for &alt in self.alternates() {
            let description = match (self.core, alt) {
                (true, Suffix::Bare) => "a page path without the page type suffix",
                (true, Suffix::Slash) if self.suffix == Suffix::Bare => {
                    "a page path with a trailing slash its slug does not have"
                }
                (true, _) => "a page path closed by a slash instead of `.html`",
                (false, Suffix::Html) => "a page path with the `.html` suffix RealURL accepts",
                (false, Suffix::Bare) => "a page path without its closing slash or suffix",
                (false, _) => "a page path closed by a slash instead of `.html`",
            };
            suffix[alt as usize] = alias_rule(
                em,
                &style("/{page-path}", alt),
                &canonical_page,
                description,
            );
        }
        let plugin_args = [
            arg("tx_news_pi1[news]", "{uid}"),
            arg("tx_news_pi1[controller]", "News"),
            arg("tx_news_pi1[action]", "detail"),
        ];
        let detail_query = |p: UrlParts, encoded| with_args(p, &plugin_args, encoded, "{chash}");
        let news_path = if self.core && !self.news_routed {
            if self.skip_ca {
                with_args(
                    style("/{detail-page}", self.suffix),
                    &[arg("tx_news_pi1[news]", "{uid}")],
                    true,
                    "{chash}",
                )
            } else {
                detail_query(style("/{detail-page}", self.suffix), true)
            }
        } else {
            style("/{detail-page}/{news-slug}", self.suffix)
        };
        let by_page = at("/index.php").q("id", "{detail-page-uid}");
        let (raw, encoded) = (
            detail_query(style("/{detail-page}", self.suffix), false),
            detail_query(style("/{detail-page}", self.suffix), true),
        );
        let list = style("/{list-page}", self.suffix);
        let first_page = if self.core && self.news_routed {
            style("/{list-page}/page-1", self.suffix)
        } else {
            with_args(
                list.clone(),
                &[
                    arg("tx_news_pi1[currentPage]", "1"),
                    arg("tx_news_pi1[action]", "list"),
                    arg("tx_news_pi1[controller]", "News"),
                ],
                true,
                "{chash}",
            )
        };
        let print = if self.core {
            at("/{page-path}").q("type", "98")
        } else {
            at("/{page-path}/").q("type", "98")
        };
        let feed = if !self.core {
            at("/{list-page}/feed.rss")
        } else if self.suffix == Suffix::Bare {
            at("/{list-page}").q("type", "9818")
        } else {
            at("/{list-page}/feed.xml")
        };
        Rules {
            id_script: alias_rule(
                em,
                &script,
                &canonical_page,
                "a page by its id through the front script",
            ),
            id_root: alias_rule(
                em,
                &at("/").q("id", "{uid}"),
                &canonical_page,
                "a page by its id on the site root",
            ),
            id_l0: alias_rule(
                em,
                &script.clone().q("L", "0"),
                &canonical_page,
                "a page by its id with the default language spelled out (`L=0`)",
            ),
            id_type0: alias_rule(
                em,
                &script.clone().q("type", "0"),
                &canonical_page,
                "a page by its id with the default page type spelled out (`type=0`)",
            ),
            id_lang: alias_rule(
                em,
                &script.clone().q("L", "{language-id}"),
                &style("/{language}/{translated-page-path}", self.suffix),
                "a translated page by its id and language id",
            ),
            suffix,
            root_index: alias_rule(
                em,
                &at("/"),
                &at("/index.html"),
                "the site root for its `index.html`",
            ),
            plugin_query: alias_rule(
                em,
                &encoded,
                &news_path,
                "a routed plugin address spelled as its arguments and cHash",
            ),
            plugin_id: alias_rule(
                em,
                &detail_query(by_page, self.core),
                &news_path,
                "plugin arguments and cHash on the page id instead of the page path",
            ),
            brackets: if self.core {
                alias_rule(
                    em,
                    &raw,
                    &encoded,
                    "plugin argument names with raw brackets instead of percent-encoded ones",
                )
            } else {
                alias_rule(
                    em,
                    &encoded,
                    &raw,
                    "plugin argument names with percent-encoded brackets instead of raw ones",
                )
            },
            order: em.rule(
                DustRule::QueryOrder,
                "query parameters appear in varying order".to_string(),
            ),
            full_args: alias_rule(
                em,
                &with_args(
                    style("/{detail-page}", self.suffix),
                    &[
                        arg("tx_news_pi1[action]", "detail"),
                        arg("tx_news_pi1[controller]", "News"),
                        arg("tx_news_pi1[news]", "{uid}"),
                    ],
                    true,
                    "{full-chash}",
                ),
                &news_path,
                "a news link with controller and action spelled out",
            ),
            first_page: alias_rule(
                em,
                &first_page,
                &list,
                "the first news list page spelled out",
            ),
            print_id: alias_rule(
                em,
                &at("/index.php").q("id", "{uid}").q("type", "98"),
                &print,
                "the print page type by page id",
            ),
            feed_id: alias_rule(
                em,
                &at("/index.php")
                    .q("id", "{list-page-uid}")
                    .q("type", "9818"),
                &feed,
                "the news feed page type by page id",
            ),
        }
    }

    /// The other path spellings that serve a page, besides the site's own.
    fn alternates(&self) -> &'static [Suffix] {
        match (self.core, self.suffix) {
            (true, Suffix::Bare) => &[Suffix::Slash],
            (true, Suffix::Slash) => &[Suffix::Bare],
            (true, Suffix::Html) => &[Suffix::Bare, Suffix::Slash],
            (false, Suffix::Html) => &[Suffix::Slash, Suffix::Bare],
            (false, _) => &[Suffix::Html, Suffix::Bare],
        }
    }

    /// Adds a page under `parent` named `segments` (one per language); returns its index.
    fn add_page(&mut self, rng: &mut ChaCha8Rng, parent: usize, segments: &[String]) -> usize {
        // Deleted pages leave gaps in the uids.
        self.next_uid += rng.random_range(1..4);
        let paths = segments
            .iter()
            .enumerate()
            .map(|(l, segment)| {
                let stem = format!("{}/{segment}", self.pages[parent].paths[l]);
                // Slugs are unique in a site: TYPO3 numbers a taken one.
                let mut path = stem.clone();
                let mut i = 0;
                while !self.used[l].insert(path.clone()) {
                    i += 1;
                    path = format!("{stem}-{i}");
                }
                path
            })
            .collect();
        self.pages.push(Page {
            uid: self.next_uid,
            paths,
            depth: self.pages[parent].depth + 1,
        });
        self.pages.len() - 1
    }

    /// The base and language prefix of language `l` (`/de`).
    fn prefix(&self, l: usize) -> String {
        if l == 0 {
            self.base.clone()
        } else {
            format!("{}/{}", self.base, self.languages[l])
        }
    }

    /// `path` (a page path plus a route's tail, `""` for the root) in language `l`, spelled `s`.
    fn spell(&self, l: usize, path: &str, s: Suffix) -> String {
        let prefix = self.prefix(l);
        if path.is_empty() {
            return if self.core && s == Suffix::Html {
                format!("{prefix}/index.html")
            } else {
                format!("{prefix}/")
            };
        }
        match s {
            Suffix::Bare => format!("{prefix}{path}"),
            Suffix::Slash => format!("{prefix}{path}/"),
            Suffix::Html => format!("{prefix}{path}.html"),
        }
    }

    /// The speaking address of `path` in language `l`, then its other spellings.
    fn speaking(&self, l: usize, path: &str) -> Vec<(UrlParts, Option<usize>)> {
        let mut forms = vec![(UrlParts::new(self.spell(l, path, self.suffix)), None)];
        if path.is_empty() {
            if self.core && self.suffix == Suffix::Html {
                forms.push((
                    UrlParts::new(format!("{}/", self.prefix(l))),
                    Some(self.rules.root_index),
                ));
            }
            return forms;
        }
        for &alt in self.alternates() {
            forms.push((
                UrlParts::new(self.spell(l, path, alt)),
                Some(self.rules.suffix[alt as usize]),
            ));
        }
        forms
    }

    /// `index.php?id=N`, with `L` for other languages than the default.
    fn by_id(&self, p: usize, l: usize) -> UrlParts {
        let parts = UrlParts::new(format!("{}/index.php", self.base))
            .q("id", self.pages[p].uid.to_string());
        if l > 0 {
            parts.q("L", l.to_string())
        } else {
            parts
        }
    }

    /// Page `p` in language `l`: its speaking path and its id spellings.
    fn page_forms(
        &self,
        p: usize,
        l: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<(UrlParts, Option<usize>)> {
        let r = &self.rules;
        let mut forms = self.speaking(l, &self.pages[p].paths[l]);
        let script = self.by_id(p, l);
        forms.push((
            script.clone(),
            Some(if l == 0 { r.id_script } else { r.id_lang }),
        ));
        let mut root =
            UrlParts::new(format!("{}/", self.base)).q("id", self.pages[p].uid.to_string());
        if l > 0 {
            root = root.q("L", l.to_string());
        }
        if rng.random_bool(0.5) {
            forms.push((root, Some(r.id_root)));
        }
        if l == 0 && rng.random_bool(0.3) {
            forms.push((script.clone().q("L", "0"), Some(r.id_l0)));
        }
        if rng.random_bool(0.25) {
            forms.push((script.q("type", "0"), Some(r.id_type0)));
        }
        forms
    }

    /// The print page type of page `p` in language `l`.
    fn print_forms(&self, p: usize, l: usize) -> Vec<Form> {
        let path = &self.pages[p].paths[l];
        // The decorator cannot map type 98, so it stays in the query after the bare slug.
        let plain = if self.core && !path.is_empty() {
            format!("{}{path}", self.prefix(l))
        } else {
            self.spell(l, path, Suffix::Slash)
        };
        forms_of(vec![
            (UrlParts::new(plain).q("type", "98"), None),
            (self.by_id(p, l).q("type", "98"), Some(self.rules.print_id)),
        ])
    }

    /// A cHash: a hash of the page id and the arguments, whatever their order or spelling.
    fn chash(&self, page: usize, args: &[(String, String)]) -> String {
        let mut pairs: Vec<String> = args.iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.sort();
        let key = format!(
            "{}|id={}|{}",
            self.salt,
            self.pages[page].uid,
            pairs.join("&")
        );
        format!("{:032x}", xxh3_128(key.as_bytes()))
    }

    /// A news link's arguments: `news`, then `controller` and `action` (news' order) unless
    /// `full` is false; `docs` writes them in the documentation's order instead.
    fn detail_args(&self, uid: u64, full: bool, docs: bool) -> Vec<(String, String)> {
        let news = arg("tx_news_pi1[news]", uid);
        if !full {
            return vec![news];
        }
        let controller = arg("tx_news_pi1[controller]", "News");
        let action = arg("tx_news_pi1[action]", "detail");
        if docs {
            vec![action, controller, news]
        } else {
            vec![news, controller, action]
        }
    }

    /// News item `uid` with path segments `slugs`, in language `l`.
    fn news_forms(&self, uid: u64, slugs: &[String], l: usize, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let r = &self.rules;
        let d = self.detail;
        let detail_path = &self.pages[d].paths[l];
        let args = self.detail_args(uid, !self.skip_ca, false);
        let h = self.chash(d, &args);
        let detail_url = UrlParts::new(self.spell(l, detail_path, self.suffix));
        let mut forms;
        if !self.core || self.news_routed {
            forms = self.speaking(l, &format!("{detail_path}/{}", slugs[l]));
            if self.core {
                forms.push((
                    with_args(detail_url.clone(), &args, true, &h),
                    Some(r.plugin_query),
                ));
            }
            forms.push((
                with_args(self.by_id(d, l), &args, self.core, &h),
                Some(r.plugin_id),
            ));
            if rng.random_bool(0.3) {
                let docs = self.detail_args(uid, true, true);
                let full = self.chash(d, &docs);
                let (url, encoded) = if self.core {
                    (detail_url, false)
                } else {
                    (self.by_id(d, l), true)
                };
                forms.push((with_args(url, &docs, encoded, &full), None));
            }
        } else {
            forms = vec![
                (with_args(detail_url.clone(), &args, true, &h), None),
                (
                    with_args(detail_url.clone(), &args, false, &h),
                    Some(r.brackets),
                ),
                (
                    with_args(self.by_id(d, l), &args, true, &h),
                    Some(r.plugin_id),
                ),
            ];
            if args.len() > 1 {
                let mut reversed = args.clone();
                reversed.reverse();
                forms.push((
                    with_args(detail_url.clone(), &reversed, true, &h),
                    Some(r.order),
                ));
            }
            for &alt in self.alternates() {
                let url = UrlParts::new(self.spell(l, detail_path, alt));
                forms.push((
                    with_args(url, &args, true, &h),
                    Some(r.suffix[alt as usize]),
                ));
            }
            if self.skip_ca && rng.random_bool(0.5) {
                let docs = self.detail_args(uid, true, true);
                let full = self.chash(d, &docs);
                forms.push((with_args(detail_url, &docs, true, &full), Some(r.full_args)));
            }
        }
        forms_of(forms)
    }

    /// A news list page's arguments: the category filter, then the page (page 1 only when
    /// `spelled`).
    fn list_args(
        &self,
        page: u32,
        category: Option<usize>,
        spelled: bool,
    ) -> Vec<(String, String)> {
        let mut args = Vec::new();
        if let Some(c) = category {
            args.push(arg(
                "tx_news_pi1[overwriteDemand][categories]",
                self.categories[c].uid,
            ));
        }
        if page > 1 || spelled {
            if self.widget {
                args.push(arg("tx_news_pi1[@widget_0][currentPage]", page));
            } else {
                args.push(arg("tx_news_pi1[currentPage]", page));
                args.push(arg("tx_news_pi1[action]", "list"));
                args.push(arg("tx_news_pi1[controller]", "News"));
            }
        }
        args
    }

    /// Page `page` (1 = first) of the news list in language `l`, filtered by `category`.
    fn list_forms(
        &self,
        page: u32,
        l: usize,
        category: Option<usize>,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let r = &self.rules;
        let lp = self.list;
        let path = &self.pages[lp].paths[l];
        let list_url = UrlParts::new(self.spell(l, path, self.suffix));
        let args = self.list_args(page, category, false);
        if args.is_empty() {
            let mut forms = self.page_forms(lp, l, rng);
            if !self.widget && rng.random_bool(0.5) {
                if self.core && self.news_routed {
                    let spelled =
                        UrlParts::new(self.spell(l, &format!("{path}/page-1"), self.suffix));
                    forms.push((spelled, Some(r.first_page)));
                } else if self.core {
                    let spelled = self.list_args(1, None, true);
                    let h = self.chash(lp, &spelled);
                    forms.push((with_args(list_url, &spelled, true, &h), Some(r.first_page)));
                }
            }
            return forms_of(forms);
        }
        let h = self.chash(lp, &args);
        let tail = match (self.core, self.news_routed, category) {
            (true, true, None) => Some(format!("/page-{page}")),
            (true, true, Some(c)) if page == 1 => Some(format!("/{}", self.categories[c].slugs[l])),
            (true, true, Some(c)) => Some(format!("/{}/page-{page}", self.categories[c].slugs[l])),
            (false, _, None) => Some(format!("/page/{page}")),
            _ => None,
        };
        let mut forms = match tail {
            Some(tail) => {
                let mut forms = self.speaking(l, &format!("{path}{tail}"));
                if self.core {
                    forms.push((with_args(list_url, &args, true, &h), Some(r.plugin_query)));
                }
                forms.push((
                    with_args(self.by_id(lp, l), &args, self.core, &h),
                    Some(r.plugin_id),
                ));
                forms
            }
            None => vec![
                (with_args(list_url.clone(), &args, self.core, &h), None),
                (with_args(list_url, &args, !self.core, &h), Some(r.brackets)),
                (
                    with_args(self.by_id(lp, l), &args, self.core, &h),
                    Some(r.plugin_id),
                ),
            ],
        };
        // Any order of the arguments: the first form's, reversed.
        if let Some(first) = forms.first().map(|f| f.0.clone()) {
            if first.query.len() > 1 && rng.random_bool(0.3) {
                let mut reordered = first;
                reordered.query.reverse();
                forms.push((reordered, Some(r.order)));
            }
        }
        forms_of(forms)
    }

    /// The news list's RSS feed in language `l`.
    fn feed_forms(&self, l: usize) -> Vec<Form> {
        let path = &self.pages[self.list].paths[l];
        let prefix = self.prefix(l);
        let first = if !self.core {
            UrlParts::new(format!("{prefix}{path}/feed.rss"))
        } else if self.suffix == Suffix::Bare {
            UrlParts::new(format!("{prefix}{path}")).q("type", "9818")
        } else {
            UrlParts::new(format!("{prefix}{path}/feed.xml"))
        };
        forms_of(vec![
            (first, None),
            (
                self.by_id(self.list, l).q("type", "9818"),
                Some(self.rules.feed_id),
            ),
        ])
    }

    /// Language 0 mostly, else any.
    fn pick_language(&self, rng: &mut ChaCha8Rng) -> usize {
        if self.languages.len() > 1 && rng.random_bool(0.3) {
            rng.random_range(0..self.languages.len())
        } else {
            0
        }
    }

    /// Another language than `l`.
    fn other_language(&self, l: usize, rng: &mut ChaCha8Rng) -> usize {
        let n = self.languages.len();
        (l + rng.random_range(1..n)) % n
    }

    /// The root page in every language, and its print view.
    fn home(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let forms = forms_of(self.page_forms(0, 0, rng));
        let first = em.content(rng, &forms, PageKind::Article);
        for l in 1..self.languages.len() {
            let forms = forms_of(self.page_forms(0, l, rng));
            em.sibling(rng, &first, &forms, PageKind::Article);
        }
        if self.print {
            em.sibling(rng, &first, &self.print_forms(0, 0), PageKind::Article);
        }
    }

    fn content_page(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let parents: Vec<usize> = (0..self.pages.len())
            .filter(|&p| p != self.list && p != self.detail && self.pages[p].depth < 3)
            .collect();
        let parent = parents[rng.random_range(0..parents.len())];
        let segments: Vec<String> = (0..self.languages.len())
            .map(|_| slug(rng, 1..=2))
            .collect();
        let p = self.add_page(rng, parent, &segments);
        let l = self.pick_language(rng);
        let forms = forms_of(self.page_forms(p, l, rng));
        let first = em.content(rng, &forms, PageKind::Article);
        if self.languages.len() > 1 && rng.random_bool(0.35) {
            let other = self.other_language(l, rng);
            let forms = forms_of(self.page_forms(p, other, rng));
            em.sibling(rng, &first, &forms, PageKind::Article);
        }
        if self.print && rng.random_bool(0.25) {
            em.sibling(rng, &first, &self.print_forms(p, l), PageKind::Article);
        }
    }

    fn news_item(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_news += rng.random_range(1..4);
        let uid = self.next_news;
        let n = self.languages.len();
        // Path segments are unique per language (the title aspect looks them up).
        let slugs: Vec<String> = (0..n)
            .map(|l| {
                let stem = slug(rng, 3..=7);
                let mut s = stem.clone();
                let mut i = 0;
                while !self.news_slugs[l].insert(s.clone()) {
                    i += 1;
                    s = format!("{stem}-{i}");
                }
                s
            })
            .collect();
        let translated: Vec<usize> = (1..n).filter(|_| rng.random_bool(0.5)).collect();
        let l = match translated.as_slice() {
            [] => 0,
            t if rng.random_bool(0.25) => t[rng.random_range(0..t.len())],
            _ => 0,
        };
        let forms = self.news_forms(uid, &slugs, l, rng);
        let first = em.content(rng, &forms, PageKind::Article);
        let others: Vec<usize> = std::iter::once(0)
            .chain(translated.iter().copied())
            .filter(|&o| o != l)
            .collect();
        if !others.is_empty() && !translated.is_empty() && rng.random_bool(0.4) {
            let other = others[rng.random_range(0..others.len())];
            let forms = self.news_forms(uid, &slugs, other, rng);
            em.sibling(rng, &first, &forms, PageKind::Article);
        }
    }

    fn news_list(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, l: usize) {
        let mut chain = PageChain::default();
        for page in 1..=rng.random_range(2..=8) {
            let forms = self.list_forms(page, l, None, rng);
            chain.push(em, rng, &forms, PageKind::Listing);
        }
        let Some(first) = chain.first() else {
            return;
        };
        if self.feed {
            em.sibling(rng, &first, &self.feed_forms(l), PageKind::Listing);
        }
        self.list_first[l] = Some(first);
    }

    fn category(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, c: usize) {
        self.categories[c].listed = true;
        let l = self.pick_language(rng);
        let forms = self.list_forms(1, l, Some(c), rng);
        let first = match &self.list_first[l] {
            Some(list) => em.sibling(rng, list, &forms, PageKind::Listing),
            None => em.content(rng, &forms, PageKind::Listing),
        };
        if rng.random_bool(0.4) {
            let forms = self.list_forms(2, l, Some(c), rng);
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
    }
}

/// One or two tracking parameters the default cHash configuration excludes.
fn add_cache_hash_excluded(em: &mut Emitter, rng: &mut ChaCha8Rng) {
    let mut names: Vec<&str> = Vec::new();
    for _ in 0..rng.random_range(1..=2) {
        let name = pick(rng, CHASH_EXCLUDED, "utm_source");
        if names.contains(&name) {
            continue;
        }
        names.push(name);
        let values = (0..rng.random_range(3..=12))
            .map(|_| {
                if name.ends_with("clid") {
                    hex(rng, 24)
                } else {
                    word(rng).to_string()
                }
            })
            .collect();
        let prob = rng.random_range(0.08..0.3);
        add_ignored_param(
            em,
            name,
            format!("tracking parameter `{name}`"),
            prob,
            values,
        );
    }
}

impl Section for Typo3 {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if !self.home_done {
            self.home_done = true;
            self.home(em, rng);
            return;
        }
        let l = self.pick_language(rng);
        if !self.list_done[l] && rng.random_bool(0.1) {
            self.list_done[l] = true;
            self.news_list(em, rng, l);
            return;
        }
        let c = rng.random_range(0..self.categories.len());
        if !self.categories[c].listed && rng.random_bool(0.05) {
            self.category(em, rng, c);
        } else if rng.random_bool(0.4) {
            self.content_page(em, rng);
        } else {
            self.news_item(em, rng);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let uid = self.next_news + rng.random_range(1_000_000..2_000_000);
        let slugs: Vec<String> = (0..self.languages.len())
            .map(|_| slug(rng, 3..=6))
            .collect();
        self.news_forms(uid, &slugs, 0, rng)
    }

    fn variant(&self) -> String {
        format!(
            "typo3{}+{}+{}+{}+{}+{}{}{}{}{}",
            self.base,
            if self.core { "v9" } else { "realurl" },
            self.suffix.name(),
            self.languages.join("/"),
            if self.core && !self.news_routed {
                "news-query"
            } else {
                "news-routed"
            },
            if self.widget {
                "widget"
            } else {
                "current-page"
            },
            if self.skip_ca { "+skip-ca" } else { "" },
            if self.print { "+print" } else { "" },
            if self.feed { "+feed" } else { "" },
            if self.detail_on_list {
                "+detail-on-list"
            } else {
                ""
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};

    use super::super::family_tests::{
        assert_irrelevant_keys_keep_the_content, check_family, ids_of,
    };
    use crate::corpus::{generate, CorpusConfig, PageKind, SiteKind};

    /// A plugin argument name with its brackets decoded.
    fn decode(key: &str) -> String {
        key.replace("%5B", "[")
            .replace("%5D", "]")
            .replace("%40", "@")
    }

    #[test]
    fn typo3_generates_its_scheme() {
        let (mut by_id, mut views, mut brackets, mut items, mut languages, mut suffixes) =
            (0, 0, 0, 0, 0, 0);
        let mut pages = (0, 0);
        for site in check_family(SiteKind::Typo3) {
            assert_irrelevant_keys_keep_the_content(&site);
            let ids = ids_of(&site);
            let listings: BTreeSet<&str> = site
                .pages
                .iter()
                .filter(|p| p.kind == PageKind::Listing)
                .map(|p| p.url.as_str())
                .collect();
            // `typo3/cms+v9+html+en/de+...`: the base and the languages, the default first.
            let tokens: Vec<&str> = site.variant.split('+').collect();
            let base = tokens[0].trim_start_matches("typo3");
            let codes: Vec<&str> = tokens[3].split('/').collect();
            // (news uid, language id) -> contents.
            let mut news: HashMap<(String, usize), BTreeSet<u64>> = HashMap::new();
            for (url, id) in &ids {
                let after_host = url.splitn(4, '/').nth(3).unwrap_or("");
                let path = format!("/{after_host}");
                let path = path.strip_prefix(base).unwrap_or(&path);
                let Some((head, query)) = url.split_once('?') else {
                    // The site's path spelling and the others are one page.
                    if let Some(stem) = url.strip_suffix(".html") {
                        for other in [stem.to_string(), format!("{stem}/")] {
                            if let Some(o) = ids.get(&other) {
                                assert_eq!(o, id, "{url} {other}");
                                suffixes += 1;
                            }
                        }
                    } else if let Some(stem) = url.strip_suffix('/') {
                        if let Some(o) = ids.get(stem) {
                            assert_eq!(o, id, "{url} {stem}");
                            suffixes += 1;
                        }
                    }
                    // A later list page is another content; `page-1` is the list.
                    for marker in ["/page-", "/page/"] {
                        let Some((list, rest)) = path.split_once(marker) else {
                            continue;
                        };
                        let k: String = rest.chars().take_while(char::is_ascii_digit).collect();
                        if !k.is_empty() && listings.contains(url.as_str()) {
                            let tail = &rest[k.len()..];
                            let list_url =
                                format!("{}{list}{tail}", &url[..url.len() - path.len()]);
                            if let Some(o) = ids.get(&list_url) {
                                if k == "1" {
                                    assert_eq!(o, id, "{url} {list_url}");
                                    pages.0 += 1;
                                } else {
                                    assert_ne!(o, id, "{url} {list_url}");
                                    pages.1 += 1;
                                }
                            }
                        }
                    }
                    continue;
                };
                let pairs: Vec<(String, &str)> = query
                    .split('&')
                    .map(|p| {
                        let (k, v) = p.split_once('=').unwrap_or((p, ""));
                        (decode(k), v)
                    })
                    .collect();
                let get = |k: &str| pairs.iter().find(|(key, _)| key == k).map(|p| p.1);
                // A page by its id: the same page on the root, with `L=0` or `type=0`; another
                // content in another language or page type.
                if let (true, 1, Some(uid)) = (head.ends_with("/index.php"), pairs.len(), get("id"))
                {
                    let root = format!("{}/?id={uid}", &head[..head.len() - "/index.php".len()]);
                    for (other, same) in [
                        (root, true),
                        (format!("{url}&L=0"), true),
                        (format!("{url}&type=0"), true),
                        (format!("{url}&type=98"), false),
                        (format!("{url}&L=1"), false),
                    ] {
                        match (ids.get(&other), same) {
                            (Some(o), true) => {
                                assert_eq!(o, id, "{url} {other}");
                                by_id += 1;
                            }
                            (Some(o), false) => {
                                assert_ne!(o, id, "{url} {other}");
                                views += 1;
                            }
                            _ => {}
                        }
                    }
                }
                // Raw and percent-encoded brackets are one address.
                if query.contains("tx_news_pi1[") {
                    let encoded = format!(
                        "{head}?{}",
                        query
                            .replace('@', "%40")
                            .replace('[', "%5B")
                            .replace(']', "%5D")
                    );
                    if let Some(o) = ids.get(&encoded) {
                        assert_eq!(o, id, "{url} {encoded}");
                        brackets += 1;
                    }
                }
                // Every address of a news item in one language is one content.
                if let Some(uid) = get("tx_news_pi1[news]") {
                    let language = match get("L") {
                        Some(l) => l.parse().unwrap_or(0),
                        None => path
                            .split('/')
                            .nth(1)
                            .and_then(|first| codes[1..].iter().position(|c| *c == first))
                            .map_or(0, |i| i + 1),
                    };
                    news.entry((uid.to_string(), language))
                        .or_default()
                        .insert(*id);
                }
            }
            let mut by_item: HashMap<&str, Vec<u64>> = HashMap::new();
            for ((uid, _), contents) in &news {
                assert_eq!(contents.len(), 1, "news {uid}: {contents:?}");
                by_item.entry(uid.as_str()).or_default().extend(contents);
                items += 1;
            }
            for (uid, contents) in by_item.iter().filter(|(_, c)| c.len() > 1) {
                let distinct: BTreeSet<&u64> = contents.iter().collect();
                assert_eq!(
                    distinct.len(),
                    contents.len(),
                    "news {uid} in two languages"
                );
                languages += 1;
            }
        }
        assert!(
            by_id > 0
                && views > 0
                && brackets > 0
                && items > 0
                && languages > 0
                && suffixes > 0
                && pages.0 > 0
                && pages.1 > 0,
            "by id {by_id}, views {views}, brackets {brackets}, items {items}, \
             languages {languages}, suffixes {suffixes}, pages {pages:?}"
        );
    }

    #[test]
    fn typo3_draws_every_host_option() {
        let config = CorpusConfig::new(5, 1)
            .with_kinds(&[SiteKind::Typo3; 60])
            .with_pages(80, 80);
        let mut seen = BTreeSet::new();
        for site in generate(&config).sites {
            let tokens: Vec<&str> = site.variant.split('+').collect();
            seen.insert(tokens[1].to_string());
            seen.insert(format!("suffix-{}-{}", tokens[1], tokens[2]));
            seen.insert(format!("languages-{}", tokens[3].split('/').count()));
            for t in &tokens[4..] {
                seen.insert((*t).to_string());
            }
        }
        for option in [
            "v9",
            "realurl",
            "suffix-v9-bare",
            "suffix-v9-slash",
            "suffix-v9-html",
            "suffix-realurl-slash",
            "suffix-realurl-html",
            "languages-1",
            "languages-2",
            "languages-3",
            "news-query",
            "news-routed",
            "widget",
            "current-page",
            "skip-ca",
            "print",
            "feed",
            "detail-on-list",
        ] {
            assert!(seen.contains(option), "{option} never drawn: {seen:?}");
        }
    }
}
