//! Synthetic multi-site crawls with ground truth, for tests, benchmarks and trying undust out.
//!
//! [`generate`] turns a [`CorpusConfig`] into a [`Corpus`]: several sites of different
//! [`SiteKind`]s (forums with session ids, shops with tracking parameters and id aliases, news with
//! AMP/print variants, documentation mirrors, case-insensitive servers with default documents,
//! mixed sites and sites without DUST). Every URL carries the id of the content it denotes, so a
//! learner's rules can be scored against the truth, and every site lists
//!
//! - its *hard negatives*: URL pairs that look alike but must never be merged (pagination, sort
//!   orders, colour variants, versions, languages, revisions, ...), and
//! - its *expected DUST* in human terms ("query key `sid` is irrelevant", "`/p/{id}/{slug}` is an
//!   alias of `/product/{id}`"), each with example URL pairs.
//!
//! Everything is a pure function of the seed: names, sizes, parameter names, id styles and URL
//! layouts vary with it, so tests can run on several seeds to show that what they check is general.
//! Pages render to full HTML with a per-site template ([`render_html`]) and export to the offline
//! CLI's JSON lines format ([`write_jsonl`]).
//!
//! ```
//! use undust_devtools::corpus::{generate, render_html, CorpusConfig, SiteKind};
//!
//! let corpus = generate(&CorpusConfig::new(7, 1).with_pages(50, 200));
//! for site in &corpus.sites {
//!     let index = site.content_index();
//!     for (a, b) in &site.hard_negatives {
//!         assert_ne!(index[a.as_str()], index[b.as_str()]); // must never be merged
//!     }
//!     for rule in &site.expected {
//!         println!("{} ({}): {}", site.host, site.kind, rule.description);
//!     }
//! }
//! let forum = &corpus.sites[0];
//! assert_eq!(forum.kind, SiteKind::Forum);
//! let html = render_html(forum, &forum.pages[0]);
//! assert!(html.contains("<main"));
//! ```
//!
//! # Ground truth and label noise
//!
//! [`SyntheticPage::content_id`] is the truth: two URLs with the same content id serve the same
//! content. [`SyntheticPage::label`] is what a perfect content-based clusterer would *observe* in
//! this crawl; it equals the content id except for the noise requested in [`NoiseConfig`]:
//! soft-404 pages (distinct content ids, one shared "not found" label per site) and wrong merges
//! (a page served another page's content, e.g. a caching bug). Learners are trained on labels and
//! scored against content ids.

mod emit;
mod mirror_groups;
mod render;
mod sites;
mod words;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

pub use mirror_groups::{
    generate_mirrors, MirrorCorpus, MirrorCorpusConfig, MirrorHost, MirrorPage, PairKind,
    MAX_GROUPS,
};
pub use render::{page_links, render_html, render_html_fetch, write_jsonl, JsonlPage};

/// Most sites one corpus may hold; larger requests are clamped (keeps memory bounded).
pub const MAX_SITES: usize = 4096;
/// Most URLs one site may hold; larger requests are clamped.
pub const MAX_PAGES_PER_SITE: usize = 2_000_000;

