//! Duplicate clusters of one host's pages: union-find over URLs with stable cluster ids.
//!
//! # Evidence
//!
//! - **Exact content hash**: pages with equal `exact` hashes are merged (any strength). This is
//!   the only evidence a Weak page (too little content) ever contributes from its content.
//! - **Near-duplicate fingerprints**: Strong pages within Hamming distance `k` of a cluster
//!   *centre* are merged into it (see "chaining" below). Weak pages never merge on distance.
//! - **Redirects** (URL → final URL) and **`rel=canonical`** (URL → canonical URL): same-host
//!   declarations that put both URLs in one cluster, even when the target was never fetched.
//!   Cross-host pairs are ignored (the clusters, and the rules learned from them, are per host).
//! - **`rel=shortlink`** (page → the shortlink it declares): the same declaration in the other
//!   direction. A page's shortlink (Drupal's `/node/123`, WordPress's `/?p=123`) is another URL
//!   serving it, so it is recorded as the shortlink claiming the page as its canonical, under
//!   the same guards (below).
//! - **Payload digests** (an archive's digest of a capture's payload, from a crawl index or a
//!   WARC record) and **same-payload** declarations (a WARC `revisit`: "this URL's payload is
//!   that earlier capture's"): URLs with equal digests are merged, with a catch-all guard (below).
//!   The caller decides which captures' digests are evidence (e.g. status 200, HTML, not tiny).
//!
//! # Why a URL is in its cluster
//!
//! Every URL gets a [`Reason`]: the evidence that first took it out of its singleton cluster, in
//! the order evidence is applied (exact content, payload digest, near-duplicate content,
//! canonical, redirect), or [`Reason::Singleton`]. Union-find only ever merges a singleton
//! through a union naming that URL, so every member of a larger cluster has a reason.
//!
//! # Weak pages near another cluster
//!
//! A Weak page (too little text for its simhash to be evidence) merges only on an equal exact
//! hash, so two fetches of one short page whose chrome differs beyond what the template model
//! removed stay apart while their simhashes agree. Such a pair says nothing either way, but as
//! two clusters it reads as two pages, and one such pair is enough to refuse a host-wide rule
//! (`ignore replytocom` on a WordPress site whose feeds are short). So a Weak page whose
//! simhash is within the near-duplicate distance of a page in another cluster is marked
//! *unresolved*: it keeps its cluster, and [`Clustering::is_unresolved`] tells the learner to
//! leave it out (`crate::pipeline::labelled`). A Weak page whose nearest pages are all in its own
//! cluster, or far from every other page (another listing page, another short post), is
//! evidence as before.
//!
//! # Fetches
//!
//! A crawler reports a fetch as "asked for `url`, was redirected to `final_url`, got this body,
//! which declares this canonical". [`ClusterBuilder::add_fetch`] records it the one way that keeps
//! the evidence apart: the body is the *final* URL's content, so the fingerprint and the canonical
//! claim are recorded for the final URL, and the fetched URL is tied to it only by the redirect.
//! Recording the body under the fetched URL would make every URL redirected to one login page
//! carry that page's text, and the exact-hash evidence would merge them whatever a redirect guard
//! says. A final URL on another host is not this host's content: such a fetch records nothing
//! (the cross-host redirect is counted).
//!
//! # Chaining guard
//!
//! Transitive closure of "within k" chains: A~B, B~C, C~D … can join pages with nothing in
//! common. Instead, near-duplicate clustering is *leader clustering by density*: every Strong
//! page (more exactly, every exact-hash group with a Strong member) counts its neighbours within
//! `k`; pages are visited from the most to the least connected (ties by URL), and an unassigned
//! page becomes a centre that takes all its still-unassigned neighbours. So every member is within
//! `k` of its cluster's centre (any two members within `2k`), the centre is a page with many
//! near-duplicates, and a long chain splits into several clusters.
//!
//! # Misused `rel=canonical`
//!
//! Sites often point every page of a listing (or every page) at one canonical URL. A canonical
//! claim is rejected when both ends were fetched with Strong content that disagrees (neither
//! near-duplicate nor exact-equal), or when the target was not fetched (or is Weak) and the
//! Strong pages claiming it fall into more than one content cluster. Rejections are counted in
//! [`ClusterStats`].
//!
//! Shortlinks get the same two checks, turned around: a shortlink claim is rejected when both
//! ends were fetched with Strong content that disagrees, or when the shortlink was not fetched
//! (or is Weak) and the Strong pages declaring it fall into more than one content cluster (a
//! theme printing the home page's shortlink on every page). And one more, before either: a
//! page whose URL carries a query parameter its shortlink lacks is not taken at its word. A
//! shortlink names the entity, and Drupal and WordPress print the entity's on every view of it:
//! comment page `?page=2`, a sort order, a reply form. Such a view is other content, and when the
//! entity's own page was not crawled no content check can catch the claim.
//!
//! # Declared pairs
//!
//! The canonical, shortlink and redirect pairs that were applied (cross-host, invalid, guarded
//! ones left out) are kept in the result as [`DeclaredPair`]s: the learner's alias table is made
//! of the ones its patterns do not already relate (`crate::learn::aliases`), so it rests only on
//! declarations these guards let through.
//!
//! # Catch-all redirects
//!
//! Sites send many unrelated URLs to one place: removed or protected pages to a login page, the
//! home page or an error page. Those redirects say "this URL has no content of its own", not "this
//! URL is a duplicate of the target", and applying them would put every such URL in one cluster
//! and teach the learner that they are duplicates. The guard mirrors the canonical fan-in guard: a
//! redirect *changes the path* when the source's path differs from the target's once ASCII case
//! and trailing slashes are set aside (`http→https`, `/a → /a/`, `/A → /a`, `/a?utm=x → /a` keep
//! the path and are always applied). The targets are taken with their content clusters (exact and
//! near-duplicate merges; an unfetched target stands alone), so `/login?next=/a` and
//! `/login?next=/b`, the same page, are one target. A target whose path-changing redirects come
//! from more than [`MAX_REDIRECT_ALIAS_PATHS`] distinct source paths is a catch-all: those
//! redirects are not applied and are counted in [`ClusterStats::redirects_fan_in`]; its
//! path-keeping redirects still are. Redirect sources are compared by path, not content, because
//! a redirected URL has none of its own (see "Fetches").
//!
//! # Catch-all digests
//!
//! A host that answers its home page (or an error page) for any path gives every such URL one
//! digest. A digest shared by URLs of more than [`MAX_REDIRECT_ALIAS_PATHS`] distinct paths (ASCII
//! case and trailing slashes set aside, queries ignored: one path with many session or tracking
//! parameters is real DUST) is taken for such a page and not applied; its URLs are counted in
//! [`ClusterStats::digests_fan_in`]. Except when every path ends in one static file's name
//! ([`names_a_static_file`]: `/faq/logo.gif`, `/film/logo.gif`, `/logo.gif`): a site built with
//! relative links keeps a copy of its images and stylesheets in each folder, while a catch-all
//! answers for whatever name is asked. Those copies are one cluster (`learn` may then find the
//! file's name shared by the site's folders).
//!
//! # Stability
//!
//! [`ClusterBuilder::finish`] processes everything in URL order, so the same set of evidence
//! gives the same clusters whatever order it was added in, and a cluster's id is the xxh3 hash of
//! its smallest member URL (so ids survive unrelated changes elsewhere on the host).
//!
//! URLs are parsed with the WHATWG parser (so relative canonical targets resolve and trivially
//! different spellings meet); callers should pass every URL through the same static normalization
//! first. Memory is proportional to the URLs added: the caller bounds that (the sampler does).

