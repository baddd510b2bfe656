//! `undust clusters`: fetched pages in, one JSON line per input record out, in input order:
//! `{"url", "canonical", "host", "cluster", "simhash", "reason", "record"}`: the URL as the record
//! gives it, its static canonical form, its host, its duplicate cluster (16 hex digits), the
//! simhash of the content it carries (absent for redirects, revisits and records that are not
//! pages), and why it is in its cluster: `content` (near-duplicate text), `exact` (identical
//! content), `redirect`, `canonical` (a rel=canonical claim), `digest` (an archive's payload
//! digest or a revisit record) or `singleton`. `record` is `page`, `redirect` or `revisit`, with
//! the HTTP `status` when known. A record that is not evidence (a 404, an image) has no cluster
//! and the reason `not evidence`; a record that could not be read is reported on stderr with its
//! file and byte offset or line. Two records of one URL give two lines. After the records, URLs
//! that no record named but evidence brought in (redirect and canonical targets) get a line each
//! with `record: "target"`. A summary ends on stderr, with the evidence used and refused.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::canonicalize::StaticArgs;
use super::pipeline::{cluster_host, read_hosts};
use super::records::scan_records;
use super::{EXIT_NO_INPUT, EXIT_USAGE};
use crate::cluster::{ClusterId, ClusterStats, Reason};
use crate::content::ContentConfig;

/// Flags of `undust clusters`.
#[derive(Debug, clap::Args)]
pub struct ClustersArgs {
    /// Page files: JSON lines (`.jsonl`, `.json`, `.ndjson`), WARC (`.warc`) or ARC (`.arc`),
    /// optionally `.gz` (other names: told from the content).
    #[arg(long, required = true, num_args = 1..)]
    pages: Vec<PathBuf>,
    /// Write here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    normalization: StaticArgs,
}

#[derive(serde::Serialize)]
struct Line<'a> {
    url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    canonical: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    simhash: Option<String>,
    reason: &'a str,
    record: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
}

/// A URL's answer: cluster, reason and (for content) simhash.
struct Answer {
    cluster: ClusterId,
    reason: Reason,
}