/// Errors of the corpus module (generation itself is total: only exporting and parsing fail).
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// Writing the JSON lines export failed.
    #[error("writing the corpus failed: {0}")]
    Io(#[from] std::io::Error),
    /// Serializing a page failed.
    #[error("serializing a page failed: {0}")]
    Json(#[from] serde_json::Error),
    /// A site kind name that is not one of [`SiteKind::name`].
    #[error("unknown site kind `{0}` (expected one of forum, shop, news, docs-mirror, case-insensitive, mixed, no-dust, or a family: mediawiki, wordpress, drupal, discourse, phpbb, vbulletin, storefront, aspnet, directory-listing, sphinx, q-and-a, event-calendar, news-renderings, dokuwiki, joomla, xenforo, bugzilla, opencart, plone, smf, gitea, piwigo, mybb, prestashop, nodebb, typo3, discuz, oscommerce)")]
    UnknownKind(String),
}

/// The kind of site to generate. Each kind has several layouts chosen by the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteKind {
    /// Forum software with session ids in the query (`sid`, `s`, `PHPSESSID`, ...) or in the path
    /// (`;jsessionid=`, ASP.NET `/(S(...))/`). Negatives: pagination, sorted listings.
    Forum,
    /// Shop with tracking parameters (common and per-site names) and product id aliases in the
    /// path. Negatives: colour/size variants, sort orders, pagination.
    Shop,
    /// News with AMP and print variants. Negatives: different stories, article page 2, comments.
    News,
    /// Documentation mirrored under several path prefixes. Negatives: versions, languages.
    DocsMirror,
    /// A case-insensitive server with default documents and a wiki. Negatives: revisions
    /// (`oldid`), history views.
    CaseInsensitive,
    /// Two or three of the above under different path prefixes of one host.
    Mixed,
    /// A site where every URL is distinct content: nothing to learn, only negatives.
    NoDust,
    /// MediaWiki: `/wiki/T` ≡ `/w/index.php?title=T` (≡ `&action=view`); revisions, diffs and
    /// history views are distinct.
    MediaWiki,
    /// WordPress: `?p=N` ≡ pretty permalink ≡ `/amp/`; `?replytocom`; feeds and `/page/N/` are
    /// distinct.
    WordPress,
    /// Drupal: `/node/N` ≡ `/index.php?q=node/N` ≡ path alias; comment and listing pages distinct.
    Drupal,
    /// Discourse: `/t/slug/N` ≡ `/t/N` ≡ `/t/slug/N/M` (M on page 1); `?page=` distinct.
    Discourse,
    /// phpBB 3: `viewtopic.php?f=&t=` ≡ `?t=`, `sid`, `hilit`; `start=` and sorts distinct.
    PhpBb,
    /// vBulletin: `showthread.php?t=` ≡ `showthread.php?T-title` ≡ `/threads/T-title`.
    VBulletin,
    /// Shop software (Shopify, WooCommerce or Magento, by seed): product aliases, variants.
    Storefront,
    /// IIS/ASP.NET: case-insensitive paths, keys and values, `Default.aspx`.
    AspNet,
    /// Apache directory listings: sort keys (`?C=M;O=A`, `?N=D`); files and versions distinct.
    DirectoryListing,
    /// Sphinx / Read the Docs: `/latest/` ≡ current version, `index.html`; versions distinct.
    Sphinx,
    /// Q&A: `/questions/N/slug` ≡ `/questions/N` ≡ `/q/N`; answer orders distinct.
    QAndA,
    /// Event calendars: event aliases; day, month and recurring instances distinct.
    EventCalendar,
    /// News with AMP, print and mobile renderings and short id links.
    NewsRenderings,
    /// DokuWiki: `/doku.php?id=ns:page` ≡ rewritten `/ns:page` or `/doku.php/ns/page`, case
    /// folded ids, `do=show`; revisions and the revisions list distinct.
    DokuWiki,
    /// Joomla: SEF route ≡ `/index.php/...` ≡ non-SEF `option=com_content&view=article&id=`
    /// under any `Itemid`; category pages, feeds and menu items distinct.
    Joomla,
    /// XenForo 2: `threads/title.N/` ≡ `threads/N/` ≡ `index.php?threads/title.N/`, a post's
    /// link ≡ the page it is on; later pages, sort orders and members distinct.
    XenForo,
    /// Bugzilla: `show_bug.cgi?id=N` ≡ `/N` ≡ print format ≡ with the search's `list_id`;
    /// the XML export, activity log, attachments and search sort orders distinct.
    Bugzilla,
    /// OpenCart: `index.php?route=product/product&product_id=N` with or without its breadcrumb
    /// context (`path`, `manufacturer_id`, `search`) ≡ SEO keyword paths; category pages, sorts
    /// and page sizes distinct.
    OpenCart,
    /// Plone: `/folder/page` ≡ `/page/view` ≡ `/page/document_view`, acquired paths and
    /// `resolveuid`; folder display views, batches, a file versus its `/view` page and
    /// translations distinct.
    Plone,
    /// Simple Machines Forum: `index.php?topic=N.S` ≡ `index.php/topic,N.S.html` ≡ `topic=N`
    /// (on page 1) ≡ a message link `topic=N.msgM`, `;wap2`, `PHPSESSID`, semicolon-glued
    /// parameters; later offsets, `;all`, the print page and sorted boards distinct.
    Smf,
    /// Gitea / Forgejo: owner and repository case-insensitive, `/o/r` ≡ `/o/r.git` ≡
    /// `/o/r/src/branch/{default}`, legacy untyped references, list defaults spelled out; raw
    /// files, blame, other branches, feeds, later pages and files differing in case distinct.
    Gitea,
    /// Piwigo: a path written as the query string, `picture.php?/N/category/A` ≡ the photo in
    /// any other section ≡ with file or album names; album pages, flat and chronology views,
    /// metadata and downloads distinct.
    Piwigo,
    /// MyBB: `showthread.php?tid=N` ≡ search-engine-friendly `thread-N.html`, a post link
    /// (`pid=`, `thread-N-post-M.html`) ≡ the page holding it, `action=lastpost` ≡ the last
    /// page, `page=1`, `mode=linear` and a forum's default sort spelled out, `highlight=`;
    /// later pages, other sorts, the threaded view and a member's threads distinct.
    MyBb,
    /// PrestaShop: `index.php?id_product=N&controller=product` ≡ friendly `/N-name.html` under
    /// any category folder or none, names not read, the default language's `id_lang` and (1.7)
    /// the default combination spelled out, default sorts and page 1; other languages, other
    /// combinations, sorts, pages and page sizes distinct.
    PrestaShop,
    /// NodeBB: `/topic/N/slug` ≡ `/topic/N`, a post index ≡ the page holding it (with
    /// pagination on), `/post/P` ≡ its index, `?page=1`, default sort and language spelled
    /// out, `/uid/N` ≡ `/user/name`; later pages, sorts, other languages, profile tabs, feeds
    /// and (under infinite scroll) windows opened at a post distinct.
    NodeBb,
    /// TYPO3: a page's speaking path ≡ `index.php?id=N` ≡ `/?id=N` (with `L=0`, `type=0`
    /// spelled out), other suffix spellings, a news item's routed path ≡ its plugin arguments
    /// and cHash (on the path or the page id, brackets raw or encoded, any order); other
    /// languages, print and feed page types, later list pages and category filters distinct.
    Typo3,
    /// Discuz! X3: `forum.php?mod=viewthread&tid=N` ≡ rewritten `thread-N-P-X.html` under any
    /// listing page X, `extra=`, `page=1` and `ordertype=2` spelled out, a post's redirect ≡ the
    /// page holding it, the archiver's and (one-page threads) printable renderings, `highlight=`,
    /// `fromuid=`, `mobile=` (a robot gets the desktop page), forum keys, `space-uid-N.html` ≡
    /// `home.php?mod=space&uid=N` ≡ its default tab; later pages, reversed order, one author's
    /// posts, forum filters and space tabs distinct.
    Discuz,
    /// osCommerce 2.x: `product_info.php?products_id=N` with or without `cPath=` or
    /// `manufacturers_id=` (breadcrumb only) ≡ Ultimate SEO URLs' `name-p-N.html` ≡ an
    /// attribute-encoded id, `osCsid` sessions, default sort, `page=1`, language and currency
    /// spelled out, `index.php` ≡ `/`; category listings (`cPath` chooses them), parents, later
    /// pages, sorts, filters, other languages and currencies, reviews distinct.
    OsCommerce,
}