use std::collections::{HashMap, HashSet};

use xxhash_rust::xxh3::xxh3_64;

use super::index::{SimhashIndex, DEFAULT_MAX_DISTANCE, MAX_SUPPORTED_DISTANCE};
use crate::canon::rules::files::names_a_static_file;
use crate::content::{Fingerprint, Strength};
use crate::ingest::pages::UrlEvidence;

/// Most distinct source paths whose redirects into one target (content cluster) are taken as
/// duplicate evidence; beyond it the target is a catch-all (see the module documentation).
///
/// Why 8: the path-changing aliases of one resource are a handful of spellings: default documents
/// (`/index.html`, `/index.php`, `/default.aspx`, `/home` → `/`), a legacy URL scheme or two
/// (`/item.php?id=5`, `/p/5` → `/products/5`), an old slug, an AMP or print path. Case, trailing
/// slashes, scheme and query changes are not counted at all. A catch-all collects one path per
/// resource it stands in for, so on any site with more than a few removed or protected pages it
/// passes a small bound, and keeps growing with the site. What the bound lets through is capped:
/// a catch-all fed from 8 paths or fewer wrongly merges the URLs of those few paths only. A bound
/// of 2–3 would start refusing real alias sets.
pub const MAX_REDIRECT_ALIAS_PATHS: usize = 8;

/// A stable cluster id: xxh3-64 of the cluster's smallest member URL.
pub type ClusterId = u64;

/// What is known of one fetched page's content (kept independent of the content module's types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageEvidence {
    /// 64-bit simhash of the page's content (template removed).
    pub simhash: u64,
    /// Hash of the exact content.
    pub exact: u64,
    /// True when the fingerprint rests on enough content to count as near-duplicate evidence.
    pub strong: bool,
}

impl From<&Fingerprint> for PageEvidence {
    /// What clustering needs to know of a page's fingerprint.
    fn from(print: &Fingerprint) -> Self {
        PageEvidence {
            simhash: print.simhash,
            exact: print.exact,
            strong: print.strength == Strength::Strong,
        }
    }
}

/// Clustering knobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// Hamming distance for near-duplicates (default 3, at most 8).
    pub max_distance: u32,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            max_distance: DEFAULT_MAX_DISTANCE,
        }
    }
}

/// Counters describing what evidence was used or ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterStats {
    /// Distinct URLs (fetched pages and redirect/canonical targets).
    pub urls: usize,
    /// URLs with page evidence.
    pub pages: usize,
    /// Clusters (including singletons).
    pub clusters: usize,
    /// Unions made because of equal exact hashes.
    pub exact_merges: usize,
    /// Pages joined to a near-duplicate centre.
    pub near_duplicate_merges: usize,
    /// Redirect pairs applied.
    pub redirects: usize,
    /// Redirect pairs not applied because their target is a catch-all: it receives path-changing
    /// redirects from more than [`MAX_REDIRECT_ALIAS_PATHS`] distinct paths.
    pub redirects_fan_in: usize,
    /// Canonical pairs applied.
    pub canonicals: usize,
    /// Canonical pairs rejected because both pages' Strong content disagrees.
    pub canonicals_contradicted: usize,
    /// Canonical pairs rejected because distinct content clusters claim the same target.
    pub canonicals_fan_in: usize,
    /// Shortlink pairs applied.
    pub shortlinks: usize,
    /// Shortlink pairs rejected because both pages' Strong content disagrees.
    pub shortlinks_contradicted: usize,
    /// Shortlink pairs rejected because distinct content clusters declare the same shortlink.
    pub shortlinks_fan_in: usize,
    /// Redirect or canonical pairs ignored because the two URLs are on different hosts.
    pub cross_host_ignored: usize,
    /// Redirect or canonical pairs ignored because a URL did not parse.
    pub invalid_ignored: usize,
    /// Unions made because of equal payload digests or same-payload declarations.
    pub digest_merges: usize,
    /// URLs whose digest was not applied because it is a catch-all's (see the module docs).
    pub digests_fan_in: usize,
    /// Weak pages within near-duplicate distance of a page of another cluster: no evidence
    /// either way, left out of learning (see "Weak pages near another cluster").
    pub weak_unresolved: usize,
}

/// Why a URL is in its cluster (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Near-duplicate content (simhash within `k` of the cluster's centre).
    Content,
    /// The same exact content hash as another member.
    Exact,
    /// A redirect to or from another member.
    Redirect,
    /// A `rel=canonical` (or `rel=shortlink`) claim to or from another member.
    Canonical,
    /// The same payload digest as another member (crawl index, WARC digest or revisit).
    Digest,
    /// Alone in its cluster.
    Singleton,
}

impl Reason {
    /// The reason's name as the command line prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Content => "content",
            Reason::Exact => "exact",
            Reason::Redirect => "redirect",
            Reason::Canonical => "canonical",
            Reason::Digest => "digest",
            Reason::Singleton => "singleton",
        }
    }
}

/// How a site declared that two of its URLs are one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Declaration {
    /// `from` declares `to` as its `rel=canonical`.
    Canonical,
    /// The page `to` declares `from` as its `rel=shortlink`.
    Shortlink,
    /// `from` redirected to `to`.
    Redirect,
}

