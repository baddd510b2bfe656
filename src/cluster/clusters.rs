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
//! # Stability
//!
//! [`ClusterBuilder::finish`] processes everything in URL order, so the same set of evidence
//! gives the same clusters whatever order it was added in, and a cluster's id is the xxh3 hash of
//! its smallest member URL (so ids survive unrelated changes elsewhere on the host).
//!
//! URLs are parsed with the WHATWG parser (so relative canonical targets resolve and trivially
//! different spellings meet); callers should pass every URL through the same static normalization
//! first. Memory is proportional to the URLs added: the caller bounds that (the sampler does).

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

use super::index::{SimhashIndex, DEFAULT_MAX_DISTANCE, MAX_SUPPORTED_DISTANCE};

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
    /// Canonical pairs applied.
    pub canonicals: usize,
    /// Canonical pairs rejected because both pages' Strong content disagrees.
    pub canonicals_contradicted: usize,
    /// Canonical pairs rejected because distinct content clusters claim the same target.
    pub canonicals_fan_in: usize,
    /// Redirect or canonical pairs ignored because the two URLs are on different hosts.
    pub cross_host_ignored: usize,
    /// Redirect or canonical pairs ignored because a URL did not parse.
    pub invalid_ignored: usize,
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
    redirects: Vec<(u32, u32)>,
    canonicals: Vec<(u32, u32)>,
    cross_host_ignored: usize,
    invalid_ignored: usize,
}

/// Parses and re-serialises a URL; unparseable strings are kept as given.
fn normalise(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_string(), String::from)
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
    fn same_host_pair(&mut self, from: &str, target: &str) -> Option<(String, String)> {
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
        Some((String::from(base), String::from(to)))
    }

    /// Records that `from` redirected to `to` (absolute, or relative to `from`). Returns false
    /// when the pair is ignored (cross-host, unparseable, or a self-redirect). The body of a 3xx
    /// response is not the page's content: record the redirect, not a page, for `from`.
    pub fn add_redirect(&mut self, from: &str, to: &str) -> bool {
        let Some((a, b)) = self.same_host_pair(from, to) else {
            return false;
        };
        if a == b {
            return false;
        }
        let (a, b) = (self.node(a), self.node(b));
        self.redirects.push((a, b));
        true
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
        let (a, b) = (self.node(a), self.node(b));
        self.canonicals.push((a, b));
        true
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
                        if uf.union(first, node) {
                            stats.exact_merges += 1;
                        }
                    }
                    None => {
                        first_with_exact.insert(ev.exact, node);
                    }
                }
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
                    uf.union(unit_node[centre as usize], unit_node[member as usize]);
                    stats.near_duplicate_merges += 1;
                }
            }
        }

        // 3. Canonical claims, checked against content before anything declared is applied.
        let strong_fp = |node: u32| -> Option<u64> {
            self.evidence[node as usize]
                .filter(|e| e.strong)
                .map(|e| e.simhash)
        };
        let mut claims_by_target: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut accepted: Vec<(u32, u32)> = Vec::new();
        for &(from, to) in &self.canonicals {
            let (ea, eb) = (self.evidence[from as usize], self.evidence[to as usize]);
            match (strong_fp(from), strong_fp(to)) {
                (Some(fa), Some(fb)) => {
                    let exact_equal = matches!((ea, eb), (Some(a), Some(b)) if a.exact == b.exact);
                    if uf.find(from) == uf.find(to) || exact_equal || (fa ^ fb).count_ones() <= k {
                        accepted.push((from, to));
                    } else {
                        stats.canonicals_contradicted += 1;
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
                    stats.canonicals_fan_in += 1;
                } else {
                    accepted.push((c, target));
                }
            }
        }
        for (a, b) in accepted {
            uf.union(a, b);
            stats.canonicals += 1;
        }

        // 4. Redirects: what the server did, applied as given.
        for &(a, b) in &self.redirects {
            uf.union(a, b);
            stats.redirects += 1;
        }

        // 5. Stable ids from the smallest member URL; members listed in URL order.
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
        Clustering {
            urls: sorted_urls,
            cluster_index,
            clusters,
            stats,
        }
    }
}

/// The result: every URL's cluster and every cluster's members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clustering {
    /// All URLs, sorted.
    urls: Vec<String>,
    /// Parallel to `urls`: index into `clusters`.
    cluster_index: Vec<u32>,
    /// Clusters in order of their smallest member URL.
    clusters: Vec<Cluster>,
    stats: ClusterStats,
}

impl Clustering {
    /// The cluster id of `url` (parsed the same way as when it was added).
    pub fn cluster_of(&self, url: &str) -> Option<ClusterId> {
        let key = normalise(url);
        let i = self.urls.binary_search(&key).ok()?;
        Some(self.clusters[self.cluster_index[i] as usize].id)
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
}
