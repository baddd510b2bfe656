//! Every knob of the sidecar and its default, in one place.
//!
//! A knob can be set three ways, the first one found winning: a command-line flag (or its
//! `UNDUST_*` environment variable, which clap reads as the flag's value), the TOML file given by
//! `--config`, and the embedded default. [`Knobs`] is both the clap argument group and the TOML
//! schema, so a knob is declared once; [`ServeConfig::from_knobs`] validates the layered result
//! into typed configuration. Invalid configuration is reported before any port is bound and makes
//! `undust serve` exit with code 64 (EX_USAGE).
//!
//! Tests build [`Knobs`] values directly instead of mutating the process environment.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::canon::normalize::StaticConfig;
pub use crate::canon::seen::{SeenSetConfig, SeenSetMode};
use crate::fleet::FleetConfig;
pub use crate::service::durable::SeenDurability;

/// gRPC address of the frontier-facing services (canonicalizer, ingest, health).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:50051";
/// gRPC address of the admin service; loopback because it can change what the crawler does.
pub const DEFAULT_ADMIN_LISTEN: &str = "127.0.0.1:50052";
/// Prometheus text exposition address.
pub const DEFAULT_METRICS_ADDR: &str = "127.0.0.1:9464";
/// Where the embedded store lives (relative paths are relative to the working directory).
pub const DEFAULT_DATA_DIR: &str = "undust-data";
/// Most URLs in one `Canonicalize` request.
pub const DEFAULT_MAX_BATCH: usize = 10_000;
/// Largest accepted gRPC message, in bytes (a batch of URLs, or one observed page with its body).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;
/// Longest URL accepted, in bytes; longer ones are INVALID (the static normalizer's default).
pub use crate::canon::normalize::DEFAULT_MAX_URL_BYTES;
/// Canonical forms the exact seen-set holds before its oldest generation is dropped. At the
/// measured 10 to 21 bytes per entry (hash-table fill varies; see BENCHMARKS.md) this is at most
/// about 210 MB. Bloom mode holds the same count in about 2.4 bytes per entry.
pub const DEFAULT_SEEN_SET_MAX_ENTRIES: u64 = 10_000_000;
/// Target false-positive rate of each Bloom layer in `bloom` mode.
pub const DEFAULT_SEEN_SET_BLOOM_FP_RATE: f64 = 0.000_1;
/// How many first occurrences (canonical form → URL first enqueued) are remembered, so that a
/// duplicate can be answered with the URL the frontier actually enqueued.
pub const DEFAULT_FIRST_OCCURRENCE_CACHE: usize = 250_000;
/// How long in-flight calls may take to finish after SIGTERM/SIGINT.
pub const DEFAULT_SHUTDOWN_GRACE_SECS: u64 = 10;
/// A host is relearned when this many new pages entered its sample since its last learning.
pub const DEFAULT_RELEARN_MIN_NEW_SAMPLES: u64 = 500;
/// A host with new samples is relearned at least this often.
pub const DEFAULT_RELEARN_INTERVAL_SECS: u64 = 3600;
/// Hosts learned at the same time (learning is CPU-bound; this keeps cores for Canonicalize).
pub const DEFAULT_RELEARN_CONCURRENCY: usize = 1;
/// Pages kept in one host's learning sample.
pub const DEFAULT_SAMPLE_PAGES_PER_HOST: usize = 20_000;
/// Bytes all hosts' samples may use together. A sampled page keeps its URL evidence and content
/// digest, never its body: about 4 KB stored for a typical generated page (100,000 samples took
/// 403 MB in the store) and up to about 34 KiB in memory for a long real article (dozens of
/// pagelets with their text blocks). When the budget is reached the hosts holding the most bytes
/// give up random samples first (uniformity is kept).
pub const DEFAULT_SAMPLE_BUDGET_BYTES: u64 = 512 * 1024 * 1024;
/// Canonicalize requests answered at once; more are refused with RESOURCE_EXHAUSTED. Answering is
/// CPU-bound, so a few per core keep the cores busy; beyond that requests only queue and hold
/// memory (128 clients with 32 MB batches took 4.1 GiB and 46 s per answer without a limit).
pub const DEFAULT_CANONICALIZE_MAX_IN_FLIGHT: usize = 32;
/// Request bytes the Canonicalize calls in flight hold, counted as they arrive; a call that would
/// exceed it is refused with RESOURCE_EXHAUSTED (one call is always admitted alone). An answer
/// holds about 4 times its request's URL bytes while it is built.
pub const DEFAULT_CANONICALIZE_MAX_IN_FLIGHT_BYTES: u64 = 128 * 1024 * 1024;
/// Bytes of Canonicalize answers kept for retries under the same `request_id` (see
/// `service::replay`): 64 MiB hold about 300,000 answered URLs, a minute of a busy frontier.
pub const DEFAULT_REPLAY_CACHE_BYTES: usize = 64 * 1024 * 1024;
/// Seconds an ObservePages stream may wait for its next page before it is ended (its pages are
/// then not acknowledged; the client resends them). A frozen client must not hold one of the few
/// ingest slots forever.
pub const DEFAULT_INGEST_IDLE_TIMEOUT_SECS: u64 = 60;
/// Hosts sampled at once. A new host beyond it takes the slot of the host idle longest when that
/// host was offered no page during the last this-many pages; else it is refused (and counted).
pub const DEFAULT_SAMPLE_MAX_HOSTS: usize = 100_000;
/// Largest page body ingest fingerprints; larger pages are rejected (and counted). The same limit
/// page acceptance applies offline.
pub use crate::pipeline::accept::DEFAULT_MAX_BODY_BYTES as DEFAULT_INGEST_MAX_BODY_BYTES;