/// A declared pair the clustering applied: `from` is an alias of `to`, the spelling the site
/// calls canonical (the canonical target, the page declaring a shortlink, a redirect's target).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeclaredPair {
    /// The other spelling.
    pub from: String,
    /// The spelling the site calls canonical.
    pub to: String,
    /// How it was declared.
    pub declaration: Declaration,
}

/// One duplicate cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// Stable id (xxh3 of `members[0]`).
    pub id: ClusterId,
    /// Member URLs, sorted.
    pub members: Vec<String>,
}

/// Collects a host's evidence; [`ClusterBuilder::finish`] turns it into clusters.
#[derive(Debug, Clone, Default)]
pub struct ClusterBuilder {
    config: ClusterConfig,
    node_of: HashMap<String, u32>,
    urls: Vec<String>,
    evidence: Vec<Option<PageEvidence>>,
    redirects: Vec<Redirect>,
    canonicals: Vec<(u32, u32)>,
    /// (shortlink, page declaring it).
    shortlinks: Vec<(u32, u32)>,
    /// (URL, hash of its payload digest).
    digests: Vec<(u32, u64)>,
    /// (URL, earlier capture with the same payload).
    same_payload: Vec<(u32, u32)>,
    cross_host_ignored: usize,
    invalid_ignored: usize,
}

/// One redirect, with what the catch-all guard needs.
#[derive(Debug, Clone)]
struct Redirect {
    from: u32,
    to: u32,
    /// Source and target have the same path up to ASCII case and trailing slashes.
    keeps_path: bool,
    /// Hash of the source's folded path.
    source_path: u64,
}

/// Parses and re-serialises a URL; unparseable strings are kept as given.
fn normalise(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_string(), String::from)
}

/// Whether every path of a digest ends in one static file's name ([`names_a_static_file`]): a
/// file copied into many folders, not a catch-all (see the module documentation).
fn one_file_in_folders(paths: &[String]) -> bool {
    fn name(path: &str) -> &str {
        path.rsplit('/').next().unwrap_or_default()
    }
    let first = paths.first().map_or("", |p| name(p));
    names_a_static_file(first) && paths.iter().all(|p| name(p) == first)
}

/// A URL's path with ASCII case and trailing slashes set aside: the spellings of one path that
/// servers commonly redirect between.
fn folded_path(url: &url::Url) -> String {
    url.path().trim_end_matches('/').to_ascii_lowercase()
}

impl ClusterBuilder {
    /// An empty builder. `max_distance` above 8 is clamped to 8.
    pub fn new(config: ClusterConfig) -> Self {
        ClusterBuilder {
            config: ClusterConfig {
                max_distance: config.max_distance.min(MAX_SUPPORTED_DISTANCE),
            },
            ..Default::default()
        }
    }

    fn node(&mut self, url: String) -> u32 {
        if let Some(&n) = self.node_of.get(&url) {
            return n;
        }
        let n = self.urls.len() as u32;
        self.urls.push(url.clone());
        self.evidence.push(None);
        self.node_of.insert(url, n);
        n
    }

    /// Records a fetched page. Adding the same URL again replaces its evidence (a refetch, or a
    /// re-fingerprint after the host's template model matured).
    pub fn add_page(&mut self, url: &str, evidence: PageEvidence) {
        let n = self.node(normalise(url));
        self.evidence[n as usize] = Some(evidence);
    }

    /// Resolves `target` against `from` and checks both are on the same host.
    fn same_host_pair(&mut self, from: &str, target: &str) -> Option<(url::Url, url::Url)> {
        let Ok(base) = url::Url::parse(from) else {
            self.invalid_ignored += 1;
            return None;
        };
        let Ok(to) = base.join(target) else {
            self.invalid_ignored += 1;
            return None;
        };
        if base.host_str() != to.host_str() || base.host_str().is_none() {
            self.cross_host_ignored += 1;
            return None;
        }
        Some((base, to))
    }

    /// Records that `from` redirected to `to` (absolute, or relative to `from`). Returns false
    /// when the pair is ignored (cross-host, unparseable, or a self-redirect). The body of a 3xx
    /// response is not the page's content: record the redirect, not a page, for `from`. Redirects
    /// into a catch-all are not applied at [`ClusterBuilder::finish`] (see the module
    /// documentation).
    pub fn add_redirect(&mut self, from: &str, to: &str) -> bool {
        self.redirect_pair(from, to).is_some()
    }

    /// [`ClusterBuilder::add_redirect`], returning the target as recorded.
    fn redirect_pair(&mut self, from: &str, to: &str) -> Option<String> {
        let (a, b) = self.same_host_pair(from, to)?;
        if a == b {
            return None;
        }
        let keeps_path = folded_path(&a) == folded_path(&b);
        let source_path = xxh3_64(folded_path(&a).as_bytes());
        let target = String::from(b);
        let (from, to) = (self.node(String::from(a)), self.node(target.clone()));
        self.redirects.push(Redirect {
            from,
            to,
            keeps_path,
            source_path,
        });
        Some(target)
    }

    /// Records that `url` declares `canonical` (absolute, or relative to `url`) as its canonical
    /// URL. Returns false when the pair is ignored (cross-host, unparseable, or self-canonical).
    /// Claims can still be rejected at [`ClusterBuilder::finish`] when content contradicts them.
    pub fn add_canonical(&mut self, url: &str, canonical: &str) -> bool {
        let Some((a, b)) = self.same_host_pair(url, canonical) else {
            return false;
        };
        if a == b {
            return false;
        }
        let (a, b) = (self.node(String::from(a)), self.node(String::from(b)));
        self.canonicals.push((a, b));
        true
    }

    /// Records that the page `url` declares `shortlink` (absolute, or relative to `url`) as its
    /// shortlink: the shortlink claims `url` as its canonical (see the module documentation).
    /// Returns false when the pair is ignored (cross-host, unparseable, the page's own URL, a
    /// page whose query has a parameter the shortlink's lacks: a view of the entity, or a page
    /// whose path ends in a number: maybe a later page of it). Claims can still be rejected at
    /// [`ClusterBuilder::finish`] when content contradicts them.
    pub fn add_shortlink(&mut self, url: &str, shortlink: &str) -> bool {
        let Some((page, short)) = self.same_host_pair(url, shortlink) else {
            return false;
        };
        if page == short {
            return false;
        }
        let short_keys: HashSet<std::borrow::Cow<'_, str>> =
            short.query_pairs().map(|(key, _)| key).collect();
        if page
            .query_pairs()
            .any(|(key, _)| !short_keys.contains(&key))
        {
            return false;
        }
        // A shortlink names the entity, and every page of it declares the same one (WordPress
        // prints `?p=N` on `/name/2/` and `/name/comment-page-2/` as on `/name/`); a number
        // ending the page's path may be its position inside the entity. When the entity's
        // first page was not fetched, nothing else would refuse the claim.
        if ends_in_a_number(page.path()) {
            return false;
        }
        let (page, short) = (
            self.node(String::from(page)),
            self.node(String::from(short)),
        );
        self.shortlinks.push((short, page));
        true
    }

