//! `undust admin`: operators' commands over the admin gRPC API, instead of hand-made `grpcurl`
//! calls with bearer headers.
//!
//! | command | call | role |
//! |---|---|---|
//! | `admin relearn [HOST] [--wait]` | `Relearn` | write |
//! | `admin job JOB_ID` | `GetRelearnJob` | read |
//! | `admin rules HOST` | `GetRules` | read |
//! | `admin hosts` | `ListHosts` (every page) | read |
//! | `admin explain URL` | `Explain` | read |
//! | `admin stats` | `GetStats` | read |
//! | `admin rollback HOST [--to-version N]` | `RollbackRules` | write |
//! | `admin mirrors list` | `ListMirrors` | read |
//! | `admin mirrors pin\|forbid\|clear CANONICAL ALIAS` | `DecideMirror` | write |
//!
//! The token comes from `--token-file`, or else from the data directory where `undust serve`
//! generates it (`admin-write.token` for write calls; `admin-read.token`, then
//! `admin-write.token`, for read calls). Output is human-readable unless `--json` asks for one
//! JSON document per command. Failures print one line naming what to fix and exit non-zero:
//! [`EXIT_UNAVAILABLE`] when the server cannot be reached, [`EXIT_NO_PERMISSION`] for a missing
//! or refused token, [`EXIT_REFUSED`] when the server refuses the request (unknown host or job,
//! nothing to learn), [`EXIT_SOFTWARE`] otherwise. The connection and status handling here is
//! shared with `undust client` ([`super::client`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Value};
use tonic::transport::{Channel, Endpoint};

use super::EXIT_SOFTWARE;
use crate::config::{DEFAULT_ADMIN_LISTEN, DEFAULT_DATA_DIR};
use crate::pb;
use crate::pb::admin_client::AdminClient;

/// Exit code when the server cannot be reached (EX_UNAVAILABLE).
pub const EXIT_UNAVAILABLE: u8 = 69;
/// Exit code when no token could be read or the server refused it (EX_NOPERM).
pub const EXIT_NO_PERMISSION: u8 = 77;
/// Exit code when the server refused the request itself: unknown host or job, nothing to learn,
/// an invalid argument (EX_DATAERR).
pub const EXIT_REFUSED: u8 = 65;
/// How long one call may take unless `--timeout-secs` says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// How long connecting may take: a sidecar on loopback answers at once or not at all.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// `ListHosts` page size used to walk every host.
const HOSTS_PAGE_SIZE: u32 = 1_000;

/// Flags of `undust admin`.
#[derive(Debug, clap::Args)]
pub struct AdminArgs {
    /// Address of the sidecar's admin service.
    #[arg(long, env = "UNDUST_ADMIN_ADDRESS", default_value = DEFAULT_ADMIN_LISTEN)]
    address: String,
    /// The sidecar's data directory, where `undust serve` writes its generated tokens.
    #[arg(long, env = "UNDUST_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
    data_dir: PathBuf,
    /// A file holding the bearer token (first non-empty line); overrides the data directory.
    #[arg(long, env = "UNDUST_ADMIN_TOKEN_FILE")]
    token_file: Option<PathBuf>,
    /// Print one JSON document instead of human-readable text.
    #[arg(long, global = true)]
    json: bool,
    /// Deadline of each call, in seconds (a `relearn --wait` lasts at most this long).
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_SECS)]
    timeout_secs: u64,
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Debug, clap::Subcommand)]
enum AdminCommand {
    /// Relearn the rules of one host (or of every host with samples); prints the job.
    Relearn {
        /// The host (lowercase, no port); every host with samples when omitted.
        host: Option<String>,
        /// Return only when the job has ended (bounded by --timeout-secs).
        #[arg(long)]
        wait: bool,
    },
    /// The state of a relearn job and its outcome per host.
    Job {
        /// The id `relearn` printed.
        job_id: String,
    },
    /// The live rule set of a host.
    Rules {
        host: String,
        /// Print the rule set in undust's JSON rule-file format (what `undust learn` writes).
        #[arg(long, conflicts_with = "json")]
        rule_file: bool,
    },
    /// Every host the sidecar knows, with its counts.
    Hosts,
    /// Why a URL gets its canonical form.
    Explain { url: String },
    /// Totals since the sidecar started.
    Stats,
    /// Put a previous rule set version of a host live again.
    Rollback {
        host: String,
        /// The version to put live [default: the one before the live version].
        #[arg(long, default_value_t = 0)]
        to_version: u64,
    },
    /// Mirror sets: list them, or pin, forbid or clear an alias.
    #[command(subcommand)]
    Mirrors(MirrorsCommand),
}

