//! Host summaries: what mirror detection knows about one origin, fed one observation at a time.
//!
//! A [`HostSummary`] holds, for one origin (`scheme://host[:port]`), the paths of its URLs (what a
//! crawler discovered, fetched or not), the server's IP address, and for sampled fetched pages
//! their content marks and out-links. [`HostSummaries`] routes observations to the right summary
//! and is what [`super::detect`] reads. Everything is bounded: paths, pages, marks per page and
//! links per page each have a cap ([`SummaryLimits`]); observations past a cap are counted, not
//! stored, so a summary's memory does not grow with the crawl.
//!
//! The origin (not the host) is the unit because `http://x.org` and `https://x.org` are two
//! servers that may or may not serve the same thing: mirror detection decides, not a static step.

use std::net::IpAddr;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

use crate::content::{fingerprint_host_linked, ContentConfig, Fingerprint, PageAnalysis, Strength};

/// What one fetched page's content is, for comparing pages across hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContentMark {
    /// Exact hash of the content (template-stripped content, or a payload digest).
    pub exact: u64,
    /// Simhash of the template-stripped content, when near-duplicates count as equal; `None` for
    /// payload digests, which only compare exactly.
    pub simhash: Option<u64>,
    /// Whether the content is evidence on its own: enough text (a strong fingerprint), or a body
    /// large enough that an equal digest is not a coincidence of tiny or empty bodies.
    pub strong: bool,
}

/// How two content marks compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// Same content, and enough of it to count as evidence.
    Match,
    /// Same content, too little of it to count (tiny pages, empty bodies).
    WeakMatch,
    /// Different content.
    Mismatch,
}

/// Smallest body a payload digest counts as evidence for: equal digests of tiny bodies (an empty
/// page, a one-pixel image, a "not found" stub) are everywhere and prove nothing.
pub const MIN_DIGEST_BODY_BYTES: u64 = 256;

impl ContentMark {
    /// The mark of a template-stripped fingerprint (see [`crate::content::fingerprint`]).
    pub fn from_fingerprint(print: &Fingerprint) -> Self {
        let strong = print.strength == Strength::Strong;
        ContentMark {
            exact: print.exact,
            simhash: strong.then_some(print.simhash),
            strong,
        }
    }

    /// The mark of a payload digest (`sha1:…` of a WARC record or crawl log) of a body of
    /// `length` bytes.
    pub fn from_digest(digest: &str, length: u64) -> Self {
        let digest = digest.trim();
        let digest = digest.strip_prefix("sha1:").unwrap_or(digest);
        ContentMark {
            exact: xxh3_64(digest.as_bytes()),
            simhash: None,
            strong: length >= MIN_DIGEST_BODY_BYTES,
        }
    }

    /// Compares two marks: exact equality, or simhashes within `max_distance` bits when both
    /// carry one.
    pub fn compare(&self, other: &ContentMark, max_distance: u32) -> Comparison {
        let same = self.exact == other.exact
            || matches!((self.simhash, other.simhash),
                (Some(a), Some(b)) if (a ^ b).count_ones() <= max_distance);
        match (same, self.strong && other.strong) {
            (true, true) => Comparison::Match,
            (true, false) => Comparison::WeakMatch,
            (false, _) => Comparison::Mismatch,
        }
    }
}

/// Bytes all summaries together hold at most by default ([`SummaryLimits::max_held_bytes`]):
/// some three million pages of short URLs, each with its path and one content mark.
pub const DEFAULT_MAX_HELD_BYTES: u64 = 512 * 1024 * 1024;

// What the global bound counts per item beside its text: the headers, the allocator's rounding
// and the hash tables' slots at their usual load. Calibrated on `undust mirrors --index` over
// 3,000,000 captures of 300,000 origins: the resident memory grew by 0.9–1.0 bytes per byte
// counted between bounds of 64 and 512 MiB (BENCHMARKS.md, "Mirror summaries within a bound").
/// Bytes a summary is taken to hold beside its strings: the struct, its empty tables and its
/// entries in the summaries' two indexes.
const ORIGIN_OVERHEAD_BYTES: u64 = 640;
/// Bytes a kept path is taken to hold beside its text: the string and its hash-set slot.
const PATH_OVERHEAD_BYTES: u64 = 96;
/// Bytes a kept page is taken to hold beside its path, marks and links: the key string, the
/// map slot and the vectors' headers and allocations.
const PAGE_OVERHEAD_BYTES: u64 = 192;