    /// Records that the capture of `url` had the payload digest `digest` (any spelling, compared
    /// as given: normalise first). Equal digests merge at [`ClusterBuilder::finish`] unless the
    /// digest is a catch-all's (see the module documentation).
    pub fn add_digest(&mut self, url: &str, digest: &str) {
        let n = self.node(normalise(url));
        self.digests.push((n, xxh3_64(digest.as_bytes())));
    }

    /// Records that `url` has the same payload as the earlier capture of `earlier` (a WARC
    /// revisit record). Returns false when the pair is ignored (cross-host, unparseable, or the
    /// same URL).
    pub fn add_same_payload(&mut self, url: &str, earlier: &str) -> bool {
        let Some((a, b)) = self.same_host_pair(url, earlier) else {
            return false;
        };
        if a == b {
            return false;
        }
        let (a, b) = (self.node(String::from(a)), self.node(String::from(b)));
        self.same_payload.push((a, b));
        true
    }

    /// Records a record's URL evidence (its URLs normalized like every other URL given to the
    /// builder). Returns false when it is ignored (cross-host or unparseable pairs).
    pub fn add_url_evidence(&mut self, evidence: &UrlEvidence) -> bool {
        match evidence {
            UrlEvidence::Redirect { from, to } => self.add_redirect(from, to),
            UrlEvidence::SamePayload { url, earlier } => self.add_same_payload(url, earlier),
            UrlEvidence::PayloadDigest { url, digest } => {
                let digest = crate::ingest::index::normalize_digest(digest);
                if let Some(digest) = digest {
                    self.add_digest(url, &digest);
                }
                true
            }
        }
    }

    /// Records one fetch: `url` was asked for, the response body (fingerprinted as `evidence`)
    /// came from `final_url` after redirects (`None`: from `url` itself), and the body declared
    /// `canonical` (absolute, or relative to the final URL). The page and its canonical claim are
    /// recorded for the final URL, which the redirect ties `url` to (see "Fetches" in the module
    /// documentation). Returns the URL the content was recorded for, or `None` when nothing was
    /// (a final URL on another host, or an unparseable pair).
    pub fn add_fetch(
        &mut self,
        url: &str,
        final_url: Option<&str>,
        canonical: Option<&str>,
        evidence: PageEvidence,
    ) -> Option<String> {
        let content_url = match final_url {
            None => normalise(url),
            Some(final_url) => match self.same_host_pair(url, final_url) {
                Some((a, b)) if a == b => String::from(b),
                Some((a, b)) => self.redirect_pair(a.as_str(), b.as_str())?,
                None => return None,
            },
        };
        self.add_page(&content_url, evidence);
        if let Some(canonical) = canonical {
            self.add_canonical(&content_url, canonical);
        }
        Some(content_url)
    }

    /// Number of distinct URLs seen so far.
    pub fn len(&self) -> usize {
        self.urls.len()
    }