impl SiteKind {
    /// Every kind, in a fixed order.
    pub const ALL: [SiteKind; 7] = [
        SiteKind::Forum,
        SiteKind::Shop,
        SiteKind::News,
        SiteKind::DocsMirror,
        SiteKind::CaseInsensitive,
        SiteKind::Mixed,
        SiteKind::NoDust,
    ];

    /// The families modelled on the URL schemes of real web software, one site kind each.
    pub const FAMILIES: [SiteKind; 28] = [
        SiteKind::MediaWiki,
        SiteKind::WordPress,
        SiteKind::Drupal,
        SiteKind::Discourse,
        SiteKind::PhpBb,
        SiteKind::VBulletin,
        SiteKind::Storefront,
        SiteKind::AspNet,
        SiteKind::DirectoryListing,
        SiteKind::Sphinx,
        SiteKind::QAndA,
        SiteKind::EventCalendar,
        SiteKind::NewsRenderings,
        SiteKind::DokuWiki,
        SiteKind::Joomla,
        SiteKind::XenForo,
        SiteKind::Bugzilla,
        SiteKind::OpenCart,
        SiteKind::Plone,
        SiteKind::Smf,
        SiteKind::Gitea,
        SiteKind::Piwigo,
        SiteKind::MyBb,
        SiteKind::PrestaShop,
        SiteKind::NodeBb,
        SiteKind::Typo3,
        SiteKind::Discuz,
        SiteKind::OsCommerce,
    ];

