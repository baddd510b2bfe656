//! `undust learn`: pages (or pre-labelled clusters) in, a rule file out.
//!
//! With `--pages`, pages are clustered per host by the content pipeline first; with
//! `--clusters`, `{"url", "cluster"}` lines are the training set as they are; with `--index`,
//! crawl indexes (CDX, CDXJ, crawl.log) give clusters from payload digests ([`super::index`]). Rules are learned
//! per host with the pattern-tree learner and written as one versioned JSON rule file. Progress
//! goes to stderr.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use super::canonicalize::StaticArgs;
use super::index::index_training_sets;
use super::mirrors::{learn_mirrors, learn_mirrors_of, Crawl, HostPages};
use super::pipeline::{
    cluster_hosts_and, read_hosts, read_hosts_with_links, read_labelled, OfflineHost,
};
use super::{output_failed, EXIT_NO_INPUT, EXIT_SOFTWARE, EXIT_USAGE};
use crate::canon::rules::RuleFile;
use crate::cluster::DeclaredPair;
use crate::content::ContentConfig;
use crate::learn::shared_evidence::learn_beside_each_other;
use crate::learn::{LabelledUrl, LearnConfig, Strategy};
use crate::pipeline::{labelled, learn_checked, Beside, GatePolicy, HostClusters};

/// Flags of `undust learn`.
#[derive(Debug, clap::Args)]
pub struct LearnArgs {
    /// Page files: JSON lines, WARC or ARC (optionally `.gz`), or WACZ.
    #[arg(long, num_args = 1.., required_unless_present_any = ["clusters", "index"], conflicts_with_all = ["clusters", "index"])]
    pages: Vec<PathBuf>,
    /// Pre-labelled training data: `{"url": ..., "cluster": ...}` lines.
    #[arg(long, num_args = 1.., conflicts_with = "index")]
    clusters: Vec<PathBuf>,
    /// Crawl indexes: CDX (`.cdx`), CDXJ (`.cdxj`), a CDX server's `output=json` answer (the
    /// Wayback Machine's, pywb's, Common Crawl's) or Heritrix `crawl.log`, optionally `.gz`
    /// (layout from the name, else from the content). URLs sharing the payload digest of a 200
    /// capture of any type (not empty, not tiny) are one cluster; the index's redirects are
    /// redirect evidence.
    #[arg(long, num_args = 1..)]
    index: Vec<PathBuf>,
    /// Where to write the rule file.
    #[arg(long)]
    out: PathBuf,
    /// Rule selection strategy: graph (the paper's random walk) or naive.
    #[arg(long, value_enum, default_value_t = StrategyArg::Graph)]
    strategy: StrategyArg,
    /// A rule file whose pinned and forbidden mirror aliases are kept.
    #[arg(long)]
    previous_mirrors: Option<PathBuf>,
    #[command(flatten)]
    normalization: StaticArgs,
}

/// `--strategy` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum StrategyArg {
    Graph,
    Naive,
}

impl From<StrategyArg> for Strategy {
    fn from(arg: StrategyArg) -> Strategy {
        match arg {
            StrategyArg::Graph => Strategy::Graph,
            StrategyArg::Naive => Strategy::Naive,
        }
    }
}

/// Per-host training sets, in host order: the labelled URLs and the declared pairs the host's
/// clustering applied (what its alias table is learned from; none for pre-labelled input).
type HostTrainingSets = Vec<(String, Vec<LabelledUrl>, Vec<DeclaredPair>)>;

/// Per-host training sets, or an exit code with the reason.
type TrainingSets = Result<HostTrainingSets, (u8, String)>;