    /// True when nothing was added.
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }

    /// Builds the clusters.
    pub fn finish(self) -> Clustering {
        let n = self.urls.len();
        let k = self.config.max_distance;
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_unstable_by(|&a, &b| self.urls[a as usize].cmp(&self.urls[b as usize]));
        let mut rank = vec![0u32; n];
        for (r, &node) in order.iter().enumerate() {
            rank[node as usize] = r as u32;
        }
        let mut uf = UnionFind::new(n);
        let mut reasons: Vec<Option<Reason>> = vec![None; n];
        let mut join = |uf: &mut UnionFind, a: u32, b: u32, reason: Reason| -> bool {
            let joined = uf.union(a, b);
            if joined {
                reasons[a as usize].get_or_insert(reason);
                reasons[b as usize].get_or_insert(reason);
            }
            joined
        };
        let mut stats = ClusterStats {
            urls: n,
            pages: self.evidence.iter().filter(|e| e.is_some()).count(),
            cross_host_ignored: self.cross_host_ignored,
            invalid_ignored: self.invalid_ignored,
            ..Default::default()
        };

        // 1. Exact content hashes (transitive by nature, so plain union).
        let mut first_with_exact: HashMap<u64, u32> = HashMap::new();
        for &node in &order {
            if let Some(ev) = self.evidence[node as usize] {
                match first_with_exact.get(&ev.exact) {
                    Some(&first) => {
                        if join(&mut uf, first, node, Reason::Exact) {
                            stats.exact_merges += 1;
                        }
                    }
                    None => {
                        first_with_exact.insert(ev.exact, node);
                    }
                }
            }
        }

        // 1b. Payload digests (catch-alls set aside) and same-payload declarations.
        let mut by_digest: HashMap<u64, Vec<u32>> = HashMap::new();
        for &(node, digest) in &self.digests {
            by_digest.entry(digest).or_default().push(node);
        }
        let mut groups: Vec<Vec<u32>> = by_digest.into_values().collect();
        for group in &mut groups {
            group.sort_unstable_by_key(|&node| rank[node as usize]);
            group.dedup();
        }
        groups.sort_unstable_by_key(|g| g.first().map(|&node| rank[node as usize]));
        for group in groups.iter().filter(|g| g.len() > 1) {
            let mut paths: Vec<String> = group
                .iter()
                .map(|&node| {
                    url::Url::parse(&self.urls[node as usize])
                        .map_or_else(|_| self.urls[node as usize].clone(), |u| folded_path(&u))
                })
                .collect();
            paths.sort_unstable();
            paths.dedup();
            if paths.len() > MAX_REDIRECT_ALIAS_PATHS && !one_file_in_folders(&paths) {
                stats.digests_fan_in += group.len();
                continue;
            }
            for &node in &group[1..] {
                if join(&mut uf, group[0], node, Reason::Digest) {
                    stats.digest_merges += 1;
                }
            }
        }
        for &(a, b) in &self.same_payload {
            if join(&mut uf, a, b, Reason::Digest) {
                stats.digest_merges += 1;
            }
        }

        // 2. Near-duplicates between exact groups, through leader clustering by density. A unit
        // is an exact group with a Strong member; its fingerprint is that of its smallest-URL
        // Strong member (URL order makes that deterministic).
        let mut unit_of_root: HashMap<u32, u32> = HashMap::new();
        let mut unit_node: Vec<u32> = Vec::new();
        let mut unit_fp: Vec<u64> = Vec::new();
        for &node in &order {
            if let Some(ev) = self.evidence[node as usize] {
                if ev.strong {
                    let root = uf.find(node);
                    if let std::collections::hash_map::Entry::Vacant(e) = unit_of_root.entry(root) {
                        e.insert(unit_node.len() as u32);
                        unit_node.push(node);
                        unit_fp.push(ev.simhash);
                    }
                }
            }
        }
        let mut index = SimhashIndex::new(k);
        for (u, &fp) in unit_fp.iter().enumerate() {
            index.insert(u as u32, fp);
        }
        let degree: Vec<usize> = unit_fp
            .iter()
            .map(|&fp| {
                let mut d = 0usize;
                index.for_each_near(fp, |_, _| d += 1);
                d
            })
            .collect();
        let mut visit: Vec<u32> = (0..unit_fp.len() as u32).collect();
        // Units were created in URL order, so the unit number breaks ties by URL.
        visit.sort_unstable_by_key(|&u| (std::cmp::Reverse(degree[u as usize]), u));
        let mut assigned = vec![false; unit_fp.len()];
        let mut near = Vec::new();
        for &centre in &visit {
            if assigned[centre as usize] {
                continue;
            }
            assigned[centre as usize] = true;
            index.query(unit_fp[centre as usize], &mut near);
            for &member in &near {
                if !assigned[member as usize] {
                    assigned[member as usize] = true;
                    join(
                        &mut uf,
                        unit_node[centre as usize],
                        unit_node[member as usize],
                        Reason::Content,
                    );
                    stats.near_duplicate_merges += 1;
                }
            }
        }

        // 3. Catch-all redirect targets, judged on the content clusters before anything declared
        // is applied (see the module documentation).
        let mut source_paths: HashMap<u32, Vec<u64>> = HashMap::new();
        for r in self.redirects.iter().filter(|r| !r.keeps_path) {
            source_paths
                .entry(uf.find(r.to))
                .or_default()
                .push(r.source_path);
        }
        let catch_alls: HashSet<u32> = source_paths
            .into_iter()
            .filter_map(|(target, mut paths)| {
                paths.sort_unstable();
                paths.dedup();
                (paths.len() > MAX_REDIRECT_ALIAS_PATHS).then_some(target)
            })
            .collect();
        let mut redirects: Vec<(u32, u32)> = Vec::with_capacity(self.redirects.len());
        for r in &self.redirects {
            if r.keeps_path || !catch_alls.contains(&uf.find(r.to)) {
                redirects.push((r.from, r.to));
            } else {
                stats.redirects_fan_in += 1;
            }
        }

        // 4. Canonical claims, checked against content before anything declared is applied.
        let (accepted, contradicted, fan_in) = check_declarations(
            self.canonicals.iter().copied(),
            &self.evidence,
            &mut uf,
            &rank,
            k,
        );
        stats.canonicals_contradicted += contradicted;
        stats.canonicals_fan_in += fan_in;
        // 4b. Shortlink claims (the declaring page, its shortlink), the same checks: the fan-in
        // guard groups the pages declaring one shortlink. Applied as shortlink → page.
        let (accepted_shortlinks, contradicted, fan_in) = check_declarations(
            self.shortlinks.iter().map(|&(short, page)| (page, short)),
            &self.evidence,
            &mut uf,
            &rank,
            k,
        );
        stats.shortlinks_contradicted += contradicted;
        stats.shortlinks_fan_in += fan_in;
        let accepted_shortlinks: Vec<(u32, u32)> = accepted_shortlinks
            .into_iter()
            .map(|(page, short)| (short, page))
            .collect();
        let mut declared: Vec<(u32, u32, Declaration)> =
            Vec::with_capacity(accepted.len() + accepted_shortlinks.len() + redirects.len());
        for (a, b) in accepted {
            join(&mut uf, a, b, Reason::Canonical);
            stats.canonicals += 1;
            declared.push((a, b, Declaration::Canonical));
        }
        for (short, page) in accepted_shortlinks {
            join(&mut uf, short, page, Reason::Canonical);
            stats.shortlinks += 1;
            declared.push((short, page, Declaration::Shortlink));
        }

        // 5. Redirects: what the server did, applied as given once catch-alls are set aside.
        for (a, b) in redirects {
            join(&mut uf, a, b, Reason::Redirect);
            stats.redirects += 1;
            declared.push((a, b, Declaration::Redirect));
        }
        let declared: Vec<DeclaredPair> = declared
            .into_iter()
            .map(|(from, to, declaration)| DeclaredPair {
                from: self.urls[from as usize].clone(),
                to: self.urls[to as usize].clone(),
                declaration,
            })
            .collect();

        // 5b. Weak pages near a page of another cluster (see the module documentation).
        // Indexed once per distinct simhash, with the one cluster its pages are in (`None` when
        // several): a host of 20,000 text-less pages (simhash 0) is one entry, not a bucket each
        // query walks whole.
        let mut unresolved = vec![false; n];
        let mut cluster_of_simhash: HashMap<u64, Option<u32>> = HashMap::new();
        for (node, ev) in self.evidence.iter().enumerate() {
            if let Some(ev) = ev {
                let root = uf.find(node as u32);
                cluster_of_simhash
                    .entry(ev.simhash)
                    .and_modify(|cluster| {
                        if *cluster != Some(root) {
                            *cluster = None;
                        }
                    })
                    .or_insert(Some(root));
            }
        }
        let distinct: Vec<(u64, Option<u32>)> = cluster_of_simhash.into_iter().collect();
        let mut page_index = SimhashIndex::new(k);
        for (i, &(simhash, _)) in distinct.iter().enumerate() {
            page_index.insert(i as u32, simhash);
        }
        for (node, ev) in self.evidence.iter().enumerate() {
            let Some(ev) = ev.filter(|ev| !ev.strong) else {
                continue;
            };
            let root = uf.find(node as u32);
            let mut other_cluster = false;
            page_index.for_each_near(ev.simhash, |near, _| {
                other_cluster |= distinct[near as usize].1 != Some(root);
            });
            if other_cluster {
                unresolved[node] = true;
                stats.weak_unresolved += 1;
            }
        }

        // 6. Stable ids from the smallest member URL; members listed in URL order.
        let mut cluster_of_root: HashMap<u32, u32> = HashMap::new();
        let mut clusters: Vec<Cluster> = Vec::new();
        let mut cluster_index = Vec::with_capacity(n);
        for &node in &order {
            let root = uf.find(node);
            let url = &self.urls[node as usize];
            let c = *cluster_of_root.entry(root).or_insert_with(|| {
                clusters.push(Cluster {
                    id: xxh3_64(url.as_bytes()),
                    members: Vec::new(),
                });
                clusters.len() as u32 - 1
            });
            clusters[c as usize].members.push(url.clone());
            cluster_index.push(c);
        }
        stats.clusters = clusters.len();
        let mut urls = self.urls;
        let sorted_urls: Vec<String> = order
            .iter()
            .map(|&node| std::mem::take(&mut urls[node as usize]))
            .collect();
        let reasons = order
            .iter()
            .map(|&node| reasons[node as usize].unwrap_or(Reason::Singleton))
            .collect();
        let unresolved = order
            .iter()
            .map(|&node| unresolved[node as usize])
            .collect();
        Clustering {
            urls: sorted_urls,
            reasons,
            unresolved,
            cluster_index,
            clusters,
            stats,
            declared,
        }
    }
}

