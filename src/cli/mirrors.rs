//! `undust mirrors`: mirror sets of a crawl, with their evidence.
//!
//! Input is either fetched pages (`--pages`: JSON lines or WARC; content marks are
//! template-stripped fingerprints, one template model per origin) or capture indexes
//! (`--index`: the archives' own CDX, CDXJ and Heritrix `crawl.log`, read by
//! [`crate::ingest::index`], or a tab-separated capture table with a header naming at least `url`
//! and `digest`, optionally `length`, `status` and `ip`; content marks are payload digests, tiny
//! and empty bodies not counting as evidence). Every URL read also feeds the URL-based
//! techniques. The mirror sets go to stdout as
//! JSON (the rule file's `mirrors` format); `--previous RULES` keeps the pinned and forbidden
//! aliases of an earlier rule file. `undust learn` and `undust eval` use the same reading and
//! detection ([`read_summaries`], [`detect_sets`], [`cross_host`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use url::Url;

use super::canonicalize::StaticArgs;
use super::pipeline::{cluster_hosts_and, open_text, read_hosts_with_links, OfflineHost};
use super::{EXIT_NO_INPUT, EXIT_SOFTWARE, EXIT_USAGE};
use crate::canon::mirror::MirrorTable;
use crate::canon::normalize::StaticNormalizer;
use crate::canon::rules::{MirrorSet, RuleFile};
use crate::canon::Canonicalizer;
use crate::content::ContentConfig;
use crate::learn::eval::{measure_across_hosts, CrossHostMetrics};
use crate::learn::LabelledUrl;
use crate::mirrors::sets::apply_decisions;
use crate::mirrors::summary::{origin_of, PageLinks};
use crate::mirrors::{
    detect, ContentMark, Detection, HostSummaries, MirrorConfig, SummaryLimits,
    DEFAULT_MAX_HELD_BYTES,
};
use crate::pipeline::HostClusters;

/// Bad index lines reported one by one; the rest are only counted.
const INDEX_ERRORS_REPORTED: usize = 20;

/// Index captures the measures across hosts keep at most ([`CaptureSample`]): some 150 MB of
/// URLs and labels, whatever the size of the archive.
const MAX_CROSS_HOST_CAPTURES: usize = 1_000_000;

/// Flags of `undust mirrors`.
#[derive(Debug, clap::Args)]
pub struct MirrorsArgs {
    /// Page files: JSON lines, WARC or ARC (optionally `.gz`), or WACZ.
    #[arg(long, num_args = 1.., required_unless_present = "index", conflicts_with = "index")]
    pages: Vec<PathBuf>,
    /// Capture indexes: CDX (`.cdx`), CDXJ (`.cdxj`), a CDX server's `output=json` answer or
    /// Heritrix `crawl.log` (optionally `.gz`), or a tab-separated table whose header names
    /// `url` and `digest` (optionally `length`, `status`, `ip`).
    #[arg(long, num_args = 1..)]
    index: Vec<PathBuf>,
    /// A rule file whose pinned and forbidden aliases are kept.
    #[arg(long)]
    previous: Option<PathBuf>,
    /// Memory the host summaries may hold, in MiB (estimated). Past it, origins, paths and
    /// pages not yet summarized are left out, and counted on stderr.
    #[arg(long, default_value_t = DEFAULT_MAX_HELD_BYTES >> 20, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    summary_memory_mib: u64,
    #[command(flatten)]
    normalization: StaticArgs,
}

/// Summaries of a crawl and its URLs labelled by content across hosts (equal labels, equal
/// content marks; a URL without strong content gets a label of its own).
#[derive(Default)]
pub struct Crawl {
    /// Host summaries.
    pub summaries: HostSummaries,
    /// Statically normalized URLs of fetched pages with cross-host content labels.
    pub labelled: Vec<LabelledUrl>,
    /// The share of contents `labelled` holds, as a power of two: `k` keeps the contents whose
    /// label falls in 1/2^k of all labels (0: every content; see [`CaptureSample`]).
    pub contents_share_log2: u32,
}