/// Training sets per host from either input kind: statically normalized URLs, or with `raw` the
/// URLs as the input gives them (fetched pages keep their own spelling; redirect and canonical
/// targets, which were never crawled as such, appear normalized).
pub fn training_sets(
    pages: &[PathBuf],
    clusters: &[PathBuf],
    index: &[PathBuf],
    normalization: &StaticArgs,
    raw: bool,
) -> TrainingSets {
    let normalizer = normalization
        .normalizer()
        .map_err(|err| (EXIT_USAGE, err))?;
    if !index.is_empty() {
        let hosts =
            index_training_sets(index, &normalizer, raw).map_err(|err| (EXIT_NO_INPUT, err))?;
        return Ok(without_declarations(hosts));
    }
    if !clusters.is_empty() {
        let hosts =
            read_labelled(clusters, &normalizer, raw).map_err(|err| (EXIT_NO_INPUT, err))?;
        return Ok(without_declarations(hosts));
    }
    let config = ContentConfig::default();
    let (hosts, summary) =
        read_hosts(pages, &normalizer, &config, true).map_err(|err| (EXIT_NO_INPUT, err))?;
    eprintln!("{}", summary.describe(hosts.len()));
    let mut sets = Vec::with_capacity(hosts.len());
    cluster_hosts_and(
        &hosts,
        &config,
        |host, offline, clusters| training_set(host, offline, &clusters, raw),
        |host, _, (set, declared)| sets.push((host.to_owned(), set, declared)),
    );
    Ok(sets)
}

/// Training sets of input that declares nothing (pre-labelled clusters, crawl indexes).
fn without_declarations(
    hosts: impl IntoIterator<Item = (String, Vec<LabelledUrl>)>,
) -> HostTrainingSets {
    hosts
        .into_iter()
        .map(|(host, set)| (host, set, Vec::new()))
        .collect()
}

/// A host's training set from its clusters: its labelled URLs, or with `raw` the URLs as the
/// records give them (and the URLs evidence brought in); and the declared pairs applied.
fn training_set(
    host: &str,
    offline: &OfflineHost,
    clusters: &HostClusters,
    raw: bool,
) -> (Vec<LabelledUrl>, Vec<DeclaredPair>) {
    let declared = clusters.clustering.declared().to_vec();
    (raw_training_set(host, offline, clusters, raw), declared)
}

/// [`training_set`]'s labelled URLs.
fn raw_training_set(
    host: &str,
    offline: &OfflineHost,
    clusters: &HostClusters,
    raw: bool,
) -> Vec<LabelledUrl> {
    let set = labelled(host, &clusters.clustering);
    if !raw {
        return set;
    }
    let pages = &offline.pages;
    let cluster_of: std::collections::HashMap<&str, u64> =
        set.iter().map(|l| (l.url.as_str(), l.cluster)).collect();
    let fetched: std::collections::HashSet<&str> = pages.iter().map(|p| p.url.as_str()).collect();
    let mut urls: Vec<LabelledUrl> = pages
        .iter()
        .zip(&offline.raw_urls)
        .filter_map(|(p, raw_url)| {
            Some(LabelledUrl {
                url: raw_url.clone(),
                cluster: *cluster_of.get(p.url.as_str())?,
            })
        })
        .collect();
    urls.extend(
        set.iter()
            .filter(|l| !fetched.contains(l.url.as_str()))
            .cloned(),
    );
    urls
}

/// `--pages` read once for both the rules and the mirror sets: read with their out-links (which
/// mirror detection needs), clustered once per host. The links count against the sample's byte
/// budget, so the training sets come from this read only when the sample kept every page (nothing
/// sampled away, no host dropped): then a read without links keeps exactly the same pages, in the
/// same order, and the same template models. Otherwise the pages are read a second time without
/// links, as the sidecar samples them. `raw` as for [`training_sets`] (`undust eval` measures the
/// URLs as crawled).
pub fn training_sets_and_crawl(
    pages: &[PathBuf],
    normalization: &StaticArgs,
    raw: bool,
) -> Result<(HostTrainingSets, Crawl), (u8, String)> {
    let normalizer = normalization
        .normalizer()
        .map_err(|err| (EXIT_USAGE, err))?;
    let config = ContentConfig::default();
    let (hosts, summary) = read_hosts_with_links(pages, &normalizer, &config, true)
        .map_err(|err| (EXIT_NO_INPUT, err))?;
    let kept_every_page = summary.sampled_away == 0 && summary.hosts_dropped == 0;
    let mut crawl = Crawl::default();
    let mut sets = Vec::with_capacity(hosts.len());
    let max_links = crawl.summaries.limits().max_links_per_page;
    // A host's crawl pages and training set are made on the core that clustered it; only adding
    // them to the crawl and the list follows in host order.
    cluster_hosts_and(
        &hosts,
        &config,
        |host, offline, clusters| {
            let pages = HostPages::of(offline, &clusters, max_links);
            let set = kept_every_page.then(|| training_set(host, offline, &clusters, raw));
            (pages, set)
        },
        |host, _, (pages, set)| {
            crawl.add_host(pages);
            if let Some((set, declared)) = set {
                sets.push((host.to_owned(), set, declared));
            }
        },
    );
    if !kept_every_page {
        drop(hosts);
        sets = training_sets(pages, &[], &[], normalization, raw)?;
    } else {
        eprintln!("{}", summary.describe(hosts.len()));
    }
    Ok((sets, crawl))
}