/// How long a fleet learning lease lasts without renewal: a sidecar killed while learning a host
/// blocks the host's relearning for at most this long. Learners renew at a third of it.
pub const DEFAULT_FLEET_LEASE_SECS: u64 = 30;
/// How often a fleet sidecar asks Redis for newly published rule sets: the bound on how stale a
/// sidecar's rules are after a publication (plus one round trip).
pub const DEFAULT_FLEET_RULES_POLL_MS: u64 = 500;
/// Samples each host keeps in the fleet's shared evidence (the newest; see `fleet::evidence`).
pub use crate::fleet::evidence::DEFAULT_EVIDENCE_PER_HOST as DEFAULT_FLEET_EVIDENCE_PER_HOST;

/// Full host summaries of other sidecars one fleet mirror pass fetches at most.
pub use crate::service::learning::FLEET_SUMMARIES_PER_PASS as DEFAULT_FLEET_MIRROR_SUMMARIES_PER_PASS;

/// The raw knobs of `undust serve`: command-line flags (with `UNDUST_*` environment variables) and,
/// with the same names, the keys of the TOML configuration file. Every field is optional; unset
/// fields fall through to the next layer and finally to the `DEFAULT_*` constants.
#[derive(Debug, Clone, Default, Deserialize, clap::Args)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Knobs {
    /// Address of the canonicalizer, ingest and health services [default: 127.0.0.1:50051].
    #[arg(long, env = "UNDUST_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Address of the admin service [default: 127.0.0.1:50052].
    #[arg(long, env = "UNDUST_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    /// Address of the Prometheus metrics endpoint [default: 127.0.0.1:9464].
    #[arg(long, env = "UNDUST_METRICS_ADDR")]
    pub metrics_addr: Option<SocketAddr>,
    /// Directory of the embedded store [default: undust-data].
    #[arg(long, env = "UNDUST_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Most URLs in one Canonicalize request [default: 10000].
    #[arg(long, env = "UNDUST_MAX_BATCH")]
    pub max_batch: Option<usize>,
    /// Largest gRPC message in bytes [default: 33554432].
    #[arg(long, env = "UNDUST_MAX_MESSAGE_BYTES")]
    pub max_message_bytes: Option<usize>,
    /// Longest URL in bytes; longer URLs are INVALID [default: 8192].
    #[arg(long, env = "UNDUST_MAX_URL_BYTES")]
    pub max_url_bytes: Option<usize>,
    /// Remove well-known tracking parameters (utm_*, gclid, fbclid, ...) [default: true].
    #[arg(long, env = "UNDUST_REMOVE_TRACKING_PARAMS", num_args = 0..=1, default_missing_value = "true")]
    pub remove_tracking_params: Option<bool>,
    /// More tracking parameter names to remove; `name*` matches a prefix. Comma-separated.
    #[arg(long, env = "UNDUST_EXTRA_TRACKING_PARAMS", value_delimiter = ',')]
    pub extra_tracking_params: Option<Vec<String>>,
    /// Remove well-known session ids (jsessionid, PHPSESSID, sid=<token>, ...) [default: true].
    #[arg(long, env = "UNDUST_REMOVE_SESSION_IDS", num_args = 0..=1, default_missing_value = "true")]
    pub remove_session_ids: Option<bool>,
    /// Sort query parameters (order matters on some sites) [default: false].
    #[arg(long, env = "UNDUST_SORT_QUERY", num_args = 0..=1, default_missing_value = "true")]
    pub sort_query: Option<bool>,
    /// Strip a leading `www.` from hosts [default: false].
    #[arg(long, env = "UNDUST_STRIP_WWW", num_args = 0..=1, default_missing_value = "true")]
    pub strip_www: Option<bool>,
    /// Strip `user:password@` from canonical forms and enqueue URLs, so credentials are never
    /// stored or echoed; `--strip-userinfo=false` keeps them in both [default: true].
    #[arg(long, env = "UNDUST_STRIP_USERINFO", num_args = 0..=1, default_missing_value = "true")]
    pub strip_userinfo: Option<bool>,
    /// Seen-set behaviour when full: exact or bloom [default: exact].
    #[arg(long, env = "UNDUST_SEEN_SET_MODE", value_enum)]
    pub seen_set_mode: Option<SeenSetMode>,
    /// Canonical forms held by the seen-set [default: 10000000].
    #[arg(long, env = "UNDUST_SEEN_SET_MAX_ENTRIES")]
    pub seen_set_max_entries: Option<u64>,
    /// False-positive rate of each Bloom layer in bloom mode [default: 0.0001].
    #[arg(long, env = "UNDUST_SEEN_SET_BLOOM_FP_RATE")]
    pub seen_set_bloom_fp_rate: Option<f64>,
    /// First occurrences remembered for answering duplicates with the enqueued URL [default: 250000].
    #[arg(long, env = "UNDUST_FIRST_OCCURRENCE_CACHE")]
    pub first_occurrence_cache: Option<usize>,
    /// Seconds in-flight calls may take to finish on shutdown [default: 10].
    #[arg(long, env = "UNDUST_SHUTDOWN_GRACE_SECS")]
    pub shutdown_grace_secs: Option<u64>,
    /// Serve gRPC reflection on the main listener [default: false].
    #[arg(long, env = "UNDUST_REFLECTION", num_args = 0..=1, default_missing_value = "true")]
    pub reflection: Option<bool>,
    /// File holding the admin read token (its first non-empty line, at least 16 characters),
    /// for read-only admin calls. When not given, a random token is generated into
    /// `<data-dir>/admin-read.token` (mode 0600) and reused on later starts.
    #[arg(long, env = "UNDUST_ADMIN_READ_TOKEN_FILE")]
    pub admin_read_token_file: Option<PathBuf>,
    /// File holding the admin write token (same format); it grants every admin call, read
    /// included. When not given, a random token is generated into
    /// `<data-dir>/admin-write.token` (mode 0600) and reused on later starts.
    #[arg(long, env = "UNDUST_ADMIN_WRITE_TOKEN_FILE")]
    pub admin_write_token_file: Option<PathBuf>,
    /// Relearn a host once this many new pages entered its sample [default: 500].
    #[arg(long, env = "UNDUST_RELEARN_MIN_NEW_SAMPLES")]
    pub relearn_min_new_samples: Option<u64>,
    /// Relearn a host with new samples at least every this many seconds [default: 3600].
    #[arg(long, env = "UNDUST_RELEARN_INTERVAL_SECS")]
    pub relearn_interval_secs: Option<u64>,
    /// Hosts learned concurrently, and the threads learning runs on: one host's learning uses
    /// them all when it is the only one [default: 1].
    #[arg(long, env = "UNDUST_RELEARN_CONCURRENCY")]
    pub relearn_concurrency: Option<usize>,
    /// Pages kept in each host's learning sample [default: 20000].
    #[arg(long, env = "UNDUST_SAMPLE_PAGES_PER_HOST")]
    pub sample_pages_per_host: Option<usize>,
    /// Bytes all samples may use together [default: 536870912].
    #[arg(long, env = "UNDUST_SAMPLE_BUDGET_BYTES")]
    pub sample_budget_bytes: Option<u64>,
    /// When a Canonicalize answer that recorded NEW canonical forms is sent: `commit` (after they
    /// are committed to the store: `kill -9` loses nothing acknowledged) or `interval` (at once;
    /// a crash forgets the last 100 ms of them) [default: commit].
    #[arg(long, env = "UNDUST_SEEN_DURABILITY", value_enum)]
    pub seen_durability: Option<SeenDurability>,
    /// Hosts sampled at once; beyond it, a host idle for that many pages gives way to a new one,
    /// else the new host is refused [default: 100000].
    #[arg(long, env = "UNDUST_SAMPLE_MAX_HOSTS")]
    pub sample_max_hosts: Option<usize>,
    /// Largest page body ingest accepts, in bytes [default: 8388608].
    #[arg(long, env = "UNDUST_INGEST_MAX_BODY_BYTES")]
    pub ingest_max_body_bytes: Option<usize>,
    /// Canonicalize calls in flight at once (a CanonicalizeStream is one call for its life); a
    /// call beyond it is refused with RESOURCE_EXHAUSTED as soon as its headers arrive, before
    /// its batch is read, and nothing of it is recorded: clients retry with backoff
    /// [default: 32].
    #[arg(long, env = "UNDUST_CANONICALIZE_MAX_IN_FLIGHT")]
    pub canonicalize_max_in_flight: Option<usize>,
    /// Request bytes the Canonicalize calls in flight may hold, counted as they arrive; a call
    /// whose bytes would pass it while others hold some is refused with RESOURCE_EXHAUSTED
    /// (nothing of it is recorded: clients retry with backoff). One call alone is always
    /// admitted, up to --max-message-bytes [default: 134217728].
    #[arg(long, env = "UNDUST_CANONICALIZE_MAX_IN_FLIGHT_BYTES")]
    pub canonicalize_max_in_flight_bytes: Option<u64>,
    /// Bytes of Canonicalize answers kept so that a batch retried under the same request_id gets
    /// its first answer again (0: no replay) [default: 67108864].
    #[arg(long, env = "UNDUST_REPLAY_CACHE_BYTES")]
    pub replay_cache_bytes: Option<usize>,
    /// Seconds an ObservePages stream may wait for its next page before it is ended
    /// [default: 60].
    #[arg(long, env = "UNDUST_INGEST_IDLE_TIMEOUT_SECS")]
    pub ingest_idle_timeout_secs: Option<u64>,
    /// Refuse to start (exit 70) when the store in --data-dir is damaged, leaving it untouched.
    /// Without it a damaged store file is moved aside, the rows that can still be read are kept,
    /// and the damage is reported in GetStats and metrics [default: false].
    #[arg(long, env = "UNDUST_REFUSE_DAMAGED_STORE", num_args = 0..=1, default_missing_value = "true")]
    pub refuse_damaged_store: Option<bool>,
    /// Join a fleet of sidecars sharing one seen-set and one rule set per host through Redis
    /// (redis://HOST:PORT/DB). Without it, the embedded store is the only state.
    #[arg(long, env = "UNDUST_FLEET")]
    pub fleet: Option<String>,
    /// Seconds a fleet learning lease lasts without renewal [default: 30].
    #[arg(long, env = "UNDUST_FLEET_LEASE_SECS")]
    pub fleet_lease_secs: Option<u64>,
    /// Milliseconds between polls for rule sets published by the fleet [default: 500].
    #[arg(long, env = "UNDUST_FLEET_RULES_POLL_MS")]
    pub fleet_rules_poll_ms: Option<u64>,
    /// Samples each host keeps in the fleet's shared evidence in Redis, the newest first; the
    /// hosts keeping them are bounded by --sample-max-hosts [default: 2000].
    #[arg(long, env = "UNDUST_FLEET_EVIDENCE_PER_HOST")]
    pub fleet_evidence_per_host: Option<usize>,
    /// Most full host summaries of other sidecars one mirror detection pass fetches from Redis; a
    /// fleet with more origins proposes pairs from their signatures and fetches only those
    /// [default: 2000].
    #[arg(long, env = "UNDUST_FLEET_MIRROR_SUMMARIES_PER_PASS")]
    pub fleet_mirror_summaries_per_pass: Option<usize>,
}

