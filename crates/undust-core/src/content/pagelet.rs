//! HTML → pagelets, in one streaming pass.
//!
//! # Pagelets
//!
//! Bar-Yossef & Rajagopalan (WWW 2002), Definition 2: an element is a pagelet if none of its
//! children holds at least `k` links (default 3) and none of its ancestors is a pagelet. Call an
//! element *compact* when no child holds ≥ k links. Compactness is decided bottom-up and is
//! inherited by descendants, so pagelets are exactly the compact elements whose parent is not
//! compact. The pass keeps a stack of open elements; an element's subtree is a contiguous run of
//! the page's token stream, so a closed compact child is kept as a token range in its parent until
//! the parent turns out non-compact (then the range is a pagelet) or closes compact (then the range
//! is part of the parent's). Each token lands in at most one pagelet, so the pass is linear.
//!
//! The paper's partition leaves text written directly inside a non-compact element (e.g. `<body>`
//! text beside link-heavy `<div>`s) in no pagelet; we keep it as one extra "loose" pagelet per such
//! element so no visible text is lost. A page without any element holding k links is one pagelet.
//!
//! Non-content elements are skipped with their whole subtree: `head` (title and metadata),
//! `script`, `style`, `noscript`, `template`, `svg`, `math`, `iframe`, `object`, `embed`,
//! `canvas`, `select`, `textarea`, `audio`, `video`, `map`.
//!
//! # Parser choice
//!
//! A hand-rolled tokenizer (`html_scan.rs`: the WHATWG tokenizer's states that decide what
//! is a tag and what is text, with the tree-builder feedback that picks RCDATA, RAWTEXT, script
//! data and foreign content) drives the pass, through `Driver`, which keeps the open elements
//! and feeds `State`. It replaced `lol_html` (Cloudflare's streaming rewriter), which had
//! replaced html5gum and html5ever on the 181 Zyte benchmark pages (31.5 MB, this 2-core
//! machine, release, best of 3, tokenizing and touching every tag and text byte):
//!
//! | candidate | MB/s |
//! |---|---|
//! | html5gum 0.9 tokenizer | 178 |
//! | html5ever 0.40 tokenizer (with lossy UTF-8 conversion) | 173 |
//! | lol_html 3.0 (`*` handler + end-tag handlers + text handler) | 415 |
//!
//! `lol_html` became the ceiling on small pages: on `/tmp/small.jsonl` (14 000 generated pages,
//! 67 MB) the bare `lol_html` pass alone (`benches/parse_ceiling.rs`) ran at 100–140 MB/s on both
//! cores, below the 100 MB/s `undust clusters` must reach end to end, and `analyze` spent about
//! half its time in `lol_html`'s selector VM, per-element boxed end-tag handlers, serializer and
//! tree-builder simulation. Measured one thread, `analyze` alone, old driver against new on the
//! same pages in one run: 42 → 84 MB/s on the small pages, 48 → 97 MB/s on a generated corpus of
//! every site family, 140 → 282 MB/s on the 441 Readability and Zyte pages. (End to end: see
//! BENCHMARKS.md.) `lol_html` stays the benches' baseline (`benches/support/raw_parse.rs`).
//!
//! Outputs are the `lol_html` driver's, checked page by page on those three sources (every
//! [`PageAnalysis`] field equal), with two deliberate differences where `lol_html` strays from
//! the spec: a UTF-8 byte order mark is stripped and decides the encoding (`lol_html` read it as
//! text, which started the body and hid the head's canonical link: one Readability page,
//! `la-nacion`), and `<svg/>` or `<math/>` (self-closing) does not enter foreign content.
//!
//! There is no tree: the tokenizer does not close `<p>` before a block or `<li>` before the next
//! `<li>`, and an end tag closes the nearest open element of its name and every element opened
//! after it (late, for unclosed elements), as `lol_html`'s open-element stack did. The stack
//! therefore applies the common implied-end rules itself (`p`, `li`, `dt`/`dd`, `td`/`th`, `tr`,
//! `option`, `head` before body content) and pops by element id, ignoring late end tags of
//! elements it already closed.
//!
//! Encoding: the input is read as UTF-8 (borrowed when valid; invalid bytes decode as U+FFFD)
//! until the first `<meta charset>` or `<meta http-equiv=Content-Type content="…; charset=…">`
//! naming a usable (ASCII-compatible, `encoding_rs` label) encoding; when it is not UTF-8, the
//! bytes after that tag are decoded in it and the scan resumes there. That is `lol_html`'s
//! switch-at-the-meta-tag behaviour: text before the meta tag stays read as UTF-8 (a browser
//! would prescan the first 1024 bytes and read the whole page in the declared encoding; the
//! difference is confined to text before the meta tag, which is almost always in the head).
//!
//! # Text blocks inside pagelets
//!
//! Pagelets are too coarse where a region has no links: a link-free sidebar (with rotating
//! "Trending" lines) beside the article inside one `<div>` is one pagelet with it. So each pagelet
//! also records its *text blocks*: the innermost block-level elements (`p`, `li`, `h1`–`h6`, `dd`,
//! `td`, `blockquote`, `pre`, `figcaption`, and `div`/`section`/… without block children) and the
//! loose text runs written directly in a block element that has block children. Blocks are
//! disjoint; each carries a digit-masked identity and its exact simhash contribution
//! ([`BlockDigest`]), so the template model can count blocks across a host's pages and the
//! fingerprint can subtract the template ones from their pagelet. A pagelet's features are those
//! of its whole text, as without blocks; a block's vector sums its words and the 3-word shingles
//! starting in it (the last two reach into what follows), so subtracting a run of template blocks
//! removes every shingle that reads a word of theirs except the two starting just before the run.
//! A block covering its whole pagelet is not recorded (the
//! pagelet's own identity covers it).
//!
//! # Identities mask numbers
//!
//! Identities (of pagelets and blocks) are computed with numeric tokens (only digits) replaced by
//! one placeholder, so a footer differing only by its "generated 2019-03-22 18:40:55" timestamp,
//! a visitor counter or a render time keeps its identity and can be recognised as template. The
//! simhash vectors and exact hashes keep the digits: pages that differ only by numbers stay apart.
//!
//! # Declared canonical URL
//!
//! The same pass records what the page's `<head>` says about its own URL, so taking it costs no
//! second parse: the `href` of the first `<link>` whose `rel` holds the token `canonical` (tokens
//! are split on ASCII whitespace and compared without case, so `rel="Canonical"` and
//! `rel="canonical amphtml"` count, `rel="canonical-x"` does not), and the `href` of the first
//! `<base>` that has one. [`PageAnalysis::declared_canonical`] resolves them against the page's
//! URL. Choices, each the conservative one:
//!
//! - Only the *first* canonical link decides: when its `href` is missing, empty, too long or not
//!   http(s), the page declares no usable canonical, and a later one is not tried (pages carrying
//!   two come from two plugins that disagree, and the first is what the head's author wrote).
//! - Only links in the head count: a `<link rel=canonical>` after the body has started (a `<body>`
//!   tag, any element that is not head content, or non-blank text, as HTML's tree builder decides),
//!   or inside a `<template>` (inert content), is ignored. Search engines honour it only in the
//!   head too, and a body link may be user content.
//! - `<base href>` applies wherever it stands, before or after the link, as in browsers (the
//!   document's base URL is its first `<base href>`); one that does not resolve to http(s) is
//!   ignored and the page URL is the base. `<meta property="og:url">` is not used: it is too often
//!   a site-wide constant or a stale share URL.
//!
//! # Declared shortlink
//!
//! The same pass records the head's first `<link>` whose `rel` holds the token `shortlink`, read
//! exactly as the canonical link is (first one decides, head only, not inside a `<template>`,
//! same length caps, resolved through the same `<base>`): [`PageAnalysis::declared_shortlink`].
//! Drupal 8+ writes `<link rel="shortlink" href="/node/123">` beside the canonical path alias, and
//! WordPress `<link rel='shortlink' href='https://site/?p=123'>`: the entity's id URL, which
//! serves the same page. It is the one declaration that names the *other* spelling of a page, so
//! it is what relates an id URL to its speaking alias when no URL pattern can (see
//! `crate::learn::aliases`). A link whose `rel` holds both tokens counts as both.
//!
//! # Bounds
//!
//! At most [`ContentConfig::max_bytes`] of input are parsed (default 4 MiB; the rest is ignored and
//! [`PageAnalysis::truncated`] is set), at most [`ContentConfig::max_tokens`] tokens are kept
//! (default 200 000), the stack is at most 512 elements deep (deeper elements are read as part of
//! their ancestor), at most [`ContentConfig::max_links`] links of at most 2 KiB are kept, at most
//! [`ContentConfig::max_pagelets`] pagelets (the ones with most tokens) and at most
//! [`ContentConfig::max_blocks`] text blocks (the ones with most tokens) are kept per page.

use std::cell::RefCell;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use super::html_scan::{Flow, Outcome, Scanner, Sink, StartTag};
use super::simhash::{shingle_hash, FeatureCounts, SimhashVector, SHINGLE_WORDS};
use super::tokens::{complete_prefix, Tokenizer};
use super::ContentConfig;

/// Maximum depth of the element stack.
const MAX_DEPTH: usize = 512;
/// Maximum bytes of one kept link.
const MAX_LINK_BYTES: usize = 2048;
/// Stand-in for every numeric token in identities.
const NUMBER: u64 = 0x9e37_79b9_7f4a_7c15;
/// Longest single tag, comment or doctype read (the memory `lol_html` was allowed for its token
/// buffer, kept as the bound); a longer one ends the scan and the page is truncated.
const PARSER_MEMORY: usize = 16 << 20;
/// Longest declared canonical or base `href` used, and longest resolved canonical URL, in bytes.
/// Real canonical URLs are well under 1 KiB; an `href` of several KiB is a data blob or an
/// injected payload, not a page's address, and would only bloat the samples that keep it.
pub const MAX_CANONICAL_BYTES: usize = 4096;

