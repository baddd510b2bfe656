//! The offline shell around [`crate::pipeline`]: page files in, per-host evidence out, for
//! `undust clusters`, `learn` and `eval`.
//!
//! Records are read (JSON lines or WARC, see [`crate::ingest::pages`]) and judged, analysed and
//! observed into their host's evidence by exactly the functions the sidecar's Ingest service uses
//! ([`crate::pipeline::accept::judge`], [`crate::pipeline::analyze`],
//! [`crate::pipeline::HostEvidence`]). The only difference is that nothing is sampled away: every
//! page of a host is kept. Labelled input (`{"url", "cluster"}` lines) skips the content side.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::canon::normalize::StaticNormalizer;
use crate::content::ContentConfig;
use crate::ingest::pages::read_pages;
use crate::learn::LabelledUrl;
use crate::pipeline::{analyze, judge, AcceptPolicy, HostEvidence, Verdict};

/// Malformed and rejected records reported one by one on stderr; the rest are only counted.
const RECORD_ERRORS_REPORTED: usize = 20;

/// One host's evidence as the offline commands hold it.
pub struct OfflineHost {
    /// The template model and every page, as [`crate::pipeline`] keeps them.
    pub evidence: HostEvidence,
    /// Per page (same order), the URL as the record gives it.
    pub raw_urls: Vec<String>,
}

/// What reading the inputs found.
#[derive(Debug, Default)]
pub struct ReadSummary {
    pub records: u64,
    /// Records accepted as evidence.
    pub pages: u64,
    /// Valid records that are not evidence: a non-2xx status.
    pub skipped_status: u64,
    /// Valid records that are not evidence: not HTML.
    pub skipped_not_html: u64,
    /// Records the reader could not decode.
    pub malformed: u64,
    /// Records judged invalid (bad URL in any field, impossible status, oversized body).
    pub rejected: u64,
    /// Pages whose canonical came from their HTML (the record declared none).
    pub html_canonicals: u64,
}

impl ReadSummary {
    /// One line for stderr.
    pub fn describe(&self, hosts: usize) -> String {
        format!(
            "read {} records: {} pages, {} non-2xx skipped, {} non-HTML skipped, {} malformed, \
             {} rejected, {hosts} hosts, {} canonicals from HTML",
            self.records,
            self.pages,
            self.skipped_status,
            self.skipped_not_html,
            self.malformed,
            self.rejected,
            self.html_canonicals
        )
    }
}

/// Reads page files into per-host evidence (hosts sorted). Malformed and rejected records are
/// reported on stderr with their line number or byte offset and skipped; an unreadable file is an
/// error.
pub fn read_hosts(
    paths: &[PathBuf],
    normalizer: &StaticNormalizer,
    config: &ContentConfig,
    progress: bool,
) -> Result<(BTreeMap<String, OfflineHost>, ReadSummary), String> {
    let mut hosts: BTreeMap<String, OfflineHost> = BTreeMap::new();
    let mut summary = ReadSummary::default();
    let policy = AcceptPolicy::default();
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
                    if summary.malformed + summary.rejected <= RECORD_ERRORS_REPORTED as u64 {
                        eprintln!("{}: {err} (skipped)", path.display());
                    }
                    continue;
                }
            };
            let raw_url = page.url.clone();
            let evidence = match judge(page, normalizer, &policy) {
                Verdict::Evidence(evidence) => evidence,
                Verdict::Skipped(crate::pipeline::SkipReason::Status(_)) => {
                    summary.skipped_status += 1;
                    continue;
                }
                Verdict::Skipped(crate::pipeline::SkipReason::NotHtml) => {
                    summary.skipped_not_html += 1;
                    continue;
                }
                Verdict::Rejected(rejection) => {
                    summary.rejected += 1;
                    if summary.malformed + summary.rejected <= RECORD_ERRORS_REPORTED as u64 {
                        eprintln!(
                            "{}: record {} ({raw_url:.200}): {rejection} (skipped)",
                            path.display(),
                            summary.records
                        );
                    }
                    continue;
                }
            };
            let analyzed = analyze(*evidence, normalizer, config);
            summary.pages += 1;
            summary.html_canonicals += u64::from(analyzed.canonical_from_html);
            let host = hosts
                .entry(analyzed.host.clone())
                .or_insert_with(|| OfflineHost {
                    evidence: HostEvidence::new(config),
                    raw_urls: Vec::new(),
                });
            host.evidence.observe(analyzed);
            host.raw_urls.push(raw_url);
        }
    }
    let problems = summary.malformed + summary.rejected;
    if problems > RECORD_ERRORS_REPORTED as u64 {
        eprintln!(
            "... {} malformed and {} rejected records in all",
            summary.malformed, summary.rejected
        );
    }
    Ok((hosts, summary))
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
