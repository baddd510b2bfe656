//! Origin signatures: the few hundred bytes of an origin's summary that propose candidate pairs
//! when the full summaries of every origin are too many to hold at once.
//!
//! A fleet of sidecars summarizes its hosts apart (a frontier shards hosts across sidecars), so a
//! detection pass that wants pairs whose two hosts landed on different sidecars reads the other
//! sidecars' summaries. At 100,000 origins the full summaries (paths, content marks and links of
//! each, up to [`super::SummaryLimits`]) do not fit a pass's memory; their signatures do. The
//! paper's cheap signals, cut down to what proposes a pair:
//!
//! - the server's address (*IP4*);
//! - the host name's labels but the last (the top-level domain) and `www` (*hosts*: `www.x.org`,
//!   `x.org`, `x.net` share `x`), and the host itself (`http://` and `https://` of one host);
//! - a bottom-k sketch of the path hashes (*paths*: equal sketches entries mean equal paths;
//!   the k smallest hashes of two equal sets are equal, of two overlapping sets overlap);
//! - a bottom-k sketch of the exact hashes of strong content marks (undust's content proposer:
//!   a mirror network host serving the site under a folder has other paths, the same content).
//!
//! [`propose`] pairs origins that share a key, skipping keys held by more than
//! [`ProposeParams::max_key_origins`] origins (a shared-hosting address, a stock page, a common
//! label: the paper's document-frequency restriction), and keeps each origin's best
//! [`ProposeParams::partners_per_origin`] partners by shared keys: one sort of the keys
//! (`n log n` in the origins), at most `max_key_origins` partners listed per key of a wanted
//! origin, and an output linear in the origins. Content then confirms, on full summaries fetched only for the
//! origins of proposed pairs.

use std::net::IpAddr;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use super::summary::HostSummary;

/// Sketch entries kept per kind (paths, contents) unless a caller says otherwise.
pub const DEFAULT_SKETCH: usize = 16;

/// What proposes an origin's candidate pairs (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginSignature {
    /// `scheme://host[:port]`.
    pub origin: String,
    /// The host name alone.
    pub host: String,
    /// The server's address, when a fetch reported it.
    pub ip: Option<IpAddr>,
    /// The smallest hashes of the origin's paths, ascending.
    pub paths: Vec<u64>,
    /// The smallest exact hashes of its strong content marks, ascending.
    pub contents: Vec<u64>,
}

/// The `k` smallest distinct values of `values`, ascending.
fn bottom_k(values: impl Iterator<Item = u64>, k: usize) -> Vec<u64> {
    let mut all: Vec<u64> = values.collect();
    all.sort_unstable();
    all.dedup();
    all.truncate(k);
    all
}

impl OriginSignature {
    /// The signature of a summary, with `k` entries per sketch.
    pub fn of(summary: &HostSummary, k: usize) -> Self {
        OriginSignature {
            origin: summary.origin.clone(),
            host: summary.host.clone(),
            ip: summary.ip,
            paths: bottom_k(summary.paths.iter().map(|p| xxh3_64(p.as_bytes())), k),
            contents: bottom_k(
                summary
                    .pages
                    .values()
                    .flat_map(|page| &page.marks)
                    .filter(|mark| mark.strong)
                    .map(|mark| mark.exact),
                k,
            ),
        }
    }