/// The training sets of whichever input was given and, with `--pages`, the crawl read with them
/// (what mirror detection needs): what `undust learn` and `undust eval` both start from. `raw`
/// as for [`training_sets`].
pub fn read_input(
    pages: &[PathBuf],
    clusters: &[PathBuf],
    index: &[PathBuf],
    normalization: &StaticArgs,
    raw: bool,
) -> Result<(HostTrainingSets, Option<Crawl>), (u8, String)> {
    if pages.is_empty() {
        training_sets(pages, clusters, index, normalization, raw).map(|sets| (sets, None))
    } else {
        training_sets_and_crawl(pages, normalization, raw).map(|(sets, crawl)| (sets, Some(crawl)))
    }
}

/// Runs `undust learn`.
pub fn run(args: LearnArgs) -> ExitCode {
    let started = Instant::now();
    let read = read_input(
        &args.pages,
        &args.clusters,
        &args.index,
        &args.normalization,
        false,
    );
    let (hosts, crawl) = match read {
        Ok(read) => read,
        Err((code, err)) => {
            eprintln!("undust learn: {err}");
            return ExitCode::from(code);
        }
    };
    let config = LearnConfig {
        strategy: args.strategy.into(),
        ..LearnConfig::default()
    };
    // Hosts learn beside each other (what one's sample shows thinly, the others' may make up:
    // `learn::shared_evidence`), on all cores, reported and written in host order.
    let names: Vec<&str> = hosts.iter().map(|(host, _, _)| host.as_str()).collect();
    let learned = learn_beside_each_other(&names, config.min_support_clusters, |i, read| {
        let (host, training, declared) = &hosts[i];
        let mut findings = Vec::new();
        let beside = Beside {
            read,
            findings: &mut findings,
        };
        // The same learning and the same gate as the sidecar's relearn jobs.
        let learned = learn_checked(
            host,
            training,
            declared,
            &config,
            &GatePolicy::default(),
            Some(beside),
        );
        (learned, findings)
    });
    let mut sets = Vec::new();
    for (index, ((host, training, _), learned)) in hosts.iter().zip(learned).enumerate() {
        let clusters = training
            .iter()
            .map(|l| l.cluster)
            .collect::<std::collections::HashSet<_>>()
            .len();
        match learned {
            Ok(checked) => {
                eprintln!(
                    "[{}/{}] {host}: {} URLs, {clusters} clusters -> {} site rules, {} rules, {} aliases",
                    index + 1,
                    hosts.len(),
                    training.len(),
                    checked.set.site_rules.len(),
                    checked.set.rules.len(),
                    checked.set.aliases.len()
                );
                if !checked.set.is_empty() {
                    sets.push(checked.set);
                }
            }
            Err(err) => eprintln!("[{}/{}] {host}: not learned: {err}", index + 1, hosts.len()),
        }
    }
    let mirrors = match &crawl {
        Some(crawl) => learn_mirrors_of(crawl, args.previous_mirrors.as_deref()),
        None => learn_mirrors(
            &args.pages,
            &args.index,
            &args.normalization,
            args.previous_mirrors.as_deref(),
        ),
    };
    let mirrors = match mirrors {
        Ok(mirrors) => mirrors,
        Err((code, err)) => {
            eprintln!("undust learn: {err}");
            return ExitCode::from(code);
        }
    };
    let file = RuleFile::new(sets).with_mirrors(mirrors);
    let json = match file.to_json_pretty() {
        Ok(json) => json,
        Err(err) => {
            eprintln!("undust learn: {err}");
            return ExitCode::from(EXIT_SOFTWARE);
        }
    };
    if let Err(err) = std::fs::write(&args.out, json) {
        return output_failed("learn", &args.out.display().to_string(), &err);
    }
    eprintln!(
        "undust learn: {} hosts with rules and {} mirror sets written to {} in {:.1} s",
        file.hosts.len(),
        file.mirrors.len(),
        args.out.display(),
        started.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