/// Runs `undust clusters`.
pub fn run(args: ClustersArgs) -> ExitCode {
    let normalizer = match args.normalization.normalizer() {
        Ok(normalizer) => normalizer,
        Err(err) => {
            eprintln!("undust clusters: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let config = ContentConfig::default();
    let (mut hosts, summary) = match read_hosts(&args.pages, &normalizer, &config, true) {
        Ok(read) => read,
        Err(err) => {
            eprintln!("undust clusters: {err}");
            return ExitCode::from(EXIT_NO_INPUT);
        }
    };
    let mut scan = match scan_records(&args.pages, &normalizer, true) {
        Ok(scan) => scan,
        Err(err) => {
            eprintln!("undust clusters: {err}");
            return ExitCode::from(EXIT_NO_INPUT);
        }
    };
    for host in scan.url_evidence.keys() {
        hosts.entry(host.clone()).or_default();
    }
    let sink: Box<dyn Write> = match &args.out {
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => Box::new(file),
            Err(err) => {
                eprintln!("undust clusters: {}: {err}", path.display());
                return ExitCode::from(EXIT_NO_INPUT);
            }
        },
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
    let mut clusters = 0usize;
    let mut evidence = ClusterStats::default();
    let mut answers: HashMap<String, Answer> = HashMap::new();
    let mut simhashes: HashMap<String, u64> = HashMap::new();
    for (host, pages) in &hosts {
        let extra = scan.url_evidence.remove(host).unwrap_or_default();
        let (clustering, prints) = cluster_host(pages, &extra, &config);
        clusters += clustering
            .clusters()
            .iter()
            .filter(|c| c.members.len() > 1)
            .count();
        let s = clustering.stats();
        evidence.redirects += s.redirects;
        evidence.redirects_fan_in += s.redirects_fan_in;
        evidence.canonicals += s.canonicals;
        evidence.canonicals_contradicted += s.canonicals_contradicted;
        evidence.canonicals_fan_in += s.canonicals_fan_in;
        evidence.cross_host_ignored += s.cross_host_ignored;
        evidence.digest_merges += s.digest_merges;
        evidence.digests_fan_in += s.digests_fan_in;
        for (at, print) in prints {
            if let Some(at) = at {
                simhashes.insert(at, print.simhash);
            }
        }
        for (url, cluster, reason) in clustering.assignments_with_reasons() {
            answers.insert(url.to_owned(), Answer { cluster, reason });
        }
    }
    let (mut lines, mut answered) = (0usize, 0usize);
    let mut write_line = |line: &Line<'_>| -> std::io::Result<()> {
        serde_json::to_writer(&mut out, line).map_err(std::io::Error::from)?;
        out.write_all(b"\n")
    };
    let mut named: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut written = Ok(());
    for record in &scan.records {
        // Unreadable records were reported on stderr with their offset or line; they have no URL.
        if record.kind.starts_with("error: ") {
            continue;
        }
        let answer = record.canonical.as_deref().and_then(|url| answers.get(url));
        if let Some(canonical) = record.canonical.as_deref() {
            named.insert(canonical);
        }
        let host = record
            .canonical
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
            .and_then(|u| u.host_str().map(str::to_owned));
        let reason = match answer {
            Some(answer) => answer.reason.as_str(),
            None if record.canonical.is_none() => "invalid URL",
            None => "not evidence",
        };
        answered += usize::from(answer.is_some());
        lines += 1;
        written = write_line(&Line {
            url: &record.url,
            canonical: record.canonical.as_deref(),
            host: host.as_deref(),
            cluster: answer.map(|a| format!("{:016x}", a.cluster)),
            // A redirected fetch's content is its final URL's (that URL's own line has it).
            simhash: answer
                .and(record.content_url.as_deref())
                .filter(|u| Some(*u) == record.canonical.as_deref())
                .and_then(|u| simhashes.get(u))
                .map(|s| format!("{s:016x}")),
            reason,
            record: &record.kind,
            status: record.status,
        });
        if written.is_err() {
            break;
        }
    }
    // URLs no record named, known from evidence only: redirect and canonical targets (a
    // redirected fetch's content is its final URL's).
    let mut targets: Vec<(&String, &Answer)> = answers
        .iter()
        .filter(|(url, _)| !named.contains(url.as_str()))
        .collect();
    targets.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (url, answer) in targets {
        if written.is_err() {
            break;
        }
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned));
        written = write_line(&Line {
            url,
            canonical: Some(url),
            host: host.as_deref(),
            cluster: Some(format!("{:016x}", answer.cluster)),
            simhash: simhashes.get(url).map(|s| format!("{s:016x}")),
            reason: answer.reason.as_str(),
            record: "target",
            status: None,
        });
    }
    if let Err(err) = written {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
        eprintln!("undust clusters: writing output: {err}");
        return ExitCode::from(EXIT_NO_INPUT);
    }
    if let Err(err) = out.flush() {
        if err.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("undust clusters: writing output: {err}");
            return ExitCode::from(EXIT_NO_INPUT);
        }
    }
    eprintln!(
        "undust clusters: {} records, {} pages fingerprinted, {} skipped (non-2xx), {} malformed, {} invalid URLs; \
         {} hosts, {lines} lines ({answered} in a cluster), {clusters} duplicate clusters",
        summary.records, summary.pages, summary.skipped_status, summary.malformed, summary.invalid_url, hosts.len()
    );
    eprintln!(
        "undust clusters: {} canonicals from HTML; evidence applied: {} redirects, {} canonicals; \
         {} payload-digest merges; refused: {} redirects into catch-alls, {} canonicals \
         contradicted by content, {} canonicals claimed by different contents, {} URLs of \
         catch-all digests, {} cross-host pairs",
        summary.html_canonicals,
        evidence.redirects,
        evidence.canonicals,
        evidence.digest_merges,
        evidence.redirects_fan_in,
        evidence.canonicals_contradicted,
        evidence.canonicals_fan_in,
        evidence.digests_fan_in,
        evidence.cross_host_ignored
    );
    ExitCode::SUCCESS
}