    /// The keys this origin shares with the origins it may mirror, each kind in its own space.
    fn keys(&self) -> Vec<u64> {
        // Distinct seeds keep a path hash from colliding with a content hash or a label.
        const PATH: u64 = 0x9e37_79b9_7f4a_7c15;
        const CONTENT: u64 = 0xc2b2_ae3d_27d4_eb4f;
        const SEED_IP: u64 = 1;
        const SEED_HOST: u64 = 2;
        const SEED_LABEL: u64 = 3;
        let mut keys = Vec::with_capacity(self.paths.len() + self.contents.len() + 6);
        if let Some(ip) = self.ip {
            let octets = match ip {
                IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
                IpAddr::V6(v6) => v6.octets(),
            };
            keys.push(xxh3_64_with_seed(&octets, SEED_IP));
        }
        let host = self.host.strip_prefix("www.").unwrap_or(&self.host);
        keys.push(xxh3_64_with_seed(host.as_bytes(), SEED_HOST));
        let labels: Vec<&str> = host.split('.').filter(|l| !l.is_empty()).collect();
        if labels.len() > 1 {
            for label in &labels[..labels.len() - 1] {
                keys.push(xxh3_64_with_seed(label.as_bytes(), SEED_LABEL));
            }
        }
        keys.extend(self.paths.iter().map(|h| h ^ PATH));
        keys.extend(self.contents.iter().map(|h| h.rotate_left(17) ^ CONTENT));
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

/// Bounds of [`propose`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProposeParams {
    /// A key held by more origins than this proposes nothing.
    pub max_key_origins: usize,
    /// Most partners kept per origin (those sharing the most keys with it).
    pub partners_per_origin: usize,
}

impl Default for ProposeParams {
    fn default() -> Self {
        ProposeParams {
            max_key_origins: 32,
            partners_per_origin: 8,
        }
    }
}

/// A proposed pair: indices into the signatures (`a < b`) and the keys they share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProposedPair {
    pub a: u32,
    pub b: u32,
    pub shared_keys: u32,
}

