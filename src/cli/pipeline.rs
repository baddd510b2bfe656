//! The offline shell around [`crate::pipeline`]: page files in, per-host evidence out, for
//! `undust clusters`, `learn` and `eval`.
//!
//! Records are read (JSON lines or WARC, see [`crate::ingest::pages`]) in order and judged,
//! analysed, observed into their host's template model and offered to their host's reservoir by
//! exactly the functions the sidecar's Ingest service uses ([`crate::pipeline::accept::judge`],
//! [`crate::pipeline::analyze`], [`crate::ingest::sample`]), with the sidecar's default bounds:
//! one sample per URL (the last record of a URL wins), at most
//! [`DEFAULT_SAMPLE_PAGES_PER_HOST`](crate::config::DEFAULT_SAMPLE_PAGES_PER_HOST) pages per host,
//! [`DEFAULT_SAMPLE_BUDGET_BYTES`](crate::config::DEFAULT_SAMPLE_BUDGET_BYTES) in all and
//! [`DEFAULT_SAMPLE_MAX_HOSTS`](crate::config::DEFAULT_SAMPLE_MAX_HOSTS) hosts at once. Memory stays
//! bounded whatever the crawl's size: bodies are dropped after analysis, and what is kept is a
//! uniform sample of each host. The summary says what was sampled away. Labelled input
//! (`{"url", "cluster"}` lines) skips the content side.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::canon::normalize::StaticNormalizer;
use crate::config::{
    DEFAULT_SAMPLE_BUDGET_BYTES, DEFAULT_SAMPLE_MAX_HOSTS, DEFAULT_SAMPLE_PAGES_PER_HOST,
};
use crate::content::{ContentConfig, TemplateModel};
use crate::ingest::pages::{
    read_pages, PageReader, PageRecord, RecordError, UndecodedRecord, UrlEvidence,
};
use crate::ingest::sample::{Decision, ReservoirSampler, SampleBytes, SamplerConfig};
use crate::learn::LabelledUrl;
use crate::pipeline::{
    analyze, cluster_pages, judge, url_evidence, AcceptPolicy, AnalyzedPage, EvidencePage,
    HostClusters, Rejection, SkipReason, Verdict,
};

use rayon::prelude::*;

use super::ordered::{map_in_order, Batching};

/// Malformed and rejected records reported one by one on stderr; the rest are only counted.
const RECORD_ERRORS_REPORTED: usize = 20;

/// URL evidence items (redirects, revisits, payload digests) kept per host: memory stays bounded
/// on a whole archive, and a host's first hundred thousand items already carry far more training
/// URLs than its page sample. Items beyond it are counted in [`ReadSummary::url_evidence_dropped`].
pub const URL_EVIDENCE_PER_HOST: usize = 100_000;

/// URL evidence items kept over all hosts (about 150 bytes each: some 300 MB at most).
pub const URL_EVIDENCE_TOTAL: u64 = 2_000_000;

/// Out-links kept per page when the caller asks for them (`undust mirrors`' connectivity
/// techniques look at no more).
pub const LINKS_KEPT_PER_PAGE: usize = 200;

/// Records are decoded (a JSON line's HTML unescaped), judged and analysed on every core in
/// batches of at most 256 records or 8 MiB ([`super::ordered`]; the reader thread only cuts the
/// input into records); what depends on the records before them (the template models, the
/// reservoir, the counts) follows on one thread in record order, so the result is the same as
/// reading one record at a time.
const READ_BATCHING: Batching = Batching {
    batch_items: 256,
    batch_bytes: 8 << 20,
};

/// What a record becomes on any core: everything about it that does not depend on the records
/// before it.
struct Prepared {
    url_evidence: Vec<UrlEvidence>,
    raw_url: String,
    server_ip: Option<std::net::IpAddr>,
    judged: Judged,
}

/// A record's verdict, with the page analysed when it is evidence.
enum Judged {
    Page(Box<AnalyzedPage>),
    Malformed(String),
    Skipped(SkipReason),
    Rejected(Rejection),
}

/// Bytes a read record holds (its JSON line or its body), for cutting batches.
fn record_weight(record: &Result<UndecodedRecord, RecordError>) -> usize {
    record.as_ref().map_or(0, UndecodedRecord::weight)
}