/// Fills every unset field of `$self` from `$lower`.
macro_rules! layer {
    ($self:ident, $lower:ident; $($field:ident),* $(,)?) => {
        Knobs { $($field: $self.$field.or($lower.$field)),* }
    };
}

impl Knobs {
    /// These knobs, with unset fields taken from `lower` (a lower-priority layer).
    pub fn over(self, lower: Knobs) -> Knobs {
        layer!(self, lower;
            listen, admin_listen, metrics_addr, data_dir, max_batch, max_message_bytes,
            max_url_bytes, remove_tracking_params, extra_tracking_params, remove_session_ids,
            sort_query, strip_www, strip_userinfo, seen_set_mode, seen_set_max_entries, seen_set_bloom_fp_rate,
            seen_durability,
            first_occurrence_cache, shutdown_grace_secs, reflection, admin_read_token_file,
            admin_write_token_file, relearn_min_new_samples, relearn_interval_secs,
            relearn_concurrency, sample_pages_per_host, sample_budget_bytes, sample_max_hosts,
            ingest_max_body_bytes, refuse_damaged_store, canonicalize_max_in_flight,
            canonicalize_max_in_flight_bytes, ingest_idle_timeout_secs, replay_cache_bytes,
            fleet, fleet_lease_secs, fleet_rules_poll_ms, fleet_evidence_per_host,
            fleet_mirror_summaries_per_pass,
        )
    }

