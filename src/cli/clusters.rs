//! `undust clusters`: fetched pages in, one JSON line per input record out, in input order:
//! `{"url", "canonical", "host", "cluster", "simhash", "reason", "record"}`: the URL as the record
//! gives it, its static canonical form, its host, its duplicate cluster (16 hex digits), the
//! simhash of the content it carries (absent for redirects, revisits and records that are not
//! pages), and why it is in its cluster: `content` (near-duplicate text), `exact` (identical
//! content), `redirect`, `canonical` (a rel=canonical claim), `digest` (an archive's payload
//! digest or a revisit record) or `singleton`. `"unresolved": true` marks a page with too little
//! text of its own whose simhash is near a page of another cluster: its cluster is no evidence
//! either way, and learning leaves it out (see `undust::cluster::clusters`). `record` is
//! `page`, `redirect` or `revisit`, with
//! the HTTP `status` when known. A record that is not content evidence has no cluster and the
//! reason `not evidence: status` (a 404), `not evidence: content type` (an image), `not evidence:
//! no content` (a redirect or revisit that named no URL of a cluster) or `rejected: FIELD`; a page
//! left out of its host's sample (the sidecar's bounds: see [`super::pipeline`]) has the reason
//! `sampled away`. A record that could not be read is reported on stderr with its file and byte
//! offset or line. Two records of one URL give two lines. After the records, URLs
//! that no record named but evidence brought in (redirect and canonical targets) get a line each
//! with `record: "target"`. A summary ends on stderr, with the evidence used and refused.

use std::collections::{HashMap, HashSet};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::canonicalize::StaticArgs;
use super::pipeline::{cluster_hosts, read_hosts};
use super::records::for_each_record;
use super::{output_failed, EXIT_NO_INPUT, EXIT_USAGE};
use crate::cluster::{ClusterId, ClusterStats, Reason};
use crate::content::ContentConfig;

/// Flags of `undust clusters`.
#[derive(Debug, clap::Args)]
pub struct ClustersArgs {
    /// Page files: JSON lines (`.jsonl`, `.json`, `.ndjson`), WARC (`.warc`) or ARC (`.arc`),
    /// optionally `.gz` (other names: told from the content), or WACZ (`.wacz`).
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
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unresolved: bool,
    record: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
}

/// A URL's answer: cluster, reason and whether learning leaves it out.
struct Answer {
    cluster: ClusterId,
    reason: Reason,
    unresolved: bool,
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
    let (hosts, summary) = match read_hosts(&args.pages, &normalizer, &config, true) {
        Ok(read) => read,
        Err(err) => {
            eprintln!("undust clusters: {err}");
            return ExitCode::from(EXIT_NO_INPUT);
        }
    };
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
    let target = args
        .out
        .as_ref()
        .map_or_else(|| "stdout".to_owned(), |path| path.display().to_string());
    let mut out = BufWriter::new(sink);
    let mut clusters = 0usize;
    let mut evidence = ClusterStats::default();
    // Answers for the sampled pages and the URLs evidence brought in: bounded by the sample.
    let mut answers: HashMap<String, Answer> = HashMap::new();
    let mut simhashes: HashMap<String, u64> = HashMap::new();
    cluster_hosts(&hosts, &config, |_, _, host_clusters| {
        clusters += host_clusters.duplicate_clusters();
        let clustering = &host_clusters.clustering;
        let s = clustering.stats();
        evidence.redirects += s.redirects;
        evidence.redirects_fan_in += s.redirects_fan_in;
        evidence.canonicals += s.canonicals;
        evidence.canonicals_contradicted += s.canonicals_contradicted;
        evidence.canonicals_fan_in += s.canonicals_fan_in;
        evidence.shortlinks += s.shortlinks;
        evidence.shortlinks_contradicted += s.shortlinks_contradicted;
        evidence.shortlinks_fan_in += s.shortlinks_fan_in;
        evidence.cross_host_ignored += s.cross_host_ignored;
        evidence.digest_merges += s.digest_merges;
        evidence.digests_fan_in += s.digests_fan_in;
        for (at, print) in &host_clusters.fingerprints {
            if let Some(at) = at {
                simhashes.insert(at.clone(), print.simhash);
            }
        }
        evidence.weak_unresolved += s.weak_unresolved;
        for (url, cluster, reason) in clustering.assignments_with_reasons() {
            let unresolved = clustering.is_unresolved(url);
            answers.insert(
                url.to_owned(),
                Answer {
                    cluster,
                    reason,
                    unresolved,
                },
            );
        }
    });
    let (mut lines, mut answered) = (0usize, 0usize);
    let mut write_line = |line: &Line<'_>| -> std::io::Result<()> {
        serde_json::to_writer(&mut out, line).map_err(std::io::Error::from)?;
        out.write_all(b"\n")
    };
    // Answered URLs some record named (a subset of `answers`: bounded like it).
    let mut named: HashSet<String> = HashSet::new();
    let mut written = Ok(());
    let read_again = for_each_record(&args.pages, &normalizer, |record| {
        let answer = record.canonical.as_deref().and_then(|url| answers.get(url));
        if let (Some(canonical), Some(_)) = (&record.canonical, answer) {
            if !named.contains(canonical) {
                named.insert(canonical.clone());
            }
        }
        let host = record
            .canonical
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
            .and_then(|u| u.host_str().map(str::to_owned));
        let not_evidence;
        let reason = match (answer, &record.not_evidence) {
            (Some(answer), _) => answer.reason.as_str(),
            (None, _) if record.canonical.is_none() => "invalid URL",
            (None, Some(why)) if why.starts_with("rejected") => why.as_str(),
            (None, Some(why)) => {
                not_evidence = format!("not evidence: {why}");
                not_evidence.as_str()
            }
            (None, None) => "sampled away",
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
            unresolved: answer.is_some_and(|a| a.unresolved),
            record: record.kind,
            status: record.status,
        });
        written.is_ok()
    });
    if let Err(err) = read_again {
        eprintln!("undust clusters: {err}");
        return ExitCode::from(EXIT_NO_INPUT);
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
        lines += 1;
        written = write_line(&Line {
            url,
            canonical: Some(url),
            host: host.as_deref(),
            cluster: Some(format!("{:016x}", answer.cluster)),
            simhash: simhashes.get(url).map(|s| format!("{s:016x}")),
            reason: answer.reason.as_str(),
            unresolved: answer.unresolved,
            record: "target",
            status: None,
        });
    }
    if let Err(err) = written.and_then(|()| out.flush()) {
        return output_failed("clusters", &target, &err);
    }
    eprintln!(
        "undust clusters: {}; {lines} lines ({answered} records in a cluster), {clusters} \
         duplicate clusters",
        summary.describe(hosts.len())
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
    eprintln!(
        "undust clusters: shortlinks from HTML applied: {}; refused: {} contradicted by content, \
         {} declared by different contents",
        evidence.shortlinks, evidence.shortlinks_contradicted, evidence.shortlinks_fan_in
    );
    eprintln!(
        "undust clusters: {} pages with too little text near a page of another cluster \
         (\"unresolved\": left out of learning)",
        evidence.weak_unresolved
    );
    ExitCode::SUCCESS
}