/// Judges and analyses one record (pure: runs on any core).
fn prepare(
    record: Result<PageRecord, RecordError>,
    normalizer: &StaticNormalizer,
    config: &ContentConfig,
    policy: &AcceptPolicy,
) -> Prepared {
    let page = match record {
        Ok(page) => page,
        Err(err) => {
            return Prepared {
                url_evidence: Vec::new(),
                raw_url: String::new(),
                server_ip: None,
                judged: Judged::Malformed(err.to_string()),
            }
        }
    };
    let url_evidence = url_evidence(&page, normalizer);
    let raw_url = page.url.clone();
    let server_ip = page
        .server_ip
        .as_deref()
        .and_then(|ip| ip.trim().parse().ok());
    let judged = match judge(page, normalizer, policy) {
        Verdict::Evidence(evidence) => {
            Judged::Page(Box::new(analyze(*evidence, normalizer, config)))
        }
        Verdict::Skipped(reason) => Judged::Skipped(reason),
        Verdict::Rejected(rejection) => Judged::Rejected(rejection),
    };
    Prepared {
        url_evidence,
        raw_url,
        server_ip,
        judged,
    }
}

/// One sampled record: its evidence, its URL as the record spells it, and its out-links when
/// asked for.
struct OfflinePage {
    page: EvidencePage,
    raw_url: String,
    links: Vec<String>,
    server_ip: Option<std::net::IpAddr>,
}

impl SampleBytes for OfflinePage {
    fn sample_bytes(&self) -> usize {
        self.page.held_bytes()
            + self.raw_url.capacity()
            + self.links.iter().map(String::capacity).sum::<usize>()
            + (self.links.capacity() + 1) * std::mem::size_of::<String>()
    }

    /// One URL, one sample, as in the sidecar.
    fn sample_key(&self) -> Option<u64> {
        Some(xxhash_rust::xxh3::xxh3_64(self.page.url.as_bytes()))
    }
}

/// One host's evidence as the offline commands hold it.
pub struct OfflineHost {
    /// The host's template model: it observed every accepted page of the host.
    pub template: TemplateModel,
    /// The host's sampled pages.
    pub pages: Vec<EvidencePage>,
    /// Per page (same order), the URL as the record gives it.
    pub raw_urls: Vec<String>,
    /// Per page (same order), its first [`LINKS_KEPT_PER_PAGE`] out-links as written, when
    /// [`read_hosts_with_links`] read them (empty otherwise).
    pub links: Vec<Vec<String>>,
    /// Per page (same order), the server address its record gives (`server_ip` in JSON lines,
    /// `WARC-IP-Address`, the ARC header's IP), when it is a valid address.
    pub server_ips: Vec<Option<std::net::IpAddr>>,
    /// What the host's redirect and revisit records and archive payload digests say about its URLs
    /// (at most [`URL_EVIDENCE_PER_HOST`], the first read).
    pub url_evidence: Vec<UrlEvidence>,
}

impl OfflineHost {
    /// The host's clusters ([`crate::pipeline::cluster_pages`]).
    pub fn cluster(&self, config: &ContentConfig) -> HostClusters {
        cluster_pages(&self.pages, &self.url_evidence, &self.template, config)
    }
}

/// Clusters every host ([`OfflineHost::cluster`]) on all cores and hands the results to `each` in
/// host order. Hosts are independent once read, so the result is the same as clustering them one
/// by one; they are clustered a few per core at a time, so only that many hosts' clusters are held
/// at once.
pub fn cluster_hosts<'a>(
    hosts: impl IntoIterator<Item = (&'a String, &'a OfflineHost)>,
    config: &ContentConfig,
    each: impl FnMut(&'a str, &'a OfflineHost, HostClusters),
) {
    cluster_hosts_and(hosts, config, |_, _, clusters| clusters, each);
}