/// Bounds of the summaries: per summary, and of all of them together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummaryLimits {
    /// Most distinct paths kept per origin (discovered URLs, fetched or not).
    pub max_paths: usize,
    /// Most fetched pages kept per origin.
    pub max_pages: usize,
    /// Most content marks kept per page (captures at different times may differ).
    pub max_marks_per_page: usize,
    /// Most out-links kept per page.
    pub max_links_per_page: usize,
    /// Most bytes held by all the summaries together, by the estimate of [`HostSummaries`]:
    /// the per-origin bounds alone let memory grow with the number of origins (a web archive's
    /// index names millions). Past it, new origins, paths and pages are left out and counted
    /// ([`HostSummaries::urls_left_out`]); what is already held stays.
    pub max_held_bytes: u64,
}

impl Default for SummaryLimits {
    fn default() -> Self {
        SummaryLimits {
            max_paths: 20_000,
            max_pages: 2_000,
            max_marks_per_page: 4,
            max_links_per_page: 200,
            max_held_bytes: DEFAULT_MAX_HELD_BYTES,
        }
    }
}

/// One sampled fetched page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSummary {
    /// Content marks of the captures of this path (usually one).
    pub marks: Vec<ContentMark>,
    /// Out-links, hashed: links to the page's own origin are hashed as their path (relative),
    /// so two mirrors' pages linking within themselves have equal link sets (the *conn*
    /// algorithm, section 3.3 of the paper).
    pub links: Vec<u64>,
}

/// One page's out-links in the form a summary keeps them: hashed as [`PageSummary::links`]
/// describes, and the hosts of the links that leave the page's origin, with how many links go
/// to each (the host graph's edges).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// Hashed links, sorted, without repeats.
    pub hashed: Vec<u64>,
    /// Hosts of links to other origins, with their number of links.
    pub hosts: Vec<(String, u32)>,
}

impl PageLinks {
    /// The first `max` of `links` (absolute, or relative to `base`: the page's URL, or the
    /// `<base href>` it declares) of the page at `url`; links that do not resolve to an http(s)
    /// URL are left out.
    ///
    /// A link to the page's own origin written so that resolving it provably changes nothing but
    /// prepends the origin ([`own_origin_path`]: most links of most pages) is hashed as written,
    /// without building its URL; every other link is resolved with [`Url::join`]. Both give the
    /// same hashes and hosts.
    pub fn of<'a>(
        url: &Url,
        base: &Url,
        links: impl IntoIterator<Item = &'a str>,
        max: usize,
    ) -> Self {
        let origin = origin_of(url);
        // Root-relative links resolve against the base's origin: written as is only when that is
        // the page's own.
        let base_is_own_origin = origin.is_some() && same_origin(base, url);
        // Links are written as is only on http(s) pages.
        let web_origin = origin
            .as_deref()
            .filter(|_| matches!(url.scheme(), "http" | "https"));
        let mut hashed = Vec::new();
        let mut hosts: Vec<(String, u32)> = Vec::new();
        for link in links.into_iter().take(max) {
            if let Some(path) =
                web_origin.and_then(|origin| own_origin_path(link, origin, base_is_own_origin))
            {
                hashed.push(xxh3_64(path.as_bytes()));
                continue;
            }
            let Ok(target) = base.join(link) else {
                continue;
            };
            if !matches!(target.scheme(), "http" | "https") {
                continue;
            }
            if origin.is_some() && same_origin(&target, url) {
                hashed.push(xxh3_64(path_and_query(&target).as_bytes()));
            } else {
                hashed.push(xxh3_64(target.as_str().as_bytes()));
                if let Some(host) = target.host_str() {
                    match hosts.iter_mut().find(|(h, _)| h == host) {
                        Some((_, count)) => *count += 1,
                        None => hosts.push((host.to_owned(), 1)),
                    }
                }
            }
        }
        hashed.sort_unstable();
        hashed.dedup();
        PageLinks { hashed, hosts }
    }
}

/// Whether two URLs have the same [`origin_of`] (scheme, host and port as serialized), without
/// writing either origin out.
fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host_str() == b.host_str() && a.port() == b.port()
}

