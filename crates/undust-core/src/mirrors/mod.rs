//! Mirrored hosts: origins that serve one site, found so that one canonical form spans them.
//!
//! Bharat, Broder, Dean and Henzinger, "A Comparison of Techniques to Find Mirrored Hosts on the
//! WWW" (`papers/mirrored-hosts-bharat-broder-dean-henzinger.txt`), compare "top-down" algorithms
//! that rank host pairs from URLs, IP addresses and links alone. All of them are here, each on
//! its own ([`rank_technique`]) and in the paper's *combined* ranking:
//!
//! - [`ip`]: *IP4* (same address) and *IP3* (same /24), section 3.1;
//! - [`hostname`]: *hosts* (host name substrings), section 3.2.1;
//! - [`paths`]: *paths*, *prefix* and *shingles* (URL path terms), sections 3.2.2–3.2.4;
//! - [`connectivity`]: *conn* (common paths with the same out-links) and *hconn1*/*hconn2*
//!   (the host graph), sections 3.3–3.4;
//! - [`combine`]: the union of the top results of *IP4*, *prefix*, *hconn2*, *paths* and
//!   *hosts*, ranked by how many algorithms found a pair (section 4.2.2).
//!
//! All term-vector algorithms run on an inverted index with the paper's document-frequency
//! restrictions and keep the best partners per host ([`terms`]), so candidate generation is not
//! quadratic in the number of hosts.
//!
//! The paper validates its rankings by fetching pages; undust already holds template-stripped
//! fingerprints of sampled pages, so it does better than ranking: cheap signals propose, content
//! confirms ([`confirm`]). A pair is a mirror only when pages under matching paths carry the same
//! content. A bottom-up proposer ([`confirm::content_alignments`]) adds the pairs that URL
//! strings cannot see: a mirror network host serving the site under a folder
//! (`mirror.example.edu/pub/site/x` ≡ `site.org/x`). Confirmed pairs become mirror sets with a
//! canonical site and evidence ([`sets`]), in the rule file's format
//! ([`crate::canon::rules::MirrorSet`]), which the canonicalizer serves.
//!
//! # Feeding it incrementally
//!
//! Detection reads [`HostSummaries`], which take one observation at a time: the sidecar calls
//! `observe_url` for each URL it canonicalizes, `observe_page` for each sampled fetched page
//! (its [`ContentMark`] from the fingerprint it computes anyway, and its links), `observe_ip` for
//! the server address Ingest reports. Summaries are bounded per origin; [`detect`] runs on them
//! as they are whenever relearning runs, and [`sets::apply_decisions`] keeps an operator's pinned
//! and forbidden aliases across runs.
//!
//! # Across a fleet
//!
//! Sidecars of a fleet summarize different hosts. [`signature`] cuts a summary down to what
//! proposes pairs (address, host name, sketches of paths and contents), so a pass proposes pairs
//! across the fleet's origins from signatures and confirms them on the full summaries of the
//! proposed origins only.
//!
//! # Corner cases the paper leaves open
//!
//! - Origins, not hosts, are the unit: `http://x.org` and `https://x.org` are a pair like any
//!   other, confirmed by content.
//! - Content that many hosts share (a stock page, a library file) neither proposes nor confirms
//!   alone: confirmation needs several *distinct* matching contents.
//! - The paper's random choices (pairs of a large IP cluster, hosts keeping a restricted term)
//!   are seeded hashes, so detection is reproducible.

pub mod combine;
pub mod confirm;
pub mod connectivity;
pub mod hostname;
pub mod ip;
pub mod measure;
pub mod paths;
pub mod sets;
pub mod signature;
pub mod summary;
pub mod terms;

use std::fmt;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

pub use confirm::{Alignment, ConfirmConfig, PairEvidence};
pub use connectivity::ConnParams;
pub use sets::ConfirmedPair;
pub use signature::{propose, OriginSignature, ProposeParams, ProposedPair};
pub use summary::{
    ContentMark, HostSummaries, HostSummary, PageLinks, SummaryLimits, DEFAULT_MAX_HELD_BYTES,
};
pub use terms::TermParams;