/// One pagelet of a page, reduced to what template detection and fingerprinting need.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageletDigest {
    /// Shingle identity (Broder super-shingle: hash of the two smallest shingle hashes): equal for
    /// identical content and, with high probability, for near-identical content.
    pub identity: u64,
    /// Tokens of text.
    pub tokens: u32,
    /// Tokens inside links (`<a href>`), for link density.
    pub link_tokens: u32,
    /// Exact hash of the pagelet's normalized token sequence.
    pub exact: u64,
    /// The pagelet's simhash vector (64 per-bit sums of its features), divided by `scale` when a
    /// sum would not fit an `i16` (pagelets of more than ~16 000 tokens); exact otherwise.
    pub vector: Vec<i16>,
    /// The pagelet's text blocks (see the module documentation), in document order; empty when
    /// the pagelet is a single block.
    #[serde(default)]
    pub blocks: Vec<BlockDigest>,
}

/// One text block of a pagelet (a paragraph, list item, heading, table cell, loose text run).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDigest {
    /// Hash of the block's token sequence with numeric tokens masked: equal for blocks whose
    /// text is equal up to numbers.
    pub identity: u64,
    /// Tokens of text.
    pub tokens: u32,
    /// Tokens inside links.
    pub link_tokens: u32,
    /// The block's simhash vector, quantized like [`PageletDigest::vector`] (exact below ~16 000
    /// tokens): the part of its pagelet's vector that comes from this block.
    pub vector: Vec<i16>,
}

impl PageletDigest {
    /// Link density: share of the pagelet's tokens that are link text.
    pub fn link_density(&self) -> f64 {
        if self.tokens == 0 {
            0.0
        } else {
            f64::from(self.link_tokens) / f64::from(self.tokens)
        }
    }
}

/// Compact, serde-serializable summary of one page's content: what the sidecar keeps per sampled
/// page instead of the body, enough to re-fingerprint the page when the host's template model has
/// matured.
///
/// Size in memory: 40 bytes plus, per pagelet, 48 bytes of fields and a 128-byte vector (plus a
/// 24-byte `Vec` header) = 200 bytes, plus, per text block, 16 bytes of fields and a 128-byte
/// vector with its 24-byte header = 168 bytes; pages keep at most
/// [`ContentConfig::max_pagelets`] pagelets (default 64) and [`ContentConfig::max_blocks`] blocks
/// (default 128), so a digest is at most 12.8 KiB + 21 KiB ≈ 34 KiB in memory. Serialized as
/// JSON it takes ≈ 3× its vectors' size (decimal numbers). Measured on the 181 Zyte benchmark
/// pages: mean 46 pagelets, 34 KiB as JSON on average, 49 KiB at most (12 KiB and 18 KiB before
/// text blocks were recorded).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageDigest {
    /// Pagelets with text, in document order.
    pub pagelets: Vec<PageletDigest>,
    /// Exact hash of the whole page's normalized text (every pagelet, template included); of the
    /// HTML bytes when the page has no text at all.
    pub page_exact: u64,
    /// Tokens of the whole page's text.
    pub page_tokens: u32,
}

impl PageDigest {
    /// Bytes this digest holds on the heap (its vectors' capacities), for budgets that must
    /// account what is really held rather than what was asked for.
    pub fn held_bytes(&self) -> usize {
        use crate::heap::vec_bytes;
        use std::mem::size_of;
        let blocks = |p: &PageletDigest| {
            vec_bytes(p.blocks.capacity(), size_of::<BlockDigest>())
                + p.blocks
                    .iter()
                    .map(|b| vec_bytes(b.vector.capacity(), size_of::<i16>()))
                    .sum::<usize>()
        };
        vec_bytes(self.pagelets.capacity(), size_of::<PageletDigest>())
            + self
                .pagelets
                .iter()
                .map(|p| vec_bytes(p.vector.capacity(), size_of::<i16>()) + blocks(p))
                .sum::<usize>()
    }

    /// Simhash of the whole page's text, every pagelet included (no template or boilerplate
    /// removal): the "raw page" baseline.
    pub fn raw_simhash(&self) -> u64 {
        let mut v = SimhashVector::default();
        for p in &self.pagelets {
            let mut w = [0i32; 64];
            for (slot, &x) in w.iter_mut().zip(&p.vector) {
                *slot = i32::from(x);
            }
            v.add(&w);
        }
        v.finish()
    }
}

/// The result of [`analyze`]: a page's pagelets and its outgoing links.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageAnalysis {
    /// The compact content summary (pagelets with identities and simhash contributions).
    pub digest: PageDigest,
    /// `href` values of the page's links (entity-decoded, unresolved), for the template model's
    /// optional connectivity test; at most [`ContentConfig::max_links`].
    pub links: Vec<String>,
    /// Bytes of HTML parsed.
    pub bytes_analyzed: usize,
    /// True when a bound (bytes, tokens, pagelets, parser memory) cut the analysis short.
    pub truncated: bool,
    /// `href` of the head's first `<link rel="canonical">` (entity-decoded, trimmed, unresolved),
    /// when it has a usable one; see [`PageAnalysis::declared_canonical`].
    #[serde(default)]
    pub canonical_href: Option<String>,
    /// `href` of the head's first `<link rel="shortlink">` (entity-decoded, trimmed, unresolved),
    /// when it has a usable one; see [`PageAnalysis::declared_shortlink`].
    #[serde(default)]
    pub shortlink_href: Option<String>,
    /// `href` of the page's first `<base href>` (entity-decoded, trimmed, unresolved).
    #[serde(default)]
    pub base_href: Option<String>,
}

impl PageAnalysis {
    /// The canonical URL the page's head declares (see the module documentation), resolved
    /// against `page_url`, the URL the page was served from, through the page's `<base href>`.
    /// `None` when the page declares none, or when it is not an absolute http(s) URL of at most
    /// [`MAX_CANONICAL_BYTES`] once resolved.
    pub fn declared_canonical(&self, page_url: &url::Url) -> Option<url::Url> {
        self.resolve_declared(self.canonical_href.as_deref()?, page_url)
    }

    /// The shortlink the page's head declares (see the module documentation): another URL that
    /// serves this page, resolved like [`PageAnalysis::declared_canonical`], with the same
    /// bounds.
    pub fn declared_shortlink(&self, page_url: &url::Url) -> Option<url::Url> {
        self.resolve_declared(self.shortlink_href.as_deref()?, page_url)
    }

    /// `href` resolved against `page_url` through the page's `<base href>`; `None` unless an
    /// absolute http(s) URL of at most [`MAX_CANONICAL_BYTES`].
    fn resolve_declared(&self, href: &str, page_url: &url::Url) -> Option<url::Url> {
        let base = self
            .base_href
            .as_deref()
            .and_then(|b| page_url.join(b).ok())
            .filter(is_web_url);
        let resolved = base.as_ref().unwrap_or(page_url).join(href).ok()?;
        (is_web_url(&resolved) && resolved.as_str().len() <= MAX_CANONICAL_BYTES)
            .then_some(resolved)
    }

    /// The URL the page's relative links resolve against: its `<base href>` resolved against
    /// `page_url` (the URL the page was served from) when that gives an http(s) URL, else
    /// `page_url`.
    pub fn link_base(&self, page_url: &url::Url) -> url::Url {
        self.base_href
            .as_deref()
            .and_then(|b| page_url.join(b).ok())
            .filter(is_web_url)
            .unwrap_or_else(|| page_url.clone())
    }
}

fn is_web_url(url: &url::Url) -> bool {
    matches!(url.scheme(), "http" | "https") && url.has_host()
}

/// An attribute value as written (entities decoded, surrounding whitespace trimmed), or `None`
/// when it is empty or longer than [`MAX_CANONICAL_BYTES`].
fn href_value(raw: &str) -> Option<String> {
    // HTML strips ASCII whitespace (only) around a URL before parsing it; entities may decode to
    // some, so trim again after decoding. No entity decodes to more than twice its own length.
    let ascii_ws = |c: char| c.is_ascii_whitespace();
    let raw = raw.trim_matches(ascii_ws);
    if raw.len() > 2 * MAX_CANONICAL_BYTES {
        return None;
    }
    let decoded = decode_entities(raw);
    let value = decoded.trim_matches(ascii_ws);
    (!value.is_empty() && value.len() <= MAX_CANONICAL_BYTES).then(|| value.to_owned())
}

/// `html_escape::decode_html_entities`, with text holding no `&` (most text: nothing to decode)
/// returned as it is after one `memchr` scan, which looks at 32 bytes a step where
/// `html_escape`'s own scan looks at 8 (it returns such text unchanged as well).
fn decode_entities(text: &str) -> std::borrow::Cow<'_, str> {
    if memchr::memchr(b'&', text.as_bytes()).is_none() {
        return std::borrow::Cow::Borrowed(text);
    }
    html_escape::decode_html_entities(text)
}

/// True when a `rel` attribute value holds the link type `canonical` (link types are
/// whitespace-separated and ASCII case-insensitive).
fn rel_is_canonical(rel: &str) -> bool {
    rel_holds(rel, "canonical")
}

/// True when a `rel` attribute value holds the link type `link_type` (link types are
/// whitespace-separated and ASCII case-insensitive).
fn rel_holds(rel: &str, link_type: &str) -> bool {
    rel.split_ascii_whitespace()
        .any(|t| t.eq_ignore_ascii_case(link_type))
}

/// Splits a page into pagelets and summarizes each. Never panics, on any input.
pub fn analyze(html: &[u8], config: &ContentConfig) -> PageAnalysis {
    let len = html.len().min(config.max_bytes);
    let bytes = &html[..len];
    let mut driver = Driver::new(State::new(config, len));
    let mut scanner = Scanner::new(PARSER_MEMORY);
    // A UTF-8 byte order mark decides the encoding (HTML's encoding sniffing puts it before any
    // `<meta charset>`) and is not text.
    let (bytes, bom) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (rest, true),
        None => (bytes, false),
    };
    driver.charset_seen = bom;
    // `from_utf8` first: its ASCII fast path validates several times faster than the lossy
    // conversion's own scan (a fifth of the scan's time on small pages otherwise).
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    let mut outcome = scanner.scan(&text, &mut driver);
    if let (Outcome::Stopped(at), Some(encoding)) = (outcome, driver.switch_to.take()) {
        // A `<meta charset>` named another encoding: the rest of the page is in it (the text
        // before the meta tag was read as UTF-8, as `lol_html` read it).
        let at = match text {
            std::borrow::Cow::Borrowed(_) => at,
            std::borrow::Cow::Owned(_) => byte_offset(bytes, at),
        };
        let rest = bytes.get(at..).unwrap_or_default();
        let (rest, _) = encoding.decode_without_bom_handling(rest);
        outcome = scanner.scan(&rest, &mut driver);
    }
    let Driver {
        mut state,
        too_deep,
        ..
    } = driver;
    let truncated = len < html.len() || too_deep || outcome == Outcome::TooLong;
    let (canonical_href, base_href) = (state.canonical_href.take(), state.base_href.take());
    let shortlink_href = state.shortlink_href.take();
    let mut page = state.finish();
    page.canonical_href = canonical_href;
    page.shortlink_href = shortlink_href;
    page.base_href = base_href;
    if page.digest.page_tokens == 0 {
        // No text at all (script-rendered shells, images, binary): text equality would say
        // nothing, so the whole-page hash is of the bytes.
        page.digest.page_exact = xxh3_64(&html[..len]);
    }
    page.bytes_analyzed = len;
    page.truncated |= truncated;
    page
}