/// [`path_of`] as a slice of the URL's serialization (path, then `?` and the query when there is
/// one), which is how the URL writes them.
fn path_and_query(url: &Url) -> &str {
    &url[url::Position::BeforePath..url::Position::AfterQuery]
}

/// The path and query (the [`path_of`]) that `link` resolves to on the page's own `origin`
/// (`scheme://host[:port]` of an http(s) URL: the caller checks), when that is provable without
/// resolving it: the link is root-relative (`/…`, when `base_is_own_origin`) or starts with the
/// origin and a `/`, and what follows up to any `#` holds only bytes the URL parser keeps as they
/// are (no percent-encoding, no backslash, no tab or newline, no `.` or `..` segment, written or
/// percent-encoded). `None` means only that the link must be resolved. One pass over the link.
fn own_origin_path<'a>(link: &'a str, origin: &str, base_is_own_origin: bool) -> Option<&'a str> {
    let path = if let Some(after_slash) = link.strip_prefix('/') {
        // `//host/…` names another authority.
        (base_is_own_origin && !after_slash.starts_with('/')).then_some(link)?
    } else {
        let rest = link.strip_prefix(origin)?;
        rest.starts_with('/').then_some(rest)?
    };
    let bytes = path.as_bytes();
    let mut end = bytes.len();
    let mut in_query = false;
    // Where the path's current segment starts (after its `/`).
    let mut segment_start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        if byte == b'#' {
            // The fragment is not part of the path and query.
            end = at;
            break;
        }
        if in_query {
            if !KEPT_IN_QUERY[usize::from(byte)] {
                return None;
            }
        } else if byte == b'/' || byte == b'?' {
            // Every byte so far is ASCII: `at` is a character boundary.
            if is_dot_segment(&path[segment_start..at]) {
                return None;
            }
            segment_start = at + 1;
            in_query = byte == b'?';
        } else if !KEPT_IN_PATH[usize::from(byte)] {
            return None;
        }
    }
    if !in_query && is_dot_segment(&path[segment_start..end]) {
        return None;
    }
    Some(&path[..end])
}

/// [`kept_in_query`] of every byte.
const KEPT_IN_QUERY: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = kept_in_query(byte as u8);
        byte += 1;
    }
    table
};
/// [`kept_in_path`] of every byte.
const KEPT_IN_PATH: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = kept_in_path(byte as u8);
        byte += 1;
    }
    table
};

/// A byte the URL parser keeps as it is in the query of an http(s) URL: printable ASCII but the
/// quote, apostrophe, `#`, `<` and `>` (which it percent-encodes).
const fn kept_in_query(byte: u8) -> bool {
    matches!(byte, b'!'..=b'~') && !matches!(byte, b'"' | b'#' | b'\'' | b'<' | b'>')
}

/// A byte the URL parser keeps as it is in the path of an http(s) URL: as in the query, but not
/// the characters it percent-encodes in paths (`?`, `^`, `` ` ``, `{`, `}`), the backslash (a
/// separator in http(s) paths) nor `|` (kept conservatively).
const fn kept_in_path(byte: u8) -> bool {
    kept_in_query(byte) && !matches!(byte, b'?' | b'^' | b'`' | b'{' | b'}' | b'\\' | b'|')
}

/// A path segment the URL parser removes or resolves: `.` or `..`, each dot possibly written
/// `%2e` (either case).
fn is_dot_segment(segment: &str) -> bool {
    let rest = match segment.as_bytes() {
        [b'.', rest @ ..] => rest,
        [b'%', b'2', b'e' | b'E', rest @ ..] => rest,
        _ => return false,
    };
    matches!(rest, [] | [b'.'] | [b'%', b'2', b'e' | b'E'])
}

/// What mirror detection knows about one origin. Serializable, so sidecars of a fleet share
/// the summaries they hold (bounded as they are: by [`SummaryLimits`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostSummary {
    /// `scheme://host[:port]`, as [`origin_of`] writes it.
    pub origin: String,
    /// The host name alone.
    pub host: String,
    /// The server's IP address, when a fetch reported it.
    pub ip: Option<IpAddr>,
    /// Distinct paths (path and query) of the origin's URLs, bounded by
    /// [`SummaryLimits::max_paths`].
    pub paths: FxHashSet<String>,
    /// Sampled fetched pages by path, bounded by [`SummaryLimits::max_pages`].
    pub pages: FxHashMap<String, PageSummary>,
    /// Out-links of the origin's pages by target host (the host graph of section 3.4).
    pub link_hosts: FxHashMap<String, u32>,
    /// URLs observed, counting those past the bounds (the paper's `p`, "documents on the host").
    pub urls_seen: u64,
}