/// Pairs of origins sharing keys, where at least one origin is `wanted` (the others are already
/// compared by the caller), most shared keys first (see the module docs).
pub fn propose(
    signatures: &[OriginSignature],
    wanted: impl Fn(usize) -> bool,
    params: &ProposeParams,
) -> Vec<ProposedPair> {
    // Sorting (key, origin) postings groups each key's holders without a map of vectors: most
    // keys (path and content hashes) are held by one origin, and a vector each would dominate.
    let mut postings: Vec<(u64, u32)> = signatures
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.keys().into_iter().map(move |key| (key, i as u32)))
        .collect();
    postings.sort_unstable();
    // (wanted origin, partner) once per shared key.
    let mut shared: Vec<(u32, u32)> = Vec::new();
    for group in postings.chunk_by(|x, y| x.0 == y.0) {
        if group.len() < 2 || group.len() > params.max_key_origins {
            continue;
        }
        for &(_, i) in group {
            if !wanted(i as usize) {
                continue;
            }
            shared.extend(group.iter().filter(|&&(_, j)| j != i).map(|&(_, j)| (i, j)));
        }
    }
    drop(postings);
    shared.sort_unstable();
    let mut best: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut partners: Vec<(u32, u32)> = Vec::new();
    for of_one in shared.chunk_by(|x, y| x.0 == y.0) {
        let i = of_one[0].0;
        partners.clear();
        partners.extend(
            of_one
                .chunk_by(|x, y| x.1 == y.1)
                .map(|run| (run[0].1, run.len() as u32)),
        );
        partners.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        partners.truncate(params.partners_per_origin);
        for &(j, n) in &partners {
            let slot = best.entry((i.min(j), i.max(j))).or_default();
            *slot = (*slot).max(n);
        }
    }
    let mut out: Vec<ProposedPair> = best
        .into_iter()
        .map(|((a, b), shared_keys)| ProposedPair { a, b, shared_keys })
        .collect();
    out.sort_unstable_by(|x, y| {
        y.shared_keys
            .cmp(&x.shared_keys)
            .then(x.a.cmp(&y.a))
            .then(x.b.cmp(&y.b))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirrors::summary::{ContentMark, HostSummaries};
    use url::Url;

    fn summaries(hosts: &[(&str, &[&str], &[&str])]) -> HostSummaries {
        let mut s = HostSummaries::default();
        for (origin, paths, contents) in hosts {
            for path in *paths {
                s.observe_url(&Url::parse(&format!("{origin}{path}")).unwrap());
            }
            for (i, content) in contents.iter().enumerate() {
                let url = Url::parse(&format!("{origin}/content/{i}")).unwrap();
                s.observe_page(&url, ContentMark::from_digest(content, 5000), []);
            }
        }
        s
    }

    fn pairs_of(
        s: &HostSummaries,
        wanted: &[usize],
        params: &ProposeParams,
    ) -> Vec<(String, String)> {
        let sigs: Vec<OriginSignature> = s
            .hosts()
            .iter()
            .map(|h| OriginSignature::of(h, DEFAULT_SKETCH))
            .collect();
        let mut out: Vec<(String, String)> = propose(&sigs, |i| wanted.contains(&i), params)
            .into_iter()
            .map(|p| {
                let (a, b) = (&sigs[p.a as usize].origin, &sigs[p.b as usize].origin);
                (a.min(b).clone(), a.max(b).clone())
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn shared_paths_contents_and_names_propose_and_only_wanted_origins_pair() {
        let s = summaries(&[
            ("http://site.org", &["/a", "/b", "/c"], &[]),
            ("http://mirror.edu", &["/pub/site/a"], &["x", "y"]),
            ("http://copy.net", &["/a", "/b", "/c"], &[]),
            ("http://other.com", &["/z"], &["x", "y"]),
            ("https://www.alone.dk", &["/q"], &[]),
            ("http://alone.dk", &["/r"], &[]),
        ]);
        let params = ProposeParams::default();
        assert_eq!(
            pairs_of(&s, &[0, 1, 2, 3, 4, 5], &params),
            [
                ("http://alone.dk".into(), "https://www.alone.dk".into()),
                ("http://copy.net".into(), "http://site.org".into()),
                ("http://mirror.edu".into(), "http://other.com".into()),
            ]
        );
        // Pairs of origins the caller already compares are not proposed.
        assert_eq!(
            pairs_of(&s, &[1], &params),
            [("http://mirror.edu".into(), "http://other.com".into())]
        );
        assert!(pairs_of(
            &s,
            &[4],
            &ProposeParams {
                max_key_origins: 1,
                ..params
            }
        )
        .is_empty());
    }

    #[test]
    fn a_key_many_origins_hold_proposes_nothing_and_partners_are_bounded() {
        let paths: Vec<String> = (0..100).map(|i| format!("/site{i}")).collect();
        let mut s = HostSummaries::default();
        for (i, path) in paths.iter().enumerate() {
            let host = format!("http://h{i}.org");
            s.observe_url(&Url::parse(&format!("{host}/index.html")).unwrap());
            s.observe_url(&Url::parse(&format!("{host}{path}")).unwrap());
        }
        let params = ProposeParams {
            max_key_origins: 32,
            partners_per_origin: 3,
        };
        let all: Vec<usize> = (0..100).collect();
        assert!(
            pairs_of(&s, &all, &params).is_empty(),
            "/index.html is on 100 origins: not evidence"
        );
        let few = ProposeParams {
            max_key_origins: 1_000,
            ..params
        };
        let proposed = pairs_of(&s, &[0], &few);
        assert_eq!(proposed.len(), 3, "{proposed:?}");
    }

    #[test]
    fn signatures_round_trip_and_stay_small() {
        let s = summaries(&[("http://site.org", &["/a", "/b"], &["x"])]);
        let sig = OriginSignature::of(&s.hosts()[0], DEFAULT_SKETCH);
        let bytes = postcard::to_stdvec(&sig).unwrap();
        assert_eq!(
            postcard::from_bytes::<OriginSignature>(&bytes).unwrap(),
            sig
        );
        let big: Vec<String> = (0..10_000).map(|i| format!("/p{i}")).collect();
        let mut many = HostSummaries::default();
        for p in &big {
            many.observe_url(&Url::parse(&format!("http://big.org{p}")).unwrap());
        }
        let sig = OriginSignature::of(&many.hosts()[0], DEFAULT_SKETCH);
        assert_eq!(sig.paths.len(), DEFAULT_SKETCH);
        assert!(postcard::to_stdvec(&sig).unwrap().len() < 400);
    }
}