/// The offset in `bytes` of offset `at` of the text `String::from_utf8_lossy(bytes)` (which
/// replaces each invalid sequence by one U+FFFD, exactly as the WHATWG UTF-8 decoder does).
fn byte_offset(bytes: &[u8], at: usize) -> usize {
    let (mut in_text, mut in_bytes) = (0, 0);
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid().len();
        if at <= in_text + valid {
            return in_bytes + (at - in_text);
        }
        in_text += valid;
        in_bytes += valid;
        if !chunk.invalid().is_empty() {
            // One U+FFFD (3 bytes of text) for this invalid sequence.
            if at < in_text + 3 {
                return in_bytes;
            }
            in_text += 3;
            in_bytes += chunk.invalid().len();
        }
    }
    bytes.len()
}

/// Elements open in the scan, at most: as many as `lol_html`'s open-element stack held within
/// its memory limit ([`PARSER_MEMORY`]: 2^17 items of 128 bytes; measured, it stopped at the
/// 131 073rd); past it the scan stops and the page is truncated. The list holds 16 bytes an
/// element (2 MiB at most) plus the names.
const MAX_OPEN_ELEMENTS: usize = 1 << 17;

/// Feeds the scanner's tokens to [`State`], keeping the open elements as `lol_html` did: an
/// end tag closes the nearest open element of its name and every element opened after it (each
/// frame's end reaches [`State::end`]); an end tag with no open element of its name does
/// nothing.
struct Driver {
    state: State,
    /// Open elements: the span of their name in `names`, their frame id in `state` (0 when
    /// `State::start` did not push one) and whether it is a `<template>`.
    open: Vec<(u32, u32, u32, bool)>,
    /// How many elements of each name are open: an end tag with none open is dropped without
    /// looking through `open`, so a hostile page of many unclosed elements and many stray end
    /// tags costs time linear in its size (each search otherwise walks every open element; the
    /// elements a search passes over are closed by it, so a search that finds its element costs
    /// what its start tags did).
    open_by_name: FxHashMap<String, u32>,
    /// The open elements' names, one after the other (no allocation per element).
    names: String,
    /// The encoding was decided (a byte order mark, or a `<meta>` naming a usable charset): later
    /// `<meta charset>` tags do not count.
    charset_seen: bool,
    /// The encoding a `<meta>` switched to, when not UTF-8: the scan stops after that tag.
    switch_to: Option<&'static encoding_rs::Encoding>,
    /// More than [`MAX_OPEN_ELEMENTS`] elements were open.
    too_deep: bool,
}

impl Driver {
    fn new(state: State) -> Driver {
        Driver {
            state,
            open: Vec::new(),
            open_by_name: FxHashMap::default(),
            names: String::new(),
            charset_seen: false,
            switch_to: None,
            too_deep: false,
        }
    }

    /// The encoding a `<meta>` tag declares, as `lol_html`'s `adjust_charset_on_meta_tag` reads
    /// it: its `charset` attribute, else the `charset` parameter of the `content` of a
    /// `http-equiv="Content-Type"` one; ASCII-compatible encodings only.
    fn meta_charset(tag: &StartTag<'_>) -> Option<&'static encoding_rs::Encoding> {
        let usable = |label: &str| {
            encoding_rs::Encoding::for_label_no_replacement(label.as_bytes())
                .filter(|e| e.is_ascii_compatible())
        };
        tag.attr("charset").and_then(usable).or_else(|| {
            let content = tag
                .attr("http-equiv")
                .filter(|h| h.eq_ignore_ascii_case("content-type"))
                .and_then(|_| tag.attr("content"))?;
            let mime: mime::Mime = content.parse().ok()?;
            usable(mime.get_param("charset")?.as_str())
        })
    }
}

impl Sink for Driver {
    fn text(&mut self, text: &str, data: bool) {
        self.state.text(text, data);
    }

    fn start_tag(&mut self, tag: &StartTag<'_>) -> Flow {
        let name = tag.name;
        let s = &mut self.state;
        let mut flow = Flow::Continue;
        match name {
            "link" if s.in_head() && !(s.canonical_seen && s.shortlink_seen) => {
                if let Some(rel) = tag.attr("rel") {
                    if !s.canonical_seen && rel_is_canonical(rel) {
                        s.canonical_seen = true;
                        s.canonical_href = tag.attr("href").and_then(href_value);
                    }
                    if !s.shortlink_seen && rel_holds(rel, "shortlink") {
                        s.shortlink_seen = true;
                        s.shortlink_href = tag.attr("href").and_then(href_value);
                    }
                }
            }
            "base" if !s.base_seen && s.templates == 0 => {
                if let Some(base) = tag.attr("href") {
                    s.base_seen = true;
                    s.base_href = href_value(base);
                }
            }
            // Template content is inert: its links and bases are not the page's.
            "template" if tag.can_have_content => s.templates += 1,
            "meta" if !self.charset_seen => {
                if let Some(encoding) = Self::meta_charset(tag) {
                    self.charset_seen = true;
                    if encoding != encoding_rs::UTF_8 {
                        self.switch_to = Some(encoding);
                        flow = Flow::Stop;
                    }
                }
            }
            _ => {}
        }
        let href = if name == "a" { tag.attr("href") } else { None };
        let pushed = self.state.start(name, href);
        if !tag.can_have_content {
            // A void element (or self-closing foreign one): closes at once.
            if let Some(id) = pushed {
                self.state.end(id);
            }
        } else if self.open.len() < MAX_OPEN_ELEMENTS {
            let from = self.names.len() as u32;
            self.names.push_str(name);
            let to = self.names.len() as u32;
            match self.open_by_name.get_mut(name) {
                Some(n) => *n += 1,
                None => {
                    self.open_by_name.insert(name.to_owned(), 1);
                }
            }
            self.open
                .push((from, to, pushed.unwrap_or(0), name == "template"));
        } else {
            self.too_deep = true;
            flow = Flow::Stop;
        }
        flow
    }

    fn end_tag(&mut self, name: &str) {
        if !self.open_by_name.contains_key(name) {
            return;
        }
        let names = &self.names;
        let Some(i) = self
            .open
            .iter()
            .rposition(|&(from, to, ..)| names.get(from as usize..to as usize) == Some(name))
        else {
            return;
        };
        while self.open.len() > i {
            let Some((from, to, id, template)) = self.open.pop() else {
                break;
            };
            if let Some(popped) = self.names.get(from as usize..to as usize) {
                // A name with none open leaves the map, so it holds at most the open elements'
                // names (a page of a million distinct tags, each closed, holds none).
                if let Some(n) = self.open_by_name.get_mut(popped) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.open_by_name.remove(popped);
                    }
                }
            }
            self.names.truncate(from as usize);
            if template {
                self.state.templates = self.state.templates.saturating_sub(1);
            }
            if id != 0 {
                self.state.end(id);
            }
        }
    }
}

/// How an element takes part in the partition.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Subtree skipped.
    Ignored,
    /// Phrasing element: its boundaries do not end a word (`foo<b>bar</b>` is one word).
    Inline,
    /// Everything else: its boundaries end words.
    Block,
}

fn kind_of(name: &str) -> Kind {
    match name {
        "head" | "script" | "style" | "noscript" | "template" | "svg" | "math" | "iframe"
        | "object" | "embed" | "canvas" | "select" | "textarea" | "audio" | "video" | "map"
        | "title" => Kind::Ignored,
        "a" | "b" | "i" | "em" | "strong" | "span" | "font" | "u" | "small" | "sup" | "sub"
        | "mark" | "abbr" | "code" | "cite" | "q" | "s" | "strike" | "time" | "label" | "bdi"
        | "bdo" | "kbd" | "samp" | "var" | "dfn" | "ins" | "del" | "tt" | "big" | "nobr"
        | "wbr" => Kind::Inline,
        _ => Kind::Block,
    }
}

/// Elements whose start closes an open `<p>` (HTML's "close a p element" list, abridged).
fn closes_p(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "details"
            | "div"
            | "dl"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hr"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "section"
            | "table"
            | "ul"
    )
}

/// Elements allowed in `<head>`; any other start tag means the body began.
fn head_content(name: &str) -> bool {
    matches!(
        name,
        "title" | "meta" | "link" | "style" | "script" | "base" | "noscript" | "template"
    )
}

/// `name` as the frame stack's implied-end rules know it (see [`Frame::name`]).
fn rule_name(name: &str) -> &'static str {
    match name {
        "head" => "head",
        "p" => "p",
        "li" => "li",
        "ul" => "ul",
        "ol" => "ol",
        "dt" => "dt",
        "dd" => "dd",
        "dl" => "dl",
        "td" => "td",
        "th" => "th",
        "tr" => "tr",
        "table" => "table",
        _ => "",
    }
}

/// A token range `[start, end)` of the page's token stream.
type Range = (u32, u32);

struct Frame {
    id: u32,
    /// The element's name when the implied-end rules ([`State::implied_ends`], the head's end)
    /// look for it, else `""`: what those rules compare, without allocating a copy of every name.
    name: &'static str,
    kind: Kind,
    start: u32,
    links: u32,
    non_compact: bool,
    is_link: bool,
    /// Closed compact children not yet known to be pagelets (parent still possibly compact).
    pending: Vec<Range>,
    /// Tokens written directly inside this element (not inside a child element).
    direct: Vec<Range>,
}