impl HostSummary {
    /// An empty summary of `origin`.
    pub fn new(origin: &str, host: &str) -> Self {
        HostSummary {
            origin: origin.to_owned(),
            host: host.to_owned(),
            ip: None,
            paths: FxHashSet::default(),
            pages: FxHashMap::default(),
            link_hosts: FxHashMap::default(),
            urls_seen: 0,
        }
    }

    /// Number of URLs the paper's size-dependent steps use: the URLs observed.
    pub fn size(&self) -> u64 {
        self.urls_seen.max(self.paths.len() as u64).max(1)
    }
}

pub use crate::canon::rules::mirror::origin_of;

/// The path and query of a URL, as a summary stores it.
pub fn path_of(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    }
}

/// Summaries of many origins, fed incrementally.
///
/// The sidecar calls [`HostSummaries::observe_url`] for every URL it canonicalizes (a host's
/// path set is known before any of its pages is fetched), [`HostSummaries::observe_page`] for
/// every sampled fetched page (with its template-stripped fingerprint and links) and
/// [`HostSummaries::observe_ip`] when a fetch reports the server address; detection then runs on
/// the summaries as they are ([`super::detect`]), as often as relearning wants.
#[derive(Clone, Debug, Default)]
pub struct HostSummaries {
    limits: SummaryLimits,
    index: FxHashMap<String, u32>,
    /// Host name → indices of its origins, so a host's summaries can be dropped at once.
    by_host: FxHashMap<String, Vec<u32>>,
    hosts: Vec<HostSummary>,
    /// Estimated bytes the summaries hold ([`SummaryLimits::max_held_bytes`]).
    held_bytes: u64,
    /// URLs whose origin, path or page was left out because the summaries were full.
    urls_left_out: u64,
}

/// Estimated bytes of a page's summary kept under `path`.
fn page_bytes(path: &str, page: &PageSummary) -> u64 {
    path.len() as u64
        + PAGE_OVERHEAD_BYTES
        + (page.marks.len() * std::mem::size_of::<ContentMark>()) as u64
        + (page.links.len() * std::mem::size_of::<u64>()) as u64
}

/// Estimated bytes of one summary, whole (what [`HostSummaries`] counts as it grows).
fn summary_bytes(h: &HostSummary) -> u64 {
    let paths: u64 = h
        .paths
        .iter()
        .map(|p| p.len() as u64 + PATH_OVERHEAD_BYTES)
        .sum();
    let pages: u64 = h.pages.iter().map(|(p, page)| page_bytes(p, page)).sum();
    let link_hosts: u64 = h
        .link_hosts
        .keys()
        .map(|k| k.len() as u64 + PATH_OVERHEAD_BYTES)
        .sum();
    ORIGIN_OVERHEAD_BYTES + (h.origin.len() + h.host.len()) as u64 + paths + pages + link_hosts
}

impl HostSummaries {
    /// Empty summaries with the given bounds.
    pub fn new(limits: SummaryLimits) -> Self {
        HostSummaries {
            limits,
            ..HostSummaries::default()
        }
    }

    /// The bounds these summaries keep.
    pub fn limits(&self) -> SummaryLimits {
        self.limits
    }

    /// The summaries, in the order their origins were first observed.
    pub fn hosts(&self) -> &[HostSummary] {
        &self.hosts
    }

    /// Number of origins.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// Whether nothing was observed.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// The summary of an origin.
    pub fn get(&self, origin: &str) -> Option<&HostSummary> {
        self.index.get(origin).map(|&i| &self.hosts[i as usize])
    }

    /// Estimated bytes the summaries hold (bounded by [`SummaryLimits::max_held_bytes`], give
    /// or take the last item admitted).
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    /// URLs observed whose origin, path or page the summaries had no room left for.
    pub fn urls_left_out(&self) -> u64 {
        self.urls_left_out
    }

    /// Whether the global bound is reached: nothing new is admitted.
    fn full(&self) -> bool {
        self.held_bytes >= self.limits.max_held_bytes
    }