    /// Reads knobs from a TOML file; keys are the flag names without `--`.
    pub fn from_toml_file(path: &Path) -> Result<Knobs, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|err| ConfigError::File {
            path: path.to_owned(),
            message: err.to_string(),
        })?;
        toml::from_str(&text).map_err(|err| ConfigError::File {
            path: path.to_owned(),
            message: err.to_string(),
        })
    }
}

/// Why configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The configuration file could not be read or parsed.
    #[error("configuration file {}: {message}", path.display())]
    File { path: PathBuf, message: String },
    /// A knob's value is out of its range.
    #[error("--{knob}: {message}")]
    Invalid { knob: &'static str, message: String },
}

fn invalid(knob: &'static str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        knob,
        message: message.into(),
    }
}

/// Validated configuration of relearning and sampling.
#[derive(Debug, Clone)]
pub struct LearningConfig {
    pub relearn_min_new_samples: u64,
    pub relearn_interval: Duration,
    pub relearn_concurrency: usize,
    pub sample_pages_per_host: usize,
    pub sample_budget_bytes: u64,
    pub sample_max_hosts: usize,
    pub ingest_max_body_bytes: usize,
}

/// The validated configuration of `undust serve`.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub admin_listen: SocketAddr,
    pub metrics_addr: SocketAddr,
    pub data_dir: PathBuf,
    pub max_batch: usize,
    pub max_message_bytes: usize,
    pub static_config: StaticConfig,
    pub seen_set: SeenSetConfig,
    pub seen_durability: SeenDurability,
    pub shutdown_grace: Duration,
    pub reflection: bool,
    pub admin_read_token_file: Option<PathBuf>,
    pub admin_write_token_file: Option<PathBuf>,
    pub learning: LearningConfig,
    /// Refuse a damaged store instead of recovering what it can.
    pub refuse_damaged_store: bool,
    /// Canonicalize requests, and their URL bytes, answered at once.
    pub canonicalize_max_in_flight: usize,
    pub canonicalize_max_in_flight_bytes: u64,
    /// How long an ObservePages stream may wait for its next page.
    pub ingest_idle_timeout: Duration,
    /// Bytes of answers kept for retries.
    pub replay_cache_bytes: usize,
    /// The fleet to join (`--fleet`); `None`: a single sidecar on its embedded store.
    pub fleet: Option<FleetConfig>,
}