/// `admin mirrors`: sites are `scheme://host[:port]`, optionally with a folder
/// (`http://mirror.example.edu/pub/site`).
#[derive(Debug, clap::Subcommand)]
enum MirrorsCommand {
    /// Live mirror sets with their evidence, pairs on probation, and the operator's decisions.
    List,
    /// Keep ALIAS in CANONICAL's mirror set whatever detection says.
    Pin { canonical: String, alias: String },
    /// Never let ALIAS join CANONICAL's mirror set.
    Forbid { canonical: String, alias: String },
    /// Let detection alone decide about ALIAS again.
    Clear { canonical: String, alias: String },
}

impl AdminCommand {
    fn needs_write(&self) -> bool {
        matches!(
            self,
            AdminCommand::Relearn { .. }
                | AdminCommand::Rollback { .. }
                | AdminCommand::Mirrors(
                    MirrorsCommand::Pin { .. }
                        | MirrorsCommand::Forbid { .. }
                        | MirrorsCommand::Clear { .. }
                )
        )
    }
}

/// Why a command failed, with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    fn new(code: u8, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// A gRPC status, explained for an operator.
    pub fn from_status(status: &tonic::Status, address: &str) -> Failure {
        use tonic::Code;
        let detail = status.message();
        match status.code() {
            Code::Unavailable => Failure::new(
                EXIT_UNAVAILABLE,
                format!("cannot reach undust at {address}: {detail}"),
            ),
            Code::DeadlineExceeded => Failure::new(
                EXIT_UNAVAILABLE,
                format!("undust at {address} did not answer in time (raise --timeout-secs): {detail}"),
            ),
            Code::Unauthenticated => Failure::new(
                EXIT_NO_PERMISSION,
                format!("the admin token was refused ({detail}); pass the sidecar's token with --token-file or --data-dir"),
            ),
            Code::PermissionDenied => Failure::new(
                EXIT_NO_PERMISSION,
                format!("{detail}: use the write token (admin-write.token)"),
            ),
            Code::NotFound | Code::FailedPrecondition | Code::InvalidArgument
            | Code::OutOfRange | Code::AlreadyExists => Failure::new(EXIT_REFUSED, detail),
            code => Failure::new(EXIT_SOFTWARE, format!("undust answered {code:?}: {detail}")),
        }
    }

    /// Prints the failure and returns its exit code.
    pub fn report(self) -> ExitCode {
        eprintln!("undust: {}", self.message);
        ExitCode::from(self.code)
    }
}

/// Connects (bounded) to a gRPC server at `address` (`host:port` or an `http://` URI).
pub async fn connect(address: &str, timeout: Duration) -> Result<Channel, Failure> {
    let uri = if address.contains("://") {
        address.to_owned()
    } else {
        format!("http://{address}")
    };
    let endpoint = Endpoint::from_shared(uri)
        .map_err(|err| Failure::new(super::EXIT_USAGE, format!("bad address {address:?}: {err}")))?
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(timeout);
    endpoint.connect().await.map_err(|err| {
        let cause = std::error::Error::source(&err)
            .map(ToString::to_string)
            .unwrap_or_else(|| err.to_string());
        Failure::new(
            EXIT_UNAVAILABLE,
            format!("cannot reach undust at {address}: {cause}"),
        )
    })
}

/// A single-threaded runtime for a client command.
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Failure::new(EXIT_SOFTWARE, format!("cannot start the runtime: {err}")))
}

/// Reads the token to send: `--token-file`, or the data directory's token for the role.
fn read_token(args: &AdminArgs) -> Result<String, Failure> {
    let candidates: Vec<PathBuf> = match &args.token_file {
        Some(path) => vec![path.clone()],
        None if args.command.needs_write() => vec![args.data_dir.join("admin-write.token")],
        None => vec![
            args.data_dir.join("admin-read.token"),
            args.data_dir.join("admin-write.token"),
        ],
    };
    let mut errors = Vec::new();
    for path in &candidates {
        match token_from(path) {
            Ok(token) => return Ok(token),
            Err(err) => errors.push(err),
        }
    }
    Err(Failure::new(
        EXIT_NO_PERMISSION,
        format!(
            "no admin token: {}; pass --token-file, or --data-dir of the running sidecar",
            errors.join("; ")
        ),
    ))
}