    /// Families the learner's constants may be tuned on.
    pub const TUNING_FAMILIES: [SiteKind; 10] = [
        SiteKind::MediaWiki,
        SiteKind::WordPress,
        SiteKind::PhpBb,
        SiteKind::Storefront,
        SiteKind::AspNet,
        SiteKind::Sphinx,
        SiteKind::NewsRenderings,
        SiteKind::XenForo,
        SiteKind::OpenCart,
        SiteKind::Plone,
    ];

    /// Families held out: never looked at while choosing constants, only measured, so their
    /// figures say how well the learner generalizes to software it was not tuned on. Each
    /// exercises a capability a tuning family also needs, in another shape (ids moving between
    /// path and query, default views spelled out, irrelevant sort keys, slug-less aliases).
    /// MyBB, PrestaShop and NodeBB (stop 26) were added to measure software no learner change
    /// was ever tuned on, and TYPO3, Discuz! X3 and osCommerce 2.x (stop 38) the same way.
    pub const HELD_OUT_FAMILIES: [SiteKind; 18] = [
        SiteKind::Drupal,
        SiteKind::Discourse,
        SiteKind::VBulletin,
        SiteKind::DirectoryListing,
        SiteKind::QAndA,
        SiteKind::EventCalendar,
        SiteKind::DokuWiki,
        SiteKind::Joomla,
        SiteKind::Bugzilla,
        SiteKind::Smf,
        SiteKind::Gitea,
        SiteKind::Piwigo,
        SiteKind::MyBb,
        SiteKind::PrestaShop,
        SiteKind::NodeBb,
        SiteKind::Typo3,
        SiteKind::Discuz,
        SiteKind::OsCommerce,
    ];

    /// Whether this kind is one of [`SiteKind::FAMILIES`].
    pub fn is_family(self) -> bool {
        SiteKind::FAMILIES.contains(&self)
    }

    /// Short stable name (`forum`, `shop`, `news`, `docs-mirror`, `case-insensitive`, `mixed`,
    /// `no-dust`, and the families' `mediawiki`, `wordpress`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SiteKind::MediaWiki => "mediawiki",
            SiteKind::WordPress => "wordpress",
            SiteKind::Drupal => "drupal",
            SiteKind::Discourse => "discourse",
            SiteKind::PhpBb => "phpbb",
            SiteKind::VBulletin => "vbulletin",
            SiteKind::Storefront => "storefront",
            SiteKind::AspNet => "aspnet",
            SiteKind::DirectoryListing => "directory-listing",
            SiteKind::Sphinx => "sphinx",
            SiteKind::QAndA => "q-and-a",
            SiteKind::EventCalendar => "event-calendar",
            SiteKind::NewsRenderings => "news-renderings",
            SiteKind::DokuWiki => "dokuwiki",
            SiteKind::Joomla => "joomla",
            SiteKind::XenForo => "xenforo",
            SiteKind::Bugzilla => "bugzilla",
            SiteKind::OpenCart => "opencart",
            SiteKind::Plone => "plone",
            SiteKind::Smf => "smf",
            SiteKind::Gitea => "gitea",
            SiteKind::Piwigo => "piwigo",
            SiteKind::MyBb => "mybb",
            SiteKind::PrestaShop => "prestashop",
            SiteKind::NodeBb => "nodebb",
            SiteKind::Typo3 => "typo3",
            SiteKind::Discuz => "discuz",
            SiteKind::OsCommerce => "oscommerce",
            SiteKind::Forum => "forum",
            SiteKind::Shop => "shop",
            SiteKind::News => "news",
            SiteKind::DocsMirror => "docs-mirror",
            SiteKind::CaseInsensitive => "case-insensitive",
            SiteKind::Mixed => "mixed",
            SiteKind::NoDust => "no-dust",
        }
    }
}

impl std::str::FromStr for SiteKind {
    type Err = CorpusError;

    /// Parses a [`SiteKind::name`] (case-insensitive; `_` may replace `-`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        SiteKind::ALL
            .into_iter()
            .chain(SiteKind::FAMILIES)
            .find(|k| k.name() == wanted)
            .ok_or_else(|| CorpusError::UnknownKind(s.to_string()))
    }
}