/// The result: every URL's cluster and every cluster's members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clustering {
    /// All URLs, sorted.
    urls: Vec<String>,
    /// Parallel to `urls`: why each is in its cluster.
    reasons: Vec<Reason>,
    /// Parallel to `urls`: Weak pages near a page of another cluster (see the module
    /// documentation).
    unresolved: Vec<bool>,
    /// Parallel to `urls`: index into `clusters`.
    cluster_index: Vec<u32>,
    /// Clusters in order of their smallest member URL.
    clusters: Vec<Cluster>,
    stats: ClusterStats,
    /// The declared pairs applied, in the order they were (see the module documentation).
    declared: Vec<DeclaredPair>,
}

impl Clustering {
    /// The cluster id of `url` (parsed the same way as when it was added).
    pub fn cluster_of(&self, url: &str) -> Option<ClusterId> {
        let key = normalise(url);
        let i = self.urls.binary_search(&key).ok()?;
        Some(self.clusters[self.cluster_index[i] as usize].id)
    }

    /// Why `url` is in its cluster (parsed the same way as when it was added).
    pub fn reason_of(&self, url: &str) -> Option<Reason> {
        let key = normalise(url);
        let i = self.urls.binary_search(&key).ok()?;
        Some(self.reasons[i])
    }

    /// Whether `url` is a Weak page near a page of another cluster: its cluster is no evidence
    /// either way (see the module documentation).
    pub fn is_unresolved(&self, url: &str) -> bool {
        let key = normalise(url);
        self.urls
            .binary_search(&key)
            .is_ok_and(|i| self.unresolved[i])
    }

    /// Every URL with its cluster id and the reason it is there, in URL order.
    pub fn assignments_with_reasons(&self) -> impl Iterator<Item = (&str, ClusterId, Reason)> + '_ {
        self.urls
            .iter()
            .zip(&self.cluster_index)
            .zip(&self.reasons)
            .map(|((u, &c), &r)| (u.as_str(), self.clusters[c as usize].id, r))
    }

    /// All clusters (singletons included), in order of their smallest member URL.
    pub fn clusters(&self) -> &[Cluster] {
        &self.clusters
    }

    /// The members of the cluster containing `url`.
    pub fn members_of(&self, url: &str) -> Option<&[String]> {
        let key = normalise(url);
        let i = self.urls.binary_search(&key).ok()?;
        Some(&self.clusters[self.cluster_index[i] as usize].members)
    }

    /// Every URL with its cluster id, in URL order, but the unresolved Weak pages (see the module
    /// documentation): what the learner is given.
    pub fn learning_assignments(&self) -> impl Iterator<Item = (&str, ClusterId)> + '_ {
        self.assignments()
            .zip(&self.unresolved)
            .filter(|(_, &unresolved)| !unresolved)
            .map(|(assignment, _)| assignment)
    }

    /// Every URL with its cluster id, in URL order.
    pub fn assignments(&self) -> impl Iterator<Item = (&str, ClusterId)> + '_ {
        self.urls
            .iter()
            .zip(&self.cluster_index)
            .map(|(u, &c)| (u.as_str(), self.clusters[c as usize].id))
    }

    /// The `(url, cluster)` pairs the learner consumes (every URL, in URL order).
    pub fn labelled_pairs(&self) -> Vec<(String, ClusterId)> {
        self.assignments()
            .map(|(u, c)| (u.to_string(), c))
            .collect()
    }

    /// Counters of evidence used and ignored.
    pub fn stats(&self) -> &ClusterStats {
        &self.stats
    }

    /// The canonical, shortlink and redirect pairs the guards let through and that were
    /// applied (see "Declared pairs" in the module documentation).
    pub fn declared(&self) -> &[DeclaredPair] {
        &self.declared
    }
}

/// Whether a URL path's last segment (a trailing slash aside) ends in an ASCII digit: `/name/2/`,
/// `/name/comment-page-2`, `/t/slug/12/3`.
fn ends_in_a_number(path: &str) -> bool {
    path.trim_end_matches('/')
        .bytes()
        .last()
        .is_some_and(|b| b.is_ascii_digit())
}