fn token_from(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| format!("{}: the file is empty", path.display()))
}

/// Adds the bearer token to every call.
#[derive(Clone)]
struct Bearer(tonic::metadata::MetadataValue<tonic::metadata::Ascii>);

impl tonic::service::Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request
            .metadata_mut()
            .insert("authorization", self.0.clone());
        Ok(request)
    }
}

type Admin = AdminClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>>;

/// Runs `undust admin`.
pub fn run(args: AdminArgs) -> ExitCode {
    let result = runtime().and_then(|runtime| runtime.block_on(execute(&args)));
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(failure) => failure.report(),
    }
}

/// Runs one admin command and returns what to print.
async fn execute(args: &AdminArgs) -> Result<String, Failure> {
    let token = read_token(args)?;
    let header = format!("Bearer {token}").parse().map_err(|_| {
        Failure::new(
            EXIT_NO_PERMISSION,
            "the admin token contains characters a header cannot carry",
        )
    })?;
    let timeout = Duration::from_secs(args.timeout_secs.max(1));
    let channel = connect(&args.address, timeout).await?;
    // tonic's default 4 MiB decoding limit would refuse the rules of a host with a full alias
    // table (20,000 pairs of URLs). The answers come from the sidecar the operator names, and
    // the rule-set limits bound them.
    let mut admin: Admin = AdminClient::with_interceptor(channel, Bearer(header))
        .max_decoding_message_size(usize::MAX);
    let status = |status: tonic::Status| Failure::from_status(&status, &args.address);
    let json = args.json;
    let text = match &args.command {
        AdminCommand::Relearn { host, wait } => {
            let response = admin
                .relearn(pb::RelearnRequest {
                    host: host.clone().unwrap_or_default(),
                    wait: *wait,
                })
                .await
                .map_err(status)?
                .into_inner();
            let job = response.job.unwrap_or_default();
            if json {
                render_json(&json!({
                    "job_id": response.job_id,
                    "joined": response.joined,
                    "job": job_json(&job),
                }))
            } else {
                let verb = if response.joined {
                    "joined running job"
                } else {
                    "started job"
                };
                format!("{verb} {}\n{}", response.job_id, job_text(&job))
            }
        }
        AdminCommand::Job { job_id } => {
            let job = admin
                .get_relearn_job(pb::GetRelearnJobRequest {
                    job_id: job_id.clone(),
                })
                .await
                .map_err(status)?
                .into_inner();
            if json {
                render_json(&job_json(&job))
            } else {
                job_text(&job)
            }
        }
        AdminCommand::Rules { host, rule_file } => {
            let rules = admin
                .get_rules(pb::GetRulesRequest {
                    host: host.clone(),
                    // Only the form printed: an alias table is megabytes in either.
                    view: if *rule_file {
                        pb::RulesView::RuleFile
                    } else {
                        pb::RulesView::Structured
                    } as i32,
                })
                .await
                .map_err(status)?
                .into_inner();
            if *rule_file {
                if rules.version == 0 {
                    return Err(Failure::new(
                        EXIT_REFUSED,
                        format!("host {host:?} has no learned rules"),
                    ));
                }
                format!("{}\n", rules.rules_json.trim_end())
            } else if json {
                render_json(&rules_json(&rules))
            } else {
                rules_text(&rules)
            }
        }
        AdminCommand::Hosts => {
            let mut hosts = Vec::new();
            let mut page_token = String::new();
            loop {
                let page = admin
                    .list_hosts(pb::ListHostsRequest {
                        page_size: HOSTS_PAGE_SIZE,
                        page_token,
                    })
                    .await
                    .map_err(status)?
                    .into_inner();
                hosts.extend(page.hosts);
                if page.next_page_token.is_empty() {
                    break;
                }
                page_token = page.next_page_token;
            }
            if json {
                render_json(&Value::Array(hosts.iter().map(host_json).collect()))
            } else {
                hosts_text(&hosts)
            }
        }
        AdminCommand::Explain { url } => {
            let explained = admin
                .explain(pb::ExplainRequest { url: url.clone() })
                .await
                .map_err(status)?
                .into_inner();
            if json {
                render_json(&explain_json(&explained))
            } else {
                explain_text(&explained)
            }
        }
        AdminCommand::Stats => {
            let stats = admin
                .get_stats(pb::GetStatsRequest {})
                .await
                .map_err(status)?
                .into_inner();
            if json {
                render_json(&stats_json(&stats))
            } else {
                stats_text(&stats)
            }
        }
        AdminCommand::Rollback { host, to_version } => {
            let response = admin
                .rollback_rules(pb::RollbackRulesRequest {
                    host: host.clone(),
                    to_version: *to_version,
                })
                .await
                .map_err(status)?
                .into_inner();
            if json {
                render_json(&json!({"host": response.host, "version": response.version}))
            } else {
                format!(
                    "{}: rule set version {} is live\n",
                    response.host, response.version
                )
            }
        }
        AdminCommand::Mirrors(command) => {
            let response = match command {
                MirrorsCommand::List => admin.list_mirrors(pb::ListMirrorsRequest {}).await,
                MirrorsCommand::Pin { canonical, alias }
                | MirrorsCommand::Forbid { canonical, alias }
                | MirrorsCommand::Clear { canonical, alias } => {
                    let decision = match command {
                        MirrorsCommand::Pin { .. } => pb::MirrorDecision::Pin,
                        MirrorsCommand::Forbid { .. } => pb::MirrorDecision::Forbid,
                        _ => pb::MirrorDecision::Clear,
                    };
                    admin
                        .decide_mirror(pb::DecideMirrorRequest {
                            decision: decision as i32,
                            canonical: canonical.clone(),
                            alias: alias.clone(),
                        })
                        .await
                }
            }
            .map_err(status)?
            .into_inner();
            mirrors_output(&response, json)
        }
    };
    Ok(text)
}