    /// The summary of `url`'s origin, made when there is room for one (`None` also when the
    /// URL has no origin).
    fn entry(&mut self, url: &Url) -> Option<&mut HostSummary> {
        let origin = origin_of(url)?;
        let i = match self.index.get(&origin) {
            Some(&i) => i as usize,
            None => {
                let host = url.host_str()?;
                if self.full() {
                    return None;
                }
                self.held_bytes += ORIGIN_OVERHEAD_BYTES + (origin.len() + host.len()) as u64;
                self.hosts.push(HostSummary::new(&origin, host));
                let i = self.hosts.len() - 1;
                self.index.insert(origin, i as u32);
                self.by_host
                    .entry(host.to_owned())
                    .or_default()
                    .push(i as u32);
                i
            }
        };
        Some(&mut self.hosts[i])
    }

    /// A discovered URL (fetched or not).
    pub fn observe_url(&mut self, url: &Url) {
        let max_paths = self.limits.max_paths;
        let full = self.full();
        let Some(h) = self.entry(url) else {
            if full && origin_of(url).is_some() {
                self.urls_left_out += 1;
            }
            return;
        };
        h.urls_seen += 1;
        if h.paths.len() >= max_paths {
            return;
        }
        let path = path_of(url);
        if h.paths.contains(&path) {
            return;
        }
        if full {
            self.urls_left_out += 1;
            return;
        }
        let added = path.len() as u64 + PATH_OVERHEAD_BYTES;
        h.paths.insert(path);
        self.held_bytes += added;
    }

    /// The server address an origin's fetch reported.
    pub fn observe_ip(&mut self, url: &Url, ip: IpAddr) {
        if let Some(h) = self.entry(url) {
            h.ip = Some(ip);
        }
    }

