//! Crawl indexes (CDX, CDXJ, Heritrix crawl.log) as training data for `undust learn` and
//! `undust eval`: no HTML needed, clusters come from the archive's own payload digests.
//!
//! Per host, URLs whose captures share a payload digest are one cluster (only captures that are
//! digest evidence, see [`Capture::is_payload_evidence`]: status 200, not empty or tiny, any type),
//! and the index's redirects are redirect evidence, all through the cluster builder, so its
//! catch-all guards apply (a redirect target or a digest reached from more than a handful of
//! paths is a catch-all's, not DUST). URLs are statically normalized like pages are.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use crate::canon::normalize::StaticNormalizer;
use crate::cluster::ClusterBuilder;
use crate::ingest::index::{read_index, Capture};
use crate::learn::LabelledUrl;

use super::pipeline::{URL_EVIDENCE_PER_HOST, URL_EVIDENCE_TOTAL};

/// Malformed lines reported one by one on stderr; the rest are only counted.
const LINE_ERRORS_REPORTED: u64 = 20;

/// One host's evidence from the indexes.
#[derive(Default)]
struct HostEvidence {
    builder: ClusterBuilder,
    /// Normalized URL → the URL as the index wrote it (first seen).
    raw: HashMap<String, String>,
    /// Evidence items (digests and redirects) given to the builder, bounded by
    /// [`URL_EVIDENCE_PER_HOST`].
    items: usize,
}

impl HostEvidence {
    /// Whether one more item may be kept: memory stays bounded on a whole archive's index, by
    /// the bounds the page readers keep ([`URL_EVIDENCE_PER_HOST`], [`URL_EVIDENCE_TOTAL`]).
    fn room(&self, kept_in_all: u64) -> bool {
        self.items < URL_EVIDENCE_PER_HOST && kept_in_all < URL_EVIDENCE_TOTAL
    }
}

/// Reads index files into per-host labelled URLs: statically normalized, or with `raw` the
/// URLs as the index writes them (redirect targets not captured themselves appear normalized).
/// Malformed lines are reported with file and line and skipped; an unreadable file is an error.
pub fn index_training_sets(
    paths: &[PathBuf],
    normalizer: &StaticNormalizer,
    raw: bool,
) -> Result<BTreeMap<String, Vec<LabelledUrl>>, String> {
    let mut hosts: BTreeMap<String, HostEvidence> = BTreeMap::new();
    let (mut captures, mut evidence, mut redirects, mut malformed) = (0u64, 0u64, 0u64, 0u64);
    let mut dropped = 0u64;
    for path in paths {
        let reader = read_index(path).map_err(|err| err.to_string())?;
        for item in reader {
            let capture: Capture = match item {
                Ok(capture) => capture,
                Err(err) => {
                    malformed += 1;
                    if malformed <= LINE_ERRORS_REPORTED {
                        eprintln!("{}: {err} (skipped)", path.display());
                    }
                    continue;
                }
            };
            captures += 1;
            let normalize = |url: &str| -> Option<(String, String)> {
                let url = normalizer.normalize(url).ok()?;
                let host = url.host_str()?.to_owned();
                Some((host, String::from(url)))
            };
            if capture.is_payload_evidence() {
                if let (Some((host, url)), Some(digest)) =
                    (normalize(&capture.url), capture.digest.as_deref())
                {
                    let host = hosts.entry(host).or_default();
                    if host.room(evidence + redirects) {
                        host.builder.add_digest(&url, digest);
                        host.raw.entry(url).or_insert_with(|| capture.url.clone());
                        host.items += 1;
                        evidence += 1;
                    } else {
                        dropped += 1;
                    }
                }
            }
            if let Some((from, to)) = capture.redirect_pair() {
                if let (Some((host, from_url)), Some((_, to_url))) =
                    (normalize(from), normalize(to))
                {
                    let entry = hosts.entry(host).or_default();
                    if !entry.room(evidence + redirects) {
                        dropped += 1;
                    } else if entry.builder.add_redirect(&from_url, &to_url) {
                        redirects += 1;
                        entry.items += 1;
                        entry.raw.entry(from_url).or_insert_with(|| from.to_owned());
                    }
                }
            }
        }
    }
    if malformed > LINE_ERRORS_REPORTED {
        eprintln!("... {malformed} malformed index lines in all");
    }
    eprintln!(
        "read {captures} index captures: {evidence} with payload-digest evidence, {redirects} \
         same-host redirects, {malformed} malformed lines, {} hosts; {dropped} evidence items \
         over the bounds ({URL_EVIDENCE_PER_HOST} a host, {URL_EVIDENCE_TOTAL} in all) not used",
        hosts.len()
    );
    Ok(hosts
        .into_iter()
        .map(|(host, evidence)| {
            let clustering = evidence.builder.finish();
            let urls = clustering
                .assignments()
                .map(|(url, cluster)| LabelledUrl {
                    url: match (raw, evidence.raw.get(url)) {
                        (true, Some(as_written)) => as_written.clone(),
                        _ => url.to_owned(),
                    },
                    cluster,
                })
                .collect();
            (host, urls)
        })
        .collect())
}