/// The index captures the measures across hosts read, bounded: past
/// [`MAX_CROSS_HOST_CAPTURES`], the share of contents kept is halved (by a hash of the content
/// label) until half of that bound is held, and later captures are kept only for contents in the
/// share. Every URL of a kept content is kept, so the pairs within it and across its hosts are
/// all counted; the measures are those of a random share of the contents, and say so.
struct CaptureSample {
    labelled: Vec<LabelledUrl>,
    level: u32,
    /// Captures held at most ([`MAX_CROSS_HOST_CAPTURES`] but in tests).
    max: usize,
}

impl CaptureSample {
    fn new(max: usize) -> Self {
        CaptureSample {
            labelled: Vec::new(),
            level: 0,
            max: max.max(2),
        }
    }

    /// Whether a content of label `cluster` is in the share of `level`.
    fn in_share(level: u32, cluster: u64) -> bool {
        level == 0 || xxhash_rust::xxh3::xxh3_64(&cluster.to_le_bytes()) >> (64 - level) == 0
    }

    fn push(&mut self, labelled: LabelledUrl) {
        if !Self::in_share(self.level, labelled.cluster) {
            return;
        }
        self.labelled.push(labelled);
        if self.labelled.len() <= self.max {
            return;
        }
        while self.labelled.len() > self.max / 2 && self.level < 63 {
            self.level += 1;
            let level = self.level;
            self.labelled.retain(|l| Self::in_share(level, l.cluster));
        }
    }
}

fn label(url: &str, marks: &[ContentMark]) -> u64 {
    marks.iter().find(|m| m.strong).map_or_else(
        || xxhash_rust::xxh3::xxh3_64(url.as_bytes()) | 1 << 63,
        |m| m.exact & !(1 << 63),
    )
}

/// A URL captured several times has several digests: URLs sharing any strong digest are one
/// content (union-find over the digests), so a page that changed between captures is not
/// counted as two contents.
fn relabel_by_shared_digest(labelled: &mut [LabelledUrl]) {
    use rustc_hash::FxHashMap;
    let mut parent: FxHashMap<u64, u64> = FxHashMap::default();
    fn find(parent: &mut FxHashMap<u64, u64>, x: u64) -> u64 {
        let mut r = x;
        while let Some(&p) = parent.get(&r) {
            if p == r {
                break;
            }
            r = p;
        }
        parent.insert(x, r);
        r
    }
    let mut first: FxHashMap<String, u64> = FxHashMap::default();
    for l in labelled.iter() {
        parent.entry(l.cluster).or_insert(l.cluster);
        match first.get(&l.url) {
            Some(&c) => {
                let (a, b) = (find(&mut parent, c), find(&mut parent, l.cluster));
                if a != b {
                    parent.insert(a.max(b), a.min(b));
                }
            }
            None => {
                first.insert(l.url.clone(), l.cluster);
            }
        }
    }
    for l in labelled.iter_mut() {
        l.cluster = find(&mut parent, l.cluster);
    }
}

/// Reads pages or an index into host summaries.
///
/// Memory stays bounded whatever the input: the summaries by `limits` (per origin and in all),
/// the labelled URLs by the page sample's bounds or, from indexes, by [`CaptureSample`].
pub fn read_summaries(
    pages: &[PathBuf],
    index: &[PathBuf],
    normalizer: &StaticNormalizer,
    limits: SummaryLimits,
) -> Result<Crawl, String> {
    let mut summaries = HostSummaries::new(limits);
    if !index.is_empty() {
        let mut sample = CaptureSample::new(MAX_CROSS_HOST_CAPTURES);
        for path in index {
            read_index(path, normalizer, &mut summaries, &mut sample)?;
        }
        let CaptureSample {
            mut labelled,
            level,
            ..
        } = sample;
        relabel_by_shared_digest(&mut labelled);
        return Ok(Crawl {
            summaries,
            labelled,
            contents_share_log2: level,
        });
    }
    let config = ContentConfig::default();
    let (hosts, _) = read_hosts_with_links(pages, normalizer, &config, false)?;
    let mut crawl = Crawl {
        summaries,
        ..Crawl::default()
    };
    let max_links = crawl.summaries.limits().max_links_per_page;
    cluster_hosts_and(
        &hosts,
        &config,
        |_, offline, clusters| HostPages::of(offline, &clusters, max_links),
        |_, _, pages| crawl.add_host(pages),
    );
    Ok(crawl)
}