fn parse_addr(text: &str) -> SocketAddr {
    // The DEFAULT_* address constants are literals checked by `defaults_are_valid`.
    text.parse()
        .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
}

impl ServeConfig {
    /// Validates layered knobs; unset knobs take their defaults.
    pub fn from_knobs(knobs: Knobs) -> Result<ServeConfig, ConfigError> {
        let max_batch = knobs.max_batch.unwrap_or(DEFAULT_MAX_BATCH);
        if !(1..=1_000_000).contains(&max_batch) {
            return Err(invalid(
                "max-batch",
                format!("{max_batch} is not in 1..=1000000"),
            ));
        }
        let max_message_bytes = knobs.max_message_bytes.unwrap_or(DEFAULT_MAX_MESSAGE_BYTES);
        if !(64 * 1024..=1024 * 1024 * 1024).contains(&max_message_bytes) {
            return Err(invalid(
                "max-message-bytes",
                format!("{max_message_bytes} is not in 65536..=1073741824"),
            ));
        }
        let max_url_bytes = knobs.max_url_bytes.unwrap_or(DEFAULT_MAX_URL_BYTES);
        if !(16..=1024 * 1024).contains(&max_url_bytes) {
            return Err(invalid(
                "max-url-bytes",
                format!("{max_url_bytes} is not in 16..=1048576"),
            ));
        }
        let extra = knobs.extra_tracking_params.unwrap_or_default();
        if let Some(bad) = extra
            .iter()
            .find(|name| name.trim().is_empty() || name.len() > 256)
        {
            return Err(invalid(
                "extra-tracking-params",
                format!("{bad:?} is not a parameter name (1 to 256 bytes)"),
            ));
        }
        let static_config = StaticConfig {
            max_url_bytes,
            remove_tracking_params: knobs.remove_tracking_params.unwrap_or(true),
            extra_tracking_params: extra,
            remove_session_ids: knobs.remove_session_ids.unwrap_or(true),
            sort_query: knobs.sort_query.unwrap_or(false),
            strip_www: knobs.strip_www.unwrap_or(false),
            strip_userinfo: knobs
                .strip_userinfo
                .unwrap_or(crate::canon::normalize::DEFAULT_STRIP_USERINFO),
            ..StaticConfig::default()
        };
        // The normalizer validates what the knobs alone cannot (parameter name syntax, ...):
        // build it here, so that bad configuration exits 64 before any port is bound.
        if let Err(err) = crate::canon::normalize::StaticNormalizer::new(static_config.clone()) {
            return Err(invalid("extra-tracking-params", err.to_string()));
        }
        let max_entries = knobs
            .seen_set_max_entries
            .unwrap_or(DEFAULT_SEEN_SET_MAX_ENTRIES);
        if !(1_000..=10_000_000_000).contains(&max_entries) {
            return Err(invalid(
                "seen-set-max-entries",
                format!("{max_entries} is not in 1000..=10000000000"),
            ));
        }
        let bloom_fp_rate = knobs
            .seen_set_bloom_fp_rate
            .unwrap_or(DEFAULT_SEEN_SET_BLOOM_FP_RATE);
        if !(bloom_fp_rate > 0.0 && bloom_fp_rate < 0.5) {
            return Err(invalid(
                "seen-set-bloom-fp-rate",
                format!("{bloom_fp_rate} is not in the open interval (0, 0.5)"),
            ));
        }
        let canonicalize_max_in_flight = knobs
            .canonicalize_max_in_flight
            .unwrap_or(DEFAULT_CANONICALIZE_MAX_IN_FLIGHT);
        if !(1..=100_000).contains(&canonicalize_max_in_flight) {
            return Err(invalid(
                "canonicalize-max-in-flight",
                format!("{canonicalize_max_in_flight} is not in 1..=100000"),
            ));
        }
        let canonicalize_max_in_flight_bytes = knobs
            .canonicalize_max_in_flight_bytes
            .unwrap_or(DEFAULT_CANONICALIZE_MAX_IN_FLIGHT_BYTES);
        if canonicalize_max_in_flight_bytes < 64 * 1024 {
            return Err(invalid(
                "canonicalize-max-in-flight-bytes",
                format!("{canonicalize_max_in_flight_bytes} is less than 65536"),
            ));
        }
        let ingest_idle_timeout_secs = knobs
            .ingest_idle_timeout_secs
            .unwrap_or(DEFAULT_INGEST_IDLE_TIMEOUT_SECS);
        if !(1..=86_400).contains(&ingest_idle_timeout_secs) {
            return Err(invalid(
                "ingest-idle-timeout-secs",
                format!("{ingest_idle_timeout_secs} is not in 1..=86400"),
            ));
        }
        let relearn_concurrency = knobs
            .relearn_concurrency
            .unwrap_or(DEFAULT_RELEARN_CONCURRENCY);
        if !(1..=64).contains(&relearn_concurrency) {
            return Err(invalid(
                "relearn-concurrency",
                format!("{relearn_concurrency} is not in 1..=64"),
            ));
        }
        let sample_pages_per_host = knobs
            .sample_pages_per_host
            .unwrap_or(DEFAULT_SAMPLE_PAGES_PER_HOST);
        if !(10..=1_000_000).contains(&sample_pages_per_host) {
            return Err(invalid(
                "sample-pages-per-host",
                format!("{sample_pages_per_host} is not in 10..=1000000"),
            ));
        }
        let sample_max_hosts = knobs.sample_max_hosts.unwrap_or(DEFAULT_SAMPLE_MAX_HOSTS);
        if !(1..=100_000_000).contains(&sample_max_hosts) {
            return Err(invalid(
                "sample-max-hosts",
                format!("{sample_max_hosts} is not in 1..=100000000"),
            ));
        }
        let relearn_interval_secs = knobs
            .relearn_interval_secs
            .unwrap_or(DEFAULT_RELEARN_INTERVAL_SECS);
        if relearn_interval_secs == 0 {
            return Err(invalid("relearn-interval-secs", "must be at least 1"));
        }
        for (knob, path) in [
            ("admin-read-token-file", &knobs.admin_read_token_file),
            ("admin-write-token-file", &knobs.admin_write_token_file),
        ] {
            if let Some(path) = path {
                // The same check the admin service makes when it loads the token: a bad token file
                // is bad configuration, reported before any port is bound.
                if let Err(err) = crate::service::auth::read_token(path) {
                    return Err(invalid(knob, err.to_string()));
                }
            }
        }
        let fleet_lease_secs = knobs.fleet_lease_secs.unwrap_or(DEFAULT_FLEET_LEASE_SECS);
        if !(1..=3600).contains(&fleet_lease_secs) {
            return Err(invalid(
                "fleet-lease-secs",
                format!("{fleet_lease_secs} is not in 1..=3600"),
            ));
        }
        let fleet_rules_poll_ms = knobs
            .fleet_rules_poll_ms
            .unwrap_or(DEFAULT_FLEET_RULES_POLL_MS);
        if !(10..=60_000).contains(&fleet_rules_poll_ms) {
            return Err(invalid(
                "fleet-rules-poll-ms",
                format!("{fleet_rules_poll_ms} is not in 10..=60000"),
            ));
        }
        let fleet_evidence_per_host = knobs
            .fleet_evidence_per_host
            .unwrap_or(DEFAULT_FLEET_EVIDENCE_PER_HOST);
        if !(10..=1_000_000).contains(&fleet_evidence_per_host) {
            return Err(invalid(
                "fleet-evidence-per-host",
                format!("{fleet_evidence_per_host} is not in 10..=1000000"),
            ));
        }
        let fleet_mirror_summaries_per_pass = knobs
            .fleet_mirror_summaries_per_pass
            .unwrap_or(DEFAULT_FLEET_MIRROR_SUMMARIES_PER_PASS);
        if !(1..=1_000_000).contains(&fleet_mirror_summaries_per_pass) {
            return Err(invalid(
                "fleet-mirror-summaries-per-pass",
                format!("{fleet_mirror_summaries_per_pass} is not in 1..=1000000"),
            ));
        }
        let fleet = match knobs.fleet {
            Some(url) => {
                crate::fleet::validate_url(&url)
                    .map_err(|err| invalid("fleet", err.to_string()))?;
                Some(FleetConfig {
                    url,
                    lease_ttl: Duration::from_secs(fleet_lease_secs),
                    rules_poll: Duration::from_millis(fleet_rules_poll_ms),
                    call_timeout: crate::fleet::DEFAULT_CALL_TIMEOUT,
                    evidence_per_host: fleet_evidence_per_host,
                    evidence_max_hosts: sample_max_hosts,
                    mirror_summaries_per_pass: fleet_mirror_summaries_per_pass,
                })
            }
            None => None,
        };
        Ok(ServeConfig {
            listen: knobs.listen.unwrap_or_else(|| parse_addr(DEFAULT_LISTEN)),
            admin_listen: knobs
                .admin_listen
                .unwrap_or_else(|| parse_addr(DEFAULT_ADMIN_LISTEN)),
            metrics_addr: knobs
                .metrics_addr
                .unwrap_or_else(|| parse_addr(DEFAULT_METRICS_ADDR)),
            data_dir: knobs
                .data_dir
                .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR)),
            max_batch,
            max_message_bytes,
            static_config,
            seen_durability: knobs.seen_durability.unwrap_or(SeenDurability::Commit),
            seen_set: SeenSetConfig {
                mode: knobs.seen_set_mode.unwrap_or(SeenSetMode::Exact),
                max_entries,
                bloom_fp_rate,
                first_occurrence_cache: knobs
                    .first_occurrence_cache
                    .unwrap_or(DEFAULT_FIRST_OCCURRENCE_CACHE),
            },
            shutdown_grace: Duration::from_secs(
                knobs
                    .shutdown_grace_secs
                    .unwrap_or(DEFAULT_SHUTDOWN_GRACE_SECS),
            ),
            reflection: knobs.reflection.unwrap_or(false),
            admin_read_token_file: knobs.admin_read_token_file,
            admin_write_token_file: knobs.admin_write_token_file,
            learning: LearningConfig {
                relearn_min_new_samples: knobs
                    .relearn_min_new_samples
                    .unwrap_or(DEFAULT_RELEARN_MIN_NEW_SAMPLES)
                    .max(1),
                relearn_interval: Duration::from_secs(relearn_interval_secs),
                relearn_concurrency,
                sample_pages_per_host,
                sample_budget_bytes: knobs
                    .sample_budget_bytes
                    .unwrap_or(DEFAULT_SAMPLE_BUDGET_BYTES),
                sample_max_hosts,
                ingest_max_body_bytes: knobs
                    .ingest_max_body_bytes
                    .unwrap_or(DEFAULT_INGEST_MAX_BODY_BYTES),
            },
            refuse_damaged_store: knobs.refuse_damaged_store.unwrap_or(false),
            canonicalize_max_in_flight,
            canonicalize_max_in_flight_bytes,
            ingest_idle_timeout: Duration::from_secs(ingest_idle_timeout_secs),
            replay_cache_bytes: knobs
                .replay_cache_bytes
                .unwrap_or(DEFAULT_REPLAY_CACHE_BYTES),
            fleet,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        for text in [DEFAULT_LISTEN, DEFAULT_ADMIN_LISTEN, DEFAULT_METRICS_ADDR] {
            assert!(text.parse::<SocketAddr>().is_ok(), "{text}");
        }
        let config = ServeConfig::from_knobs(Knobs::default()).expect("defaults validate");
        assert_eq!(config.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(config.max_batch, DEFAULT_MAX_BATCH);
        assert!(!config.static_config.sort_query);
        assert!(config.static_config.remove_tracking_params);
        assert_eq!(config.seen_set.mode, SeenSetMode::Exact);
    }

    #[test]
    fn flags_win_over_file() {
        let flags = Knobs {
            max_batch: Some(5),
            ..Knobs::default()
        };
        let file: Knobs = toml::from_str("max-batch = 7\nsort-query = true\n").expect("toml");
        let config = ServeConfig::from_knobs(flags.over(file)).expect("valid");
        assert_eq!(config.max_batch, 5);
        assert!(config.static_config.sort_query);
    }

    #[test]
    fn the_shipped_example_file_is_valid_and_matches_the_defaults() {
        let file: Knobs = toml::from_str(include_str!("../deploy/undust.toml"))
            .expect("deploy/undust.toml parses");
        let from_file = ServeConfig::from_knobs(file).expect("deploy/undust.toml validates");
        let defaults = ServeConfig::from_knobs(Knobs::default()).expect("defaults validate");
        assert_eq!(
            format!("{from_file:?}"),
            format!("{defaults:?}"),
            "the example file lists the defaults"
        );
    }

    #[test]
    fn what_the_services_would_refuse_is_refused_here_before_any_port_is_bound() {
        let err = ServeConfig::from_knobs(Knobs {
            extra_tracking_params: Some(vec!["a=b".into()]),
            ..Knobs::default()
        })
        .expect_err("a parameter name with '=' is refused");
        assert!(err.to_string().contains("extra-tracking-params"), "{err}");

        let dir = tempfile::tempdir().expect("tempdir");
        let short = dir.path().join("short.token");
        std::fs::write(&short, "too-short\n").expect("write token");
        let err = ServeConfig::from_knobs(Knobs {
            admin_write_token_file: Some(short),
            ..Knobs::default()
        })
        .expect_err("a token under 16 characters is refused");
        assert!(err.to_string().contains("admin-write-token-file"), "{err}");
        assert!(err.to_string().contains("16 characters"), "{err}");
    }

    #[test]
    fn fleet_urls_are_checked_before_anything_binds() {
        let config = ServeConfig::from_knobs(Knobs {
            fleet: Some("redis://127.0.0.1:6379/2".into()),
            ..Knobs::default()
        })
        .expect("a redis URL is accepted");
        let fleet = config.fleet.expect("fleet configured");
        assert_eq!(
            fleet.lease_ttl,
            Duration::from_secs(DEFAULT_FLEET_LEASE_SECS)
        );
        for bad in [
            "http://127.0.0.1:6379",
            "redis://",
            "not a url",
            "redis://h:99999/0",
        ] {
            let err = ServeConfig::from_knobs(Knobs {
                fleet: Some(bad.into()),
                ..Knobs::default()
            })
            .expect_err(bad);
            assert!(err.to_string().contains("--fleet"), "{bad}: {err}");
        }
        assert!(ServeConfig::from_knobs(Knobs::default())
            .expect("defaults")
            .fleet
            .is_none());
    }

    #[test]
    fn unknown_file_keys_are_refused() {
        assert!(toml::from_str::<Knobs>("max-batchh = 7\n").is_err());
    }

    #[test]
    fn out_of_range_values_name_the_knob() {
        let err = ServeConfig::from_knobs(Knobs {
            max_batch: Some(0),
            ..Knobs::default()
        })
        .expect_err("0 is refused");
        assert!(err.to_string().contains("--max-batch"), "{err}");
        let err = ServeConfig::from_knobs(Knobs {
            seen_set_bloom_fp_rate: Some(0.9),
            ..Knobs::default()
        })
        .expect_err("0.9 is refused");
        assert!(
            err.to_string().contains("--seen-set-bloom-fp-rate"),
            "{err}"
        );
    }
}
