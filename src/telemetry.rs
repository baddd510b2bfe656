//! Every metric undust exports, with its unit and help text, and the Prometheus endpoint.
//!
//! Metric names are constants here and nowhere else. No label holds a URL or a host: label values
//! come from small fixed sets (RPC names, outcomes), so the series count is bounded whatever the
//! crawl looks like. Per-host figures are available through the admin `ListHosts` call instead.
//!
//! The `metrics` facade has one global recorder per process; [`install`] sets it once (later calls
//! return the same handle), and [`serve`] exposes it as Prometheus text on `GET /metrics`.

use std::convert::Infallible;
use std::future::Future;
use std::sync::OnceLock;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::service::listen::Guarded;

/// URLs that went through Canonicalize (valid or not), dry runs included.
pub const URLS_CANONICALIZED: &str = "undust_urls_canonicalized_total";
/// URLs whose static normalization differs from the input.
pub const URLS_CHANGED_STATIC: &str = "undust_urls_changed_static_total";
/// URLs rewritten by a learned rule.
pub const URLS_CHANGED_LEARNED: &str = "undust_urls_changed_learned_total";
/// URLs answered DUPLICATE: the savings.
pub const DUPLICATES_SUPPRESSED: &str = "undust_duplicates_suppressed_total";
/// URLs answered INVALID.
pub const URLS_INVALID: &str = "undust_urls_invalid_total";
/// Suppressed duplicates times the average page size observed for their host.
pub const ESTIMATED_BYTES_SAVED: &str = "undust_estimated_bytes_saved_total";
/// Time to answer one Canonicalize request (or one request of a stream). Label `rpc`.
pub const CANONICALIZE_DURATION: &str = "undust_canonicalize_duration_seconds";
/// Canonicalize batches answered from the replay cache (a retry under the same `request_id`).
pub const CANONICALIZE_REPLAYED: &str = "undust_canonicalize_replayed_total";
/// URLs per Canonicalize request.
pub const CANONICALIZE_BATCH_SIZE: &str = "undust_canonicalize_batch_urls";
/// Requests refused as a whole (batch too large). Label `reason`.
pub const REQUESTS_REFUSED: &str = "undust_requests_refused_total";
/// Canonicalize calls admitted and not yet ended (see `service::admission`).
pub const CANONICALIZE_IN_FLIGHT: &str = "undust_canonicalize_in_flight";
/// Request bytes the admitted Canonicalize calls hold against
/// `--canonicalize-max-in-flight-bytes`.
pub const CANONICALIZE_IN_FLIGHT_BYTES: &str = "undust_canonicalize_in_flight_bytes";
/// URLs of Canonicalize batches left unprocessed because their caller had gone: its deadline
/// passed or it cancelled.
pub const CANONICALIZE_URLS_ABANDONED: &str = "undust_canonicalize_urls_abandoned_total";
/// Canonical forms held by the seen-set.
pub const SEEN_SET_ENTRIES: &str = "undust_seen_set_entries";
/// Generations (exact mode) or layers (bloom mode) the seen-set dropped to stay in its bound.
pub const SEEN_SET_EVICTIONS: &str = "undust_seen_set_evictions_total";
/// Pages received by ObservePages.
pub const PAGES_OBSERVED: &str = "undust_pages_observed_total";
/// Pages that entered a host's sample.
pub const PAGES_SAMPLED: &str = "undust_pages_sampled_total";
/// Pages skipped as no evidence (non-2xx, not HTML).
pub const PAGES_SKIPPED: &str = "undust_pages_skipped_total";
/// Pages rejected as invalid.
pub const PAGES_REJECTED: &str = "undust_pages_rejected_total";
/// Samples dropped from a reservoir (replaced, or evicted to stay in budget).
pub const SAMPLES_DROPPED: &str = "undust_samples_dropped_total";
/// New hosts not sampled because the host limit was reached and no host was idle.
pub const SAMPLE_HOSTS_REFUSED: &str = "undust_sample_hosts_refused_total";
/// Hosts that gave their sample slot to a new host after being idle for a whole round, or gave
/// way to the sample budget.
pub const SAMPLE_HOSTS_REPLACED: &str = "undust_sample_hosts_replaced_total";
/// Bytes the sample budget counts: samples, per-host entries and template models.
pub const SAMPLE_HELD_BYTES: &str = "undust_sample_held_bytes";
/// Hosts the sampler holds.
pub const SAMPLED_HOSTS: &str = "undust_sampled_hosts";
/// ObservePages calls refused because ingest was saturated.
pub const INGEST_BACKPRESSURE: &str = "undust_ingest_backpressure_total";
/// Pages held in all hosts' samples.
pub const SAMPLES: &str = "undust_samples";
/// Hosts known to the sidecar.
pub const HOSTS: &str = "undust_hosts";
/// Host relearn runs. Label `outcome`: `succeeded`, `failed`, `rejected`.
pub const RELEARN_RUNS: &str = "undust_relearn_runs_total";
/// Time to relearn one host.
pub const RELEARN_DURATION: &str = "undust_relearn_duration_seconds";
/// Live learned rules over all hosts.
pub const RULES_ACTIVE: &str = "undust_rules_active";
/// Live mirror sets.
pub const MIRROR_SETS: &str = "undust_mirror_sets";
/// Alias sites folded onto a canonical site by the live mirror sets.
pub const MIRROR_HOSTS_FOLDED: &str = "undust_mirror_hosts_folded";
/// URLs Canonicalize folded onto another origin by a mirror set.
pub const URLS_FOLDED: &str = "undust_urls_folded_across_hosts_total";
/// Mirror detection passes.
pub const MIRROR_PASSES: &str = "undust_mirror_passes_total";
/// Time of one mirror detection pass.
pub const MIRROR_PASS_DURATION: &str = "undust_mirror_pass_duration_seconds";
/// Duplicate clusters (two or more URLs) found by the latest learning of every host, summed.
pub const CLUSTERS: &str = "undust_clusters";
/// Admin calls. Labels `method` and `outcome` (`ok`, `unauthenticated`, `denied`, `throttled`,
/// `error`).
pub const ADMIN_CALLS: &str = "undust_admin_calls_total";
/// Refused admin calls not logged because refusals were already logged ten times that minute.
pub const ADMIN_REFUSALS_NOT_LOGGED: &str = "undust_admin_refusals_not_logged_total";