/// [`cluster_hosts`], with `then` applied to each host's clusters on the core that clustered it
/// (work that needs only the host, done in parallel) and `each` given its result in host order.
pub fn cluster_hosts_and<'a, T: Send>(
    hosts: impl IntoIterator<Item = (&'a String, &'a OfflineHost)>,
    config: &ContentConfig,
    then: impl Fn(&'a str, &'a OfflineHost, HostClusters) -> T + Sync,
    mut each: impl FnMut(&'a str, &'a OfflineHost, T),
) {
    let hosts: Vec<(&'a String, &'a OfflineHost)> = hosts.into_iter().collect();
    let at_once = rayon::current_num_threads().saturating_mul(4).max(1);
    for chunk in hosts.chunks(at_once) {
        let done: Vec<T> = chunk
            .par_iter()
            .map(|&(name, offline)| then(name.as_str(), offline, offline.cluster(config)))
            .collect();
        for ((name, offline), result) in chunk.iter().zip(done) {
            each(name.as_str(), offline, result);
        }
    }
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
    /// Records of a URL already sampled (the last one is kept).
    pub refreshed: u64,
    /// Pages not kept by a host's reservoir (sampled away to stay within the bounds).
    pub sampled_away: u64,
    /// Hosts refused, or dropped for a new host, at the host limit.
    pub hosts_dropped: u64,
    /// Redirect and revisit records (URL evidence, no content).
    pub url_records: u64,
    /// URL evidence items kept (redirects, revisits, payload digests).
    pub url_evidence: u64,
    /// URL evidence items over [`URL_EVIDENCE_PER_HOST`] or [`URL_EVIDENCE_TOTAL`].
    pub url_evidence_dropped: u64,
}

