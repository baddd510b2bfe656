//! `undust corpus`: writes a synthetic multi-site crawl as JSON lines (the page format `undust
//! learn`, `clusters` and `eval` read), so the tools can be tried without a crawl of one's own.

use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{EXIT_NO_INPUT, EXIT_SOFTWARE, EXIT_USAGE};
use crate::corpus::{generate, write_jsonl, CorpusConfig, SiteKind};

/// Flags of `undust corpus`.
#[derive(Debug, clap::Args)]
pub struct CorpusArgs {
    /// Seed of the generator (same seed, same crawl).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Sites of each kind (forum, shop, news, docs, wiki, mixed, clean).
    #[arg(long, default_value_t = 1)]
    sites_per_kind: usize,
    /// Fewest pages per site.
    #[arg(long, default_value_t = 200)]
    min_pages: usize,
    /// Most pages per site.
    #[arg(long, default_value_t = 1_000)]
    max_pages: usize,
    /// Kinds of site, comma-separated: the seven above or families of real software
    /// (`mediawiki`, `wordpress`, `drupal`, `discourse`, ...); default the seven.
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Share of sites whose pages declare `rel=canonical` (and `rel=shortlink` where their
    /// software writes one, as Drupal and WordPress do), in 0..=1.
    #[arg(long, default_value_t = 0.0)]
    rel_canonical: f64,
    /// Output file (JSON lines; `.gz` is not applied, pipe through gzip if wanted).
    #[arg(long)]
    out: PathBuf,
}

/// The kinds named by `--kinds`, or an error naming the unknown one and the known ones.
fn kinds(names: &[String]) -> Result<Vec<SiteKind>, String> {
    let known = || SiteKind::ALL.iter().chain(&SiteKind::FAMILIES);
    names
        .iter()
        .map(|name| {
            let name = name.trim();
            known().copied().find(|k| k.name() == name).ok_or_else(|| {
                let names: Vec<&str> = known().map(|k| k.name()).collect();
                format!(
                    "--kinds: no kind is named {name:?} (known: {})",
                    names.join(", ")
                )
            })
        })
        .collect()
}

/// Runs `undust corpus`.
pub fn run(args: CorpusArgs) -> ExitCode {
    if !(0.0..=1.0).contains(&args.rel_canonical) {
        eprintln!("undust corpus: --rel-canonical must be in 0..=1");
        return ExitCode::from(EXIT_USAGE);
    }
    let mut config = CorpusConfig::new(args.seed, args.sites_per_kind)
        .with_pages(args.min_pages, args.max_pages.max(args.min_pages))
        .with_rel_canonical(args.rel_canonical);
    if !args.kinds.is_empty() {
        match kinds(&args.kinds) {
            Ok(kinds) => config = config.with_kinds(&kinds),
            Err(err) => {
                eprintln!("undust corpus: {err}");
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    let corpus = generate(&config);
    let file = match std::fs::File::create(&args.out) {
        Ok(file) => file,
        Err(err) => {
            eprintln!("undust corpus: {}: {err}", args.out.display());
            return ExitCode::from(EXIT_NO_INPUT);
        }
    };
    if let Err(err) = write_jsonl(&corpus, BufWriter::new(file)) {
        eprintln!("undust corpus: {}: {err}", args.out.display());
        return ExitCode::from(EXIT_SOFTWARE);
    }
    eprintln!(
        "undust corpus: {} sites, {} pages written to {}",
        corpus.sites.len(),
        corpus.total_pages(),
        args.out.display()
    );
    ExitCode::SUCCESS
}
