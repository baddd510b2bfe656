//! `undust client`: the frontier's calls from the command line, so trying a running sidecar needs
//! nothing but undust.
//!
//! `undust client canonicalize [URL…]` sends the URLs (or stdin's lines when none are given) to
//! `Canonicalizer/Canonicalize` in batches and prints one line per URL, in order:
//! `DECISION<TAB>canonical<TAB>enqueue_url` (or `INVALID<TAB>reason` ), or one JSON object per
//! line with `--json`. `undust client health` asks the standard `grpc.health.v1.Health/Check` and
//! exits 0 only when the sidecar is SERVING: the container image's health check, with no extra
//! probe binary. Connection failures and refused requests exit non-zero as in [`super::admin`].

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use super::admin::{connect, runtime, Failure, DEFAULT_TIMEOUT_SECS};
use super::{EXIT_NO_INPUT, EXIT_SOFTWARE};
use crate::config::DEFAULT_LISTEN;
use crate::pb;
use crate::pb::canonicalizer_client::CanonicalizerClient;

/// URLs per `Canonicalize` request: well under the server's default `--max-batch` (10,000).
pub const DEFAULT_BATCH: u64 = 1_000;

/// Flags of `undust client`.
#[derive(Debug, clap::Args)]
pub struct ClientArgs {
    /// Address of the sidecar's canonicalizer service.
    #[arg(long, env = "UNDUST_ADDRESS", default_value = DEFAULT_LISTEN)]
    address: String,
    /// Deadline of each call, in seconds.
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_SECS)]
    timeout_secs: u64,
    #[command(subcommand)]
    command: ClientCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ClientCommand {
    /// Canonicalize URLs (arguments, or stdin one per line) against the sidecar's seen-set.
    Canonicalize {
        /// The URLs; read from stdin, one per line, when none are given.
        urls: Vec<String>,
        /// Only look: answer as if recording, but leave the seen-set unchanged.
        #[arg(long)]
        dry_run: bool,
        /// One JSON object per line instead of tab-separated text.
        #[arg(long)]
        json: bool,
        /// URLs per request.
        #[arg(long, default_value_t = DEFAULT_BATCH, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        batch: u64,
    },
    /// Exit 0 when the sidecar's gRPC health service reports SERVING, 1 otherwise.
    Health,
}

/// Runs `undust client`.
pub fn run(args: ClientArgs) -> ExitCode {
    match runtime().and_then(|runtime| runtime.block_on(execute(args))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

async fn execute(args: ClientArgs) -> Result<(), Failure> {
    let timeout = Duration::from_secs(args.timeout_secs.max(1));
    let (urls, dry_run, json, batch) = match args.command {
        ClientCommand::Canonicalize {
            urls,
            dry_run,
            json,
            batch,
        } => (urls, dry_run, json, batch),
        ClientCommand::Health => return health(&args.address, timeout).await,
    };
    let urls = if urls.is_empty() { read_stdin()? } else { urls };
    let channel = connect(&args.address, timeout).await?;
    let mut client = CanonicalizerClient::new(channel).max_decoding_message_size(usize::MAX);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let batch = usize::try_from(batch).unwrap_or(1_000);
    for chunk in urls.chunks(batch) {
        let response = client
            .canonicalize(pb::CanonicalizeRequest {
                urls: chunk.to_vec(),
                dry_run,
                sequence: 0,
                request_id: String::new(),
            })
            .await
            .map_err(|status| Failure::from_status(&status, &args.address))?
            .into_inner();
        if response.results.len() != chunk.len() {
            return Err(Failure {
                code: EXIT_SOFTWARE,
                message: format!(
                    "undust answered {} results for {} URLs",
                    response.results.len(),
                    chunk.len()
                ),
            });
        }
        for (url, result) in chunk.iter().zip(&response.results) {
            write_result(&mut out, url, result, json).map_err(write_failure)?;
        }
    }
    out.flush().map_err(write_failure)
}

/// Exit code when the sidecar answers but is not SERVING (starting, restoring, draining).
pub const EXIT_NOT_SERVING: u8 = 1;

async fn health(address: &str, timeout: Duration) -> Result<(), Failure> {
    use tonic_health::pb::health_check_response::ServingStatus;
    let channel = connect(address, timeout).await?;
    let status = tonic_health::pb::health_client::HealthClient::new(channel)
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .map_err(|status| Failure::from_status(&status, address))?
        .into_inner()
        .status;
    if status == ServingStatus::Serving as i32 {
        println!("SERVING");
        Ok(())
    } else {
        Err(Failure {
            code: EXIT_NOT_SERVING,
            message: format!(
                "undust at {address} is {}",
                ServingStatus::try_from(status).map_or("UNKNOWN", |s| s.as_str_name())
            ),
        })
    }
}

fn read_stdin() -> Result<Vec<String>, Failure> {
    let mut urls = Vec::new();
    for (index, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|err| Failure {
            code: EXIT_NO_INPUT,
            message: format!("stdin line {}: {err}", index + 1),
        })?;
        let url = line.trim();
        if !url.is_empty() {
            urls.push(url.to_owned());
        }
    }
    Ok(urls)
}

fn write_failure(err: std::io::Error) -> Failure {
    Failure {
        code: EXIT_SOFTWARE,
        message: format!("cannot write the output: {err}"),
    }
}

fn decision_name(decision: i32) -> &'static str {
    match pb::Decision::try_from(decision) {
        Ok(pb::Decision::New) => "NEW",
        Ok(pb::Decision::Duplicate) => "DUPLICATE",
        Ok(pb::Decision::Invalid) => "INVALID",
        _ => "UNSPECIFIED",
    }
}

fn write_result(
    out: &mut impl Write,
    url: &str,
    result: &pb::CanonicalizeResult,
    json: bool,
) -> std::io::Result<()> {
    let decision = decision_name(result.decision);
    if json {
        let value = json!({
            "url": url,
            "decision": decision,
            "canonical": result.canonical,
            "enqueue_url": result.enqueue_url,
            "rule_id": result.rule_id,
            "rules_version": result.rules_version,
            "invalid_reason": result.invalid_reason,
        });
        writeln!(out, "{value}")
    } else if result.decision == pb::Decision::Invalid as i32 {
        writeln!(out, "{decision}\t{}", result.invalid_reason)
    } else {
        writeln!(
            out,
            "{decision}\t{}\t{}",
            result.canonical, result.enqueue_url
        )
    }
}
