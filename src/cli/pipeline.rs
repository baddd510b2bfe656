//! The offline pipeline shared by `undust clusters`, `learn` and `eval`: page files in, per-host
//! duplicate clusters out.
//!
//! Pages are read (JSON lines or WARC, see [`crate::ingest::pages`]), statically normalized,
//! grouped by host and analysed once. Each host then gets a template model from all its pages
//! (the paper's local algorithm, with the link-graph connectivity test), a fingerprint per page,
//! and clusters from near-duplicate, redirect and rel=canonical evidence. Labelled input
//! (`{"url", "cluster"}` lines) skips the content side entirely.
//!
//! A page's canonical is the one its record declares (the JSON `canonical` field, or an HTTP
//! `Link: rel="canonical"` header in WARC), else the one its HTML head declares
//! ([`PageAnalysis::declared_canonical`], found by the same analysis pass), resolved against the
//! URL the body came from. A redirected record's body and canonical belong to its final URL
//! ([`ClusterBuilder::add_fetch`]).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::canon::normalize::StaticNormalizer;
use crate::cluster::{ClusterBuilder, ClusterConfig, Clustering, PageEvidence};
use crate::content::{self, ContentConfig, Fingerprint, PageAnalysis};
use crate::ingest::pages::read_pages;
use crate::learn::LabelledUrl;

/// Malformed records reported one by one on stderr; the rest are only counted.
const RECORD_ERRORS_REPORTED: usize = 20;

/// One page kept for a host.
pub struct HostPage {
    /// The URL fetched, as the record gives it.
    pub raw_url: String,
    /// The URL fetched (statically normalized).
    pub url: String,
    /// Where the fetch ended after redirects, when elsewhere (statically normalized).
    pub final_url: Option<String>,
    /// The canonical the record declares, else the one the HTML head declares (normalized).
    pub rel_canonical: Option<String>,
    pub analysis: PageAnalysis,
}

/// What reading the inputs found.
#[derive(Debug, Default)]
pub struct ReadSummary {
    pub records: u64,
    pub pages: u64,
    pub skipped_status: u64,
    pub malformed: u64,
    pub invalid_url: u64,
    /// Pages whose canonical came from their HTML (the record declared none).
    pub html_canonicals: u64,
}

/// Reads page files into per-host page lists (hosts sorted). Record errors are reported on
/// stderr with their line number or byte offset and skipped; an unreadable file is an error.
pub fn read_hosts(
    paths: &[PathBuf],
    normalizer: &StaticNormalizer,
    config: &ContentConfig,
    progress: bool,
) -> Result<(BTreeMap<String, Vec<HostPage>>, ReadSummary), String> {
    let mut hosts: BTreeMap<String, Vec<HostPage>> = BTreeMap::new();
    let mut summary = ReadSummary::default();
    for path in paths {
        let reader = read_pages(path).map_err(|err| err.to_string())?;
        for record in reader {
            summary.records += 1;
            if progress && summary.records % 10_000 == 0 {
                eprintln!(
                    "  read {} records ({} pages)",
                    summary.records, summary.pages
                );
            }
            let page = match record {
                Ok(page) => page,
                Err(err) => {
                    summary.malformed += 1;
                    if summary.malformed as usize <= RECORD_ERRORS_REPORTED {
                        eprintln!("{}: {err} (skipped)", path.display());
                    }
                    continue;
                }
            };
            if page
                .status
                .is_some_and(|status| !(200..=299).contains(&status))
            {
                summary.skipped_status += 1;
                continue;
            }
            let Ok(url) = normalizer.normalize(&page.url) else {
                summary.invalid_url += 1;
                continue;
            };
            let Some(host) = url.host_str().map(str::to_owned) else {
                continue;
            };
            let normalize = |text: &str| normalizer.normalize(text).ok();
            let final_url = page.final_url.as_deref().and_then(normalize);
            let analysis = content::analyze(&page.body, config);
            let declared = page.rel_canonical.as_deref().and_then(normalize);
            let rel_canonical = match declared {
                Some(declared) => Some(declared),
                None => {
                    let served_from = final_url.as_ref().unwrap_or(&url);
                    let html = analysis
                        .declared_canonical(served_from)
                        .and_then(|c| normalize(c.as_str()));
                    summary.html_canonicals += u64::from(html.is_some());
                    html
                }
            };
            summary.pages += 1;
            hosts.entry(host).or_default().push(HostPage {
                raw_url: page.url.clone(),
                url: String::from(url),
                final_url: final_url.map(String::from),
                rel_canonical: rel_canonical.map(String::from),
                analysis,
            });
        }
    }
    if summary.malformed as usize > RECORD_ERRORS_REPORTED {
        eprintln!("... {} malformed records in all", summary.malformed);
    }
    Ok((hosts, summary))
}

