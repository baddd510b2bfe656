//! `undust eval`: the pattern-tree paper's evaluation protocol on a user's crawl.
//!
//! Per host, a seeded share of the duplicate clusters (default 20%, all their URLs together) is
//! the training set; rules are learned with the graph and the naive selection strategies and
//! applied to every URL; compression rate, dup-reduction rate and false-positive rate (equations
//! 1–3) are reported micro- and macro-averaged over hosts, beside static normalization alone and
//! the best achievable compression. A table by default, `--json` for machines. With
//! `--families FILE` (lines `host<TAB>family`, e.g. the kind of software a host runs) the learned
//! rows are also reported per family, so a learner that fits some kinds of site and misses others
//! shows it; hosts the file does not name form the family `other`.
//!
//! With `--rules FILE` (a rule file `undust learn` wrote, from this crawl or another) one more
//! row measures that file on every URL, applied as `undust canonicalize --rules` applies it,
//! its mirror sets included across hosts: learn on one crawl, measure on the next.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::canonicalize::{load_rules, StaticArgs};
use super::learn::read_input;
use super::{output_failed, EXIT_NO_INPUT, EXIT_SOFTWARE, EXIT_USAGE};
use crate::canon::Canonicalizer;
use crate::learn::eval::{
    average, by_family, evaluate, measure, EvalConfig, EvalRow, FamilyRow, HostSamples, Method,
};

/// Flags of `undust eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// Page files: JSON lines, WARC or ARC (optionally `.gz`), or WACZ.
    #[arg(long, num_args = 1.., required_unless_present_any = ["clusters", "index"], conflicts_with_all = ["clusters", "index"])]
    pages: Vec<PathBuf>,
    /// Pre-labelled data: `{"url": ..., "cluster": ...}` lines.
    #[arg(long, num_args = 1.., conflicts_with = "index")]
    clusters: Vec<PathBuf>,
    /// Crawl indexes: CDX (`.cdx`), CDXJ (`.cdxj`), a CDX server's `output=json` answer (the
    /// Wayback Machine's, pywb's, Common Crawl's) or Heritrix `crawl.log`, optionally `.gz`
    /// (layout from the name, else from the content). URLs sharing the payload digest of a 200
    /// capture of any type (not empty, not tiny) are one cluster; the index's redirects are
    /// redirect evidence.
    #[arg(long, num_args = 1..)]
    index: Vec<PathBuf>,
    /// Share of each host's clusters used for training.
    #[arg(long, default_value_t = 0.2)]
    train_fraction: f64,
    /// Seed of the training split.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Host families: lines `host<TAB>family` (`#` comments and blank lines skipped); adds
    /// per-family figures for each learned row.
    #[arg(long)]
    families: Option<PathBuf>,
    /// A rule file (`undust learn --out`), learned on this crawl or another: adds a row for it,
    /// applied to every URL as `undust canonicalize --rules` applies it (its mirror sets too,
    /// across hosts).
    #[arg(long)]
    rules: Option<PathBuf>,
    #[command(flatten)]
    normalization: StaticArgs,
}

fn method_name(method: Method) -> &'static str {
    match method {
        Method::StaticOnly => "static only",
        Method::Graph => "tree + graph",
        Method::Naive => "tree + naive",
        Method::RuleFile => "rule file",
    }
}

/// The human-readable report.
fn table(rows: &[EvalRow], hosts: usize, urls: usize) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = writeln!(text, "{hosts} hosts, {urls} URLs");
    let _ = writeln!(
        text,
        "{:<14} {:>6} {:>10} {:>10} {:>12} {:>12} {:>10} {:>10}",
        "method", "rules", "compr µ", "compr M", "dup-red µ", "dup-red M", "fpr µ", "fpr M"
    );
    for row in rows {
        let a = &row.averages;
        let _ = writeln!(
            text,
            "{:<14} {:>6} {:>9.2}% {:>9.2}% {:>11.2}% {:>11.2}% {:>9.3}% {:>9.3}%",
            method_name(row.method),
            row.rules,
            a.micro_compression * 100.0,
            a.macro_compression * 100.0,
            a.micro_dup_reduction * 100.0,
            a.macro_dup_reduction * 100.0,
            a.micro_fpr * 100.0,
            a.macro_fpr * 100.0
        );
    }
    if let Some(row) = rows.first() {
        let _ = writeln!(
            text,
            "best achievable compression (1 - clusters/URLs), micro: {:.2}%",
            row.averages.micro_best_compression * 100.0
        );
    }
    text
}