impl fmt::Display for SiteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Label noise, for robustness tests. Shares are fractions of each site's URLs, clamped to
/// `[0, 0.5]`. The default is no noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NoiseConfig {
    /// Share of extra URLs that look like content URLs of the site (fresh ids in the site's own
    /// layout) but serve the site's near-empty "not found" page with status 200 (soft-404s). Each
    /// has its own content id; all share one label, so a clusterer merges them.
    pub soft_404_share: f64,
    /// Share of pages whose label is switched to another content's label (the page served the
    /// wrong content, so a clusterer merges it with an unrelated cluster).
    pub wrong_merge_share: f64,
}

/// What to generate. [`Default`]: seed 0, one site of every kind, 50 to 400 URLs per site, no
/// noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusConfig {
    /// Everything generated is a pure function of this seed (and the other fields).
    pub seed: u64,
    /// One site per entry, in this order (repeat a kind for several sites of that kind).
    pub kinds: Vec<SiteKind>,
    /// Fewest URLs per site (at least 1). Sizes are drawn log-uniformly from
    /// `min_pages..=max_pages`, so a wide range gives both tiny and large sites.
    pub min_pages: usize,
    /// Most URLs per site (clamped to [`MAX_PAGES_PER_SITE`]).
    pub max_pages: usize,
    /// Label noise.
    pub noise: NoiseConfig,
    /// Share of sites (clamped to `[0, 1]`) whose pages declare `<link rel="canonical">` pointing
    /// to their content's first layout without decorations (what well-kept sites do). Default 0.
    /// Deciding it does not change any site's URLs.
    pub rel_canonical_share: f64,
    /// Share of sites (clamped to `[0, 1]`) that answer URLs in an alias layout (every layout
    /// but a content's first: alias paths, mirrors, default documents, AMP/print) with a redirect
    /// to the first layout, recorded as [`SyntheticPage::final_url`]. Default 0. Deciding it
    /// does not change any site's URLs.
    pub redirect_share: f64,
}

impl Default for CorpusConfig {
    fn default() -> Self {
        CorpusConfig {
            seed: 0,
            kinds: SiteKind::ALL.to_vec(),
            min_pages: 50,
            max_pages: 400,
            noise: NoiseConfig::default(),
            rel_canonical_share: 0.0,
            redirect_share: 0.0,
        }
    }
}

impl CorpusConfig {
    /// `sites_per_kind` sites of every kind, with the default sizes and no noise.
    pub fn new(seed: u64, sites_per_kind: usize) -> Self {
        let mut kinds = Vec::new();
        for _ in 0..sites_per_kind {
            kinds.extend_from_slice(&SiteKind::ALL);
        }
        CorpusConfig {
            seed,
            kinds,
            ..CorpusConfig::default()
        }
    }

    /// Only the given kinds, one site each.
    pub fn with_kinds(mut self, kinds: &[SiteKind]) -> Self {
        self.kinds = kinds.to_vec();
        self
    }

    /// URLs per site drawn from `min..=max`.
    pub fn with_pages(mut self, min: usize, max: usize) -> Self {
        self.min_pages = min;
        self.max_pages = max;
        self
    }

    /// Label noise.
    pub fn with_noise(mut self, noise: NoiseConfig) -> Self {
        self.noise = noise;
        self
    }

    /// Share of sites that redirect alias layouts.
    pub fn with_redirects(mut self, share: f64) -> Self {
        self.redirect_share = share;
        self
    }

    /// Share of sites that declare `rel=canonical`.
    pub fn with_rel_canonical(mut self, share: f64) -> Self {
        self.rel_canonical_share = share;
        self
    }
}

/// A generated crawl.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Corpus {
    /// The seed it was generated from.
    pub seed: u64,
    /// One entry per requested site, in the order of [`CorpusConfig::kinds`].
    pub sites: Vec<Site>,
}

impl Corpus {
    /// The site with this host, if any.
    pub fn site(&self, host: &str) -> Option<&Site> {
        self.sites.iter().find(|s| s.host == host)
    }

    /// Total URLs over all sites.
    pub fn total_pages(&self) -> usize {
        self.sites.iter().map(|s| s.pages.len()).sum()
    }
}