struct State {
    k: u32,
    max_tokens: usize,
    max_links: usize,
    max_pagelets: usize,
    max_blocks: usize,
    stack: Vec<Frame>,
    next_id: u32,
    /// Open ignored elements (their text and links are skipped).
    ignored: u32,
    /// Open `<a href>` elements (their text is link text).
    in_link: u32,
    text: String,
    tokenizer: Tokenizer,
    tokens: Vec<u64>,
    link_token: Vec<bool>,
    /// Per token: made only of digits (masked in identities).
    numeric: Vec<bool>,
    /// Text blocks recorded so far: start → end token (disjoint ranges).
    blocks: BTreeMap<u32, u32>,
    links: Vec<String>,
    pagelets: Vec<(u32, PageletDigest)>,
    truncated: bool,
    /// The body has started (HTML's tree builder left the head): later canonical links are not
    /// the head's.
    body_started: bool,
    /// Open `<template>` elements (their content is inert).
    templates: u32,
    /// A canonical link was seen in the head: only the first one decides.
    canonical_seen: bool,
    canonical_href: Option<String>,
    /// A shortlink link was seen in the head: only the first one decides.
    shortlink_seen: bool,
    shortlink_href: Option<String>,
    /// A `<base href>` was seen: only the first one is the document's base.
    base_seen: bool,
    base_href: Option<String>,
    /// Scratch lists of [`State::emit`], kept between its calls so that a page's pagelets do not
    /// each allocate them again (allocation was a quarter of the offline commands' profile).
    scratch: EmitScratch,
    /// Emptied range lists of closed frames, handed to frames opened later instead of each frame
    /// allocating its own.
    spare_ranges: Vec<Vec<Range>>,
}

/// The working lists of a [`State`] (token lists, text, frame stack, scratch), kept on each
/// thread between the pages it analyses so that small pages do not each allocate and fault them
/// in again. Only empty lists are kept, and not those of huge pages (see
/// [`MAX_KEPT_TOKENS`], [`MAX_KEPT_TEXT_BYTES`]): a thread holds at most a few MiB for this.
#[derive(Default)]
struct SpareLists {
    tokens: Vec<u64>,
    link_token: Vec<bool>,
    numeric: Vec<bool>,
    text: String,
    tokenizer: Tokenizer,
    stack: Vec<Frame>,
    scratch: EmitScratch,
    spare_ranges: Vec<Vec<Range>>,
}

/// Token capacity above which a page's lists are freed rather than kept for the thread's next
/// page: 32 Ki tokens of 10 bytes (hash, link and numeric flags) are 320 KiB a thread keeps at
/// most (pages up to about 512 KiB of HTML). The sidecar analyses on up to a few dozen blocking
/// threads at once and does not count these lists in its memory budgets, so a large page's lists
/// are not held on to; their cost is small beside that page's parse.
const MAX_KEPT_TOKENS: usize = 1 << 15;
/// Text buffer capacity above which it is freed rather than kept (one large text node).
const MAX_KEPT_TEXT_BYTES: usize = 256 << 10;

/// Range lists kept for reuse per page at most (a frame holds two; the stack is at most
/// [`MAX_DEPTH`] deep).
const MAX_SPARE_RANGES: usize = 2 * MAX_DEPTH;

thread_local! {
    static SPARE_LISTS: RefCell<SpareLists> = RefCell::new(SpareLists::default());
}

/// Per-range working lists of [`State::emit`] (see there); empty between calls.
#[derive(Default)]
struct EmitScratch {
    /// A range cut into its text blocks and the runs between them: `(start, end, is_block)`.
    segments: Vec<(u32, u32, bool)>,
}

/// Bytes of HTML per token, at least, on the pages measured (markup included): the token lists
/// are reserved for `html bytes / this` tokens up front instead of growing by doubling.
const HTML_BYTES_PER_TOKEN: usize = 16;

impl State {
    /// A fresh state for a page of `html_bytes` bytes.
    fn new(config: &ContentConfig, html_bytes: usize) -> Self {
        let root = Frame {
            id: 0,
            name: "",
            kind: Kind::Block,
            start: 0,
            links: 0,
            non_compact: false,
            is_link: false,
            pending: Vec::new(),
            direct: Vec::new(),
        };
        // Token indices are u32.
        let max_tokens = config.max_tokens.min(u32::MAX as usize / 2);
        let expected_tokens = (html_bytes / HTML_BYTES_PER_TOKEN).min(max_tokens);
        let SpareLists {
            mut tokens,
            mut link_token,
            mut numeric,
            mut text,
            tokenizer,
            mut stack,
            scratch,
            spare_ranges,
        } = SPARE_LISTS.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
        // Kept lists are emptied when they are put back; clearing again costs nothing and keeps
        // a page from ever seeing another's data.
        for list in [&mut link_token, &mut numeric] {
            list.clear();
            list.reserve(expected_tokens);
        }
        tokens.clear();
        tokens.reserve(expected_tokens);
        text.clear();
        stack.clear();
        stack.push(root);
        State {
            k: config.pagelet_links.max(1),
            max_tokens,
            max_links: config.max_links,
            max_pagelets: config.max_pagelets.max(1),
            max_blocks: config.max_blocks,
            stack,
            next_id: 1,
            ignored: 0,
            in_link: 0,
            text,
            tokenizer,
            tokens,
            link_token,
            numeric,
            blocks: BTreeMap::new(),
            links: Vec::new(),
            pagelets: Vec::new(),
            truncated: false,
            body_started: false,
            templates: 0,
            canonical_seen: false,
            canonical_href: None,
            shortlink_seen: false,
            shortlink_href: None,
            base_seen: false,
            base_href: None,
            scratch,
            spare_ranges,
        }
    }

    /// Puts this page's working lists back for the thread's next page (see [`SpareLists`]).
    fn keep_lists(&mut self) {
        if self.tokens.capacity() > MAX_KEPT_TOKENS || self.text.capacity() > MAX_KEPT_TEXT_BYTES {
            return;
        }
        let mut stack = std::mem::take(&mut self.stack);
        for frame in stack.drain(..) {
            self.recycle(frame);
        }
        let mut lists = SpareLists {
            tokens: std::mem::take(&mut self.tokens),
            link_token: std::mem::take(&mut self.link_token),
            numeric: std::mem::take(&mut self.numeric),
            text: std::mem::take(&mut self.text),
            tokenizer: std::mem::take(&mut self.tokenizer),
            stack,
            scratch: std::mem::take(&mut self.scratch),
            spare_ranges: std::mem::take(&mut self.spare_ranges),
        };
        lists.tokens.clear();
        lists.link_token.clear();
        lists.numeric.clear();
        lists.text.clear();
        SPARE_LISTS.with(|spare| *spare.borrow_mut() = lists);
    }

    /// Keeps a closed frame's range lists, emptied, for frames opened later.
    fn recycle(&mut self, frame: Frame) {
        for mut ranges in [frame.pending, frame.direct] {
            if ranges.capacity() > 0 && self.spare_ranges.len() < MAX_SPARE_RANGES {
                ranges.clear();
                self.spare_ranges.push(ranges);
            }
        }
    }

    /// An empty range list for a new frame (a kept one when there is one).
    fn range_list(&mut self) -> Vec<Range> {
        self.spare_ranges.pop().unwrap_or_default()
    }

    /// Whether a `<link>` starting now is in the head (and not inert template content): only
    /// there do its canonical and shortlink declarations count.
    fn in_head(&self) -> bool {
        !self.body_started && self.templates == 0
    }

