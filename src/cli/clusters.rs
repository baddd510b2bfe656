//! `undust clusters`: fetched pages in, one JSON line per URL out:
//! `{"url", "host", "cluster", "simhash"}` (simhash as 16 hex digits; absent for URLs known only
//! from redirects or rel=canonical: a redirected page's content is its final URL's). A summary
//! ends on stderr, with the redirect and canonical evidence used and refused.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::canonicalize::StaticArgs;
use super::pipeline::read_hosts;
use super::{EXIT_NO_INPUT, EXIT_USAGE};
use crate::cluster::ClusterStats;
use crate::content::ContentConfig;

/// Flags of `undust clusters`.
#[derive(Debug, clap::Args)]
pub struct ClustersArgs {
    /// Page files: JSON lines (`.jsonl`, `.json`, `.ndjson`) or WARC (`.warc`), optionally `.gz`.
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
    host: &'a str,
    cluster: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    simhash: Option<String>,
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
    let mut out = BufWriter::new(sink);
    let (mut urls, mut clusters) = (0usize, 0usize);
    let mut evidence = ClusterStats::default();
    for (host, offline) in &hosts {
        let host_clusters = offline.cluster(&config);
        clusters += host_clusters.duplicate_clusters();
        let (clustering, prints) = (&host_clusters.clustering, &host_clusters.fingerprints);
        let s = clustering.stats();
        evidence.redirects += s.redirects;
        evidence.redirects_fan_in += s.redirects_fan_in;
        evidence.canonicals += s.canonicals;
        evidence.canonicals_contradicted += s.canonicals_contradicted;
        evidence.canonicals_fan_in += s.canonicals_fan_in;
        evidence.cross_host_ignored += s.cross_host_ignored;
        let simhash_of: std::collections::HashMap<&str, u64> = prints
            .iter()
            .filter_map(|(at, print)| Some((at.as_deref()?, print.simhash)))
            .collect();
        for (url, cluster) in clustering.assignments() {
            urls += 1;
            let line = Line {
                url,
                host,
                cluster: format!("{cluster:016x}"),
                simhash: simhash_of.get(url).map(|s| format!("{s:016x}")),
            };
            let written = serde_json::to_writer(&mut out, &line)
                .map_err(std::io::Error::from)
                .and_then(|()| out.write_all(b"\n"));
            if written.is_err() {
                return ExitCode::SUCCESS;
            }
        }
    }
    let _ = out.flush();
    eprintln!(
        "undust clusters: {}; {urls} URLs, {clusters} duplicate clusters",
        summary.describe(hosts.len())
    );
    eprintln!(
        "undust clusters: {} canonicals from HTML; evidence applied: {} redirects, {} canonicals; \
         refused: {} redirects into catch-alls, {} canonicals contradicted by content, \
         {} canonicals claimed by different contents, {} cross-host pairs",
        summary.html_canonicals,
        evidence.redirects,
        evidence.canonicals,
        evidence.redirects_fan_in,
        evidence.canonicals_contradicted,
        evidence.canonicals_fan_in,
        evidence.cross_host_ignored
    );
    ExitCode::SUCCESS
}