    /// A fetched page: its URL (the one fetched), its content mark and its out-links (absolute,
    /// or relative to `url`).
    pub fn observe_page<'a>(
        &mut self,
        url: &Url,
        mark: ContentMark,
        links: impl IntoIterator<Item = &'a str>,
    ) {
        let links = PageLinks::of(url, url, links, self.limits.max_links_per_page);
        self.observe_page_linked(url, mark, &links);
    }

    /// [`HostSummaries::observe_page`] with the page's out-links already in summary form (a
    /// caller that keeps links apart from content marks, as the sidecar does between relearns).
    pub fn observe_page_linked(&mut self, url: &Url, mark: ContentMark, links: &PageLinks) {
        let left_out_before = self.urls_left_out;
        self.observe_url(url);
        let limits = self.limits;
        let full = self.full();
        // No room for the origin: `observe_url` counted the URL.
        let Some(h) = self.entry(url) else {
            return;
        };
        let path = path_of(url);
        let known = h.pages.contains_key(&path);
        if !known && h.pages.len() >= limits.max_pages {
            return;
        }
        if !known && full {
            // A page already kept may still gain a mark (bounded per page); a new one waits
            // for room, as a new path does. One URL is counted once.
            if self.urls_left_out == left_out_before {
                self.urls_left_out += 1;
            }
            return;
        }
        let mut added = 0;
        for (host, count) in &links.hosts {
            match h.link_hosts.get_mut(host) {
                Some(c) => *c += count,
                None => {
                    added += host.len() as u64 + PATH_OVERHEAD_BYTES;
                    h.link_hosts.insert(host.clone(), *count);
                }
            }
        }
        if !known {
            added += path.len() as u64 + PAGE_OVERHEAD_BYTES;
        }
        let page = h.pages.entry(path).or_default();
        if !page.marks.contains(&mark) && page.marks.len() < limits.max_marks_per_page {
            page.marks.push(mark);
            added += std::mem::size_of::<ContentMark>() as u64;
        }
        if page.links.is_empty() {
            page.links = links.hashed.clone();
            added += (page.links.len() * std::mem::size_of::<u64>()) as u64;
        }
        self.held_bytes += added;
    }

    /// The fetched pages of one origin, analysed (offline: a crawl dump's pages grouped by
    /// origin): the origin's template model is learned from all of them, each page is
    /// fingerprinted against it (so a mirror with its own template still matches) and observed
    /// with its links.
    pub fn observe_analysed(&mut self, pages: &[(Url, PageAnalysis)], config: &ContentConfig) {
        let linked: Vec<(String, PageAnalysis)> = pages
            .iter()
            .map(|(url, analysis)| (url.to_string(), analysis.clone()))
            .collect();
        let prints = fingerprint_host_linked(&linked, config).fingerprints;
        for ((url, analysis), print) in pages.iter().zip(prints) {
            self.observe_page(
                url,
                ContentMark::from_fingerprint(&print),
                analysis.links.iter().map(String::as_str),
            );
        }
    }

    /// Adds a ready-made summary (replacing any of the same origin): for callers that build
    /// summaries elsewhere (tests, benchmarks, a store).
    pub fn insert(&mut self, summary: HostSummary) {
        // Ready-made summaries are taken whole (they were bounded where they were made), and
        // counted, so what is observed after them sees the room they take.
        self.held_bytes += summary_bytes(&summary);
        match self.index.get(&summary.origin) {
            Some(&i) => {
                let replaced = std::mem::replace(&mut self.hosts[i as usize], summary);
                self.held_bytes = self.held_bytes.saturating_sub(summary_bytes(&replaced));
            }
            None => {
                let i = self.hosts.len() as u32;
                self.index.insert(summary.origin.clone(), i);
                self.by_host
                    .entry(summary.host.clone())
                    .or_default()
                    .push(i);
                self.hosts.push(summary);
            }
        }
    }

    /// Whether any origin of `host` has a summary.
    pub fn has_host(&self, host: &str) -> bool {
        self.by_host.contains_key(host)
    }

    /// Forgets every origin of `host` (a long-running caller drops a host it no longer
    /// samples, so memory stays bounded by the hosts it samples). Summaries of other hosts may
    /// change index; [`HostSummaries::hosts`] order is not stable across removals.
    pub fn remove_host(&mut self, host: &str) {
        let Some(mut gone) = self.by_host.remove(host) else {
            return;
        };
        // Highest index first, so each swap_remove moves an element that is not itself removed.
        gone.sort_unstable_by(|a, b| b.cmp(a));
        for i in gone {
            let i = i as usize;
            let removed = self.hosts.swap_remove(i);
            self.held_bytes = self.held_bytes.saturating_sub(summary_bytes(&removed));
            self.index.remove(&removed.origin);
            if let Some(moved) = self.hosts.get(i) {
                self.index.insert(moved.origin.clone(), i as u32);
                let old = self.hosts.len() as u32;
                if let Some(slots) = self.by_host.get_mut(&moved.host) {
                    for slot in slots.iter_mut().filter(|slot| **slot == old) {
                        *slot = i as u32;
                    }
                }
            }
        }
    }

    /// Drops the fetched pages (content marks and links) of every origin of `host`, keeping its
    /// paths and address: a caller that recomputes a host's marks (against a template model that
    /// changed, over a sample that changed) clears them first.
    pub fn clear_pages(&mut self, host: &str) {
        let Some(slots) = self.by_host.get(host) else {
            return;
        };
        for &i in slots {
            if let Some(h) = self.hosts.get_mut(i as usize) {
                let before = summary_bytes(h);
                h.pages.clear();
                h.link_hosts.clear();
                let freed = before - summary_bytes(h);
                self.held_bytes = self.held_bytes.saturating_sub(freed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// `PageLinks::of` as it was before links to the page's own origin were hashed as written:
    /// every link resolved with `Url::join`, origins and paths written out.
    fn links_resolved_one_by_one(url: &Url, base: &Url, links: &[String]) -> PageLinks {
        let origin = origin_of(url);
        let mut hashed = Vec::new();
        let mut hosts: Vec<(String, u32)> = Vec::new();
        for link in links {
            let Ok(target) = base.join(link) else {
                continue;
            };
            if !matches!(target.scheme(), "http" | "https") {
                continue;
            }
            if origin_of(&target) == origin {
                hashed.push(xxh3_64(path_of(&target).as_bytes()));
            } else {
                hashed.push(xxh3_64(target.as_str().as_bytes()));
                if let Some(host) = target.host_str() {
                    match hosts.iter_mut().find(|(h, _)| h == host) {
                        Some((_, count)) => *count += 1,
                        None => hosts.push((host.to_owned(), 1)),
                    }
                }
            }
        }
        hashed.sort_unstable();
        hashed.dedup();
        PageLinks { hashed, hosts }
    }

    /// Links hashed as written are hashed exactly as resolved ones: every link the URL parser
    /// would rewrite (percent-encoding, dot segments, backslashes, tabs, another authority, another
    /// base) is checked one by one against a page, a page with a port, and `<base href>`s of the
    /// same and of another origin, then many links drawn from an alphabet of such characters.
    #[test]
    fn links_hashed_as_written_hash_as_resolved_links_do() {
        let tricky = [
            "/",
            "/a/b.html",
            "/a/b?x=1&y=2",
            "/a/b?x=1#top",
            "/a/b#",
            "/a/./b",
            "/a/../b",
            "/..",
            "/.",
            "/a/.",
            "/a/%2e/b",
            "/a/%2E%2e/b",
            "/a/.%2e",
            "/a/.hidden",
            "/a/..b",
            "/a b",
            "/a\tb",
            "/a\\b",
            "/a\\..\\b",
            "//b.org/x",
            "/a?q=a b",
            "/a?q='x'",
            "/a?q=\"x\"",
            "/a?q=<x>",
            "/a^b",
            "/a`b",
            "/a{b}",
            "/a|b",
            "/a?b^c`d{e}|f\\g",
            "/caf\u{e9}",
            "/a?caf\u{e9}",
            "/a%zz",
            "/a%20b",
            "/a?x=%2e%2e",
            "/a?x=/../",
            "/a#x y\u{e9}",
            "/a\n",
            "http://a.org/x",
            "http://a.org:8080/x",
            "http://a.org",
            "http://a.org?x",
            "http://a.org/./x",
            "http://a.org.evil/x",
            "http://A.org/x",
            "https://a.org/x",
            "http://a.org//x",
            "http://a.org:80/x",
            "http://user@a.org/x",
            "rel/x",
            "../x",
            "?q=1",
            "#top",
            "mailto:q@r",
            "javascript:void(0)",
            "http:/x",
            "http:x",
            "https://b.org/p?q#f",
            "",
        ];
        let alphabet = [
            "/",
            ".",
            "..",
            "%2e",
            "%2E",
            "?",
            "#",
            "a",
            "b",
            "=",
            "&",
            " ",
            "\\",
            "\t",
            "'",
            "\"",
            "^",
            "|",
            "`",
            "{",
            "%",
            "\u{e9}",
            "//",
            ":",
            "@",
            "http://a.org",
            "http://a.org:8080",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        let mut drawn: Vec<String> = (0..5_000)
            .map(|_| {
                let first = ["/", "http://a.org/", "http://a.org:8080/"][next(3)];
                let len = 1 + next(8);
                first.to_owned()
                    + &(0..len)
                        .map(|_| alphabet[next(alphabet.len())])
                        .collect::<String>()
            })
            .collect();
        drawn.extend(tricky.iter().map(|link| (*link).to_owned()));
        for (page, base) in [
            ("http://a.org/dir/page.html", "http://a.org/dir/page.html"),
            ("http://a.org:8080/dir/page", "http://a.org:8080/dir/page"),
            ("http://a.org/dir/page", "http://a.org/other/"),
            ("http://a.org/dir/page", "https://a.org/"),
            ("http://a.org/dir/page", "http://cdn.a.org/base/"),
        ] {
            let (page, base) = (url(page), url(base));
            for link in &drawn {
                let one = std::slice::from_ref(link);
                assert_eq!(
                    PageLinks::of(&page, &base, one.iter().map(String::as_str), 10),
                    links_resolved_one_by_one(&page, &base, one),
                    "{link:?} on {page} with base {base}"
                );
            }
            assert_eq!(
                PageLinks::of(&page, &base, drawn.iter().map(String::as_str), usize::MAX),
                links_resolved_one_by_one(&page, &base, &drawn),
                "every link at once on {page} with base {base}"
            );
        }
    }

    #[test]
    fn pages_keep_own_links_relative_and_count_foreign_hosts() {
        let mut s = HostSummaries::default();
        let mark = ContentMark::from_digest("sha1:ABC", 1000);
        s.observe_page(
            &url("http://a.org/x/1.html"),
            mark,
            [
                "/x/2.html",
                "http://a.org/x/3.html",
                "https://b.org/",
                "mailto:q@r",
            ],
        );
        s.observe_page(
            &url("http://c.org/x/1.html"),
            mark,
            ["2.html", "/x/3.html", "https://b.org/"],
        );
        let a = s.get("http://a.org").unwrap();
        let c = s.get("http://c.org").unwrap();
        assert_eq!(a.pages["/x/1.html"].links, c.pages["/x/1.html"].links);
        assert_eq!(a.link_hosts["b.org"], 1);
        assert_eq!(a.paths.len(), 1);
    }

    #[test]
    fn removing_a_host_drops_all_its_origins_and_keeps_the_others_reachable() {
        let mut s = HostSummaries::default();
        for u in [
            "http://a.org/1",
            "http://b.org/1",
            "https://a.org/2",
            "http://c.org/1",
            "http://b.org:8080/1",
        ] {
            s.observe_url(&url(u));
        }
        s.remove_host("a.org");
        assert_eq!(s.len(), 3);
        assert!(!s.has_host("a.org"));
        assert!(s.get("http://a.org").is_none() && s.get("https://a.org").is_none());
        for o in ["http://b.org", "http://c.org", "http://b.org:8080"] {
            assert_eq!(s.get(o).map(|h| h.origin.as_str()), Some(o));
        }
        s.remove_host("b.org");
        assert_eq!(s.len(), 1);
        assert_eq!(s.get("http://c.org").unwrap().paths.len(), 1);
        s.observe_page(
            &url("http://c.org/2"),
            ContentMark::from_digest("x", 1000),
            [],
        );
        s.clear_pages("c.org");
        let c = s.get("http://c.org").unwrap();
        assert!(c.pages.is_empty());
        assert_eq!(c.paths.len(), 2, "paths stay");
    }

    /// A stream of many origins (an archive's index) fills the summaries to their global bound
    /// and no further: new origins, paths and pages are left out and counted, what was held
    /// keeps its marks, and removing or clearing hosts frees room that is counted as it was.
    #[test]
    fn summaries_hold_at_most_their_global_bound_whatever_the_number_of_origins() {
        let bound = 64 * 1024;
        let mut s = HostSummaries::new(SummaryLimits {
            max_held_bytes: bound,
            ..SummaryLimits::default()
        });
        let links: Vec<String> = (0..20).map(|k| format!("/linked/{k}")).collect();
        let (mut observed, mut peak) = (0u64, 0u64);
        for host in 0..5_000 {
            for page in 0..4 {
                let u = url(&format!("http://site{host}.example/page/{page}?s={host}"));
                s.observe_page(
                    &u,
                    ContentMark::from_digest(&format!("d{host}/{page}"), 5_000),
                    links.iter().map(String::as_str),
                );
                s.observe_url(&url(&format!("http://site{host}.example/other/{page}")));
                observed += 2;
                peak = peak.max(s.held_bytes());
            }
        }
        // The last item admitted may cross the bound, by at most one page and its links.
        assert!(peak <= bound + 1_024, "held {peak} of {bound}");
        assert!(s.len() > 10 && s.len() < 1_000, "{} origins", s.len());
        assert!(
            s.urls_left_out() > observed / 2,
            "{} left out",
            s.urls_left_out()
        );
        // What the summaries count is what they hold.
        let counted: u64 = s.hosts().iter().map(summary_bytes).sum();
        assert_eq!(s.held_bytes(), counted);
        // A page already held still gains a mark when full.
        let first = url("http://site0.example/page/0?s=0");
        s.observe_page(&first, ContentMark::from_digest("again", 5_000), []);
        let page = &s.get("http://site0.example").unwrap().pages["/page/0?s=0"];
        assert_eq!(page.marks.len(), 2);
        // Room freed is counted: removing and clearing hosts lets new origins in again.
        for host in 0..5 {
            s.remove_host(&format!("site{host}.example"));
        }
        s.clear_pages("site5.example");
        let counted: u64 = s.hosts().iter().map(summary_bytes).sum();
        assert_eq!(s.held_bytes(), counted);
        assert!(s.held_bytes() < bound);
        s.observe_url(&url("http://late.example/"));
        assert!(s.get("http://late.example").is_some());
    }

    #[test]
    fn digests_of_tiny_bodies_are_not_evidence() {
        let tiny = ContentMark::from_digest("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", 0);
        assert_eq!(tiny.compare(&tiny, 3), Comparison::WeakMatch);
        let big = ContentMark::from_digest("X", 5000);
        assert_eq!(big.compare(&big, 3), Comparison::Match);
        let other = ContentMark::from_digest("Y", 5000);
        assert_eq!(big.compare(&other, 3), Comparison::Mismatch);
    }
}