/// Tables of the store found damaged at start (the file was moved aside, readable rows kept).
pub const STORE_DAMAGED_TABLES: &str = "undust_store_damaged_tables";
/// Stored values skipped at start because they failed their checksum or decoding.
pub const STORE_VALUES_SKIPPED: &str = "undust_store_values_skipped";

/// Connections closed right after accept. Labels `listener` (`main`, `admin`, `metrics`) and
/// `reason` (`limit`: too many open; `silent`: nothing sent within the first-byte timeout).
pub const CONNECTIONS_REFUSED: &str = "undust_connections_refused_total";

/// ObservePages streams ended because no page came within the idle timeout (or while draining).
pub const INGEST_STREAMS_ENDED_IDLE: &str = "undust_ingest_streams_ended_idle_total";
/// 1 while the fleet's Redis is reachable, 0 while degraded (answering from local state).
pub const FLEET_CONNECTED: &str = "undust_fleet_connected";
/// URLs whose seen-set answer came from local state because Redis was unreachable.
pub const FLEET_LOCAL_ANSWERS: &str = "undust_fleet_local_answers_total";
/// Keys recorded while degraded and waiting to be replayed into Redis.
pub const FLEET_REPLAY_PENDING: &str = "undust_fleet_replay_pending";
/// Keys replayed into Redis after a reconnection.
pub const FLEET_REPLAYED: &str = "undust_fleet_replayed_total";
/// Keys dropped from the replay buffer because it was full.
pub const FLEET_REPLAY_DROPPED: &str = "undust_fleet_replay_dropped_total";
/// Shared seen-set bucket generations rotated to stay within the bound.
pub const FLEET_SEEN_ROTATIONS: &str = "undust_fleet_seen_rotations_total";
/// Reconnections to Redis after a degraded period.
pub const FLEET_RECONNECTS: &str = "undust_fleet_reconnects_total";
/// Learning lease attempts. Label `outcome` (`acquired`, `held_elsewhere`).
pub const FLEET_LEASES: &str = "undust_fleet_leases_total";
/// Rule set publications. Label `outcome` (`published`, `fenced`).
pub const FLEET_RULES_PUBLISHED: &str = "undust_fleet_rules_published_total";
/// Rule sets received from the fleet and put live.
pub const FLEET_RULES_RECEIVED: &str = "undust_fleet_rules_received_total";
/// Publications of the fleet's mirror table. Label `outcome` (`published`, `fenced`).
pub const FLEET_MIRRORS_PUBLISHED: &str = "undust_fleet_mirrors_published_total";
/// Mirror tables published by the fleet and put live here.
pub const FLEET_MIRRORS_RECEIVED: &str = "undust_fleet_mirrors_received_total";
/// Samples shared with the fleet. Label `outcome` (`shared`: written to Redis; `evicted`: dropped
/// from Redis by the per-host or host bound; `dropped`: lost from the full local queue while Redis
/// was unreachable).
pub const FLEET_EVIDENCE: &str = "undust_fleet_evidence_total";
/// Mirror host summaries shared with the fleet, by origin. Label `outcome` (`shared`: written to
/// Redis; `evicted`: dropped from Redis by the age or origin bound; `fetched`: another sidecar's
/// full summary read by a detection pass; `undecodable`: a shared summary or signature that did
/// not decode, skipped; `unavailable`: a share or read that failed, the pass ran on this
/// sidecar's summaries only; `lost`: a summary this sidecar had shared that Redis no longer held,
/// shared again).
pub const FLEET_SUMMARIES: &str = "undust_fleet_mirror_summaries_total";