/// One generated site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Site {
    /// Host name, unique within the corpus (e.g. `www.copperharbor.net`).
    pub host: String,
    /// What kind of site this is.
    pub kind: SiteKind,
    /// Which layouts the seed chose, e.g. `forum:phpbb` or `mixed[shop,forum:vbulletin@/community]`.
    pub variant: String,
    /// Every crawled URL once; URLs are absolute and unique within the site.
    pub pages: Vec<SyntheticPage>,
    /// The look of the site's pages.
    pub template: SiteTemplate,
    /// URL pairs of this site (both in `pages`) with different content ids that differ only in a
    /// meaningful way (page number, sort order, colour, version, language, revision, story...).
    pub hard_negatives: Vec<(String, String)>,
    /// The DUST rules that hold on this site and show in its pages, each with one to three
    /// example pairs from `pages`. Empty for [`SiteKind::NoDust`].
    pub expected: Vec<ExpectedDust>,
    /// Seed of the deterministic text of this site's contents.
    pub text_seed: u64,
    /// Whether the site's pages declare `rel=canonical` (see [`SyntheticPage::canonical`]).
    pub declares_canonical: bool,
    /// Whether the site redirects alias layouts (see [`SyntheticPage::final_url`]).
    pub redirects_aliases: bool,
}

impl Site {
    /// URL → content id, for looking up many URLs.
    pub fn content_index(&self) -> HashMap<&str, u64> {
        self.pages
            .iter()
            .map(|p| (p.url.as_str(), p.content_id))
            .collect()
    }

    /// The true duplicate clusters: content id → its URLs (in crawl order).
    pub fn clusters(&self) -> BTreeMap<u64, Vec<&str>> {
        let mut out: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
        for p in &self.pages {
            out.entry(p.content_id).or_default().push(p.url.as_str());
        }
        out
    }

    /// The clusters a perfect content-based clusterer would observe (by label, noise included).
    pub fn observed_clusters(&self) -> BTreeMap<u64, Vec<&str>> {
        let mut out: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
        for p in &self.pages {
            out.entry(p.label).or_default().push(p.url.as_str());
        }
        out
    }

    /// Splits the pages into (train, held out): each URL is held out with probability
    /// `holdout_share` (clamped to `[0, 1]`), decided by a hash of the URL and `seed`, so the split
    /// is deterministic and independent of page order. Held-out URLs model URLs the crawler
    /// discovers after the rules were learned.
    pub fn split(
        &self,
        holdout_share: f64,
        seed: u64,
    ) -> (Vec<&SyntheticPage>, Vec<&SyntheticPage>) {
        let share = if holdout_share.is_finite() {
            holdout_share.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let threshold = (share * (1u64 << 53) as f64) as u64;
        self.pages.iter().partition(|p| {
            let h = sites::mix(xxhash_rust::xxh3::xxh3_64(p.url.as_bytes()), seed) >> 11;
            h >= threshold
        })
    }
}

/// One crawled URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyntheticPage {
    /// Absolute URL.
    pub url: String,
    /// Ground truth: URLs with the same content id denote the same content. Unique across the
    /// corpus (the site is part of it).
    pub content_id: u64,
    /// The content this fetch served, as a perfect clusterer would see it: equal to `content_id`
    /// unless [`noise`](Self::noise) says otherwise. Rendering uses it.
    pub label: u64,
    /// What the served page looks like.
    pub kind: PageKind,
    /// Why `label` differs from `content_id`, if it does.
    pub noise: Option<NoiseKind>,
    /// The `rel=canonical` target the page declares, on sites that declare one: the first layout
    /// of the served content without decorations (it need not be a crawled URL).
    pub canonical: Option<String>,
    /// The `rel=shortlink` the page declares, on sites that declare canonicals and whose
    /// software writes one (Drupal's `/node/N` or `/taxonomy/term/N`, WordPress's `/?p=N`): the
    /// entity's id URL, which need not be a crawled URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortlink: Option<String>,
    /// Where the fetch ended after redirects, on sites that redirect alias layouts: the same
    /// content in its first layout, decorations kept (it need not be a crawled URL).
    pub final_url: Option<String>,
}

/// The shape of a page's main content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageKind {
    /// Paragraphs of text (news story, static page, wiki article).
    Article,
    /// A forum thread page: several posts.
    Thread,
    /// A product page: description, price, specifications.
    Product,
    /// A list of linked items (forum, category, section, tag listing); may be empty.
    Listing,
    /// A documentation page: sections and code.
    Doc,
    /// A list of revisions (wiki history).
    History,
    /// The site's near-empty "not found" page.
    NotFound,
}

/// Kinds of label noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseKind {
    /// A URL for a non-existent item that served the site's "not found" page with status 200.
    Soft404,
    /// The page served another content than the one its URL denotes.
    WrongMerge,
}