impl Crawl {
    /// Adds a host's sampled pages (read with their links, made ready by [`HostPages::of`]) to
    /// the summaries, with its clusters' fingerprints as content marks: the pipeline's own,
    /// against the host's template model, as the sidecar computes them.
    pub fn add_host(&mut self, pages: HostPages) {
        for page in pages.0 {
            self.summaries
                .observe_page_linked(&page.url, page.mark, &page.links);
            if let Some(ip) = page.server_ip {
                self.summaries.observe_ip(&page.url, ip);
            }
            self.labelled.push(page.labelled);
        }
    }
}

/// One host's sampled pages as [`Crawl::add_host`] takes them: parsed, marked, their out-links
/// resolved and labelled. Making them needs nothing but the host itself, so it runs on any core
/// beside the host's clustering ([`super::pipeline::cluster_hosts_and`]); only adding them to
/// the crawl is sequential (resolving every out-link, a URL join each, was most of what `undust
/// learn` did on one thread after reading).
pub struct HostPages(Vec<CrawlPage>);

struct CrawlPage {
    url: Url,
    mark: ContentMark,
    links: PageLinks,
    server_ip: Option<std::net::IpAddr>,
    labelled: LabelledUrl,
}

impl HostPages {
    /// A host's pages with their clusters' fingerprints as content marks and at most
    /// `max_links` out-links each (the summaries' bound).
    pub fn of(offline: &OfflineHost, clusters: &HostClusters, max_links: usize) -> Self {
        let mut pages = Vec::with_capacity(offline.pages.len());
        for (((page, links), server_ip), (_, print)) in offline
            .pages
            .iter()
            .zip(&offline.links)
            .zip(&offline.server_ips)
            .zip(&clusters.fingerprints)
        {
            let Ok(url) = Url::parse(&page.url) else {
                continue;
            };
            if origin_of(&url).is_none() {
                continue;
            }
            let mark = ContentMark::from_fingerprint(print);
            let links = PageLinks::of(&url, &url, links.iter().map(String::as_str), max_links);
            let labelled = LabelledUrl {
                url: url.to_string(),
                cluster: label(url.as_str(), &[mark]),
            };
            pages.push(CrawlPage {
                url,
                mark,
                links,
                server_ip: *server_ip,
                labelled,
            });
        }
        HostPages(pages)
    }
}

/// Malformed index lines: the first [`INDEX_ERRORS_REPORTED`] named on stderr, the rest counted.
struct BadLines<'p> {
    file: std::path::Display<'p>,
    count: usize,
}

impl<'p> BadLines<'p> {
    fn new(path: &'p Path) -> Self {
        BadLines {
            file: path.display(),
            count: 0,
        }
    }

    /// Reports one skipped line (`why` names the line).
    fn skip(&mut self, why: impl std::fmt::Display) {
        self.count += 1;
        if self.count <= INDEX_ERRORS_REPORTED {
            eprintln!("{}: {why} (skipped)", self.file);
        }
    }

    /// Reports how many there were when not all were named.
    fn finish(self) {
        if self.count > INDEX_ERRORS_REPORTED {
            eprintln!("{}: {} bad lines in all", self.file, self.count);
        }
    }
}

/// A fetched capture: its content mark on the host's page and its URL labelled by content.
fn observe_capture(
    url: &Url,
    mark: ContentMark,
    summaries: &mut HostSummaries,
    labelled: &mut CaptureSample,
) {
    summaries.observe_page(url, mark, std::iter::empty());
    labelled.push(LabelledUrl {
        url: url.to_string(),
        cluster: label(url.as_str(), &[mark]),
    });
}

