//! `undust serve`: the sidecar.
//!
//! A short story: read configuration (flags and `UNDUST_*` variables over the `--config` TOML file
//! over the embedded defaults), refuse bad configuration with exit code 64 before binding anything,
//! bind and log every address, serve until SIGTERM or SIGINT, drain within the grace period.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{init_logging, EXIT_SOFTWARE, EXIT_USAGE};
use crate::config::{Knobs, ServeConfig};
use crate::service::{run as run_sidecar, Listeners};

/// Flags of `undust serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// TOML configuration file; its keys are the flag names without `--`. Flags win over it.
    #[arg(long, env = "UNDUST_CONFIG")]
    config: Option<PathBuf>,
    #[command(flatten)]
    knobs: Knobs,
}

/// Runs `undust serve`.
pub fn run(args: ServeArgs) -> ExitCode {
    init_logging();
    let file = match &args.config {
        Some(path) => match Knobs::from_toml_file(path) {
            Ok(knobs) => knobs,
            Err(err) => return usage_error(&err),
        },
        None => Knobs::default(),
    };
    let config = match ServeConfig::from_knobs(args.knobs.over(file)) {
        Ok(config) => config,
        Err(err) => return usage_error(&err),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("undust: cannot start the async runtime: {err}");
            return ExitCode::from(EXIT_SOFTWARE);
        }
    };
    runtime.block_on(async move {
        let listeners = match Listeners::bind(&config).await {
            Ok(listeners) => listeners,
            Err(err) => {
                eprintln!("undust: cannot bind the configured addresses: {err}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        match run_sidecar(config, listeners, shutdown_signal()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                tracing::error!(%err, "undust failed");
                eprintln!("undust: {err}");
                ExitCode::from(EXIT_SOFTWARE)
            }
        }
    })
}

fn usage_error(err: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("undust: invalid configuration: {err}");
    ExitCode::from(EXIT_USAGE)
}

/// Completes on SIGTERM or SIGINT.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(err) => {
                    tracing::warn!(%err, "cannot listen for SIGTERM; only SIGINT stops undust");
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::select! {
            _ = interrupt => tracing::info!("SIGINT received"),
            () = terminate => tracing::info!("SIGTERM received"),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