/// A DUST rule that holds on a site, in human terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum DustRule {
    /// The query parameter `key` never changes the content (session id, tracking parameter).
    IgnoreQueryKey {
        /// The parameter name.
        key: String,
    },
    /// A `;name=value` path parameter on the last path segment never changes the content.
    IgnorePathParameter {
        /// The parameter name (e.g. `jsessionid`).
        name: String,
    },
    /// A leading path segment of this shape never changes the content (e.g. ASP.NET cookieless
    /// sessions `/(S(...))/`).
    IgnorePathSegment {
        /// The segment's shape, with `{value}` for the varying part.
        pattern: String,
    },
    /// URLs of shape `from` denote the same content as `to` with the same placeholders.
    PathAlias {
        /// Alias layout, placeholders in braces (e.g. `/p/{id}/{slug}`).
        from: String,
        /// Canonical layout (e.g. `/product/{id}`).
        to: String,
    },
    /// These leading path prefixes are mirrors of each other.
    MirrorPrefix {
        /// The prefixes (`""` is the site root), e.g. `["/mirror1", "/mirror2"]`.
        prefixes: Vec<String>,
    },
    /// Paths compare case-insensitively (query keys and values keep their case).
    CaseInsensitivePath,
    /// Paths, query keys and query values all compare case-insensitively (IIS/ASP.NET).
    CaseInsensitiveQuery,
    /// A directory URL `/dir/` equals `/dir/<name>` for each of these names.
    DefaultDocument {
        /// Default document names, e.g. `["index.html", "default.aspx"]`.
        names: Vec<String>,
    },
    /// The order of query parameters does not matter.
    QueryOrder,
}

/// One DUST rule of a site with evidence from the site's pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedDust {
    /// The rule.
    pub rule: DustRule,
    /// One sentence for humans, e.g. "session id `sid` in the query".
    pub description: String,
    /// URL pairs from the site's pages with the same content id that differ only by this rule.
    pub examples: Vec<(String, String)>,
}

/// The look of a site: what [`render_html`] wraps around every page's main content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteTemplate {
    /// Site name shown in the header and titles.
    pub name: String,
    /// Tagline under the name.
    pub tagline: String,
    /// Navigation links: (label, absolute URL), all pointing to pages of the site.
    pub nav: Vec<(String, String)>,
    /// Sidebar blocks: (heading, text).
    pub sidebar: Vec<(String, String)>,
    /// Footer text.
    pub footer: String,
    /// Pool of "trending"/ad snippets; each fetch shows a few, chosen by the URL and fetch number.
    pub rotating: Vec<String>,
    /// Prefix of CSS class names (differs per site, like real themes).
    pub class_prefix: String,
}

/// Generates a corpus. Total: never panics; out-of-range configuration values are clamped
/// (see [`CorpusConfig`], [`NoiseConfig`], [`MAX_SITES`], [`MAX_PAGES_PER_SITE`]).
pub fn generate(config: &CorpusConfig) -> Corpus {
    let mut hosts = std::collections::HashSet::new();
    let sites = config
        .kinds
        .iter()
        .take(MAX_SITES)
        .enumerate()
        .map(|(index, &kind)| sites::generate_site(config, index, kind, &mut hosts))
        .collect();
    Corpus {
        seed: config.seed,
        sites,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_from_their_names() {
        for kind in SiteKind::ALL {
            assert_eq!(kind.name().parse::<SiteKind>().ok(), Some(kind));
            assert_eq!(
                kind.to_string().to_uppercase().parse::<SiteKind>().ok(),
                Some(kind)
            );
        }
        assert_eq!(
            "docs_mirror".parse::<SiteKind>().ok(),
            Some(SiteKind::DocsMirror)
        );
        let err = "blog".parse::<SiteKind>().err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("`blog`")));
    }

    #[test]
    fn empty_and_tiny_configs_are_fine() {
        let empty = generate(&CorpusConfig::default().with_kinds(&[]));
        assert!(empty.sites.is_empty());
        let tiny = generate(&CorpusConfig::new(1, 1).with_pages(1, 1));
        assert!(tiny.sites.iter().all(|s| s.pages.len() == 1));
        let host = &tiny.sites[2].host;
        assert_eq!(tiny.site(host).map(|s| s.kind), Some(SiteKind::News));
        assert!(tiny.site("absent.example").is_none());
    }
}