/// Clusters one host's pages: template model from all of them, fingerprints, evidence. The
/// fingerprints are in page order, each with the URL it was recorded for (the final URL of a
/// redirected page; `None` when it was not recorded, see [`ClusterBuilder::add_fetch`]).
/// `url_evidence`: the host's redirect, same-payload and payload-digest evidence from records that
/// are not pages (see [`super::records`]).
pub fn cluster_host(
    pages: &[HostPage],
    url_evidence: &[crate::ingest::pages::UrlEvidence],
    config: &ContentConfig,
) -> (Clustering, Vec<(Option<String>, Fingerprint)>) {
    let linked: Vec<(String, PageAnalysis)> = pages
        .iter()
        .map(|page| (page.url.clone(), page.analysis.clone()))
        .collect();
    let prints = content::fingerprint_host_linked(&linked, config).fingerprints;
    let mut builder = ClusterBuilder::new(ClusterConfig::default());
    let recorded: Vec<(Option<String>, Fingerprint)> = pages
        .iter()
        .zip(prints)
        .map(|(page, print)| {
            let at = builder.add_fetch(
                &page.url,
                page.final_url.as_deref(),
                page.rel_canonical.as_deref(),
                PageEvidence::from(&print),
            );
            (at, print)
        })
        .collect();
    for evidence in url_evidence {
        builder.add_url_evidence(evidence);
    }
    (builder.finish(), recorded)
}

/// Labelled URLs of one host from its clustering (only URLs of that host).
pub fn labelled(host: &str, clustering: &Clustering) -> Vec<LabelledUrl> {
    clustering
        .assignments()
        .filter(|(url, _)| {
            url::Url::parse(url)
                .ok()
                .and_then(|u| u.host_str().map(|h| h == host))
                .unwrap_or(false)
        })
        .map(|(url, cluster)| LabelledUrl {
            url: url.to_owned(),
            cluster,
        })
        .collect()
}

/// Reads `{"url": ..., "cluster": ...}` lines (cluster: a number or a string) into per-host
/// labelled URLs, statically normalized (or as written, with `raw`; hosts and validity always
/// come from the normalized form). Malformed lines are reported with their number.
pub fn read_labelled(
    paths: &[PathBuf],
    normalizer: &StaticNormalizer,
    raw: bool,
) -> Result<BTreeMap<String, Vec<LabelledUrl>>, String> {
    #[derive(serde::Deserialize)]
    struct Line {
        url: String,
        cluster: serde_json::Value,
    }
    let mut hosts: BTreeMap<String, Vec<LabelledUrl>> = BTreeMap::new();
    let mut malformed = 0usize;
    for path in paths {
        let reader = open_text(path)?;
        for (number, line) in reader.lines().enumerate() {
            let line =
                line.map_err(|err| format!("{}: line {}: {err}", path.display(), number + 1))?;
            if line.trim().is_empty() {
                continue;
            }
            let problem = match serde_json::from_str::<Line>(&line) {
                Ok(parsed) => match (
                    normalizer.normalize(&parsed.url),
                    cluster_key(&parsed.cluster),
                ) {
                    (Ok(url), Some(cluster)) => {
                        let host = url.host_str().unwrap_or_default().to_owned();
                        hosts.entry(host).or_default().push(LabelledUrl {
                            url: if raw {
                                parsed.url.trim().to_owned()
                            } else {
                                String::from(url)
                            },
                            cluster,
                        });
                        None
                    }
                    (Err(reason), _) => Some(format!("url: {reason}")),
                    (_, None) => Some("cluster must be a number or a string".to_owned()),
                },
                Err(err) => Some(err.to_string()),
            };
            if let Some(problem) = problem {
                malformed += 1;
                if malformed <= RECORD_ERRORS_REPORTED {
                    eprintln!(
                        "{}: line {}: {problem} (skipped)",
                        path.display(),
                        number + 1
                    );
                }
            }
        }
    }
    Ok(hosts)
}

fn cluster_key(value: &serde_json::Value) -> Option<u64> {
    match value {
        serde_json::Value::Number(n) => n.as_u64().or_else(|| n.as_i64().map(|i| i as u64)),
        serde_json::Value::String(s) => Some(xxhash_rust::xxh3::xxh3_64(s.as_bytes())),
        _ => None,
    }
}

/// Opens a text file, gunzipping `.gz`.
pub fn open_text(path: &Path) -> Result<Box<dyn BufRead>, String> {
    let file = std::fs::File::open(path).map_err(|err| format!("{}: {err}", path.display()))?;
    if path.extension().is_some_and(|ext| ext == "gz") {
        Ok(Box::new(std::io::BufReader::new(
            flate2::read::MultiGzDecoder::new(file),
        )))
    } else {
        Ok(Box::new(std::io::BufReader::new(file)))
    }
}