/// `admin mirrors` output: the live sets and decisions (rule-file JSON) and the tracked pairs.
fn mirrors_output(response: &pb::ListMirrorsResponse, json: bool) -> String {
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    let candidates: Vec<Value> = response
        .candidates
        .iter()
        .map(|c| {
            json!({
                "alias": c.alias,
                "canonical": c.canonical,
                "confirmed_passes": c.confirmed_passes,
                "missed_passes": c.missed_passes,
                "live": c.live,
            })
        })
        .collect();
    if json {
        return render_json(&json!({
            "passes": response.passes,
            "mirrors": parse(&response.mirrors_json),
            "decisions": parse(&response.decisions_json),
            "candidates": candidates,
        }));
    }
    let mut text = format!(
        "{} detection passes; live mirror sets:\n{}\noperator decisions:\n{}\n",
        response.passes, response.mirrors_json, response.decisions_json
    );
    for c in &response.candidates {
        text.push_str(&format!(
            "{} -> {}: {} ({} confirming passes, {} missed)\n",
            c.alias,
            c.canonical,
            if c.live { "live" } else { "on probation" },
            c.confirmed_passes,
            c.missed_passes
        ));
    }
    text
}

fn render_json(value: &Value) -> String {
    // Serializing a `Value` cannot fail; the fallback keeps the output valid JSON regardless.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    text.push('\n');
    text
}

fn state_name(state: i32) -> &'static str {
    match pb::JobState::try_from(state) {
        Ok(pb::JobState::Queued) => "queued",
        Ok(pb::JobState::Running) => "running",
        Ok(pb::JobState::Succeeded) => "succeeded",
        Ok(pb::JobState::Failed) => "failed",
        Ok(pb::JobState::Rejected) => "rejected",
        Ok(pb::JobState::Unspecified) | Err(_) => "unspecified",
    }
}

