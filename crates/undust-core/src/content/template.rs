//! Per-host template model: which pagelets recur across a host's pages.
//!
//! # Local algorithm (default)
//!
//! Bar-Yossef & Rajagopalan's local template detection groups pagelets by their shingle and calls
//! a group with several owner pages a template. Here it runs incrementally: [`TemplateModel::observe`]
//! counts, per pagelet identity (see [`super::PageletDigest::identity`]), how many observed pages
//! carry it (once per page). An identity is template when
//!
//! - the model has seen at least [`ContentConfig::template_min_pages`] pages (default 3; below,
//!   nothing is template and fingerprints rely on the per-pagelet boilerplate cues alone), and
//! - at least `max(2, ⌈template_min_share × pages⌉)` pages carry it (default share 0.4), and
//! - it was seen beside at least 2 distinct *companions* (below).
//!
//! The share is a fraction, not an absolute count, so that a few duplicates of one article in a
//! large sample do not turn its text into "template"; 0.4 still catches navigation, footers and
//! sidebars, which sit on nearly every page of a site.
//!
//! # Duplicated articles are not template
//!
//! The share alone fails on small hosts, and a small host is every host early in a crawl: an
//! article fetched under 5 URLs (a rotated ad, tracking parameters) on a host of 2 articles sits on
//! half its pages, its text became template, the fingerprints of its copies were left with the
//! rotating ad and footer only, and the copies no longer met (pair recall 0.11 on the Zyte
//! benchmark's same-host articles with four near-duplicates each; `tests/it/real_pages.rs`).
//! Bar-Yossef & Rajagopalan remove duplicate pages before looking for templates for this reason.
//! The model cannot tell duplicates apart before fingerprinting, so it asks what text blocks are
//! asked (see "Text blocks"): a template sits beside *different* content, a duplicated article
//! always beside the same. For each pagelet occurrence the model records a companion, the combined
//! identity of the page's largest other *textual* pagelets (link density at most 0.33 and at least
//! 20 tokens, the boilerplate cues' defaults, so that navigation, related-link lists, short ads and
//! footer lines, which rotate, do not count; every pagelet when the page has no textual one), and
//! a pagelet is template only beside at least 2 distinct companions.
//!
//! # Bounded memory
//!
//! Counts are kept for at most [`ContentConfig::template_capacity`] identities (default 1024) with
//! the Space-Saving heavy-hitters algorithm (Metwally et al. 2005): when full, a new identity
//! replaces the least counted one and inherits its count as overestimation error. Any identity
//! carried by more than `pages / capacity` pages is guaranteed to be tracked, far below the 0.4
//! share; decisions use the guaranteed count (count − error). About 56 bytes per tracked identity:
//! ≈ 56 KiB per host at the default capacity, 16 more per identity once the table is full (the
//! index of the least counted identity, see [`super::space_saving`], which finds the victim
//! without scanning the table).
//!
//! # Identities mask numbers
//!
//! Identities are computed with numeric tokens masked (see [`super::pagelet`]), so a footer whose
//! only change is a timestamp, a counter or a render time is recognised as template.
//!
//! # Text blocks
//!
//! Pagelets without links are coarse: a link-free sidebar (constant sections plus a rotating
//! "Trending" list) often shares one pagelet with the article. The model therefore also counts the
//! pagelets' text blocks ([`super::BlockDigest`]: paragraphs, list items, headings, cells, loose
//! text runs), with their own Space-Saving counter ([`ContentConfig::block_template_capacity`],
//! default 2048 identities, ≈ 100 bytes each: ≈ 200 KiB per host). Blocks need a lower share than
//! pagelets, because a rotating promo line drawn from a pool of 20 sits on only a few percent of
//! the pages, but a low share alone would also catch the paragraphs of a popular article
//! duplicated on many URLs, which are exactly what must be kept. What tells them apart is what the
//! block appears *beside*: a promo line or a sidebar section appears beside many different
//! articles, an article's paragraph always appears beside the same other paragraphs. So for each
//! block occurrence the model records a *companion*, the combined identity of the page's largest
//! other text units (blocks, or pagelets without blocks): the largest and those among the next
//! two with at least half its tokens, so that a big constant sidebar block does not hide the
//! article beside it and short rotating lines do not vary a short article's companion. Up to 4
//! distinct companions are kept per block. A block identity is template when
//!
//! - the model is mature (as for pagelets), and
//! - at least `max(3, ⌈block_template_min_share × pages⌉)` pages carry it (default share 0.05), and
//! - it was seen beside at least 3 distinct companions.
//!
//! A duplicated article (however many URLs) has one companion per paragraph, so it is never
//! removed; boilerplate recurring beside different content is.
//!
//! # Global algorithm's connectivity test (option)
//!
//! With [`ContentConfig::template_connectivity`] and pages observed through
//! [`TemplateModel::observe_linked`], the model also keeps the host's link graph (at most 512
//! pages with at most 64 same-host links each: ≈ 0.3 MiB per host) and, per tracked identity, up to
//! 64 owner pages. An identity is then template only if, in addition, the largest connected
//! component of its recorded owners in the undirected link graph among them holds at least half of
//! them: templatized pages of one authority link to each other, mirrored or accidentally similar
//! pages do not (the paper's Definition 4, relaxed to a sample).