/// Reads a `host<TAB>family` file; the error names the line that is not of that shape.
fn read_families(
    path: &std::path::Path,
) -> Result<std::collections::HashMap<String, String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once('\t') {
            Some((host, family)) if !host.trim().is_empty() && !family.trim().is_empty() => {
                out.insert(host.trim().to_ascii_lowercase(), family.trim().to_owned());
            }
            _ => {
                return Err(format!(
                    "{} line {}: expected `host<TAB>family`",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(out)
}

/// Per-family rows of every learned method.
fn family_rows(rows: &[EvalRow], families: &[&str]) -> Vec<(Method, Vec<FamilyRow>)> {
    rows.iter()
        .filter(|r| r.method != Method::StaticOnly)
        .map(|r| (r.method, by_family(&r.per_host, families)))
        .collect()
}

fn families_table(per_method: &[(Method, Vec<FamilyRow>)]) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    // Writing into a String cannot fail.
    for (method, rows) in per_method {
        let _ = writeln!(text);
        let _ = writeln!(text, "{} by family:", method_name(*method));
        let _ = writeln!(
            text,
            "{:<20} {:>5} {:>8} {:>10} {:>10} {:>10} {:>10}",
            "family", "hosts", "URLs", "compr µ", "best µ", "of best", "fpr µ"
        );
        for r in rows {
            let _ = writeln!(
                text,
                "{:<20} {:>5} {:>8} {:>9.2}% {:>9.2}% {:>9.1}% {:>9.3}%",
                r.family,
                r.hosts,
                r.total.urls,
                r.total.compression_rate() * 100.0,
                r.total.best_compression_rate() * 100.0,
                r.share_of_best() * 100.0,
                r.total.false_positive_rate() * 100.0
            );
        }
    }
    text
}

/// Runs `undust eval`.
pub fn run(args: EvalArgs) -> ExitCode {
    if !(args.train_fraction > 0.0 && args.train_fraction <= 1.0) {
        eprintln!("undust eval: --train-fraction must be in (0, 1]");
        return ExitCode::from(EXIT_USAGE);
    }
    let families = match args.families.as_deref().map(read_families).transpose() {
        Ok(families) => families,
        Err(err) => {
            eprintln!("undust eval: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let normalizer = match args.normalization.normalizer() {
        Ok(normalizer) => normalizer,
        Err(err) => {
            eprintln!("undust eval: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    // The rule file is loaded before the crawl is read, so a bad one fails at once.
    let rule_file = match &args.rules {
        Some(path) => {
            let canonicalizer = Canonicalizer::new(normalizer.clone());
            match load_rules(&canonicalizer, path) {
                Ok(rules) => Some((canonicalizer, rules)),
                Err(err) => {
                    eprintln!("undust eval: cannot load rules: {err}");
                    return ExitCode::from(EXIT_NO_INPUT);
                }
            }
        }
        None => None,
    };
    // Measured on the URLs as crawled, so static normalization's own share shows. Page files
    // are read once for the per-host rows and the across-hosts figures.
    let read = read_input(
        &args.pages,
        &args.clusters,
        &args.index,
        &args.normalization,
        true,
    );
    let (hosts, crawl) = match read {
        Ok(read) => read,
        Err((code, err)) => {
            eprintln!("undust eval: {err}");
            return ExitCode::from(code);
        }
    };
    let samples: Vec<HostSamples> = hosts
        .into_iter()
        .map(|(host, urls, declared)| HostSamples {
            host,
            urls,
            declared,
        })
        .collect();
    let urls: usize = samples.iter().map(|h| h.urls.len()).sum();
    let config = EvalConfig {
        train_fraction: args.train_fraction,
        seed: args.seed,
        ..EvalConfig::default()
    };
    let mut rows = match evaluate(&samples, &config, &normalizer) {
        Ok(rows) => rows,
        Err(err) => {
            eprintln!("undust eval: {err}");
            return ExitCode::from(EXIT_SOFTWARE);
        }
    };
    if let Some((canonicalizer, rules)) = &rule_file {
        let canonical = |u: &str| {
            canonicalizer
                .canonicalize(u)
                .map_or_else(|_| u.to_owned(), |c| c.canonical)
        };
        let per_host: Vec<_> = samples
            .iter()
            .map(|h| measure(&h.urls, canonical))
            .collect();
        rows.push(EvalRow {
            method: Method::RuleFile,
            averages: average(&per_host),
            per_host,
            rules: *rules,
        });
    }
    let rule_canonicalizer = rule_file.as_ref().map(|(c, _)| c);
    let across = match (&crawl, args.index.is_empty()) {
        (Some(crawl), _) => super::mirrors::across_hosts_of(crawl, rule_canonicalizer),
        (None, false) => super::mirrors::eval_across_hosts(
            &args.pages,
            &args.index,
            &args.normalization,
            rule_canonicalizer,
        ),
        (None, true) => Ok(serde_json::Value::Null),
    };
    let across = match across {
        Ok(report) => report,
        Err((code, err)) => {
            eprintln!("undust eval: {err}");
            return ExitCode::from(code);
        }
    };
    let per_family = families.as_ref().map(|families| {
        let names: Vec<&str> = samples
            .iter()
            .map(|h| {
                families
                    .get(&h.host.to_ascii_lowercase())
                    .map_or("other", String::as_str)
            })
            .collect();
        family_rows(&rows, &names)
    });
    let text = if args.json {
        let report = serde_json::json!({
            "across_hosts": across,
            "hosts": samples.iter().map(|h| &h.host).collect::<Vec<_>>(),
            "urls": urls,
            "train_fraction": args.train_fraction,
            "seed": args.seed,
            "rows": rows,
            "families": per_family.as_ref().map(|p| p
                .iter()
                .map(|(method, rows)| serde_json::json!({"method": method, "families": rows}))
                .collect::<Vec<_>>()),
        });
        match serde_json::to_string_pretty(&report) {
            Ok(text) => text + "\n",
            Err(err) => {
                eprintln!("undust eval: {err}");
                return ExitCode::from(EXIT_SOFTWARE);
            }
        }
    } else {
        let mut text = table(&rows, samples.len(), urls);
        if !across.is_null() {
            text.push_str(&super::mirrors::across_hosts_table(&across));
        }
        if let Some(per_family) = &per_family {
            text.push_str(&families_table(per_family));
        }
        text
    };
    // `println!` panics when stdout cannot be written (a full disk): write and check instead.
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => output_failed("eval", "stdout", &err),
    }
}