/// Registers help text and units, once per process.
fn describe() {
    describe_counter!(
        URLS_CANONICALIZED,
        Unit::Count,
        "URLs that went through Canonicalize."
    );
    describe_counter!(
        URLS_CHANGED_STATIC,
        Unit::Count,
        "URLs whose static normalization differs from the input."
    );
    describe_counter!(
        URLS_CHANGED_LEARNED,
        Unit::Count,
        "URLs rewritten by a learned rule."
    );
    describe_counter!(
        DUPLICATES_SUPPRESSED,
        Unit::Count,
        "URLs answered DUPLICATE (kept out of the crawl queue)."
    );
    describe_counter!(URLS_INVALID, Unit::Count, "URLs answered INVALID.");
    describe_counter!(
        ESTIMATED_BYTES_SAVED,
        Unit::Bytes,
        "Suppressed duplicates times the average page size observed for their host."
    );
    describe_histogram!(
        CANONICALIZE_DURATION,
        Unit::Seconds,
        "Time to answer one Canonicalize request (label rpc: unary or stream)."
    );
    describe_counter!(
        CANONICALIZE_REPLAYED,
        Unit::Count,
        "Canonicalize retries answered with the first attempt's answer (same request_id)."
    );
    describe_histogram!(
        CANONICALIZE_BATCH_SIZE,
        Unit::Count,
        "URLs per Canonicalize request."
    );
    describe_counter!(
        REQUESTS_REFUSED,
        Unit::Count,
        "Requests refused as a whole (label reason)."
    );
    describe_gauge!(
        CANONICALIZE_IN_FLIGHT,
        Unit::Count,
        "Canonicalize calls admitted and not yet ended."
    );
    describe_gauge!(
        CANONICALIZE_IN_FLIGHT_BYTES,
        Unit::Bytes,
        "Request bytes held by admitted Canonicalize calls."
    );
    describe_counter!(
        CANONICALIZE_URLS_ABANDONED,
        Unit::Count,
        "URLs of Canonicalize batches left unprocessed because their caller's deadline passed or it cancelled."
    );
    describe_gauge!(
        SEEN_SET_ENTRIES,
        Unit::Count,
        "Canonical forms held by the seen-set."
    );
    describe_counter!(
        SEEN_SET_EVICTIONS,
        Unit::Count,
        "Seen-set generations or Bloom layers dropped to stay within the memory bound."
    );
    describe_counter!(
        PAGES_OBSERVED,
        Unit::Count,
        "Pages received by ObservePages."
    );
    describe_counter!(
        PAGES_SAMPLED,
        Unit::Count,
        "Pages that entered a host's sample."
    );
    describe_counter!(
        PAGES_SKIPPED,
        Unit::Count,
        "Pages skipped as no evidence (non-2xx, not HTML)."
    );
    describe_counter!(PAGES_REJECTED, Unit::Count, "Pages rejected as invalid.");
    describe_counter!(
        SAMPLES_DROPPED,
        Unit::Count,
        "Samples dropped from a host's reservoir."
    );
    describe_counter!(
        SAMPLE_HOSTS_REFUSED,
        Unit::Count,
        "New hosts not sampled: the host limit (--sample-max-hosts) was reached and no host was idle."
    );
    describe_counter!(
        SAMPLE_HOSTS_REPLACED,
        Unit::Count,
        "Hosts whose sample gave way: to a new host after a whole round without pages, or to the sample budget (--sample-budget-bytes) once every host was down to one sample."
    );
    describe_gauge!(
        SAMPLE_HELD_BYTES,
        Unit::Bytes,
        "Bytes counted against --sample-budget-bytes: samples, per-host entries and template models."
    );
    describe_gauge!(SAMPLED_HOSTS, Unit::Count, "Hosts the sampler holds.");
    describe_counter!(
        INGEST_BACKPRESSURE,
        Unit::Count,
        "ObservePages calls refused with RESOURCE_EXHAUSTED because ingest was saturated."
    );
    describe_gauge!(
        SAMPLES,
        Unit::Count,
        "Pages held in all hosts' learning samples."
    );
    describe_gauge!(HOSTS, Unit::Count, "Hosts known to the sidecar.");
    describe_counter!(
        RELEARN_RUNS,
        Unit::Count,
        "Host relearn runs (label outcome)."
    );
    describe_histogram!(RELEARN_DURATION, Unit::Seconds, "Time to relearn one host.");
    describe_gauge!(MIRROR_SETS, Unit::Count, "Live mirror sets.");
    describe_gauge!(
        MIRROR_HOSTS_FOLDED,
        Unit::Count,
        "Alias sites folded onto a canonical site by the live mirror sets."
    );
    describe_counter!(
        URLS_FOLDED,
        Unit::Count,
        "URLs Canonicalize folded onto another origin by a mirror set."
    );
    describe_counter!(MIRROR_PASSES, Unit::Count, "Mirror detection passes.");
    describe_histogram!(
        MIRROR_PASS_DURATION,
        Unit::Seconds,
        "Time of one mirror detection pass."
    );
    describe_gauge!(
        RULES_ACTIVE,
        Unit::Count,
        "Live learned rules over all hosts."
    );
    describe_gauge!(
        CLUSTERS,
        Unit::Count,
        "Duplicate clusters found by the latest learning, summed over hosts."
    );
    describe_gauge!(
        STORE_DAMAGED_TABLES,
        Unit::Count,
        "Store tables found damaged at start; the file was moved aside and readable rows kept."
    );
    describe_gauge!(
        STORE_VALUES_SKIPPED,
        Unit::Count,
        "Stored values skipped at start because they failed their checksum or decoding."
    );
    describe_counter!(
        CONNECTIONS_REFUSED,
        Unit::Count,
        "Connections closed right after accept (labels listener and reason: limit or silent)."
    );
    describe_counter!(
        INGEST_STREAMS_ENDED_IDLE,
        Unit::Count,
        "ObservePages streams ended because no page came within the idle timeout."
    );
    describe_counter!(
        ADMIN_CALLS,
        Unit::Count,
        "Admin calls (labels method and outcome)."
    );
    describe_counter!(
        ADMIN_REFUSALS_NOT_LOGGED,
        Unit::Count,
        "Refused admin calls not logged: refusals are logged at most ten times a minute."
    );
    describe_gauge!(
        FLEET_CONNECTED,
        Unit::Count,
        "1 while the fleet's Redis is reachable, 0 while answering from local state."
    );
    describe_counter!(
        FLEET_LOCAL_ANSWERS,
        Unit::Count,
        "URLs answered from the local seen-set because Redis was unreachable."
    );
    describe_gauge!(
        FLEET_REPLAY_PENDING,
        Unit::Count,
        "Seen-set keys recorded while degraded, waiting to be replayed into Redis."
    );
    describe_counter!(
        FLEET_REPLAYED,
        Unit::Count,
        "Seen-set keys replayed into Redis after a reconnection."
    );
    describe_counter!(
        FLEET_REPLAY_DROPPED,
        Unit::Count,
        "Seen-set keys dropped from the full replay buffer."
    );
    describe_counter!(
        FLEET_SEEN_ROTATIONS,
        Unit::Count,
        "Shared seen-set bucket generations rotated to stay within the bound."
    );
    describe_counter!(
        FLEET_RECONNECTS,
        Unit::Count,
        "Reconnections to Redis after a degraded period."
    );
    describe_counter!(
        FLEET_LEASES,
        Unit::Count,
        "Learning lease attempts (label outcome)."
    );
    describe_counter!(
        FLEET_RULES_PUBLISHED,
        Unit::Count,
        "Rule set publications to the fleet (label outcome)."
    );
    describe_counter!(
        FLEET_RULES_RECEIVED,
        Unit::Count,
        "Rule sets published by the fleet and put live here."
    );
    describe_counter!(
        FLEET_MIRRORS_PUBLISHED,
        Unit::Count,
        "Publications of the fleet's mirror table (label outcome)."
    );
    describe_counter!(
        FLEET_MIRRORS_RECEIVED,
        Unit::Count,
        "Mirror tables published by the fleet and put live here."
    );
    describe_counter!(
        FLEET_EVIDENCE,
        Unit::Count,
        "Samples shared with the fleet (label outcome: shared, evicted, dropped)."
    );
    describe_counter!(
        FLEET_SUMMARIES,
        Unit::Count,
        "Mirror host summaries shared with the fleet, by origin (label outcome: shared, evicted, \
         fetched, undecodable, unavailable, lost)."
    );
}