impl ReadSummary {
    /// One line for stderr.
    pub fn describe(&self, hosts: usize) -> String {
        format!(
            "read {} records: {} pages, {} non-2xx skipped, {} non-HTML skipped, {} malformed, \
             {} rejected, {hosts} hosts, {} canonicals from HTML; sampling kept the last record \
             of {} repeated URLs, sampled away {} pages and dropped {} hosts; {} redirect and \
             revisit records, {} URL evidence items kept ({} over the bounds)",
            self.records,
            self.pages,
            self.skipped_status,
            self.skipped_not_html,
            self.malformed,
            self.rejected,
            self.html_canonicals,
            self.refreshed,
            self.sampled_away,
            self.hosts_dropped,
            self.url_records,
            self.url_evidence,
            self.url_evidence_dropped
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
    read(paths, normalizer, config, progress, false)
}

/// [`read_hosts`], keeping each sampled page's out-links too (for the connectivity techniques of
/// mirror detection; they count against the sample's byte budget).
pub fn read_hosts_with_links(
    paths: &[PathBuf],
    normalizer: &StaticNormalizer,
    config: &ContentConfig,
    progress: bool,
) -> Result<(BTreeMap<String, OfflineHost>, ReadSummary), String> {
    read(paths, normalizer, config, progress, true)
}

fn read(
    paths: &[PathBuf],
    normalizer: &StaticNormalizer,
    config: &ContentConfig,
    progress: bool,
    keep_links: bool,
) -> Result<(BTreeMap<String, OfflineHost>, ReadSummary), String> {
    let mut templates: HashMap<String, TemplateModel> = HashMap::new();
    let mut evidence_of: HashMap<String, Vec<UrlEvidence>> = HashMap::new();
    let mut sampler = ReservoirSampler::new(SamplerConfig {
        per_host_items: DEFAULT_SAMPLE_PAGES_PER_HOST,
        per_host_bytes: usize::try_from(DEFAULT_SAMPLE_BUDGET_BYTES).unwrap_or(usize::MAX),
        global_bytes: usize::try_from(DEFAULT_SAMPLE_BUDGET_BYTES).unwrap_or(usize::MAX),
        max_hosts: DEFAULT_SAMPLE_MAX_HOSTS,
        ..SamplerConfig::default()
    });
    let mut summary = ReadSummary::default();
    let policy = AcceptPolicy::default();
    for path in paths {
        let mut consume = |prepared: Prepared| {
            summary.records += 1;
            if progress && summary.records % 10_000 == 0 {
                eprintln!(
                    "  read {} records ({} pages)",
                    summary.records, summary.pages
                );
            }
            let Prepared {
                url_evidence,
                raw_url,
                server_ip,
                judged,
            } = prepared;
            for item in url_evidence {
                let Some(host) = url::Url::parse(item.url())
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
                else {
                    continue;
                };
                let kept = evidence_of.entry(host).or_default();
                if kept.len() < URL_EVIDENCE_PER_HOST && summary.url_evidence < URL_EVIDENCE_TOTAL {
                    kept.push(item);
                    summary.url_evidence += 1;
                } else {
                    summary.url_evidence_dropped += 1;
                }
            }
            let analyzed = match judged {
                Judged::Page(analyzed) => *analyzed,
                Judged::Malformed(err) => {
                    summary.malformed += 1;
                    if summary.malformed + summary.rejected <= RECORD_ERRORS_REPORTED as u64 {
                        eprintln!("{}: {err} (skipped)", path.display());
                    }
                    return ControlFlow::Continue(());
                }
                Judged::Skipped(SkipReason::Status(_)) => {
                    summary.skipped_status += 1;
                    return ControlFlow::Continue(());
                }
                Judged::Skipped(SkipReason::NotHtml) => {
                    summary.skipped_not_html += 1;
                    return ControlFlow::Continue(());
                }
                Judged::Skipped(SkipReason::NoContent) => {
                    summary.url_records += 1;
                    return ControlFlow::Continue(());
                }
                Judged::Rejected(rejection) => {
                    summary.rejected += 1;
                    if summary.malformed + summary.rejected <= RECORD_ERRORS_REPORTED as u64 {
                        eprintln!(
                            "{}: record {} ({raw_url:.200}): {rejection} (skipped)",
                            path.display(),
                            summary.records
                        );
                    }
                    return ControlFlow::Continue(());
                }
            };
            summary.pages += 1;
            summary.html_canonicals += u64::from(analyzed.canonical_from_html);
            let host = analyzed.host.clone();
            let template = templates
                .entry(host.clone())
                .or_insert_with(|| TemplateModel::new(config));
            let links = if keep_links {
                let links = &analyzed.analysis.links;
                links.iter().take(LINKS_KEPT_PER_PAGE).cloned().collect()
            } else {
                Vec::new()
            };
            let page = analyzed.observe_into(template);
            let offer = sampler.offer(
                &host,
                OfflinePage {
                    page,
                    raw_url,
                    links,
                    server_ip,
                },
            );
            match offer.decision {
                Decision::Refreshed => summary.refreshed += 1,
                Decision::NotSelected | Decision::TooLarge => summary.sampled_away += 1,
                Decision::HostRefused => {
                    summary.hosts_dropped += 1;
                    templates.remove(&host);
                }
                Decision::Added | Decision::Replaced => {}
            }
            // Evicted: the URL's previous record (refreshed), a dropped host's pages, and pages
            // sampled away by the reservoir and its budgets.
            let previous_record = usize::from(offer.decision == Decision::Refreshed);
            let with_dropped_host = offer
                .evicted
                .iter()
                .filter(|(h, _)| offer.evicted_hosts.contains(h))
                .count();
            summary.sampled_away += offer
                .evicted
                .len()
                .saturating_sub(previous_record + with_dropped_host)
                as u64;
            for gone in &offer.evicted_hosts {
                summary.hosts_dropped += 1;
                templates.remove(gone);
            }
            ControlFlow::Continue(())
        };
        map_in_order(
            || read_pages(path).map(PageReader::undecoded),
            record_weight,
            |record| {
                let record = record.and_then(UndecodedRecord::decode);
                prepare(record, normalizer, config, &policy)
            },
            &mut consume,
            READ_BATCHING,
        )
        .map_err(|err| err.to_string())?;
    }
    let mut hosts: BTreeMap<String, OfflineHost> = BTreeMap::new();
    let names: Vec<String> = sampler.hosts().map(str::to_owned).collect();
    for name in names {
        let Some(template) = templates.remove(&name) else {
            continue;
        };
        let (mut pages, mut raw_urls) = (Vec::new(), Vec::new());
        let (mut links, mut server_ips) = (Vec::new(), Vec::new());
        for sampled in sampler.remove_host(&name) {
            pages.push(sampled.page);
            raw_urls.push(sampled.raw_url);
            links.push(sampled.links);
            server_ips.push(sampled.server_ip);
        }
        let url_evidence = evidence_of.remove(&name).unwrap_or_default();
        hosts.insert(
            name,
            OfflineHost {
                template,
                pages,
                raw_urls,
                links,
                server_ips,
                url_evidence,
            },
        );
    }
    // Hosts known only from URL evidence (an index of redirects, revisits of earlier crawls).
    for (name, url_evidence) in evidence_of {
        hosts.entry(name).or_insert_with(|| OfflineHost {
            template: TemplateModel::new(config),
            pages: Vec::new(),
            raw_urls: Vec::new(),
            links: Vec::new(),
            server_ips: Vec::new(),
            url_evidence,
        });
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