    /// An element starts; returns its frame id when it was pushed.
    fn start(&mut self, name: &str, href: Option<&str>) -> Option<u32> {
        if !self.body_started
            && self.templates == 0
            && (name == "body" || !(matches!(name, "html" | "head") || head_content(name)))
        {
            // What HTML's tree builder does before the body: anything but head content starts it.
            self.body_started = true;
        }
        let kind = kind_of(name);
        if self.ignored > 0 {
            // Body content (or <body>) inside an unclosed <head> closes it, as the tree builder
            // does; anything else inside an ignored subtree is skipped.
            let in_head = self.stack.iter().any(|f| f.name == "head");
            let top_is_head = self.stack.last().is_some_and(|f| f.name == "head");
            if in_head && (name == "body" || (top_is_head && !head_content(name))) {
                self.pop_to(|f| f.name == "head", |_| false);
            } else {
                return None;
            }
        }
        self.flush(kind != Kind::Inline);
        self.implied_ends(name);
        if self.stack.len() >= MAX_DEPTH {
            self.truncated = true;
            return None;
        }
        let is_link = href.is_some();
        if let Some(href) = href {
            if self.links.len() < self.max_links && href.len() <= MAX_LINK_BYTES {
                let decoded = decode_entities(href.trim());
                self.links.push(decoded.into_owned());
            }
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        if kind == Kind::Ignored {
            self.ignored += 1;
        }
        if is_link {
            self.in_link += 1;
        }
        let (pending, direct) = (self.range_list(), self.range_list());
        self.stack.push(Frame {
            id,
            name: rule_name(name),
            kind,
            start: self.tokens.len() as u32,
            links: u32::from(is_link),
            non_compact: false,
            is_link,
            pending,
            direct,
        });
        Some(id)
    }

    /// The implied end tags HTML's tree builder would apply before `name` starts.
    fn implied_ends(&mut self, name: &str) {
        if closes_p(name) {
            self.pop_to(|f| f.name == "p", |f| f.kind != Kind::Inline);
        }
        match name {
            "li" => self.pop_to(|f| f.name == "li", |f| matches!(f.name, "ul" | "ol")),
            "dt" | "dd" => self.pop_to(|f| matches!(f.name, "dt" | "dd"), |f| f.name == "dl"),
            "td" | "th" => self.pop_to(
                |f| matches!(f.name, "td" | "th"),
                |f| matches!(f.name, "tr" | "table"),
            ),
            "tr" => self.pop_to(|f| f.name == "tr", |f| f.name == "table"),
            _ => {}
        }
    }

    /// Closes frames from the top down to the first one matching `target`, unless a frame
    /// matching `barrier` (or the root) comes first.
    fn pop_to(&mut self, target: impl Fn(&Frame) -> bool, barrier: impl Fn(&Frame) -> bool) {
        let mut found = None;
        for (i, f) in self.stack.iter().enumerate().skip(1).rev() {
            if target(f) {
                found = Some(i);
                break;
            }
            if barrier(f) {
                return;
            }
        }
        if let Some(i) = found {
            while self.stack.len() > i {
                self.close_top();
            }
        }
    }

    /// The end tag of frame `id` (maybe late, maybe already implicitly closed).
    fn end(&mut self, id: u32) {
        if let Some(i) = self.stack.iter().rposition(|f| f.id == id) {
            if i == 0 {
                return;
            }
            while self.stack.len() > i {
                self.close_top();
            }
        }
    }

    /// A text chunk; `data` when it is ordinary text (not the raw text of a `<title>`,
    /// `<script>`, `<style>` or the like).
    fn text(&mut self, chunk: &str, data: bool) {
        if data
            && !self.body_started
            && self.templates == 0
            && chunk.bytes().any(|b| !b.is_ascii_whitespace())
        {
            // Non-blank text before the body starts it, as in HTML's tree builder.
            self.body_started = true;
        }
        if self.ignored == 0 && self.tokens.len() < self.max_tokens {
            // Bound the pending text too: one text node cannot hold more than a few bytes per
            // remaining token.
            if self.text.len() < self.max_tokens.saturating_mul(64) {
                self.text.push_str(chunk);
            }
        }
    }

    /// Tokenizes buffered text into the current top frame. A partial word at the end is kept for
    /// the next chunk unless `full` (a block boundary ends words).
    fn flush(&mut self, full: bool) {
        if self.text.is_empty() {
            return;
        }
        let cut = if full {
            self.text.len()
        } else {
            complete_prefix(&self.text)
        };
        if cut == 0 {
            return;
        }
        let start = self.tokens.len() as u32;
        let decoded = decode_entities(&self.text[..cut]);
        let max = self.max_tokens;
        let tokens = &mut self.tokens;
        let numeric = &mut self.numeric;
        let mut over = false;
        self.tokenizer.feed(&decoded, &mut |h, n| {
            if tokens.len() < max {
                tokens.push(h);
                numeric.push(n);
            } else {
                over = true;
            }
        });
        self.truncated |= over;
        self.text.drain(..cut);
        let end = self.tokens.len() as u32;
        let in_link = self.in_link > 0;
        self.link_token.resize(end as usize, in_link);
        if end > start {
            if let Some(top) = self.stack.last_mut() {
                match top.direct.last_mut() {
                    Some(last) if last.1 == start => last.1 = end,
                    _ => top.direct.push((start, end)),
                }
            }
        }
    }

    fn close_top(&mut self) {
        self.flush(true);
        if self.stack.len() <= 1 {
            return;
        }
        let Some(frame) = self.stack.pop() else {
            return;
        };
        self.close_frame(&frame);
        self.recycle(frame);
    }

    /// What closing `frame` (just popped off the stack) means for blocks, pagelets and its
    /// parent.
    fn close_frame(&mut self, frame: &Frame) {
        if frame.kind == Kind::Ignored {
            self.ignored = self.ignored.saturating_sub(1);
            return;
        }
        if frame.is_link {
            self.in_link = self.in_link.saturating_sub(1);
        }
        let end = self.tokens.len() as u32;
        if frame.kind == Kind::Block && end > frame.start {
            // Innermost block elements are text blocks; an element with block descendants
            // contributes its loose text runs instead. Blocks inside the frame were recorded
            // after it started, so any has a start at or after the frame's.
            if self.blocks.range(frame.start..).next().is_none() {
                self.blocks.insert(frame.start, end);
            } else {
                for &(a, b) in &frame.direct {
                    if b > a {
                        self.blocks.insert(a, b);
                    }
                }
            }
        }
        let k = self.k;
        if frame.non_compact {
            // Its compact children were emitted when it turned non-compact; its loose text is one
            // more pagelet.
            self.emit(&frame.direct);
        }
        let parent_turns = frame.non_compact || frame.links >= k;
        let Some(parent) = self.stack.last_mut() else {
            return;
        };
        parent.links = parent.links.saturating_add(frame.links);
        // The parent's pending children become pagelets first, then this frame (document order).
        let mut turned = None;
        if parent_turns && !parent.non_compact {
            parent.non_compact = true;
            turned = Some(std::mem::take(&mut parent.pending));
        }
        let mut own = None;
        if !frame.non_compact {
            if parent.non_compact {
                own = Some((frame.start, end));
            } else if end > frame.start {
                parent.pending.push((frame.start, end));
            }
        }
        if let Some(mut pending) = turned {
            for &r in &pending {
                self.emit(&[r]);
            }
            pending.clear();
            if self.spare_ranges.len() < MAX_SPARE_RANGES {
                self.spare_ranges.push(pending);
            }
        }
        if let Some(r) = own {
            self.emit(&[r]);
        }
    }

    /// Records the pagelet made of `ranges` (skipped when it has no text).
    fn emit(&mut self, ranges: &[Range]) {
        let tokens: u32 = ranges.iter().map(|r| r.1.saturating_sub(r.0)).sum();
        if tokens == 0 {
            return;
        }
        let mut vector = FeatureCounts::default();
        let exact = hash_tokens(
            ranges
                .iter()
                .filter_map(|&(a, b)| self.tokens.get(a as usize..b as usize))
                .flatten()
                .copied(),
        );
        let mut min = [u64::MAX; 2];
        let mut link_tokens = 0u32;
        let mut blocks = Vec::new();
        let mut segments = std::mem::take(&mut self.scratch.segments);
        for &(a, b) in ranges {
            let (ua, ub) = (a as usize, b as usize);
            let (Some(toks), Some(num)) = (self.tokens.get(ua..ub), self.numeric.get(ua..ub))
            else {
                continue;
            };
            link_tokens += self
                .link_token
                .get(ua..ub)
                .map_or(0, |s| s.iter().filter(|&&l| l).count() as u32);
            // Cut the range into its text blocks and the runs between them.
            segments.clear();
            let mut pos = a;
            for (&s, &e) in self.blocks.range(a..b) {
                // Blocks are disjoint; clamping keeps segments disjoint even if that broke.
                let s = s.max(pos);
                let e = e.min(b).max(s);
                if e == s {
                    continue;
                }
                if s > pos {
                    segments.push((pos, s, false));
                }
                segments.push((s, e, true));
                pos = e;
            }
            if pos < b {
                segments.push((pos, b, false));
            }
            // Features are exactly those of the whole range (as without blocks); a word belongs
            // to its block, a shingle to the block of its first word. Each segment is walked
            // once, adding straight into its block's counts or the pagelet's.
            let mask = |i: usize| if num[i] { NUMBER } else { toks[i] };
            let shingles = toks.len().saturating_sub(SHINGLE_WORDS - 1);
            for &(s, e, is_block) in &segments {
                let (rs, re) = ((s - a) as usize, (e - a) as usize);
                let mut block = is_block.then(FeatureCounts::default);
                let counts = block.as_mut().unwrap_or(&mut vector);
                for (i, &h) in toks.iter().enumerate().take(re).skip(rs) {
                    counts.add_feature(h);
                    min_two(&mut min, mask(i));
                    if i < shingles {
                        let h = shingle_hash(h, toks[i + 1], toks[i + 2]);
                        counts.add_feature(h);
                        let m = if num[i] || num[i + 1] || num[i + 2] {
                            shingle_hash(mask(i), mask(i + 1), mask(i + 2))
                        } else {
                            h
                        };
                        min_two(&mut min, m);
                    }
                }
                let Some(block) = block else {
                    continue;
                };
                vector.absorb(&block);
                let v = block.into_vector();
                let n = re - rs;
                if n >= tokens as usize {
                    continue;
                }
                blocks.push(BlockDigest {
                    identity: hash_tokens((rs..re).map(mask)),
                    tokens: n as u32,
                    link_tokens: self
                        .link_token
                        .get(s as usize..e as usize)
                        .map_or(0, |l| l.iter().filter(|&&l| l).count() as u32),
                    vector: quantize(&v.0),
                });
            }
        }
        segments.clear();
        self.scratch.segments = segments;
        let mut id_bytes = [0u8; 16];
        id_bytes[..8].copy_from_slice(&min[0].to_le_bytes());
        id_bytes[8..].copy_from_slice(&min[1].to_le_bytes());
        let first = ranges.first().map_or(0, |r| r.0);
        self.pagelets.push((
            first,
            PageletDigest {
                identity: xxh3_64(&id_bytes),
                tokens,
                link_tokens,
                exact,
                vector: quantize(&vector.into_vector().0),
                blocks,
            },
        ));
    }

    fn finish(mut self) -> PageAnalysis {
        while self.stack.len() > 1 {
            self.close_top();
        }
        self.flush(true);
        if let Some(root) = self.stack.pop() {
            if root.non_compact {
                self.emit(&root.direct);
            } else {
                // No element holds k links: the whole page is one pagelet.
                let end = self.tokens.len() as u32;
                self.emit(&[(0, end)]);
            }
        }
        let mut pagelets = std::mem::take(&mut self.pagelets);
        let max = self.max_pagelets;
        if pagelets.len() > max {
            self.truncated = true;
            // Keep the pagelets with most text; drop the tail of tiny ones.
            pagelets.sort_by(|a, b| b.1.tokens.cmp(&a.1.tokens).then(a.0.cmp(&b.0)));
            pagelets.truncate(max);
        }
        pagelets.sort_by_key(|p| p.0);
        let total_blocks: usize = pagelets.iter().map(|p| p.1.blocks.len()).sum();
        if total_blocks > self.max_blocks {
            // Keep the blocks with most text; a dropped block's text stays in its pagelet (it
            // just cannot be subtracted as template).
            let mut sizes: Vec<u32> = pagelets
                .iter()
                .flat_map(|p| p.1.blocks.iter().map(|b| b.tokens))
                .collect();
            sizes.sort_unstable_by(|a, b| b.cmp(a));
            let cut = sizes.get(self.max_blocks).copied().unwrap_or(0);
            // Strictly larger than the cut always fit; ties at the cut fill the rest in order.
            let mut room = self.max_blocks - sizes.iter().filter(|&&t| t > cut).count();
            for p in &mut pagelets {
                p.1.blocks.retain(|b| {
                    if b.tokens > cut {
                        true
                    } else if b.tokens == cut && room > 0 {
                        room -= 1;
                        true
                    } else {
                        false
                    }
                });
            }
        }
        let page_tokens = self.tokens.len() as u32;
        let mut exact = Xxh3::new();
        update_with_tokens(&mut exact, self.tokens.iter().copied());
        self.keep_lists();
        PageAnalysis {
            digest: PageDigest {
                pagelets: pagelets.into_iter().map(|p| p.1).collect(),
                page_exact: exact.digest(),
                page_tokens,
            },
            links: std::mem::take(&mut self.links),
            bytes_analyzed: 0,
            truncated: self.truncated,
            canonical_href: None,
            shortlink_href: None,
            base_href: None,
        }
    }
}

/// Feeds token hashes (little-endian bytes, in order) to `hasher` through a stack buffer: xxh3's
/// streaming digest does not depend on how its input is cut, and one update per 64 tokens costs
/// far less than one per token.
fn update_with_tokens(hasher: &mut Xxh3, tokens: impl Iterator<Item = u64>) {
    let mut buf = [0u8; 512];
    let mut used = 0;
    for t in tokens {
        buf[used..used + 8].copy_from_slice(&t.to_le_bytes());
        used += 8;
        if used == buf.len() {
            hasher.update(&buf);
            used = 0;
        }
    }
    hasher.update(&buf[..used]);
}

/// The xxh3 of token hashes (little-endian bytes, in order), as [`update_with_tokens`] into a
/// fresh [`Xxh3`] would give it: a short sequence (most text blocks) is hashed in one call from
/// the stack buffer, without setting up the streaming state (a few hundred bytes to initialise
/// and copy per block); xxh3's one-shot and streaming digests of the same bytes are equal.
fn hash_tokens(tokens: impl Iterator<Item = u64>) -> u64 {
    let mut buf = [0u8; 512];
    let mut used = 0;
    let mut tokens = tokens.peekable();
    while let Some(t) = tokens.next() {
        buf[used..used + 8].copy_from_slice(&t.to_le_bytes());
        used += 8;
        if used == buf.len() && tokens.peek().is_some() {
            let mut hasher = Xxh3::new();
            hasher.update(&buf);
            update_with_tokens(&mut hasher, tokens);
            return hasher.digest();
        }
    }
    xxh3_64(&buf[..used])
}

/// Keeps the two smallest distinct feature hashes (the super-shingle identity).
#[inline]
fn min_two(min: &mut [u64; 2], h: u64) {
    if h < min[0] {
        *min = [h, min[0]];
    } else if h < min[1] && h != min[0] {
        min[1] = h;
    }
}

/// Fits a simhash vector into `i16`s, scaling all 64 sums by the same factor when one would
/// overflow (only pagelets of more than ~16 000 tokens; signs are kept, so the pagelet's own
/// simhash is unchanged).
fn quantize(v: &[i32; 64]) -> Vec<i16> {
    let max = v.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
    if max <= i16::MAX as u32 {
        // Every sum fits (all but huge pagelets): the scaled path below would divide by 1, keep
        // every sign and clamp nothing, so the sums are copied as they are, without 64 divisions.
        return v.iter().map(|&x| x as i16).collect();
    }
    let scale = (max / i16::MAX as u32) + 1;
    v.iter()
        .map(|&x| {
            let q = x / scale as i32;
            // Keep a nonzero sign so the pagelet's own contribution never vanishes.
            let q = if q == 0 && x != 0 { x.signum() } else { q };
            q.clamp(i16::MIN as i32 + 1, i16::MAX as i32) as i16
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::simhash::for_each_feature;
    use proptest::prelude::*;

    fn page(html: &str) -> PageAnalysis {
        analyze(html.as_bytes(), &ContentConfig::default())
    }

    fn exact(html: &str) -> u64 {
        page(html).digest.page_exact
    }

    #[test]
    fn navigation_and_article_are_separate_pagelets() {
        let p = page(
            "<body><nav><ul><li><a href=/a>Home</a></li><li><a href=/b>News</a></li>\
             <li><a href=/c>Sports</a></li><li><a href=/d>Weather</a></li></ul></nav>\
             <article><h1>Title here</h1><p>Some long article text goes here today.</p></article></body>",
        );
        let ps = &p.digest.pagelets;
        assert_eq!(ps.len(), 2, "{ps:?}");
        assert_eq!((ps[0].tokens, ps[0].link_tokens), (4, 4));
        assert_eq!((ps[1].tokens, ps[1].link_tokens), (9, 0));
        assert_eq!(p.links, vec!["/a", "/b", "/c", "/d"]);
    }

    #[test]
    fn compact_page_is_one_pagelet_and_loose_text_is_kept() {
        let p = page("<body><p>one <a href=1>two</a></p><p>three four</p></body>");
        assert_eq!(p.digest.pagelets.len(), 1);
        assert_eq!(p.digest.pagelets[0].tokens, 4);
        let p = page(
            "<body>loose words<div><a href=1>a</a><a href=2>b</a><a href=3>c</a></div>more</body>",
        );
        let tokens: Vec<u32> = p.digest.pagelets.iter().map(|p| p.tokens).collect();
        assert_eq!(tokens, vec![3, 3], "the div and the body's loose text");
    }

    #[test]
    fn implied_end_tags_split_paragraphs() {
        // Without closing the first <p> at the second, both would be one pagelet.
        let p = page(
            "<body><p>x <a href=1>a</a> <a href=2>b</a> <a href=3>c</a><p>plain text here</body>",
        );
        assert_eq!(p.digest.pagelets.len(), 2, "{:?}", p.digest.pagelets);
        assert_eq!(p.digest.pagelets[1].link_tokens, 0);
        let p = page(
            "<ul><li><a href=1>a</a><a href=2>b</a><a href=3>c</a><li>item without links</ul>",
        );
        assert_eq!(p.digest.pagelets.len(), 2);
    }

    #[test]
    fn unclosed_head_does_not_hide_the_body() {
        let p = page("<html><head><title>T</title><meta charset=utf-8><div>Body text words</div>");
        assert_eq!(p.digest.page_tokens, 3);
        assert_eq!(
            exact("<html><head><title>Other</title></head><body><div>Body text words"),
            p.digest.page_exact
        );
    }

    #[test]
    fn text_normalization_in_html() {
        assert_eq!(
            exact("<p>caf&eacute; &amp; bar</p>"),
            exact("<p>Café &amp;amp BAR</p>".replace("&amp;amp", "&").as_str())
        );
        assert_eq!(
            exact("<p>hello</p><script>var secret = 1</script><style>p{}</style>"),
            exact("<p>hello</p>")
        );
        assert_eq!(exact("<p>foo<b>bar</b></p>"), exact("<p>foobar</p>"));
        assert_ne!(exact("<p>foo</p><p>bar</p>"), exact("<p>foobar</p>"));
        assert_eq!(exact("<p>foo<br>bar</p>"), exact("<p>foo bar</p>"));
    }

    #[test]
    fn textless_pages_hash_their_bytes() {
        assert_ne!(
            exact("<div id=app></div><script>render(1)</script>"),
            exact("<div id=app></div><script>render(2)</script>")
        );
        assert_eq!(exact("<img src=a>"), exact("<img src=a>"));
    }

    #[test]
    fn meta_charset_is_honoured() {
        let mut latin1 = b"<html><head><meta charset=\"windows-1252\"></head><body><p>caf".to_vec();
        latin1.push(0xE9);
        latin1.extend_from_slice(b" au lait</p></body></html>");
        assert_eq!(
            analyze(&latin1, &ContentConfig::default())
                .digest
                .page_exact,
            exact("<p>café au lait</p>")
        );
    }

    #[test]
    fn a_meta_charset_after_invalid_utf8_decodes_the_rest_from_the_right_byte() {
        // Invalid bytes before the meta tag become U+FFFD (a different length in the text than
        // in the bytes): the rest must still be decoded from just after the tag.
        let mut page = b"<title>\xFF\xC3</title><meta http-equiv=Content-Type \
            content=\"text/html; charset=iso-8859-1\"><p>caf"
            .to_vec();
        page.push(0xE9);
        page.extend_from_slice(b"</p>");
        assert_eq!(
            analyze(&page, &ContentConfig::default()).digest.page_exact,
            exact("<p>caf\u{e9}</p>")
        );
    }

    #[test]
    fn a_byte_order_mark_is_not_text_and_decides_the_encoding() {
        let page = "\u{FEFF}<head><meta charset=windows-1252>\
                    <link rel=canonical href=/c></head><p>caf\u{e9}</p>";
        let p = analyze(page.as_bytes(), &ContentConfig::default());
        // Not text before the head (which would start the body and hide the canonical link).
        assert_eq!(p.canonical_href.as_deref(), Some("/c"));
        // UTF-8, not the meta tag's windows-1252.
        assert_eq!(p.digest.page_exact, exact("<p>caf\u{e9}</p>"));
    }

    #[test]
    fn the_open_element_counts_hold_the_open_names_only() {
        // A thousand distinct tags, each closed, then two left open and stray end tags: the
        // counts that let a stray end tag skip the search hold the two open names only.
        let mut page = String::new();
        for i in 0..1000 {
            page.push_str(&format!("<x{i}>t</x{i}>"));
        }
        page.push_str("<div><span>text</b></i></x7>");
        let config = ContentConfig::default();
        let mut driver = Driver::new(State::new(&config, page.len()));
        let outcome = Scanner::new(PARSER_MEMORY).scan(&page, &mut driver);
        assert_eq!(outcome, Outcome::Finished);
        let mut open: Vec<(&str, u32)> = driver
            .open_by_name
            .iter()
            .map(|(name, n)| (name.as_str(), *n))
            .collect();
        open.sort_unstable();
        assert_eq!(open, [("div", 1), ("span", 1)]);
        assert_eq!(driver.open.len(), 2);
        // Closing the outer one closes both and empties the counts.
        driver.end_tag("div");
        assert!(driver.open_by_name.is_empty() && driver.open.is_empty());
    }

    #[test]
    fn an_end_tag_closes_the_nearest_open_element_of_its_name_and_those_opened_after_it() {
        let link_tokens = |html: &str| -> u32 {
            page(html)
                .digest
                .pagelets
                .iter()
                .map(|p| p.link_tokens)
                .sum()
        };
        // `</a>` closes the `<b>` opened inside it: "two" is not link text.
        assert_eq!(link_tokens("<div><a href=/x><b>one</a>two</b></div>"), 1);
        // An end tag with no open element of its name does nothing.
        assert_eq!(
            link_tokens("<div><a href=/x>one </span>two</a> three</div>"),
            2
        );
    }

    /// A thread reuses its working lists from page to page: what one page left in them (tokens,
    /// half a word, open frames, link text) must never reach the next page's analysis.
    #[test]
    fn pages_analysed_one_after_another_on_a_thread_are_analysed_as_if_alone() {
        let article = "<body><nav><a href=/a>Home</a><a href=/b>News</a><a href=/c>More</a></nav>\
             <article><h1>Title 2024</h1><p>Some long article text goes here today.</p>\
             <ul><li>one item<li>two items</ul></article></body>";
        // Ends inside an open link, an unclosed list and half a word.
        let unfinished = format!(
            "<body><div><ul><li><a href=/x>{} words and more</a><li><a href=/y>tail<a href=/z>wor",
            "many ".repeat(5000)
        );
        let alone = |html: String| {
            std::thread::spawn(move || page(&html))
                .join()
                .expect("thread")
        };
        let (article_alone, unfinished_alone) = (alone(article.into()), alone(unfinished.clone()));
        for _ in 0..2 {
            assert_eq!(page(&unfinished), unfinished_alone);
            assert_eq!(page(article), article_alone);
        }
        assert_eq!(page(""), alone(String::new()));
    }

    #[test]
    fn bounds_hold_on_huge_and_deep_pages() {
        let config = ContentConfig {
            max_bytes: 1 << 20,
            ..ContentConfig::default()
        };
        let huge = "<p>word </p>".repeat(300_000);
        let p = analyze(huge.as_bytes(), &config);
        assert!(p.truncated);
        assert_eq!(p.bytes_analyzed, 1 << 20);
        let deep = format!(
            "{}text{}",
            "<div>".repeat(100_000),
            "</div>".repeat(100_000)
        );
        let p = analyze(deep.as_bytes(), &config);
        assert_eq!(p.digest.page_tokens, 1);
        let many: String = (0..500)
            .map(|i| format!("<div><a href=1>a</a><a href=2>b</a><a href=3>c</a> text{i}</div>"))
            .collect();
        let p = analyze(many.as_bytes(), &config);
        assert_eq!(p.digest.pagelets.len(), config.max_pagelets);
        assert!(p.truncated);
    }

    #[test]
    fn blocks_split_a_link_free_region_and_sum_to_their_pagelet() {
        let p = page(
            "<body><nav><a href=/a>A</a><a href=/b>B</a><a href=/c>C</a></nav>\
             <div><aside><h3>About us</h3><p>We write about boats.</p><ul><li>Trending: sails</li>\
             <li>Trending: 12 knots</li></ul></aside><main><p>First article paragraph here.</p>\
             <p>Second one, 2019 words.</p></main></div></body>",
        );
        let ps = &p.digest.pagelets;
        assert_eq!(ps.len(), 2, "{ps:?}");
        let body = &ps[1];
        let sizes: Vec<u32> = body.blocks.iter().map(|b| b.tokens).collect();
        assert_eq!(sizes, vec![2, 4, 2, 3, 4, 4]);
        // The pagelet's features are those of its whole text; here all of it is in blocks, so
        // the blocks' vectors (words and the shingles starting in them) sum to the pagelet's.
        let text = "About us We write about boats Trending sails Trending 12 knots \
                    First article paragraph here Second one 2019 words";
        let toks = crate::content::tokens::tokenize(text);
        let mut whole = SimhashVector::default();
        for_each_feature(&toks, |h| whole.add_feature(h));
        let pagelet: Vec<i32> = body.vector.iter().map(|&x| i32::from(x)).collect();
        assert_eq!(whole.0.to_vec(), pagelet);
        let mut sum = SimhashVector::default();
        for b in &body.blocks {
            let v: [i32; 64] = std::array::from_fn(|i| i32::from(b.vector[i]));
            sum.add(&v);
        }
        assert_eq!(sum.0, whole.0);
        // A block that is its whole pagelet is not recorded again.
        assert!(ps[0].blocks.is_empty());
    }

    #[test]
    fn identities_mask_numbers_but_vectors_keep_them() {
        let footer = |stamp: &str| {
            page(&format!(
                "<body><nav><a href=/a>A</a><a href=/b>B</a><a href=/c>C</a></nav>\
                 <footer><p>Copyright Example</p><p>Page generated {stamp} in 0.03 s</p></footer>"
            ))
        };
        let (a, b) = (footer("2019-03-22 18:40:55"), footer("2024-11-02 07:01:13"));
        let (fa, fb) = (&a.digest.pagelets[1], &b.digest.pagelets[1]);
        assert_eq!(fa.identity, fb.identity);
        assert_eq!(fa.blocks[1].identity, fb.blocks[1].identity);
        assert_ne!(fa.vector, fb.vector);
        assert_ne!(fa.exact, fb.exact);
        // Words with digits inside are words, not numbers.
        let (c, d) = (
            page("<p>model x100 here</p>"),
            page("<p>model x200 here</p>"),
        );
        assert_ne!(c.digest.pagelets[0].identity, d.digest.pagelets[0].identity);
    }

    #[test]
    fn blocks_per_page_are_bounded() {
        let config = ContentConfig {
            max_blocks: 10,
            ..ContentConfig::default()
        };
        let items: String = (0..50)
            .map(|i| format!("<p>{}</p>", "word ".repeat(1 + i % 7)))
            .collect();
        let p = analyze(format!("<div>{items}</div>").as_bytes(), &config);
        let blocks: Vec<u32> = p
            .digest
            .pagelets
            .iter()
            .flat_map(|p| p.blocks.iter().map(|b| b.tokens))
            .collect();
        assert_eq!(blocks.len(), 10);
        // The largest are kept: seven of 7 tokens, then the first three of 6.
        assert_eq!(blocks.iter().filter(|&&t| t == 7).count(), 7, "{blocks:?}");
        assert!(blocks.iter().all(|&t| t >= 6), "{blocks:?}");
    }

    /// The canonical `html` declares when served from `https://site.test/dir/page?x=1`.
    fn canonical(html: &str) -> Option<String> {
        let base = url::Url::parse("https://site.test/dir/page?x=1").expect("valid");
        page(html).declared_canonical(&base).map(String::from)
    }

    #[test]
    fn canonical_link_attribute_case_and_rel_tokens() {
        let want = Some("https://site.test/a".to_owned());
        for html in [
            r#"<head><link rel="canonical" href="/a"></head>"#,
            r#"<HEAD><LINK REL="Canonical" HREF="/a"></HEAD>"#,
            r#"<head><link rel=" amphtml	CANONICAL
 " href="/a"></head>"#,
            r#"<link href='https://site.test/a' rel=canonical>"#,
        ] {
            assert_eq!(canonical(html), want, "{html}");
        }
        for html in [
            r#"<head><link rel="alternate" href="/a"></head>"#,
            r#"<head><link rel="canonical-url" href="/a"></head>"#,
            r#"<head><link rel="nocanonical" href="/a"></head>"#,
            r#"<head><link href="/a"></head>"#,
            r#"<head><meta property="og:url" content="https://site.test/a"></head>"#,
        ] {
            assert_eq!(canonical(html), None, "{html}");
        }
        // Entities in the attribute are decoded; surrounding whitespace is trimmed.
        assert_eq!(
            canonical(r#"<head><link rel=canonical href="  /a?b=1&amp;c=2 "></head>"#),
            Some("https://site.test/a?b=1&c=2".to_owned())
        );
    }

    #[test]
    fn canonical_resolves_against_the_page_and_its_base() {
        assert_eq!(
            canonical(r#"<head><link rel=canonical href="other"></head>"#),
            Some("https://site.test/dir/other".to_owned())
        );
        assert_eq!(
            canonical(r#"<head><link rel=canonical href="?x=2"></head>"#),
            Some("https://site.test/dir/page?x=2".to_owned())
        );
        assert_eq!(
            canonical(r#"<head><link rel=canonical href="//site.test/p"></head>"#),
            Some("https://site.test/p".to_owned())
        );
        // The base (itself relative to the page) applies before or after the link; only the
        // first base with an href counts.
        let want = Some("https://site.test/base/x".to_owned());
        assert_eq!(
            canonical(r#"<head><base href="/base/"><link rel=canonical href="x"></head>"#),
            want
        );
        assert_eq!(
            canonical(r#"<head><link rel=canonical href="x"><base href="/base/"></head>"#),
            want
        );
        assert_eq!(
            canonical(
                r#"<head><base target=_top><base href="/base/"><base href="/no/"><link rel=canonical href="x">"#
            ),
            want
        );
        // A base that is not a web URL is ignored; a canonical that is not one is no canonical.
        assert_eq!(
            canonical(r#"<head><base href="javascript:void(0)"><link rel=canonical href="x">"#),
            Some("https://site.test/dir/x".to_owned())
        );
        for bad in [
            "javascript:alert(1)",
            "mailto:a@site.test",
            "data:text/html,x",
            "ftp://site.test/a",
            "http://",
        ] {
            let html = format!(r#"<head><link rel=canonical href="{bad}"></head>"#);
            assert_eq!(canonical(&html), None, "{bad}");
        }
    }

    #[test]
    fn only_the_first_canonical_link_decides() {
        assert_eq!(
            canonical(r#"<head><link rel=canonical href="/a"><link rel=canonical href="/b">"#),
            Some("https://site.test/a".to_owned())
        );
        // A first link with a missing, empty or oversized href: no canonical, the second is not
        // tried.
        let long = format!("/{}", "x".repeat(MAX_CANONICAL_BYTES));
        for first in [
            r#"<link rel=canonical>"#.to_owned(),
            r#"<link rel=canonical href="">"#.to_owned(),
            r#"<link rel=canonical href="   ">"#.to_owned(),
            format!(r#"<link rel=canonical href="{long}">"#),
        ] {
            let html = format!(r#"<head>{first}<link rel=canonical href="/b"></head>"#);
            assert_eq!(canonical(&html), None, "{first}");
        }
        // A resolved URL over the bound is refused too.
        let near = "y".repeat(MAX_CANONICAL_BYTES - 10);
        let html = format!(r#"<head><base href="/{near}/"><link rel=canonical href="{near}">"#);
        assert_eq!(canonical(&html), None);
    }

    #[test]
    fn canonical_links_count_in_the_head_only() {
        let want = Some("https://site.test/c".to_owned());
        // Before the body: explicit head, implied head, after </head>, after title, scripts and
        // styles (whose text is not markup), in an unclosed head.
        for html in [
            r#"<!doctype html><html><head><title>T</title><link rel=canonical href=/c></head><body>x"#,
            r#"<html><meta charset=utf-8>
  <link rel=canonical href=/c><p>text"#,
            r#"<html><head></head> <link rel=canonical href=/c><body>x"#,
            r#"<head><script>document.write("<div>")</script><style>p{}</style><link rel=canonical href=/c>"#,
            r#"<html><head><noscript><p>no</p></noscript><link rel=canonical href=/c><div>body"#,
        ] {
            assert_eq!(canonical(html), want, "{html}");
        }
        // Once the body started (a <body> tag, body content, non-blank text), or inside a
        // <template>: ignored.
        for html in [
            r#"<head></head><body><link rel=canonical href=/c>"#,
            r#"<html><div>x</div><link rel=canonical href=/c>"#,
            r#"<html><head><title>T</title><div>x<link rel=canonical href=/c>"#,
            r#"<html>Hello <link rel=canonical href=/c>"#,
            r#"<head><template><link rel=canonical href=/c></template></head>"#,
            r#"<p>Article <a href=/a>a</a></p><link rel=canonical href=/c>"#,
        ] {
            assert_eq!(canonical(html), None, "{html}");
        }
        // A template closes: the head goes on.
        assert_eq!(
            canonical(r#"<head><template><p>t</p></template><link rel=canonical href=/c>"#),
            want
        );
    }

    #[test]
    fn the_canonical_link_does_not_change_the_content() {
        let with = page(
            r#"<html><head><link rel=canonical href=/c><base href=/b/></head><body><p>Words here</p>"#,
        );
        let without = page(r#"<html><head></head><body><p>Words here</p>"#);
        assert_eq!(with.digest, without.digest);
        assert_eq!(with.canonical_href.as_deref(), Some("/c"));
        assert_eq!(with.base_href.as_deref(), Some("/b/"));
        assert_eq!(without.canonical_href, None);
    }

    /// The shortlink `html` declares when served from `https://site.test/dir/page?x=1`.
    fn shortlink(html: &str) -> Option<String> {
        let base = url::Url::parse("https://site.test/dir/page?x=1").expect("valid");
        page(html).declared_shortlink(&base).map(String::from)
    }

    #[test]
    fn shortlinks_are_read_like_canonicals() {
        // Drupal's and WordPress's own markup.
        assert_eq!(
            shortlink(
                r#"<head><link rel="canonical" href="/articles/some-title"><link rel="shortlink" href="/node/123"></head>"#
            ),
            Some("https://site.test/node/123".to_owned())
        );
        assert_eq!(
            shortlink(r#"<head><link rel='shortlink' href='https://site.test/?p=123' /></head>"#),
            Some("https://site.test/?p=123".to_owned())
        );
        // Token match on `rel`, any case; one link may declare both.
        let both = page(r#"<head><link rel="Canonical SHORTLINK" href="/n/1"></head>"#);
        let at = url::Url::parse("https://site.test/x").expect("valid");
        assert_eq!(
            both.declared_canonical(&at).map(String::from),
            both.declared_shortlink(&at).map(String::from)
        );
        for html in [
            r#"<head><link rel="shortlinks" href="/n/1"></head>"#,
            r#"<head><link rel="short link" href="/n/1"></head>"#,
            r#"<head><link rel="canonical" href="/n/1"></head>"#,
            r#"<head><link rel="shortlink"></head>"#,
        ] {
            assert_eq!(shortlink(html), None, "{html}");
        }
        // Resolved against the page and its base, entities decoded.
        assert_eq!(
            shortlink(r#"<head><base href="/base/"><link rel=shortlink href="?p=1&amp;x=2">"#),
            Some("https://site.test/base/?p=1&x=2".to_owned())
        );
        // Only the first decides, even when it is unusable; a canonical before it does not
        // count as its first.
        assert_eq!(
            shortlink(r#"<head><link rel=shortlink href="/a"><link rel=shortlink href="/b">"#),
            Some("https://site.test/a".to_owned())
        );
        assert_eq!(
            shortlink(r#"<head><link rel=shortlink href=""><link rel=shortlink href="/b">"#),
            None
        );
        assert_eq!(
            shortlink(r#"<head><link rel=canonical href="/c"><link rel=shortlink href="/b">"#),
            Some("https://site.test/b".to_owned())
        );
        // Length caps and schemes as for canonicals.
        let long = format!("/{}", "x".repeat(MAX_CANONICAL_BYTES));
        assert_eq!(
            shortlink(&format!(r#"<head><link rel=shortlink href="{long}">"#)),
            None
        );
        assert_eq!(
            shortlink(r#"<head><link rel=shortlink href="javascript:alert(1)">"#),
            None
        );
    }

    #[test]
    fn shortlinks_count_in_the_head_only() {
        for html in [
            r#"<head></head><body><link rel=shortlink href=/n/1>"#,
            r#"<html><div>x</div><link rel=shortlink href=/n/1>"#,
            r#"<head><template><link rel=shortlink href=/n/1></template></head>"#,
        ] {
            assert_eq!(shortlink(html), None, "{html}");
        }
        assert_eq!(
            shortlink(
                r#"<html><head><title>T</title></head> <link rel=shortlink href=/n/1><body>x"#
            ),
            Some("https://site.test/n/1".to_owned())
        );
        let with = page(r#"<head><link rel=shortlink href=/n/1></head><body><p>Words here</p>"#);
        let without = page(r#"<head></head><body><p>Words here</p>"#);
        assert_eq!(with.digest, without.digest);
        assert_eq!(without.shortlink_href, None);
    }

    /// Block identities hashed in one call are the streaming digests they were before, at every
    /// length around the stack buffer's 64 tokens.
    #[test]
    fn one_shot_token_hashes_equal_the_streaming_digest() {
        for len in (0..200).chain([511, 512, 513, 1_000]) {
            let tokens: Vec<u64> = (0..len as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7))
                .collect();
            let mut streaming = Xxh3::new();
            update_with_tokens(&mut streaming, tokens.iter().copied());
            assert_eq!(
                hash_tokens(tokens.iter().copied()),
                streaming.digest(),
                "{len} tokens"
            );
        }
    }

    #[test]
    fn quantize_keeps_signs() {
        let mut v = [0i32; 64];
        v[0] = 100_000;
        v[1] = -3;
        v[2] = 0;
        let q = quantize(&v);
        assert!(q[0] > 0 && q[1] < 0 && q[2] == 0);
        let small: [i32; 64] = std::array::from_fn(|i| i as i32 - 32);
        assert_eq!(
            quantize(&small),
            small.iter().map(|&x| x as i16).collect::<Vec<_>>()
        );
    }

    proptest! {
        // UNDUST_PROPTEST_CASES raises the case count for longer runs (see QUALITY.md).
        #![proptest_config(ProptestConfig {
            cases: std::env::var("UNDUST_PROPTEST_CASES")
                .ok()
                .and_then(|cases| cases.parse().ok())
                .unwrap_or(64),
            ..ProptestConfig::default()
        })]
        #[test]
        fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let p = analyze(&bytes, &ContentConfig::default());
            prop_assert!(p.digest.pagelets.len() <= 64);
            let base = url::Url::parse("http://h.test/p").expect("valid");
            if let Some(c) = p.declared_canonical(&base) {
                prop_assert!(matches!(c.scheme(), "http" | "https"));
            }
        }

        #[test]
        fn never_panics_on_tag_soup(parts in proptest::collection::vec(prop_oneof![
            Just("<p>"), Just("</p>"), Just("<div>"), Just("</div>"), Just("<a href=x>"), Just("</a>"),
            Just("<li>"), Just("<td>"), Just("<tr>"), Just("<table>"), Just("</table>"), Just("<head>"),
            Just("<script>"), Just("</script>"), Just("<svg>"), Just("<!--"), Just("-->"), Just("&amp"),
            Just("&#x110000;"), Just("text "), Just("東京"), Just("<b>"), Just("</b>"), Just("<body>"),
            Just("<select>"), Just("<option>"), Just("<br/>"), Just("<"), Just(">"), Just("\u{0}"),
            Just("<link rel=canonical href=/c>"), Just("<base href=x/>"), Just("<template>"),
            Just("</template>"), Just("</head>"),
        ], 0..200)) {
            let html: String = parts.concat();
            let p = analyze(html.as_bytes(), &ContentConfig::default());
            let base = url::Url::parse("http://h.test/p").expect("valid");
            if let Some(c) = p.declared_canonical(&base) {
                prop_assert!(c.as_str().len() <= MAX_CANONICAL_BYTES);
            }
            let total: u32 = p.digest.pagelets.iter().map(|p| p.tokens).sum();
            prop_assert!(total <= p.digest.page_tokens);
        }

        /// The `memchr` shortcut decodes exactly as `html_escape` does, with and without `&`.
        #[test]
        fn entity_decoding_is_html_escapes_own(parts in proptest::collection::vec(prop_oneof![
            Just("&amp;"), Just("&amp"), Just("&"), Just("&&"), Just("&#"), Just("&#x"), Just("&#39;"),
            Just("&#x41;"), Just("&nbsp;"), Just("&notanentity;"), Just("&lt;b&gt;"), Just(";"),
            Just("#"), Just("x"), Just("word "), Just("東京"), Just("\u{0}"), Just("é"),
        ], 0..40)) {
            let text: String = parts.concat();
            prop_assert_eq!(decode_entities(&text), html_escape::decode_html_entities(&text));
        }
    }
}
