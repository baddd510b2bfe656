//! A fleet of sidecars sharing one Redis: one seen-set, one lease per learning host, one
//! versioned rule set per host (issue 15).
//!
//! Crawler fleets already run Redis for shared crawl state (Scrapy-Redis's dupefilter, Frontera),
//! so `undust serve --fleet redis://HOST:PORT/DB` joins it instead of inventing a cluster protocol.
//! Without `--fleet` nothing here runs and the embedded store is the only state.
//!
//! # Layout
//!
//! - [`link`]: the connection to Redis, the degraded state while it is unreachable, and the
//!   reconnection with backoff that ends it.
//! - [`seen`]: the shared seen-set — one server-side script call per Canonicalize batch, atomic
//!   check-and-insert, compact integer sets in Redis, and the replay of keys recorded while cut off.
//! - [`lease`]: "one sidecar learns a host at a time": expiring leases with fencing tokens.
//! - [`rules`]: versioned rule sets per host, published under a fencing token and polled by every
//!   sidecar.
//! - [`evidence`]: every sidecar's samples, shared per host with a bound, for whichever sidecar
//!   learns the host.
//! - [`mirrors`]: the fleet's one mirror table (mirror sets, pair streaks, the operator's pins and
//!   forbids), published under a fencing token and polled by every sidecar, so every sidecar
//!   folds the same aliases to the same canonical site.
//! - [`summaries`]: every sidecar's mirror host summaries (signature and full form, bounded,
//!   aged out), so the detection pass finds pairs whose hosts are summarized on two sidecars.
//!
//! # Keys in Redis
//!
//! Everything lives under [`KEY_PREFIX`]: `undust:meta` (fleet-wide seen-set geometry),
//! `undust:s:<bucket>:c|p` (seen-set generations), `undust:fence` (the fencing token counter),
//! `undust:lease:<host>`, `undust:rules:<host>`, `undust:rules:epoch`, `undust:rules:log`, the
//! shared evidence `undust:ev:p:<host>`, `undust:ev:o:<host>`, `undust:ev:hosts`, `undust:ev:seq`,
//! the mirror table `undust:mirrors` with its lease `undust:lease:@mirrors`, and the shared
//! host summaries `undust:ms:sig`, `undust:ms:full`, `undust:ms:age`.
//!
//! # Client
//!
//! The `redis` crate (redis-rs, the most used Rust client, maintained under the redis-rs
//! organisation) with its tokio multiplexed connection: one TCP connection carries every
//! concurrent batch's script call, pipelined, which is what the hot path needs. Reconnection is
//! ours ([`link`]), not the crate's connection manager, because the manager retries *inside* a
//! caller's request, and Canonicalize must answer from local state at once instead of waiting.
//! Redis Cluster is not supported: the seen-set script touches keys of many hash slots.

pub mod evidence;
pub mod lease;
pub mod link;
pub mod mirrors;
pub mod rules;
pub mod seen;
pub mod summaries;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

pub use evidence::SharedEvidence;
pub use lease::{Lease, Leases};
pub use link::Link;
pub use mirrors::{MirrorBoard, MirrorsOutcome, PublishedMirrors, MIRRORS_LEASE};
pub use rules::{PublishOutcome, PublishedRules, RuleBoard};
pub use seen::SharedSeen;
pub use summaries::{Shared, SharedOrigin, SharedSummaries};

use crate::canon::seen::SeenSetConfig;
use crate::telemetry;

/// Prefix of every key undust writes to Redis.
pub const KEY_PREFIX: &str = "undust:";

/// How long one Redis call may take before the sidecar answers from local state instead.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(500);

/// Validated configuration of the fleet.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// `redis://HOST:PORT/DB`.
    pub url: String,
    /// How long a learning lease lasts without renewal (a dead learner's lease expires after it).
    pub lease_ttl: Duration,
    /// How often every sidecar asks Redis for newly published rule sets.
    pub rules_poll: Duration,
    /// Longest wait for one Redis call.
    pub call_timeout: Duration,
    /// Samples each host keeps in Redis (the newest).
    pub evidence_per_host: usize,
    /// Hosts that keep samples in Redis (those sampled last).
    pub evidence_max_hosts: usize,
    /// Most full host summaries of other sidecars one mirror detection pass fetches.
    pub mirror_summaries_per_pass: usize,
}