/// Milliseconds since the Unix epoch as an RFC 3339 UTC time (`-` for 0: never).
fn time_text(unix_ms: i64) -> String {
    if unix_ms <= 0 {
        return "-".into();
    }
    let secs = unix_ms.div_euclid(1_000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date: Howard Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

fn job_json(job: &pb::RelearnJob) -> Value {
    json!({
        "job_id": job.job_id,
        "state": state_name(job.state),
        "started_at_unix_ms": job.started_at_unix_ms,
        "finished_at_unix_ms": job.finished_at_unix_ms,
        "hosts": job.hosts.iter().map(|host| json!({
            "host": host.host,
            "state": state_name(host.state),
            "rules_version": host.rules_version,
            "rules": host.rules,
            "samples": host.samples,
            "clusters": host.clusters,
            "error": host.error,
        })).collect::<Vec<_>>(),
    })
}

fn job_text(job: &pb::RelearnJob) -> String {
    let mut out = format!(
        "job {}: {} (started {}, finished {})\n",
        job.job_id,
        state_name(job.state),
        time_text(job.started_at_unix_ms),
        time_text(job.finished_at_unix_ms)
    );
    for host in &job.hosts {
        out.push_str(&format!(
            "  {}: {}, {} rules (version {}), {} samples, {} clusters",
            host.host,
            state_name(host.state),
            host.rules,
            host.rules_version,
            host.samples,
            host.clusters
        ));
        if !host.error.is_empty() {
            out.push_str(&format!(": {}", host.error));
        }
        out.push('\n');
    }
    out
}

fn rule_json(rule: &pb::Rule) -> Value {
    json!({
        "id": rule.id,
        "source_pattern": rule.source_pattern,
        "target_pattern": rule.target_pattern,
        "operations": rule.operations,
        "support": rule.support,
        "false_positive_rate": rule.false_positive_rate,
    })
}

fn site_rule_json(rule: &pb::SiteRule) -> Value {
    json!({
        "id": rule.id,
        "action": rule.action,
        "support": rule.support,
        "support_clusters": rule.support_clusters,
        "false_positive_rate": rule.false_positive_rate,
        "pooled_clusters": rule.pooled_clusters,
        "pooled_hosts": rule.pooled_hosts,
    })
}

/// What other hosts lent a site rule, for the text views (empty when nothing was pooled).
fn pooled_text(rule: &pb::SiteRule) -> String {
    if rule.pooled_hosts == 0 {
        return String::new();
    }
    format!(
        ", with {} clusters of {} other host{}",
        rule.pooled_clusters,
        rule.pooled_hosts,
        if rule.pooled_hosts == 1 { "" } else { "s" }
    )
}

fn rules_json(rules: &pb::GetRulesResponse) -> Value {
    json!({
        "host": rules.host,
        "version": rules.version,
        "learned_at_unix_ms": rules.learned_at_unix_ms,
        "previous_versions": rules.previous_versions,
        "site_rules": rules.site_rules.iter().map(site_rule_json).collect::<Vec<_>>(),
        "rules": rules.rules.iter().map(rule_json).collect::<Vec<_>>(),
        "aliases": rules.aliases.iter().map(alias_json).collect::<Vec<_>>(),
    })
}

fn alias_json(alias: &pb::DeclaredAlias) -> Value {
    json!({"from": alias.from, "to": alias.to})
}

fn rules_text(rules: &pb::GetRulesResponse) -> String {
    if rules.version == 0 {
        return format!("{}: no learned rules\n", rules.host);
    }
    let previous: Vec<String> = rules.previous_versions.iter().map(u64::to_string).collect();
    let mut out = format!(
        "{}: rule set version {} learned {} ({} site rules, {} rules, {} declared aliases; \
         earlier versions: {})\n",
        rules.host,
        rules.version,
        time_text(rules.learned_at_unix_ms),
        rules.site_rules.len(),
        rules.rules.len(),
        rules.aliases.len(),
        if previous.is_empty() {
            "none".into()
        } else {
            previous.join(", ")
        }
    );
    for rule in &rules.site_rules {
        out.push_str(&format!(
            "  site {}: {} (support {} in {} clusters{}, false positives {:.3})\n",
            rule.id,
            rule.action,
            rule.support,
            rule.support_clusters,
            pooled_text(rule),
            rule.false_positive_rate
        ));
    }
    for rule in &rules.rules {
        out.push_str(&format!(
            "  rule {}: {} -> {} (support {}, false positives {:.3})\n",
            rule.id,
            rule.source_pattern,
            rule.target_pattern,
            rule.support,
            rule.false_positive_rate
        ));
        for operation in &rule.operations {
            out.push_str(&format!("      {operation}\n"));
        }
    }
    for alias in rules.aliases.iter().take(ALIASES_SHOWN) {
        out.push_str(&format!("  alias {} -> {}\n", alias.from, alias.to));
    }
    if rules.aliases.len() > ALIASES_SHOWN {
        out.push_str(&format!(
            "  ... and {} more aliases (--json lists them all)\n",
            rules.aliases.len() - ALIASES_SHOWN
        ));
    }
    out
}

/// Declared aliases `admin rules` prints as text: a host may have 20,000, which would bury
/// its rules; `--json` lists every one.
const ALIASES_SHOWN: usize = 20;

fn host_json(host: &pb::HostSummary) -> Value {
    json!({
        "host": host.host,
        "samples": host.samples,
        "clusters": host.clusters,
        "rules": host.rules,
        "rules_version": host.rules_version,
        "urls_canonicalized": host.urls_canonicalized,
        "duplicates_suppressed": host.duplicates_suppressed,
        "avg_page_bytes": host.avg_page_bytes,
        "last_learned_unix_ms": host.last_learned_unix_ms,
        "pages_observed": host.pages_observed,
    })
}

fn hosts_text(hosts: &[pb::HostSummary]) -> String {
    if hosts.is_empty() {
        return "no hosts yet\n".into();
    }
    let width = hosts
        .iter()
        .map(|host| host.host.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "{:width$}  {:>8}  {:>8}  {:>8}  {:>5}  {:>9}  {:>13}  {:>10}  LAST LEARNED\n",
        "HOST",
        "OBSERVED",
        "SAMPLES",
        "CLUSTERS",
        "RULES",
        "VERSION",
        "CANONICALIZED",
        "DUPLICATES"
    );
    for host in hosts {
        out.push_str(&format!(
            "{:width$}  {:>8}  {:>8}  {:>8}  {:>5}  {:>9}  {:>13}  {:>10}  {}\n",
            host.host,
            host.pages_observed,
            host.samples,
            host.clusters,
            host.rules,
            host.rules_version,
            host.urls_canonicalized,
            host.duplicates_suppressed,
            time_text(host.last_learned_unix_ms)
        ));
    }
    out
}

fn explain_json(explained: &pb::ExplainResponse) -> Value {
    json!({
        "input": explained.input,
        "invalid_reason": explained.invalid_reason,
        "static_result": explained.static_result,
        "static_steps": explained.static_steps.iter()
            .map(|step| json!({"step": step.step, "result": step.result}))
            .collect::<Vec<_>>(),
        "site_rules": explained.site_rules.iter().map(site_rule_json).collect::<Vec<_>>(),
        "rule": explained.rule.as_ref().map(rule_json),
        "alias": explained.alias.as_ref().map(alias_json),
        "mirror": explained.mirror.as_ref().map(|fold| json!({
            "set_id": fold.set_id,
            "canonical_url": fold.canonical_url,
            "alias_site": fold.alias_site,
            "canonical_site": fold.canonical_site,
            "pinned": fold.pinned,
            "techniques": fold.techniques,
            "matching_pages": fold.matching_pages,
            "mismatching_pages": fold.mismatching_pages,
            "examples": fold.examples,
        })),
        "canonical": explained.canonical,
        "rules_version": explained.rules_version,
        "seen": explained.seen,
    })
}

fn explain_text(explained: &pb::ExplainResponse) -> String {
    if !explained.invalid_reason.is_empty() {
        return format!(
            "{}\n  invalid: {}\n",
            explained.input, explained.invalid_reason
        );
    }
    let mut out = format!("{}\n", explained.input);
    for step in &explained.static_steps {
        out.push_str(&format!("  static {:24} {}\n", step.step, step.result));
    }
    if let Some(fold) = &explained.mirror {
        out.push_str(&format!(
            "  mirror {} -> {} ({}{}): {}\n",
            fold.alias_site,
            fold.canonical_site,
            fold.set_id,
            if fold.pinned { ", pinned" } else { "" },
            fold.canonical_url
        ));
    }
    for rule in &explained.site_rules {
        out.push_str(&format!(
            "  site rule {}: {}{}\n",
            rule.id,
            rule.action,
            match pooled_text(rule).strip_prefix(", ") {
                Some(pooled) => format!(" (learned {pooled})"),
                None => String::new(),
            }
        ));
    }
    match &explained.rule {
        Some(rule) => out.push_str(&format!(
            "  rule {} (version {}): {} -> {}\n",
            rule.id, explained.rules_version, rule.source_pattern, rule.target_pattern
        )),
        None => out.push_str("  no learned rule matched\n"),
    }
    if let Some(alias) = &explained.alias {
        out.push_str(&format!(
            "  declared alias (version {}): {} -> {}\n",
            explained.rules_version, alias.from, alias.to
        ));
    }
    out.push_str(&format!(
        "  canonical {}\n  {}\n",
        explained.canonical,
        if explained.seen {
            "already seen: a duplicate"
        } else {
            "not seen yet: new"
        }
    ));
    out
}

fn stats_json(stats: &pb::GetStatsResponse) -> Value {
    json!({
        "urls_canonicalized": stats.urls_canonicalized,
        "urls_changed_static": stats.urls_changed_static,
        "urls_changed_learned": stats.urls_changed_learned,
        "duplicates_suppressed": stats.duplicates_suppressed,
        "urls_invalid": stats.urls_invalid,
        "estimated_bytes_saved": stats.estimated_bytes_saved,
        "seen_set_entries": stats.seen_set_entries,
        "seen_set_mode": stats.seen_set_mode,
        "pages_observed": stats.pages_observed,
        "samples": stats.samples,
        "hosts": stats.hosts,
        "hosts_with_rules": stats.hosts_with_rules,
        "relearn_runs": stats.relearn_runs,
        "relearn_failures": stats.relearn_failures,
        "uptime_seconds": stats.uptime_seconds,
    })
}

fn stats_text(stats: &pb::GetStatsResponse) -> String {
    let rows: [(&str, String); 14] = [
        ("URLs canonicalized", stats.urls_canonicalized.to_string()),
        (
            "  changed by static rules",
            stats.urls_changed_static.to_string(),
        ),
        (
            "  changed by learned rules",
            stats.urls_changed_learned.to_string(),
        ),
        (
            "  duplicates suppressed",
            stats.duplicates_suppressed.to_string(),
        ),
        ("  invalid", stats.urls_invalid.to_string()),
        (
            "estimated bytes saved",
            stats.estimated_bytes_saved.to_string(),
        ),
        (
            "seen-set entries",
            format!("{} ({})", stats.seen_set_entries, stats.seen_set_mode),
        ),
        ("pages observed", stats.pages_observed.to_string()),
        ("samples", stats.samples.to_string()),
        ("hosts", stats.hosts.to_string()),
        ("hosts with rules", stats.hosts_with_rules.to_string()),
        ("relearn runs", stats.relearn_runs.to_string()),
        ("relearn failures", stats.relearn_failures.to_string()),
        ("uptime seconds", stats.uptime_seconds.to_string()),
    ];
    rows.iter()
        .map(|(name, value)| format!("{name:28}{value}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(time_text(0), "-");
        assert_eq!(time_text(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(time_text(1_795_962_107_123), "2026-11-29T14:21:47Z");
    }

    fn alias(from: &str, to: &str) -> pb::DeclaredAlias {
        pb::DeclaredAlias {
            from: format!("http://www.site.test{from}"),
            to: format!("http://www.site.test{to}"),
        }
    }

    /// `admin explain` says what folded the URL onto its mirror and which declared alias gave
    /// its form, in text and JSON.
    #[test]
    fn explain_shows_the_mirror_fold_and_the_declared_alias() {
        let explained = pb::ExplainResponse {
            input: "http://site.test/node/5?sid=1".into(),
            static_result: "http://site.test/node/5?sid=1".into(),
            canonical: "http://www.site.test/about-us".into(),
            rules_version: 3,
            mirror: Some(pb::MirrorFold {
                set_id: "mirror:http://www.site.test".into(),
                canonical_url: "http://www.site.test/node/5?sid=1".into(),
                alias_site: "http://site.test".into(),
                canonical_site: "http://www.site.test".into(),
                ..pb::MirrorFold::default()
            }),
            alias: Some(alias("/node/5", "/about-us")),
            ..pb::ExplainResponse::default()
        };
        let text = explain_text(&explained);
        assert!(
            text.contains(
                "  mirror http://site.test -> http://www.site.test \
                 (mirror:http://www.site.test): http://www.site.test/node/5?sid=1\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  declared alias (version 3): http://www.site.test/node/5 -> \
                 http://www.site.test/about-us\n"
            ),
            "{text}"
        );
        let json = explain_json(&explained);
        assert_eq!(json["alias"]["to"], "http://www.site.test/about-us");
        assert_eq!(json["mirror"]["alias_site"], "http://site.test");
        let plain = explain_json(&pb::ExplainResponse::default());
        assert!(
            plain["alias"].is_null() && plain["mirror"].is_null(),
            "{plain}"
        );
        assert!(!explain_text(&pb::ExplainResponse::default()).contains("alias"));
    }

    /// A site rule other hosts lent support to says so in `admin rules` and `admin explain`, as
    /// text and as JSON; one learned on the host's own evidence says nothing of it.
    #[test]
    fn site_rules_say_what_other_hosts_lent_them() {
        let lent = pb::SiteRule {
            id: "forum.test#s2".into(),
            action: "ignore query:sort=oldest_to_newest on every URL".into(),
            support: 1,
            support_clusters: 1,
            pooled_clusters: 4,
            pooled_hosts: 3,
            ..pb::SiteRule::default()
        };
        let own = pb::SiteRule {
            id: "forum.test#s1".into(),
            action: "ignore query:page=1 on every URL".into(),
            support: 9,
            support_clusters: 6,
            ..pb::SiteRule::default()
        };
        let rules = pb::GetRulesResponse {
            host: "forum.test".into(),
            version: 1,
            site_rules: vec![own.clone(), lent.clone()],
            ..pb::GetRulesResponse::default()
        };
        let text = rules_text(&rules);
        assert!(
            text.contains(
                "  site forum.test#s2: ignore query:sort=oldest_to_newest on every URL \
                 (support 1 in 1 clusters, with 4 clusters of 3 other hosts, false positives 0.000)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  site forum.test#s1: ignore query:page=1 on every URL (support 9 in 6 clusters, \
                 false positives 0.000)\n"
            ),
            "{text}"
        );
        let json = rules_json(&rules);
        assert_eq!(json["site_rules"][1]["pooled_clusters"], 4);
        assert_eq!(json["site_rules"][1]["pooled_hosts"], 3);
        assert_eq!(json["site_rules"][0]["pooled_hosts"], 0);
        let explained = pb::ExplainResponse {
            input: "http://forum.test/topic/5?sort=oldest_to_newest".into(),
            canonical: "http://forum.test/topic/5".into(),
            site_rules: vec![lent],
            ..pb::ExplainResponse::default()
        };
        let text = explain_text(&explained);
        assert!(
            text.contains(
                "  site rule forum.test#s2: ignore query:sort=oldest_to_newest on every URL \
                 (learned with 4 clusters of 3 other hosts)\n"
            ),
            "{text}"
        );
        let alone = pb::ExplainResponse {
            site_rules: vec![own],
            ..explained
        };
        assert!(!explain_text(&alone).contains("other host"));
    }

    /// `admin rules` counts the declared aliases and lists the first few as text, all as JSON.
    #[test]
    fn rules_list_the_declared_aliases() {
        let rules = pb::GetRulesResponse {
            host: "www.site.test".into(),
            version: 2,
            aliases: (0..ALIASES_SHOWN + 5)
                .map(|n| alias(&format!("/node/{n}"), &format!("/page-{n}")))
                .collect(),
            ..pb::GetRulesResponse::default()
        };
        let text = rules_text(&rules);
        assert!(text.contains(", 25 declared aliases;"), "{text}");
        assert!(
            text.contains("  alias http://www.site.test/node/0 -> http://www.site.test/page-0\n"),
            "{text}"
        );
        assert_eq!(text.matches("  alias ").count(), ALIASES_SHOWN, "{text}");
        assert!(text.contains("... and 5 more aliases"), "{text}");
        let json = rules_json(&rules);
        assert_eq!(json["aliases"].as_array().map(Vec::len), Some(25));
        assert_eq!(json["aliases"][24]["from"], "http://www.site.test/node/24");
    }
}