use std::collections::HashMap;

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::space_saving::{Counted, SpaceSaving};
use super::{ContentConfig, PageAnalysis, PageDigest};

/// Maximum pages kept in the link graph.
const GRAPH_MAX_PAGES: usize = 512;
/// Maximum same-host links kept per graph page.
const GRAPH_MAX_LINKS: usize = 64;
/// Maximum owner pages recorded per identity.
const MAX_OWNERS: usize = 64;
/// Distinct companions recorded per block identity.
const MAX_COMPANIONS: usize = 4;
/// Distinct companions a block needs to be template.
const MIN_COMPANIONS: usize = 3;
/// Pages that must carry a block for it to be template, whatever the share.
const BLOCK_MIN_PAGES: u64 = 3;
/// Largest other text units combined into a block's companion.
const COMPANION_UNITS: usize = 3;
/// Distinct companions a pagelet needs to be template (see "Duplicated articles are not template").
const PAGELET_MIN_COMPANIONS: usize = 2;
/// A pagelet whose link-text tokens are at most this share of its tokens, and that has at least
/// [`COMPANION_MIN_TOKENS`] tokens, is textual: a candidate companion of the pagelets beside it.
/// Navigation and link lists are not (they rotate), nor are a short ad or a footer line (they
/// rotate too). Both are the boilerplate cues' defaults ([`ContentConfig`]): what the fingerprint
/// does not count as content does not tell content apart here either.
const COMPANION_MAX_LINK_DENSITY: f64 = 0.33;
/// See [`COMPANION_MAX_LINK_DENSITY`].
const COMPANION_MIN_TOKENS: u32 = 20;

/// Space-Saving counter of one block identity, with the distinct companions seen beside it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct BlockCounter {
    count: u64,
    error: u64,
    companions: Vec<u64>,
}

impl Counted for BlockCounter {
    fn count(&self) -> u64 {
        self.count
    }
    fn inheriting(floor: u64) -> Self {
        BlockCounter {
            count: floor,
            error: floor,
            companions: Vec::new(),
        }
    }
    fn list_bytes(&self) -> usize {
        crate::heap::vec_bytes(self.companions.capacity(), std::mem::size_of::<u64>())
    }
}

/// The combined identity of the largest units in `units` (sorted largest first) other than
/// `identity`: the largest and those among the next ones with at least half its tokens.
fn companion_of(units: &[(u32, usize, u64)], identity: u64) -> u64 {
    let mut others = units.iter().filter(|u| u.2 != identity).peekable();
    let largest = others.peek().map_or(0, |u| u.0);
    others
        .take(COMPANION_UNITS)
        .take_while(|u| u.0.saturating_mul(2) >= largest)
        .fold(0u64, |acc, u| acc.rotate_left(17) ^ u.2)
}

fn default_block_share() -> f64 {
    ContentConfig::default().block_template_min_share
}