/// Latency buckets (seconds): from 50 µs (a small batch) to 5 s (a huge batch under load).
const DURATION_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0,
];
/// Relearn duration buckets (seconds).
const RELEARN_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];
/// Batch size buckets (URLs).
const BATCH_BUCKETS: &[f64] = &[1.0, 10.0, 100.0, 1_000.0, 10_000.0, 100_000.0];

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the process-wide Prometheus recorder (once) and returns its handle. `None` when another
/// recorder was installed first (an embedding application's own); metrics then go there.
pub fn install() -> Option<PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full(CANONICALIZE_DURATION.into()),
                    DURATION_BUCKETS,
                )
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full(RELEARN_DURATION.into()),
                        RELEARN_BUCKETS,
                    )
                })
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full(CANONICALIZE_BATCH_SIZE.into()),
                        BATCH_BUCKETS,
                    )
                });
            let handle = match builder {
                Ok(builder) => builder.install_recorder().ok(),
                Err(_) => None,
            };
            if handle.is_some() {
                describe();
                // Counters the dashboard plots that stay at zero in a healthy sidecar: registered
                // at zero, so their panels show 0 rather than no data and `rate()` has a first
                // sample to count from.
                for name in [URLS_FOLDED, CANONICALIZE_URLS_ABANDONED] {
                    metrics::counter!(name).increment(0);
                }
            }
            handle
        })
        .clone()
}

/// Serves `GET /metrics` (Prometheus text format) on the connections of `incoming` (accepted
/// with the guards of [`crate::service::listen`]) until `shutdown` completes.
pub async fn serve(
    mut incoming: impl tokio_stream::Stream<Item = std::io::Result<Guarded>> + Unpin,
    handle: PrometheusHandle,
    shutdown: impl Future<Output = ()>,
) {
    use tokio_stream::StreamExt;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = incoming.next() => accepted,
            () = &mut shutdown => return,
        };
        let stream = match accepted {
            Some(Ok(stream)) => stream,
            Some(Err(_)) => continue,
            None => return,
        };
        let handle = handle.clone();
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let handle = handle.clone();
                    async move { Ok::<_, Infallible>(respond(&request, &handle)) }
                });
            // A scraper that hangs up mid-response is not an error worth logging.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

fn respond(
    request: &Request<hyper::body::Incoming>,
    handle: &PrometheusHandle,
) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match (request.method(), request.uri().path()) {
        (&hyper::Method::GET, "/metrics") => (
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            handle.render(),
        ),
        (_, "/metrics") => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "only GET is allowed\n".to_owned(),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain",
            "metrics are at /metrics\n".to_owned(),
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = hyper::header::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}