use crate::canon::rules::MirrorSet;

/// A ranked host pair (`a < b`, indices into the summaries).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// First host.
    pub a: u32,
    /// Second host.
    pub b: u32,
    /// Higher is more likely a mirror.
    pub score: f64,
}

/// Sorts by score, best first; ties by host indices.
pub fn sort_candidates(c: &mut [Candidate]) {
    c.sort_by(|x, y| {
        y.score
            .total_cmp(&x.score)
            .then(x.a.cmp(&y.a))
            .then(x.b.cmp(&y.b))
    });
}

/// The algorithms of the paper, its combination, and undust's content proposer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Technique {
    /// Same IP address.
    Ip4,
    /// Same /24 (or /64).
    Ip3,
    /// Host name substrings.
    Hosts,
    /// Whole paths.
    Paths,
    /// Path prefixes.
    Prefix,
    /// Positional word bigrams of paths.
    Shingles,
    /// *paths* filtered by the out-links of common paths.
    Conn,
    /// Host graph, linear in-degree weights.
    Hconn1,
    /// Host graph, with an idf factor.
    Hconn2,
    /// The paper's combination of *IP4*, *prefix*, *hconn2*, *paths*, *hosts*.
    Combined,
    /// Equal strong content under aligned paths (bottom-up).
    Content,
}

impl Technique {
    /// Every technique, in the paper's order, then undust's.
    pub const ALL: [Technique; 11] = [
        Technique::Hosts,
        Technique::Ip3,
        Technique::Ip4,
        Technique::Conn,
        Technique::Hconn1,
        Technique::Hconn2,
        Technique::Paths,
        Technique::Prefix,
        Technique::Shingles,
        Technique::Combined,
        Technique::Content,
    ];

    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            Technique::Ip4 => "ip4",
            Technique::Ip3 => "ip3",
            Technique::Hosts => "hosts",
            Technique::Paths => "paths",
            Technique::Prefix => "prefix",
            Technique::Shingles => "shingles",
            Technique::Conn => "conn",
            Technique::Hconn1 => "hconn1",
            Technique::Hconn2 => "hconn2",
            Technique::Combined => "combined",
            Technique::Content => "content",
        }
    }
}