/// Declarations checked against content before anything declared is applied (step 4 of
/// [`ClusterBuilder::build`]): each claim is (declaring page, URL it declares). A claim whose two
/// ends both have strong content is taken when the content agrees (already one cluster, equal
/// exact hashes, or fingerprints within `k` bits) and counted as contradicted otherwise. The
/// other claims are grouped by the URL declared: when strong pages of different clusters declare
/// one URL (every page of a listing pointing at its first page), those pages' claims are refused
/// and counted as fan-in. Returns the claims taken (in rank order of the declared URL for the
/// grouped ones), the contradicted count and the fan-in count.
fn check_declarations(
    claims: impl Iterator<Item = (u32, u32)>,
    evidence: &[Option<PageEvidence>],
    uf: &mut UnionFind,
    rank: &[u32],
    k: u32,
) -> (Vec<(u32, u32)>, usize, usize) {
    let strong_fp = |node: u32| -> Option<u64> {
        evidence[node as usize]
            .filter(|e| e.strong)
            .map(|e| e.simhash)
    };
    let (mut contradicted, mut fan_in) = (0, 0);
    let mut claims_by_target: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut accepted: Vec<(u32, u32)> = Vec::new();
    for (from, to) in claims {
        let (ea, eb) = (evidence[from as usize], evidence[to as usize]);
        match (strong_fp(from), strong_fp(to)) {
            (Some(fa), Some(fb)) => {
                let exact_equal = matches!((ea, eb), (Some(a), Some(b)) if a.exact == b.exact);
                if uf.find(from) == uf.find(to) || exact_equal || (fa ^ fb).count_ones() <= k {
                    accepted.push((from, to));
                } else {
                    contradicted += 1;
                }
            }
            _ => claims_by_target.entry(to).or_default().push(from),
        }
    }
    let mut targets: Vec<u32> = claims_by_target.keys().copied().collect();
    targets.sort_unstable_by_key(|&t| rank[t as usize]);
    for target in targets {
        let claimants = &claims_by_target[&target];
        let mut strong_roots: Vec<u32> = claimants
            .iter()
            .filter(|&&c| strong_fp(c).is_some())
            .map(|&c| uf.find(c))
            .collect();
        strong_roots.sort_unstable();
        strong_roots.dedup();
        let conflicting = strong_roots.len() > 1;
        for &c in claimants {
            if conflicting && strong_fp(c).is_some() {
                fan_in += 1;
            } else {
                accepted.push((c, target));
            }
        }
    }
    (accepted, contradicted, fan_in)
}