fn default_block_capacity() -> usize {
    ContentConfig::default().block_template_capacity
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Counter {
    count: u64,
    error: u64,
    #[serde(default)]
    owners: Vec<u32>,
    /// Distinct companions seen beside the identity (at most [`PAGELET_MIN_COMPANIONS`]).
    #[serde(default)]
    companions: Vec<u64>,
}

impl Counted for Counter {
    fn count(&self) -> u64 {
        self.count
    }
    fn inheriting(floor: u64) -> Self {
        Counter {
            count: floor,
            error: floor,
            owners: Vec::new(),
            companions: Vec::new(),
        }
    }
    fn list_bytes(&self) -> usize {
        use crate::heap::vec_bytes;
        use std::mem::size_of;
        vec_bytes(self.owners.capacity(), size_of::<u32>())
            + vec_bytes(self.companions.capacity(), size_of::<u64>())
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct LinkGraph {
    /// Per page (graph index): hash of its URL and hashes of its same-host link targets.
    pages: Vec<(u64, Vec<u64>)>,
}

/// Incremental, serde-serializable template model of one host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TemplateModel {
    pages: u64,
    min_share: f64,
    min_pages: u64,
    capacity: usize,
    connectivity: bool,
    counters: SpaceSaving<Counter>,
    #[serde(default)]
    graph: LinkGraph,
    #[serde(default = "default_block_share")]
    block_min_share: f64,
    #[serde(default = "default_block_capacity")]
    block_capacity: usize,
    #[serde(default)]
    blocks: SpaceSaving<BlockCounter>,
}

impl TemplateModel {
    /// An empty model with the thresholds of `config`.
    pub fn new(config: &ContentConfig) -> Self {
        TemplateModel {
            pages: 0,
            min_share: config.template_min_share.clamp(0.0, 1.0),
            min_pages: config.template_min_pages,
            capacity: config.template_capacity.max(1),
            connectivity: config.template_connectivity,
            counters: SpaceSaving::default(),
            graph: LinkGraph::default(),
            block_min_share: config.block_template_min_share.clamp(0.0, 1.0),
            block_capacity: config.block_template_capacity.max(1),
            blocks: SpaceSaving::default(),
        }
    }

    /// Counts one page's pagelets (each identity once per page).
    pub fn observe(&mut self, page: &PageAnalysis) {
        self.observe_owned(&page.digest, None);
    }

    /// Counts one page from its digest (e.g. a page kept by the sidecar, when rebuilding a model).
    pub fn observe_digest(&mut self, digest: &PageDigest) {
        self.observe_owned(digest, None);
    }

    fn observe_owned(&mut self, digest: &PageDigest, owner: Option<u32>) {
        self.pages += 1;
        // Companion candidates: the page's largest textual pagelets (all pagelets on a page with
        // no textual one), largest first, document order among equals; one more than needed so a
        // pagelet can skip itself.
        let textual = |p: &&super::PageletDigest| {
            p.tokens >= COMPANION_MIN_TOKENS
                && f64::from(p.link_tokens) <= COMPANION_MAX_LINK_DENSITY * f64::from(p.tokens)
        };
        let any_textual = digest.pagelets.iter().any(|p| textual(&p));
        let mut units: Vec<(u32, usize, u64)> = digest
            .pagelets
            .iter()
            .filter(|p| !any_textual || textual(p))
            .enumerate()
            .map(|(at, p)| (p.tokens, at, p.identity))
            .collect();
        units.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        units.truncate(COMPANION_UNITS + 1);
        // Identities are hashes already: a plain multiply-hash set costs less than SipHash.
        let mut seen = FxHashSet::default();
        seen.reserve(digest.pagelets.len());
        for p in &digest.pagelets {
            if seen.insert(p.identity) {
                let companion = companion_of(&units, p.identity);
                self.count(p.identity, owner, companion);
            }
        }
        self.observe_blocks(digest);
    }

    /// Counts the page's block identities (each once per page) with their companions.
    fn observe_blocks(&mut self, digest: &PageDigest) {
        // Text units: blocks, and pagelets without blocks (a single paragraph, a whole article).
        let blocks: usize = digest.pagelets.iter().map(|p| p.blocks.len()).sum();
        let mut units: Vec<(u32, usize, u64)> = Vec::with_capacity(blocks + digest.pagelets.len());
        for p in &digest.pagelets {
            if p.blocks.is_empty() {
                units.push((p.tokens, units.len(), p.identity));
            } else {
                for b in &p.blocks {
                    units.push((b.tokens, units.len(), b.identity));
                }
            }
        }
        // Largest first, document order among equals; one more than needed so a block can skip
        // itself.
        units.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        units.truncate(COMPANION_UNITS + 1);
        // Sized once: grown from empty it was rehashed several times on most pages.
        let mut seen = FxHashSet::default();
        seen.reserve(blocks);
        for p in &digest.pagelets {
            for b in &p.blocks {
                if !seen.insert(b.identity) {
                    continue;
                }
                let companion = companion_of(&units, b.identity);
                self.count_block(b.identity, companion);
            }
        }
    }

    fn count_block(&mut self, identity: u64, companion: u64) {
        self.blocks.update(identity, self.block_capacity, |c| {
            c.count += 1;
            if c.companions.len() < MAX_COMPANIONS && !c.companions.contains(&companion) {
                c.companions.push(companion);
            }
        });
    }

    /// Whether text blocks with this identity are template on this host (see the module
    /// documentation).
    pub fn is_template_block(&self, identity: u64) -> bool {
        if !self.is_mature() {
            return false;
        }
        let Some(c) = self.blocks.get(&identity) else {
            return false;
        };
        let threshold =
            ((self.block_min_share * self.pages as f64).ceil() as u64).max(BLOCK_MIN_PAGES);
        c.count.saturating_sub(c.error) >= threshold && c.companions.len() >= MIN_COMPANIONS
    }

    /// Number of block identities currently tracked.
    pub fn tracked_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Counts one page and records its links for the connectivity test: `url` is the page's URL,
    /// against which its `href`s are resolved (links to other hosts are dropped). When the graph
    /// is full or `url` does not parse, the page is counted without graph data.
    pub fn observe_linked(&mut self, url: &str, page: &PageAnalysis) {
        let owner = if self.connectivity && self.graph.pages.len() < GRAPH_MAX_PAGES {
            url::Url::parse(url).ok().map(|base| {
                let mut links: Vec<u64> = page
                    .links
                    .iter()
                    .filter_map(|href| base.join(href).ok())
                    .filter(|u| u.host_str() == base.host_str())
                    .map(|u| url_hash(&u))
                    .collect();
                links.sort_unstable();
                links.dedup();
                links.truncate(GRAPH_MAX_LINKS);
                self.graph.pages.push((url_hash(&base), links));
                (self.graph.pages.len() - 1) as u32
            })
        } else {
            None
        };
        self.observe_owned(&page.digest, owner);
    }

    fn count(&mut self, identity: u64, owner: Option<u32>, companion: u64) {
        self.counters.update(identity, self.capacity, |c| {
            c.count += 1;
            if c.companions.len() < PAGELET_MIN_COMPANIONS && !c.companions.contains(&companion) {
                c.companions.push(companion);
            }
            if let Some(o) = owner {
                if c.owners.len() < MAX_OWNERS {
                    c.owners.push(o);
                }
            }
        });
    }

    /// Bytes this model holds on the heap (its tables at their capacities, every counter's lists,
    /// the link graph), as the allocator takes them ([`crate::heap`]): what a memory budget
    /// holding the model must count. The tables keep their sums as they change (the sidecar asks
    /// after every page); only the link graph (at most [`GRAPH_MAX_PAGES`] pages, with the
    /// connectivity option alone) is walked.
    pub fn held_bytes(&self) -> usize {
        use crate::heap::vec_bytes;
        use std::mem::size_of;
        let graph: usize = self
            .graph
            .pages
            .iter()
            .map(|(_, links)| vec_bytes(links.capacity(), size_of::<u64>()))
            .sum();
        self.counters.held_bytes()
            + self.blocks.held_bytes()
            + vec_bytes(self.graph.pages.capacity(), size_of::<(u64, Vec<u64>)>())
            + graph
    }

    /// Pages observed.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// True once enough pages were observed for template decisions.
    pub fn is_mature(&self) -> bool {
        self.pages >= self.min_pages.max(2)
    }

    /// Pages that must carry an identity for it to be template.
    pub fn threshold(&self) -> u64 {
        ((self.min_share * self.pages as f64).ceil() as u64).max(2)
    }

    /// Whether pagelets with this identity are template on this host.
    pub fn is_template(&self, identity: u64) -> bool {
        if !self.is_mature() {
            return false;
        }
        let Some(c) = self.counters.get(&identity) else {
            return false;
        };
        if c.count.saturating_sub(c.error) < self.threshold()
            || c.companions.len() < PAGELET_MIN_COMPANIONS
        {
            return false;
        }
        !self.connectivity || c.owners.len() < 2 || self.owners_connected(&c.owners)
    }

    /// Number of identities currently tracked.
    pub fn tracked(&self) -> usize {
        self.counters.len()
    }

    /// The connectivity test: the largest component of `owners` in the undirected link graph
    /// among them holds at least half of them.
    fn owners_connected(&self, owners: &[u32]) -> bool {
        let n = owners.len();
        let by_url: HashMap<u64, usize> = owners
            .iter()
            .enumerate()
            .filter_map(|(i, &o)| self.graph.pages.get(o as usize).map(|p| (p.0, i)))
            .collect();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for (i, &o) in owners.iter().enumerate() {
            let Some((_, links)) = self.graph.pages.get(o as usize) else {
                continue;
            };
            for l in links {
                if let Some(&j) = by_url.get(l) {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    if a != b {
                        parent[a] = b;
                    }
                }
            }
        }
        let mut sizes = vec![0usize; n];
        for i in 0..n {
            let r = find(&mut parent, i);
            sizes[r] += 1;
        }
        let largest = sizes.into_iter().max().unwrap_or(0);
        largest >= 2 && largest * 2 >= n
    }
}

/// Hash of a URL without its fragment (what a link graph node is).
fn url_hash(u: &url::Url) -> u64 {
    let s = u.as_str();
    let s = s.split('#').next().unwrap_or(s);
    xxh3_64(s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::PageletDigest;

    fn digest(ids: &[u64]) -> PageDigest {
        PageDigest {
            pagelets: ids
                .iter()
                .map(|&identity| PageletDigest {
                    identity,
                    tokens: 10,
                    link_tokens: 0,
                    exact: identity,
                    vector: vec![1; 64],
                    blocks: Vec::new(),
                })
                .collect(),
            page_exact: 0,
            page_tokens: 10 * ids.len() as u32,
        }
    }

    /// A page of (identity, tokens, link tokens) pagelets.
    fn sized(pagelets: &[(u64, u32, u32)]) -> PageDigest {
        PageDigest {
            pagelets: pagelets
                .iter()
                .map(|&(identity, tokens, link_tokens)| PageletDigest {
                    identity,
                    tokens,
                    link_tokens,
                    exact: identity,
                    vector: vec![1; 64],
                    blocks: Vec::new(),
                })
                .collect(),
            page_exact: 0,
            page_tokens: pagelets.iter().map(|p| p.1).sum(),
        }
    }

    #[test]
    fn a_story_copied_under_many_urls_of_a_small_host_is_not_template() {
        // Two stories (1000, 2000), each fetched under 5 URLs that differ by a rotating short ad
        // (3000 + copy): each story sits on half the pages, above the 0.4 share. The navigation
        // (1, link-dense) sits beside both stories.
        let mut m = TemplateModel::new(&ContentConfig::default());
        for story in [1000u64, 2000] {
            for copy in 0..5u64 {
                m.observe_digest(&sized(&[
                    (1, 30, 28),
                    (story, 400, 5),
                    (3000 + copy, 12, 0),
                ]));
            }
        }
        assert!(m.is_template(1), "navigation beside two stories");
        assert!(!m.is_template(1000), "a story beside itself only");
        assert!(!m.is_template(2000));
        // A footer beside both stories is template too.
        let mut m = TemplateModel::new(&ContentConfig::default());
        for story in [1000u64, 2000, 1000, 2000, 1000] {
            m.observe_digest(&sized(&[(story, 400, 5), (7, 25, 0)]));
        }
        assert!(m.is_template(7));
        assert!(!m.is_template(1000));
    }

    #[test]
    fn recurring_identities_become_template_after_min_pages() {
        let mut m = TemplateModel::new(&ContentConfig::default());
        m.observe_digest(&digest(&[1, 100]));
        m.observe_digest(&digest(&[1, 101]));
        // Two pages: immature, nothing is template yet.
        assert!(!m.is_template(1));
        m.observe_digest(&digest(&[1, 1, 102]));
        assert_eq!(m.pages(), 3);
        assert!(m.is_template(1));
        assert!(!m.is_template(100));
        // A share, not a count: after many pages without it, 1 is no longer template.
        for i in 0..20 {
            m.observe_digest(&digest(&[200 + i]));
        }
        assert!(!m.is_template(1));
    }

    /// A page of one pagelet made of blocks `(identity, tokens)`.
    fn blocky(blocks: &[(u64, u32)]) -> PageDigest {
        let tokens = blocks.iter().map(|b| b.1).sum();
        PageDigest {
            pagelets: vec![PageletDigest {
                identity: blocks.iter().fold(0, |a, b| a ^ b.0),
                tokens,
                link_tokens: 0,
                exact: 0,
                vector: vec![1; 64],
                blocks: blocks
                    .iter()
                    .map(|&(identity, tokens)| crate::content::BlockDigest {
                        identity,
                        tokens,
                        link_tokens: 0,
                        vector: vec![1; 64],
                    })
                    .collect(),
            }],
            page_exact: 0,
            page_tokens: tokens,
        }
    }

    #[test]
    fn blocks_beside_different_content_are_template_duplicated_articles_are_not() {
        let mut m = TemplateModel::new(&ContentConfig::default());
        for i in 0..100u64 {
            // Every page: a constant sidebar block (1), a promo from a pool of 10 (10..20).
            // Pages 0..40 are URLs of one popular article (paragraphs 500, 501); the others
            // carry distinct articles.
            let promo = 10 + i % 10;
            let article = if i < 40 {
                vec![(500, 60), (501, 50)]
            } else {
                vec![(1000 + 2 * i, 60), (1001 + 2 * i, 50)]
            };
            let mut blocks = vec![(1, 8), (promo, 5)];
            blocks.extend(article);
            m.observe_digest(&blocky(&blocks));
        }
        assert!(m.is_template_block(1), "constant sidebar");
        assert!((10..20).all(|p| m.is_template_block(p)), "rotating promos");
        assert!(!m.is_template_block(500) && !m.is_template_block(501));
        assert!(!m.is_template_block(1000 + 2 * 77));
        assert!(m.tracked_blocks() <= ContentConfig::default().block_template_capacity);
        // Old serialized models (without block counters) still load.
        let mut json: serde_json::Value = serde_json::to_value(&m).expect("serialize");
        if let Some(o) = json.as_object_mut() {
            o.remove("blocks");
            o.remove("block_min_share");
            o.remove("block_capacity");
        }
        let old: TemplateModel = serde_json::from_value(json).expect("old model loads");
        assert!(!old.is_template_block(1));
        assert_eq!(old.pages(), 100);
    }

    /// What [`TemplateModel::held_bytes`] was before the tables kept their sums: a walk.
    fn walked_held_bytes(m: &TemplateModel) -> usize {
        use crate::heap::{hash_table_bytes, vec_bytes};
        use std::mem::size_of;
        let table = |capacity: usize, entry: usize, least: usize| {
            hash_table_bytes(capacity, entry) + vec_bytes(least, 16)
        };
        table(
            m.counters.capacity(),
            size_of::<(u64, Counter)>(),
            m.counters.least_capacity(),
        ) + m.counters.values().map(Counted::list_bytes).sum::<usize>()
            + table(
                m.blocks.capacity(),
                size_of::<(u64, BlockCounter)>(),
                m.blocks.least_capacity(),
            )
            + m.blocks.values().map(Counted::list_bytes).sum::<usize>()
            + vec_bytes(m.graph.pages.capacity(), size_of::<(u64, Vec<u64>)>())
            + m.graph
                .pages
                .iter()
                .map(|(_, links)| vec_bytes(links.capacity(), size_of::<u64>()))
                .sum::<usize>()
    }

    #[test]
    fn held_bytes_kept_as_the_tables_change_equal_a_walk_of_the_tables() {
        let config = ContentConfig {
            template_capacity: 16,
            block_template_capacity: 24,
            template_connectivity: true,
            ..ContentConfig::default()
        };
        let mut m = TemplateModel::new(&config);
        for i in 0..300u64 {
            // Recurring and new pagelets and blocks: tables fill, evict, lists grow.
            m.observe_digest(&digest(&[1, 2 + i % 5, 100 + i]));
            m.observe_digest(&blocky(&[(1, 8), (10 + i % 7, 5), (1000 + i, 60)]));
            assert_eq!(m.held_bytes(), walked_held_bytes(&m), "page {i}");
        }
        let json = serde_json::to_string(&m).expect("serialize");
        let loaded: TemplateModel = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(loaded.held_bytes(), walked_held_bytes(&loaded));
    }

    #[test]
    fn heavy_hitters_stay_bounded_and_keep_the_frequent() {
        let config = ContentConfig {
            template_capacity: 16,
            ..ContentConfig::default()
        };
        let mut m = TemplateModel::new(&config);
        for i in 0..1000u64 {
            m.observe_digest(&digest(&[7, 8, 10_000 + i]));
        }
        assert!(m.tracked() <= 16);
        assert!(m.is_template(7) && m.is_template(8));
        assert!(!m.is_template(10_999));
    }
}