impl fmt::Display for Technique {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Knobs of detection (defaults: the paper's values where it gives them).
#[derive(Clone, Debug, PartialEq)]
pub struct MirrorConfig {
    /// Term-vector matching bounds.
    pub terms: TermParams,
    /// Pairs listed per same-address cluster (*IP4*, the paper's 200).
    pub ip4_pairs_per_cluster: usize,
    /// Pairs listed per same-subnet cluster (*IP3*, the paper's 5).
    pub ip3_pairs_per_cluster: usize,
    /// *conn*'s link test.
    pub conn: ConnParams,
    /// Results of each algorithm the combination takes (the paper's 100,000).
    pub combined_top: usize,
    /// Techniques whose pairs are proposed for confirmation.
    pub proposers: Vec<Technique>,
    /// Content confirmation thresholds.
    pub confirm: ConfirmConfig,
}

impl Default for MirrorConfig {
    fn default() -> Self {
        MirrorConfig {
            terms: TermParams::default(),
            ip4_pairs_per_cluster: 200,
            ip3_pairs_per_cluster: 5,
            conn: ConnParams::default(),
            combined_top: 100_000,
            proposers: vec![
                Technique::Ip4,
                Technique::Ip3,
                Technique::Hosts,
                Technique::Paths,
                Technique::Prefix,
                Technique::Shingles,
                Technique::Hconn2,
                Technique::Content,
            ],
            confirm: ConfirmConfig::default(),
        }
    }
}

/// One technique's ranking of host pairs, best first. [`Technique::Content`] ranks the hosts of
/// content-proposed alignments by their votes.
pub fn rank_technique(
    hosts: &[HostSummary],
    t: Technique,
    config: &MirrorConfig,
) -> Vec<Candidate> {
    let seed = config.terms.seed;
    match t {
        Technique::Ip4 => ip::rank(
            hosts,
            ip::IpGranularity::Full,
            config.ip4_pairs_per_cluster,
            seed,
        ),
        Technique::Ip3 => ip::rank(
            hosts,
            ip::IpGranularity::Subnet,
            config.ip3_pairs_per_cluster,
            seed,
        ),
        Technique::Hosts => hostname::rank(hosts, &config.terms),
        Technique::Paths => paths::rank_paths(hosts, &config.terms),
        Technique::Prefix => paths::rank_prefix(hosts, &config.terms),
        Technique::Shingles => paths::rank_shingles(hosts, &config.terms),
        Technique::Conn => {
            let p = paths::rank_paths(hosts, &config.terms);
            connectivity::rank_conn(hosts, &p, &config.conn)
        }
        Technique::Hconn1 => connectivity::rank_hconn(hosts, &config.terms, false),
        Technique::Hconn2 => connectivity::rank_hconn(hosts, &config.terms, true),
        Technique::Combined => {
            let parts: Vec<Vec<Candidate>> = combine::PARTS
                .iter()
                .map(|&p| rank_technique(hosts, p, config))
                .collect();
            combine::combine(&parts, config.combined_top)
        }
        Technique::Content => {
            let mut best: FxHashMap<(u32, u32), f64> = FxHashMap::default();
            for (al, votes) in confirm::content_alignments(hosts, &config.confirm) {
                let key = (al.a.min(al.b), al.a.max(al.b));
                let slot = best.entry(key).or_insert(0.0);
                *slot = slot.max(votes as f64);
            }
            let mut out: Vec<Candidate> = best
                .into_iter()
                .map(|((a, b), score)| Candidate { a, b, score })
                .collect();
            sort_candidates(&mut out);
            out
        }
    }
}

/// The result of [`detect`].
#[derive(Clone, Debug, Default)]
pub struct Detection {
    /// Alignments proposed for confirmation.
    pub proposed: usize,
    /// Alignments content confirmed, with their evidence.
    pub confirmed: Vec<ConfirmedPair>,
    /// Mirror sets built from them.
    pub sets: Vec<MirrorSet>,
}

/// Proposes pairs with the configured techniques, confirms them by content, and builds mirror
/// sets.
pub fn detect(summaries: &HostSummaries, config: &MirrorConfig) -> Detection {
    let hosts = summaries.hosts();
    let mut proposals: FxHashMap<Alignment, Vec<Technique>> = FxHashMap::default();
    for &t in &config.proposers {
        if t == Technique::Content {
            for (al, _) in confirm::content_alignments(hosts, &config.confirm) {
                proposals.entry(al).or_default().push(t);
            }
            continue;
        }
        for c in rank_technique(hosts, t, config) {
            proposals
                .entry(Alignment::hosts(c.a, c.b))
                .or_default()
                .push(t);
        }
    }
    let mut proposed: Vec<(Alignment, Vec<Technique>)> = proposals.into_iter().collect();
    proposed.sort_by(|x, y| x.0.cmp(&y.0));
    // Each pair is confirmed on its own, on every core of the pool detection runs in (most of
    // detection's time when many hosts share their paths); kept in proposal order.
    let confirmed: Vec<ConfirmedPair> = proposed
        .par_iter()
        .filter_map(|(alignment, techniques)| {
            let evidence = confirm::confirm(hosts, alignment, &config.confirm);
            evidence.confirmed(&config.confirm).then(|| {
                let mut techniques = techniques.clone();
                techniques.sort();
                techniques.dedup();
                ConfirmedPair {
                    alignment: alignment.clone(),
                    evidence,
                    techniques,
                }
            })
        })
        .collect();
    let sets = sets::build(hosts, &confirmed);
    Detection {
        proposed: proposed.len(),
        confirmed,
        sets,
    }
}