/// Reads one index: a capture table when its first line is a tab-separated header naming `url`
/// and `digest`, else an archive index (CDX, CDXJ, a CDX server's JSON, crawl.log, a WACZ's).
fn read_index(
    path: &Path,
    normalizer: &StaticNormalizer,
    summaries: &mut HostSummaries,
    labelled: &mut CaptureSample,
) -> Result<(), String> {
    let name = path.display();
    if crate::ingest::wacz::is_wacz(path) {
        return read_archive_index(path, normalizer, summaries, labelled);
    }
    let mut lines = std::io::BufRead::lines(open_text(path)?);
    let header = match lines.next() {
        Some(line) => line.map_err(|e| format!("{name}: line 1: {e}"))?,
        None => return Err(format!("{name}: empty index")),
    };
    let columns: Vec<&str> = header.split('\t').collect();
    let col = |n: &str| columns.iter().position(|c| c.trim() == n);
    let (Some(url_col), Some(digest_col)) = (col("url"), col("digest")) else {
        if header.contains('\t') {
            return Err(format!(
                "{name}: line 1: a tab-separated capture table must name `url` and `digest` \
                 columns in its header"
            ));
        }
        drop(lines);
        return read_archive_index(path, normalizer, summaries, labelled);
    };
    let (length_col, status_col, ip_col) = (col("length"), col("status"), col("ip"));
    let mut bad = BadLines::new(path);
    for (i, line) in lines.enumerate() {
        let line_no = i + 2;
        let line = line.map_err(|e| format!("{name}: line {line_no}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let field = |c: Option<usize>| c.and_then(|c| fields.get(c)).map(|f| f.trim());
        let parsed = (|| {
            let raw = field(Some(url_col)).ok_or("missing url")?;
            let digest = field(Some(digest_col))
                .filter(|d| !d.is_empty())
                .ok_or("missing digest")?;
            let url = normalizer.normalize(raw).map_err(|_| "invalid url")?;
            Ok::<_, &str>((url, digest))
        })();
        let (url, digest) = match parsed {
            Ok(x) => x,
            Err(why) => {
                bad.skip(format_args!("line {line_no}: {why}"));
                continue;
            }
        };
        if field(status_col).is_some_and(|s| !s.is_empty() && !s.starts_with('2')) {
            summaries.observe_url(&url);
            continue;
        }
        let length = field(length_col).and_then(|l| l.parse().ok()).unwrap_or(0);
        observe_capture(
            &url,
            ContentMark::from_digest(digest, length),
            summaries,
            labelled,
        );
        if let Some(ip) = field(ip_col).and_then(|ip| ip.parse().ok()) {
            summaries.observe_ip(&url, ip);
        }
    }
    bad.finish();
    Ok(())
}

/// Reads a CDX, CDXJ or crawl.log index. A capture is content evidence when it was fetched with
/// status 200 (or is a revisit, which may not repeat the status) and has a digest that is not the
/// empty body's; any media type counts (an image at the same path on two hosts is as much a sign
/// of a mirror as a page). The strength of its mark follows the length the index records
/// (payload bytes in crawl.log, record bytes in CDX), and a capture without a length is taken as
/// strong: the empty body is refused by its digest, and confirmation needs several matching
/// paths. Other captures (redirects, errors) still add their URL to the host's path set.
fn read_archive_index(
    path: &Path,
    normalizer: &StaticNormalizer,
    summaries: &mut HostSummaries,
    labelled: &mut CaptureSample,
) -> Result<(), String> {
    let reader = crate::ingest::index::read_index(path).map_err(|err| err.to_string())?;
    let mut bad = BadLines::new(path);
    for item in reader {
        let capture = match item {
            Ok(capture) => capture,
            Err(err) => {
                bad.skip(err);
                continue;
            }
        };
        let Ok(url) = normalizer.normalize(&capture.url) else {
            continue;
        };
        let fetched = capture.status == Some(200) || (capture.revisit && capture.status.is_none());
        let digest = capture
            .digest
            .as_deref()
            .filter(|d| fetched && *d != crate::ingest::index::EMPTY_SHA1);
        let Some(digest) = digest else {
            summaries.observe_url(&url);
            continue;
        };
        let mark = ContentMark::from_digest(digest, capture.length.unwrap_or(u64::MAX));
        observe_capture(&url, mark, summaries, labelled);
    }
    bad.finish();
    Ok(())
}

/// What the summaries hold against their bound, for stderr.
fn held_report(summaries: &HostSummaries) -> String {
    let limits = summaries.limits();
    let mut report = format!(
        "summaries hold about {} MiB of {} MiB",
        summaries.held_bytes() >> 20,
        limits.max_held_bytes >> 20
    );
    if summaries.urls_left_out() > 0 {
        report.push_str(&format!(
            "; {} URLs left out once they were full (origins, paths or pages not summarized)",
            summaries.urls_left_out()
        ));
    }
    report
}

/// How much of the contents the measures across hosts read, for stderr (nothing when all).
fn share_report(share_log2: u32) -> String {
    if share_log2 == 0 {
        String::new()
    } else {
        format!(
            " (on 1/{} of the contents, chosen by hash: the index has more than {} captures)",
            1u64 << share_log2.min(63),
            MAX_CROSS_HOST_CAPTURES
        )
    }
}

/// Detection on a crawl, with an earlier rule file's operator decisions applied.
pub fn detect_sets(crawl: &Crawl, previous: &[MirrorSet]) -> (Detection, Vec<MirrorSet>) {
    let detection = detect(&crawl.summaries, &MirrorConfig::default());
    let sets = apply_decisions(detection.sets.clone(), previous);
    (detection, sets)
}

/// Measures across hosts of a crawl: URLs as they are, and with the mirror sets folded.
pub fn cross_host(
    crawl: &Crawl,
    sets: &[MirrorSet],
) -> Result<(CrossHostMetrics, CrossHostMetrics), String> {
    let table = MirrorTable::compile(sets).map_err(|e| e.to_string())?;
    let before = measure_across_hosts(&crawl.labelled, |u| u.to_owned());
    let after = measure_across_hosts(&crawl.labelled, |u| {
        Url::parse(u)
            .ok()
            .and_then(|url| table.fold(&url))
            .map_or_else(|| u.to_owned(), |f| f.url)
    });
    Ok((before, after))
}

/// Reads the mirror sets of a rule file (for operator decisions).
pub fn previous_sets(path: Option<&Path>) -> Result<Vec<MirrorSet>, String> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    RuleFile::from_json(&text)
        .map(|f| f.mirrors)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `undust mirrors`.
pub fn run(args: MirrorsArgs) -> ExitCode {
    let normalizer = match args.normalization.normalizer() {
        Ok(n) => n,
        Err(err) => {
            eprintln!("undust mirrors: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let previous = match previous_sets(args.previous.as_deref()) {
        Ok(p) => p,
        Err(err) => {
            eprintln!("undust mirrors: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let limits = SummaryLimits {
        max_held_bytes: args.summary_memory_mib << 20,
        ..SummaryLimits::default()
    };
    let crawl = match read_summaries(&args.pages, &args.index, &normalizer, limits) {
        Ok(c) => c,
        Err(err) => {
            eprintln!("undust mirrors: {err}");
            return ExitCode::from(EXIT_NO_INPUT);
        }
    };
    let (detection, sets) = detect_sets(&crawl, &previous);
    eprintln!(
        "undust mirrors: {} origins, {} alignments proposed, {} confirmed, {} mirror sets",
        crawl.summaries.len(),
        detection.proposed,
        detection.confirmed.len(),
        sets.len()
    );
    eprintln!("undust mirrors: {}", held_report(&crawl.summaries));
    match cross_host(&crawl, &sets) {
        Ok((before, after)) => eprintln!(
            "across hosts{}: {} URLs, {} distinct contents, canonical forms {} -> {}, \
             {} forms span hosts ({} joining different content)",
            share_report(crawl.contents_share_log2),
            after.pooled.urls,
            after.pooled.clusters,
            before.pooled.canonical,
            after.pooled.canonical,
            after.spanning_forms,
            after.false_spanning_forms
        ),
        Err(err) => {
            eprintln!("undust mirrors: {err}");
            return ExitCode::from(EXIT_SOFTWARE);
        }
    }
    match serde_json::to_string_pretty(&serde_json::json!({ "mirrors": sets })) {
        Ok(text) => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => super::output_failed("mirrors", "stdout", &err),
            }
        }
        Err(err) => {
            eprintln!("undust mirrors: {err}");
            ExitCode::from(EXIT_SOFTWARE)
        }
    }
}

/// Mirror sets for `undust learn`: detected on the pages or the indexes' payload digests (none
/// from labelled clusters, which carry no content), with an earlier rule file's pinned and
/// forbidden aliases kept.
pub fn learn_mirrors(
    pages: &[PathBuf],
    index: &[PathBuf],
    normalization: &StaticArgs,
    previous: Option<&Path>,
) -> Result<Vec<MirrorSet>, (u8, String)> {
    let previous = previous_sets(previous).map_err(|e| (EXIT_USAGE, e))?;
    if pages.is_empty() && index.is_empty() {
        return Ok(apply_decisions(Vec::new(), &previous));
    }
    let normalizer = normalization.normalizer().map_err(|e| (EXIT_USAGE, e))?;
    let crawl = read_summaries(pages, index, &normalizer, SummaryLimits::default())
        .map_err(|e| (EXIT_NO_INPUT, e))?;
    Ok(learned_mirror_sets(&crawl, &previous))
}

/// [`learn_mirrors`] on a crawl already read (`undust learn` reads its pages once for rules and
/// mirrors when the sample kept every page: see `learn::run`).
pub fn learn_mirrors_of(
    crawl: &Crawl,
    previous: Option<&Path>,
) -> Result<Vec<MirrorSet>, (u8, String)> {
    let previous = previous_sets(previous).map_err(|e| (EXIT_USAGE, e))?;
    Ok(learned_mirror_sets(crawl, &previous))
}

fn learned_mirror_sets(crawl: &Crawl, previous: &[MirrorSet]) -> Vec<MirrorSet> {
    let (detection, sets) = detect_sets(crawl, previous);
    eprintln!(
        "mirrors: {} origins, {} alignments proposed, {} confirmed, {} mirror sets",
        crawl.summaries.len(),
        detection.proposed,
        detection.confirmed.len(),
        sets.len()
    );
    sets
}

/// The measures across hosts `undust eval` reports beside the per-host ones: on the pages'
/// URLs (or the indexes' captures) with content labels across hosts, static normalization
/// alone vs mirror sets folded (and a rule file's canonicalization, [`across_hosts_of`]).
pub fn eval_across_hosts(
    pages: &[PathBuf],
    index: &[PathBuf],
    normalization: &StaticArgs,
    rule_file: Option<&Canonicalizer>,
) -> Result<serde_json::Value, (u8, String)> {
    let normalizer = normalization.normalizer().map_err(|e| (EXIT_USAGE, e))?;
    let crawl = read_summaries(pages, index, &normalizer, SummaryLimits::default())
        .map_err(|e| (EXIT_NO_INPUT, e))?;
    across_hosts_of(&crawl, rule_file)
}

/// [`eval_across_hosts`] of a crawl already read (`undust eval --pages` reads its pages once for
/// the per-host rows and this).
///
/// With `rule_file` (a canonicalizer holding a rule file's rules and mirror sets, as `undust
/// canonicalize --rules` builds it) a third row measures that file: its mirror sets and each
/// host's rules together, the end-to-end figure of a file learned elsewhere.
pub fn across_hosts_of(
    crawl: &Crawl,
    rule_file: Option<&Canonicalizer>,
) -> Result<serde_json::Value, (u8, String)> {
    let (_, sets) = detect_sets(crawl, &[]);
    let (before, after) = cross_host(crawl, &sets).map_err(|e| (EXIT_SOFTWARE, e))?;
    let with_file = rule_file.map(|canonicalizer| {
        measure_across_hosts(&crawl.labelled, |u| {
            canonicalizer
                .canonicalize(u)
                .map_or_else(|_| u.to_owned(), |c| c.canonical)
        })
    });
    let row = |name: &str, m: &CrossHostMetrics| {
        serde_json::json!({
            "method": name,
            "urls": m.pooled.urls,
            "canonical_forms": m.pooled.canonical,
            "compression": m.pooled.compression_rate(),
            "best_compression": m.pooled.best_compression_rate(),
            "false_positive_pairs": m.pooled.false_positive_pairs,
            "forms_spanning_hosts": m.spanning_forms,
            "false_forms_spanning_hosts": m.false_spanning_forms,
        })
    };
    let rows: Vec<serde_json::Value> = [row("static only", &before), row("mirror sets", &after)]
        .into_iter()
        .chain(with_file.as_ref().map(|m| row("rule file", m)))
        .collect();
    Ok(serde_json::json!({
        "origins": crawl.summaries.len(),
        "origin_urls_left_out": crawl.summaries.urls_left_out(),
        "contents_share": 1.0 / (1u64 << crawl.contents_share_log2.min(63)) as f64,
        "mirror_sets": sets.len(),
        "aliases": sets.iter().map(|s| s.aliases.len()).sum::<usize>(),
        "rows": rows,
    }))
}

/// [`eval_across_hosts`] as a table.
pub fn across_hosts_table(report: &serde_json::Value) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = writeln!(
        text,
        "across hosts: {} origins, {} mirror sets ({} aliases)",
        report["origins"], report["mirror_sets"], report["aliases"]
    );
    let _ = writeln!(
        text,
        "{:<14} {:>8} {:>10} {:>10} {:>10} {:>12} {:>14}",
        "method", "URLs", "forms", "compr", "best", "fp pairs", "false spanning"
    );
    if let Some(rows) = report["rows"].as_array() {
        for r in rows {
            let _ = writeln!(
                text,
                "{:<14} {:>8} {:>10} {:>9.2}% {:>9.2}% {:>12} {:>14}",
                // Counts as numbers: a `serde_json::Value` ignores the width it is given.
                r["method"].as_str().unwrap_or(""),
                r["urls"].as_u64().unwrap_or(0),
                r["canonical_forms"].as_u64().unwrap_or(0),
                r["compression"].as_f64().unwrap_or(0.0) * 100.0,
                r["best_compression"].as_f64().unwrap_or(0.0) * 100.0,
                r["false_positive_pairs"].as_u64().unwrap_or(0),
                r["false_forms_spanning_hosts"].as_u64().unwrap_or(0)
            );
        }
    }
    text
}

#[cfg(test)]
mod tests {
    /// Past its bound the capture sample keeps a shrinking share of the contents, each whole:
    /// every URL of a content kept, none of a content left out, and never more than the bound.
    #[test]
    fn the_capture_sample_keeps_whole_contents_within_its_bound() {
        let mut sample = CaptureSample::new(1_000);
        let mut peak = 0;
        for content in 0..5_000u64 {
            for host in 0..3 {
                sample.push(LabelledUrl {
                    url: format!("http://h{host}.example/{content}"),
                    cluster: content,
                });
                peak = peak.max(sample.labelled.len());
            }
        }
        assert!(peak <= 1_000, "held {peak}");
        assert!(sample.level >= 3, "level {}", sample.level);
        let mut per_content: std::collections::BTreeMap<u64, usize> = Default::default();
        for l in &sample.labelled {
            *per_content.entry(l.cluster).or_default() += 1;
        }
        assert!(per_content.len() > 100, "{} contents", per_content.len());
        assert!(per_content.values().all(|&n| n == 3), "a content split");
        for content in 0..5_000u64 {
            assert_eq!(
                per_content.contains_key(&content),
                CaptureSample::in_share(sample.level, content)
            );
        }
    }

    use super::*;
    use std::io::Write;

    #[test]
    fn the_across_hosts_table_lines_its_counts_up_under_their_headings() {
        let report = serde_json::json!({
            "origins": 69, "mirror_sets": 5, "aliases": 5,
            "rows": [{
                "method": "mirror sets", "urls": 1539, "canonical_forms": 1467,
                "compression": 0.0468, "best_compression": 0.0981,
                "false_positive_pairs": 8, "forms_spanning_hosts": 70,
                "false_forms_spanning_hosts": 8
            }],
        });
        let text = across_hosts_table(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        // The row is as wide as its headings, each count right-aligned in its column.
        assert_eq!(lines[2].len(), lines[1].len(), "{text}");
        assert_eq!(&lines[1][15..23], "    URLs");
        assert_eq!(&lines[2][15..23], "    1539");
        assert_eq!(&lines[2][24..34], "      1467");
        assert!(lines[2].ends_with("             8"), "{text}");
    }

    /// A crawl built from [`HostPages`] made beside clustering (as `undust learn` and `undust
    /// mirrors` now build it, on every core) is the crawl that observing each page with its raw
    /// links one at a time gives ([`HostSummaries::observe_page`], what they did before and what
    /// the sidecar's summaries take): same summaries, same labelled URLs, in the same order.
    #[test]
    fn host_pages_build_the_crawl_page_by_page_observation_builds() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("pages.jsonl");
        let mut file = std::fs::File::create(&path).expect("page file");
        for (host, ip) in [("a.example", "192.0.2.1"), ("b.example", "192.0.2.2")] {
            for i in 0..6 {
                let html = format!(
                    "<html><body><nav><a href=/>Home</a><a href=\"page/{i}?x=1\">Next</a>\
                     <a href=\"http://other.example/p{i}\">Other</a><a href=\"mailto:x@y\">Mail</a>\
                     <a href=\"//cdn.example/asset\">CDN</a></nav><article><p>Story {i} of {host} \
                     with enough words to count as a page of text here {}</p></article></body></html>",
                    "more words ".repeat(i + 3)
                );
                let line = serde_json::json!({
                    "url": format!("http://{host}/story/{i}"),
                    "html": html,
                    "server_ip": ip,
                });
                writeln!(file, "{line}").expect("write page");
            }
        }
        drop(file);
        let normalizer = StaticNormalizer::new(crate::canon::normalize::StaticConfig::default())
            .expect("default normalization");
        let config = ContentConfig::default();
        let (hosts, _) =
            read_hosts_with_links(&[path], &normalizer, &config, false).expect("read pages");
        assert_eq!(hosts.len(), 2);

        let mut made = Crawl::default();
        let max_links = made.summaries.limits().max_links_per_page;
        cluster_hosts_and(
            &hosts,
            &config,
            |_, offline, clusters| HostPages::of(offline, &clusters, max_links),
            |_, _, pages| made.add_host(pages),
        );

        let mut observed = Crawl::default();
        for offline in hosts.values() {
            let clusters = offline.cluster(&config);
            for (((page, links), server_ip), (_, print)) in offline
                .pages
                .iter()
                .zip(&offline.links)
                .zip(&offline.server_ips)
                .zip(&clusters.fingerprints)
            {
                let url = Url::parse(&page.url).expect("sampled URL");
                let mark = ContentMark::from_fingerprint(print);
                observed
                    .summaries
                    .observe_page(&url, mark, links.iter().map(String::as_str));
                if let Some(ip) = server_ip {
                    observed.summaries.observe_ip(&url, *ip);
                }
                observed.labelled.push(LabelledUrl {
                    url: url.to_string(),
                    cluster: label(url.as_str(), &[mark]),
                });
            }
        }

        assert_eq!(made.labelled.len(), 12);
        assert_eq!(made.labelled, observed.labelled);
        assert!(made
            .summaries
            .hosts()
            .iter()
            .any(|h| format!("{h:?}").contains("other.example")));
        assert_eq!(
            format!("{:?}", made.summaries),
            format!("{:?}", observed.summaries)
        );
    }
}