/// Union-find with path halving and union by size.
#[derive(Debug)]
struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Returns true when two different sets were joined.
    fn union(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        let (big, small) = if self.size[ra as usize] >= self.size[rb as usize] {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strong(simhash: u64) -> PageEvidence {
        PageEvidence {
            simhash,
            exact: simhash.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 1,
            strong: true,
        }
    }

    #[test]
    fn near_duplicates_and_exact_and_weak() {
        let mut b = ClusterBuilder::new(ClusterConfig::default());
        b.add_page("http://h.test/a", strong(0));
        b.add_page("http://h.test/b", strong(0b11));
        b.add_page("http://h.test/c", strong(u64::MAX));
        // Weak pages: within distance of /a but weak, so they stay apart unless exact-equal.
        let weak = |simhash, exact| PageEvidence {
            simhash,
            exact,
            strong: false,
        };
        b.add_page("http://h.test/w1", weak(0b1, 42));
        b.add_page("http://h.test/w2", weak(0b1, 42));
        b.add_page("http://h.test/w3", weak(0, 43));
        let c = b.finish();
        let id = |u: &str| c.cluster_of(u).unwrap();
        assert_eq!(id("http://h.test/a"), id("http://h.test/b"));
        assert_ne!(id("http://h.test/a"), id("http://h.test/c"));
        assert_eq!(id("http://h.test/w1"), id("http://h.test/w2"));
        assert_ne!(id("http://h.test/w1"), id("http://h.test/a"));
        assert_ne!(id("http://h.test/w3"), id("http://h.test/a"));
        assert_eq!(id("http://h.test/a"), xxh3_64(b"http://h.test/a"));
        assert_eq!(c.stats().clusters, 4);
        assert_eq!(c.labelled_pairs().len(), 6);
    }

    /// A Weak page near a page of another cluster keeps its cluster but is left out of what the
    /// learner is given; a Weak page near pages of its own cluster only, or near nothing, is
    /// given as before, and a Strong page always.
    #[test]
    fn weak_pages_near_another_cluster_are_left_out_of_learning() {
        let weak = |simhash, exact| PageEvidence {
            simhash,
            exact,
            strong: false,
        };
        let mut b = ClusterBuilder::new(ClusterConfig::default());
        // One short post fetched twice, its chrome different: equal simhashes, unequal hashes.
        b.add_page("http://h.test/post/feed/", weak(0xf0f0, 1));
        b.add_page("http://h.test/post/feed/?replytocom=7", weak(0xf0f1, 2));
        // Two fetches that agree exactly, far from every other page.
        b.add_page("http://h.test/tag/a", weak(0x0fff_0000, 3));
        b.add_page("http://h.test/tag/a?ref=x", weak(0x0fff_0000, 3));
        // Another listing, far from everything.
        b.add_page("http://h.test/page/2/", weak(0xffff_0000_0000, 4));
        // Two pages with no text at all (simhash 0), different bytes: two clusters, both
        // unresolved, however many such pages a host has.
        b.add_page("http://h.test/app#a", weak(0, 6));
        b.add_page("http://h.test/app?view=b", weak(0, 7));
        // A Weak page near a Strong one of another cluster; the Strong one stays given.
        b.add_page("http://h.test/story", strong(0x1234_5678_0000_0000));
        b.add_page(
            "http://h.test/story?print=1",
            weak(0x1234_5678_0000_0001, 5),
        );
        let c = b.finish();
        let given: Vec<&str> = c.learning_assignments().map(|(url, _)| url).collect();
        assert_eq!(
            given,
            [
                "http://h.test/page/2/",
                "http://h.test/story",
                "http://h.test/tag/a",
                "http://h.test/tag/a?ref=x",
            ]
        );
        assert!(c.is_unresolved("http://h.test/post/feed/?replytocom=7"));
        assert!(!c.is_unresolved("http://h.test/story"));
        assert!(c.is_unresolved("http://h.test/app?view=b"));
        assert_eq!(c.stats().weak_unresolved, 5);
        // Their clusters are unchanged: each its own.
        assert_eq!(c.assignments().count(), 9);
        assert_eq!(c.stats().clusters, 8);
    }

    /// A shortlink ties its page's id URL to it as a reversed canonical claim, under the same
    /// guards, and the pairs applied are reported as declared; guarded ones are not.
    #[test]
    fn shortlinks_are_reversed_canonical_claims_under_the_same_guards() {
        let mut b = ClusterBuilder::new(ClusterConfig::default());
        // Drupal: the alias page declares its node URL; the node URL was not fetched.
        b.add_page("http://h.test/about-us", strong(0x0f0f));
        assert!(b.add_shortlink("http://h.test/about-us", "/node/5"));
        // Both fetched, same content: accepted.
        b.add_page("http://h.test/team", strong(0xff00));
        b.add_page("http://h.test/node/6", strong(0xff00 ^ 0b1));
        assert!(b.add_shortlink("http://h.test/team", "http://h.test/node/6"));
        // Both fetched, content disagrees: contradicted.
        b.add_page("http://h.test/news", strong(0x1234_5678));
        b.add_page("http://h.test/node/7", strong(!0x1234_5678));
        assert!(b.add_shortlink("http://h.test/news", "/node/7"));
        // A theme printing one shortlink on pages of different content: fan-in, rejected.
        b.add_page("http://h.test/a", strong(0xaaaa_0000));
        b.add_page("http://h.test/b", strong(0x5555_0000_0000));
        assert!(b.add_shortlink("http://h.test/a", "/?p=1"));
        assert!(b.add_shortlink("http://h.test/b", "/?p=1"));
        // Cross-host (wp.me) and self shortlinks are ignored, and so are views of the entity (a
        // comment page, a reply form): a query parameter the shortlink lacks.
        assert!(!b.add_shortlink("http://h.test/a", "https://wp.me/p1-2"));
        assert!(!b.add_shortlink("http://h.test/a", "/a"));
        b.add_page("http://h.test/about-us?page=2", strong(0x7777_0000_0000));
        assert!(!b.add_shortlink("http://h.test/about-us?page=2", "/node/5"));
        assert!(!b.add_shortlink("http://h.test/about-us?replytocom=7", "/?p=3"));
        // A page whose path ends in a number may be the entity's second page.
        assert!(!b.add_shortlink("http://h.test/2019/05/hello/2/", "/?p=3"));
        assert!(!b.add_shortlink("http://h.test/hello/comment-page-2", "/?p=3"));
        b.add_redirect("http://h.test/old-team", "http://h.test/team");
        b.add_canonical("http://h.test/team?ref=x", "/team");
        let c = b.finish();
        let id = |u: &str| c.cluster_of(u).unwrap();
        assert_eq!(id("http://h.test/node/5"), id("http://h.test/about-us"));
        assert_eq!(id("http://h.test/node/6"), id("http://h.test/team"));
        assert_ne!(id("http://h.test/node/7"), id("http://h.test/news"));
        assert_ne!(id("http://h.test/a"), id("http://h.test/b"));
        assert_ne!(id("http://h.test/?p=1"), id("http://h.test/a"));
        assert_eq!(c.reason_of("http://h.test/node/5"), Some(Reason::Canonical));
        let s = c.stats();
        assert_eq!(
            (s.shortlinks, s.shortlinks_contradicted, s.shortlinks_fan_in),
            (2, 1, 2)
        );
        assert_eq!(s.cross_host_ignored, 1);
        let pair = |from: &str, to: &str, declaration| DeclaredPair {
            from: format!("http://h.test{from}"),
            to: format!("http://h.test{to}"),
            declaration,
        };
        let mut declared = c.declared().to_vec();
        declared.sort_by(|x, y| x.from.cmp(&y.from));
        assert_eq!(
            declared,
            [
                pair("/node/5", "/about-us", Declaration::Shortlink),
                pair("/node/6", "/team", Declaration::Shortlink),
                pair("/old-team", "/team", Declaration::Redirect),
                pair("/team?ref=x", "/team", Declaration::Canonical),
            ]
        );
    }

    #[test]
    fn a_file_copied_into_many_folders_is_one_cluster_and_a_page_there_is_a_catch_all() {
        let mut b = ClusterBuilder::new(ClusterConfig::default());
        b.add_digest("http://h.test/logo.gif", "LOGO");
        for i in 0..12 {
            b.add_digest(&format!("http://h.test/section{i}/logo.gif"), "LOGO");
            // A page of one name in every folder answering one body: a catch-all's.
            b.add_digest(&format!("http://h.test/section{i}/index.html"), "HOME");
        }
        // One body under many file names is a catch-all too.
        for i in 0..12 {
            b.add_digest(&format!("http://h.test/img/{i}.gif"), "PLACEHOLDER");
        }
        let c = b.finish();
        let id = |u: &str| c.cluster_of(u).unwrap();
        assert_eq!(
            id("http://h.test/section7/logo.gif"),
            id("http://h.test/logo.gif")
        );
        assert_eq!(c.members_of("http://h.test/logo.gif").unwrap().len(), 13);
        assert_ne!(
            id("http://h.test/section1/index.html"),
            id("http://h.test/section2/index.html")
        );
        assert_ne!(id("http://h.test/img/1.gif"), id("http://h.test/img/2.gif"));
        assert_eq!(c.stats().digests_fan_in, 24);
    }

    #[test]
    fn digests_merge_with_a_reason_and_catch_all_digests_do_not() {
        let mut b = ClusterBuilder::new(ClusterConfig::default());
        b.add_digest("http://h.test/wop/", "D1");
        b.add_digest("http://h.test/wop/index.html", "D1");
        b.add_digest("http://h.test/other", "D2");
        // One page answered for ten different paths: a catch-all, not DUST.
        for i in 0..10 {
            b.add_digest(&format!("http://h.test/missing{i}"), "HOME");
        }
        // A revisit: same payload as an earlier capture.
        assert!(b.add_same_payload("http://h.test/again", "http://h.test/other"));
        assert!(!b.add_same_payload("http://h.test/x", "http://elsewhere.test/x"));
        b.add_redirect("http://h.test/old", "http://h.test/other");
        b.add_page("http://h.test/p1", strong(7));
        b.add_page("http://h.test/p2", strong(7 ^ 0b1));
        let c = b.finish();
        let id = |u: &str| c.cluster_of(u).unwrap();
        let why = |u: &str| c.reason_of(u).unwrap();
        assert_eq!(id("http://h.test/wop/"), id("http://h.test/wop/index.html"));
        assert_eq!(why("http://h.test/wop/index.html"), Reason::Digest);
        assert_eq!(id("http://h.test/again"), id("http://h.test/other"));
        assert_eq!(why("http://h.test/again"), Reason::Digest);
        assert_eq!(why("http://h.test/old"), Reason::Redirect);
        assert_eq!(why("http://h.test/p2"), Reason::Content);
        assert_ne!(id("http://h.test/missing0"), id("http://h.test/missing1"));
        assert_eq!(why("http://h.test/missing0"), Reason::Singleton);
        assert_eq!(c.stats().digests_fan_in, 10);
        assert_eq!(c.stats().digest_merges, 2);
        assert_eq!(c.stats().cross_host_ignored, 1);
        assert!(c
            .assignments_with_reasons()
            .all(|(u, _, r)| (r == Reason::Singleton) == (c.members_of(u).unwrap().len() == 1)));
    }
}
