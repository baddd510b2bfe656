//! The `undust` command line: one submodule per subcommand.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code for bad usage or configuration (EX_USAGE from sysexits.h).
pub const EXIT_USAGE: u8 = 64;

/// undust: learn URL normalization rules from duplicate content and canonicalize crawl URLs.
#[derive(Debug, Parser)]
#[command(name = "undust", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {}

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
    match cli.command {}
}
