//! `undust corpus`: writes a synthetic multi-site crawl as JSON lines (the page format `undust
//! learn`, `clusters` and `eval` read), so the tools can be tried without a crawl of one's own.

use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{EXIT_NO_INPUT, EXIT_SOFTWARE};
use crate::corpus::{generate, write_jsonl, CorpusConfig};

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
    /// Output file (JSON lines; `.gz` is not applied, pipe through gzip if wanted).
    #[arg(long)]
    out: PathBuf,
}

/// Runs `undust corpus`.
pub fn run(args: CorpusArgs) -> ExitCode {
    let config = CorpusConfig::new(args.seed, args.sites_per_kind)
        .with_pages(args.min_pages, args.max_pages.max(args.min_pages));
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