/// Why the fleet URL was refused.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("{0:?} is not a Redis URL (redis://HOST:PORT/DB): {1}")]
    Url(String, String),
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("Redis did not answer within {0:?}")]
    Timeout(Duration),
    #[error("Redis is unreachable; the sidecar is answering from local state")]
    Degraded,
    #[error("Redis answered unexpectedly: {0}")]
    Protocol(String),
}

/// Checks a fleet URL without connecting (configuration is validated before any port is bound).
pub fn validate_url(url: &str) -> Result<(), FleetError> {
    let parsed =
        url::Url::parse(url).map_err(|err| FleetError::Url(url.to_owned(), err.to_string()))?;
    if parsed.scheme() != "redis" {
        return Err(FleetError::Url(
            url.to_owned(),
            format!(
                "scheme {:?} is not supported (only redis://)",
                parsed.scheme()
            ),
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(FleetError::Url(url.to_owned(), "no host".into()));
    }
    redis::Client::open(url).map_err(|err| FleetError::Url(url.to_owned(), err.to_string()))?;
    Ok(())
}

/// Everything a sidecar shares with its fleet.
pub struct Fleet {
    pub config: FleetConfig,
    pub link: Arc<Link>,
    pub seen: Arc<SharedSeen>,
    pub leases: Leases,
    pub rules: RuleBoard,
    pub mirrors: MirrorBoard,
    pub evidence: SharedEvidence,
    pub summaries: SharedSummaries,
}

impl Fleet {
    /// The fleet for a configuration. Connects lazily: a Redis that is down at start leaves the
    /// sidecar degraded (answering from local state) until [`Link::run`] reconnects.
    pub fn new(config: FleetConfig, seen_config: &SeenSetConfig) -> Result<Fleet, FleetError> {
        let link = Arc::new(Link::new(&config.url, config.call_timeout)?);
        let seen = Arc::new(SharedSeen::new(Arc::clone(&link), seen_config));
        let leases = Leases::new(Arc::clone(&link), config.lease_ttl);
        let rules = RuleBoard::new(Arc::clone(&link));
        let mirrors = MirrorBoard::new(Arc::clone(&link));
        let evidence = SharedEvidence::new(
            Arc::clone(&link),
            config.evidence_per_host,
            config.evidence_max_hosts,
        );
        let summaries = SharedSummaries::new(
            Arc::clone(&link),
            config
                .evidence_max_hosts
                .saturating_mul(summaries::ORIGINS_PER_SAMPLED_HOST),
        );
        Ok(Fleet {
            config,
            link,
            seen,
            leases,
            rules,
            mirrors,
            evidence,
            summaries,
        })
    }
}

impl Fleet {
    /// Connects to Redis: agrees on the seen-set geometry, replays the keys recorded while cut off,
    /// and only then declares the link connected (so no batch asks Redis before its replay).
    /// Keys recorded locally between the replay and the switch are replayed right after it.
    pub async fn establish(&self) -> Result<(), FleetError> {
        let connection = self.link.open().await?;
        self.seen.sync_geometry(connection.clone()).await?;
        let replayed = self.seen.replay(connection.clone()).await?;
        self.link.connected_with(connection.clone());
        let late = self.seen.replay(connection).await?;
        if replayed + late > 0 {
            tracing::info!(
                keys = replayed + late,
                "caught up: replayed keys recorded while Redis was unreachable"
            );
        }
        // Samples queued while cut off; a failure leaves them queued for the next ingest.
        if let Ok(shared) = self.evidence.flush().await {
            if shared > 0 {
                tracing::info!(
                    samples = shared,
                    "caught up: shared samples queued while Redis was unreachable"
                );
            }
        }
        Ok(())
    }

    /// Keeps the link up until `stop` turns true: whenever it degrades, reconnects with
    /// exponential backoff ([`link::backoff`]) and catches up.
    pub async fn maintain(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        loop {
            tokio::select! {
                () = self.link.wait_degraded() => {}
                _ = stop.wait_for(|stop| *stop) => return,
            }
            let mut attempt = 0u32;
            loop {
                match self.establish().await {
                    Ok(()) => {
                        metrics::counter!(telemetry::FLEET_RECONNECTS).increment(1);
                        break;
                    }
                    Err(err) => {
                        tracing::debug!(%err, attempt, "Redis still unreachable");
                        attempt = attempt.saturating_add(1);
                    }
                }
                tokio::select! {
                    () = tokio::time::sleep(link::backoff(attempt)) => {}
                    _ = stop.wait_for(|stop| *stop) => return,
                }
            }
        }
    }
}
