//! The `undust` command line: one submodule per subcommand.
//!
//! - `undust serve`: the sidecar ([`serve`]).
//! - `undust canonicalize`: stdin to stdout, one line out per line in ([`canonicalize`]).
//! - `undust clusters`: pages in, duplicate clusters out ([`clusters`]).
//! - `undust learn`: pages or labelled clusters in, a rule file out ([`learn`]).
//! - `undust eval`: the paper's evaluation protocol on a user's crawl ([`eval`]).
//! - `undust mirrors`: mirror sets of a crawl with their evidence ([`mirrors`]).
//! - `undust corpus`: writes a synthetic multi-site crawl to try the others on ([`corpus`]).
//! - `undust load`: a bounded load generator for a running sidecar on loopback ([`load`]).
//! - `undust admin`: operators' commands over the admin API ([`admin`]).
//! - `undust client`: the frontier's calls against a running sidecar ([`client`]).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod admin;
pub mod canonicalize;
pub mod client;
pub mod clusters;
pub mod corpus;
pub mod eval;
pub mod index;
pub mod learn;
pub mod mirrors;
mod ordered;
pub use undust_devtools::load;
pub mod pipeline;
pub mod records;
pub mod serve;

/// Exit code for bad usage or configuration (EX_USAGE from sysexits.h).
pub const EXIT_USAGE: u8 = 64;
/// Exit code for unreadable input (EX_DATAERR / EX_NOINPUT family: EX_NOINPUT).
pub const EXIT_NO_INPUT: u8 = 66;
/// Exit code for an internal failure (EX_SOFTWARE).
pub const EXIT_SOFTWARE: u8 = 70;
/// Exit code for output that could not be written in full (EX_IOERR).
pub const EXIT_IO_ERROR: u8 = 74;

/// The exit of a command whose output `to` failed with `err`. A reader that went away (stdout
/// piped into `head`) is the reader's choice, not an error; anything else (a full disk, an I/O
/// error) means the output is incomplete, so the command says so and exits 74.
pub fn output_failed(command: &str, to: &str, err: &std::io::Error) -> ExitCode {
    if err.kind() == std::io::ErrorKind::BrokenPipe {
        return ExitCode::SUCCESS;
    }
    eprintln!("undust {command}: writing {to} failed, the output is incomplete: {err}");
    ExitCode::from(EXIT_IO_ERROR)
}

/// undust: learn URL normalization rules from duplicate content and canonicalize crawl URLs.
#[derive(Debug, Parser)]
#[command(name = "undust", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the sidecar: gRPC canonicalizer, ingest and admin services, Prometheus metrics.
    Serve(Box<serve::ServeArgs>),
    /// Canonicalize URLs from stdin to stdout, one output line per input line, in order.
    Canonicalize(canonicalize::CanonicalizeArgs),
    /// Fingerprint pages and print their duplicate clusters as JSON lines.
    Clusters(clusters::ClustersArgs),
    /// Learn per-host normalization rules from pages or labelled clusters.
    Learn(learn::LearnArgs),
    /// Evaluate learned rules with the pattern-tree paper's protocol.
    Eval(eval::EvalArgs),
    /// List the mirror sets of a crawl (origins serving one site) with their evidence.
    Mirrors(mirrors::MirrorsArgs),
    /// Write a synthetic multi-site crawl (JSON lines) to try undust on.
    Corpus(corpus::CorpusArgs),
    /// Drive a running sidecar on loopback with bounded load and report throughput and latency.
    Load(load::LoadArgs),
    /// Operate a running sidecar: relearn, jobs, rules, hosts, explain, stats, rollback.
    Admin(admin::AdminArgs),
    /// Call a running sidecar's frontier API (canonicalize URLs).
    Client(client::ClientArgs),
}

/// Parses the command line and runs the chosen subcommand.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Serve(args) => serve::run(*args),
        Command::Canonicalize(args) => canonicalize::run(args),
        Command::Clusters(args) => clusters::run(args),
        Command::Learn(args) => learn::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Mirrors(args) => mirrors::run(args),
        Command::Corpus(args) => corpus::run(args),
        Command::Load(args) => load::run(args),
        Command::Admin(args) => admin::run(args),
        Command::Client(args) => client::run(args),
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
