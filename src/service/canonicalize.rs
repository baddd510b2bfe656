//! The `Canonicalizer` gRPC service: the frontier's hot path.
//!
//! A batch is answered in input order. Each host's rule set is looked up once per batch and that
//! version answers every URL of the host in the batch. Counters are summed per batch and published
//! once, to keep atomic traffic off the per-URL path.

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status, Streaming};

use super::state::{HostCounters, Sidecar};
use crate::canon::engine::HostRules;
use crate::canon::seen::{key_of, Seen};
use crate::canon::Canonicalizer;
use crate::pb::canonicalizer_server::Canonicalizer as CanonicalizerRpc;
use crate::pb::{CanonicalizeRequest, CanonicalizeResponse, CanonicalizeResult, Decision};
use crate::telemetry;

/// Responses a stream may buffer before it stops reading requests (flow control).
const STREAM_BUFFER: usize = 8;

/// What one batch learned about one host.
struct BatchHost {
    rules: Option<Arc<HostRules>>,
    counters: Option<Arc<HostCounters>>,
    canonicalized: u64,
    suppressed: u64,
}

/// A valid URL of a batch, waiting for the seen-set's answer.
struct Answered {
    /// Index of its result in the response.
    position: usize,
    /// Index of its host in the batch's hosts.
    host: usize,
    key: u64,
    /// The URL to enqueue when a learned rule rewrote it (`None`: the canonical form itself).
    normalized: Option<String>,
}

impl Answered {
    /// The URL to remember as first occurrence: only worth a copy when a learned rule rewrote
    /// it, otherwise it is the canonical form itself.
    fn first_url(&self) -> Option<&str> {
        self.normalized.as_deref()
    }
}

/// The Canonicalizer service.
#[derive(Clone)]
pub struct CanonicalizerService {
    sidecar: Arc<Sidecar>,
}

impl CanonicalizerService {
    pub fn new(sidecar: Arc<Sidecar>) -> Self {
        CanonicalizerService { sidecar }
    }

    /// The seen-set's answers for a batch's valid URLs, in order: the fleet's shared seen-set
    /// when `--fleet` is set (one Redis round trip, local state while Redis is unreachable), else
    /// the embedded one.
    async fn seen(&self, answered: &[Answered], record: bool) -> Vec<Seen> {
        let sidecar = &*self.sidecar;
        let mut decisions = match &sidecar.fleet {
            Some(fleet) => {
                let keys: Vec<u64> = answered.iter().map(|entry| entry.key).collect();
                let first: Vec<Option<&str>> = answered.iter().map(Answered::first_url).collect();
                fleet
                    .seen
                    .check_batch(&sidecar.seen, &keys, &first, record)
                    .await
            }
            None => answered
                .iter()
                .map(|entry| sidecar.seen.check(entry.key, record, entry.first_url()))
                .collect(),
        };
        if !record {
            // A dry run records nothing, yet a repeat inside the batch is still a duplicate.
            let mut dry_seen: FxHashSet<u64> = FxHashSet::default();
            for (entry, seen) in answered.iter().zip(decisions.iter_mut()) {
                if *seen == Seen::New && !dry_seen.insert(entry.key) {
                    *seen = Seen::Duplicate;
                }
            }
        }
        decisions
    }

    /// Answers one batch. `rpc` labels the latency metric.
    pub async fn answer(
        &self,
        request: CanonicalizeRequest,
        rpc: &'static str,
    ) -> Result<CanonicalizeResponse, Status> {
        let started = Instant::now();
        let sidecar = &*self.sidecar;
        let max_batch = sidecar.config.max_batch;
        if request.urls.len() > max_batch {
            metrics::counter!(telemetry::REQUESTS_REFUSED, "reason" => "batch_too_large")
                .increment(1);
            return Err(Status::invalid_argument(format!(
                "batch of {} URLs exceeds the limit of {max_batch} URLs per request (--max-batch); \
                 no URL of it was recorded",
                request.urls.len()
            )));
        }
        let record = !request.dry_run;
        let mut hosts: FxHashMap<String, usize> = FxHashMap::default();
        let mut batch_hosts: Vec<BatchHost> = Vec::new();
        let (mut changed_static, mut changed_learned, mut invalid, mut suppressed) =
            (0u64, 0u64, 0u64, 0u64);
        let mut bytes_saved = 0u64;
        let mut results = Vec::with_capacity(request.urls.len());
        // Valid URLs wait here, by position in `results`, until the seen-set answered them all
        // (with a fleet, in one round trip to Redis for the whole batch).
        let mut answered: Vec<Answered> = Vec::with_capacity(request.urls.len());

        for input in &request.urls {
            let url = match sidecar.canonicalizer.normalize(input) {
                Ok(url) => url,
                Err(reason) => {
                    invalid += 1;
                    results.push(CanonicalizeResult {
                        decision: Decision::Invalid as i32,
                        invalid_reason: reason.to_string(),
                        ..CanonicalizeResult::default()
                    });
                    continue;
                }
            };
            let host_name = url.host_str().unwrap_or_default();
            let host_index = match hosts.get(host_name) {
                Some(&index) => index,
                None => {
                    batch_hosts.push(BatchHost {
                        rules: sidecar.canonicalizer.rules().get(host_name),
                        counters: sidecar.host(host_name),
                        canonicalized: 0,
                        suppressed: 0,
                    });
                    hosts.insert(host_name.to_owned(), batch_hosts.len() - 1);
                    batch_hosts.len() - 1
                }
            };
            let Some(host) = batch_hosts.get_mut(host_index) else {
                continue;
            };
            let canonical = Canonicalizer::finish(input, url, host.rules.as_deref());
            changed_static += u64::from(canonical.changed_static);
            let (rule_id, rules_version) = match &host.rules {
                Some(rules) => {
                    let id = canonical
                        .rule_index
                        .and_then(|i| rules.rule_id(i))
                        .unwrap_or_default()
                        .to_owned();
                    (id, rules.version())
                }
                None => (String::new(), 0),
            };
            changed_learned += u64::from(canonical.learned);
            host.canonicalized += 1;
            answered.push(Answered {
                position: results.len(),
                host: host_index,
                key: key_of(&canonical.canonical),
                normalized: canonical.normalized,
            });
            results.push(CanonicalizeResult {
                canonical: canonical.canonical,
                rule_id,
                rules_version,
                ..CanonicalizeResult::default()
            });
        }

        let decisions = self.seen(&answered, record).await;
        for (entry, seen) in answered.into_iter().zip(decisions) {
            let Some(result) = results.get_mut(entry.position) else {
                continue;
            };
            let normalized = entry.normalized.unwrap_or_else(|| result.canonical.clone());
            let (decision, enqueue_url) = match seen {
                Seen::New => (Decision::New, normalized),
                Seen::Duplicate => {
                    let counters = batch_hosts.get_mut(entry.host).map(|host| {
                        host.suppressed += 1;
                        host.counters.clone()
                    });
                    suppressed += 1;
                    bytes_saved += sidecar.page_size_estimate(counters.flatten().as_deref());
                    let first = sidecar
                        .seen
                        .first_occurrence(entry.key)
                        .unwrap_or(normalized);
                    (Decision::Duplicate, first)
                }
            };
            result.decision = decision as i32;
            result.enqueue_url = enqueue_url;
        }

        for host in &batch_hosts {
            if let Some(counters) = &host.counters {
                counters
                    .urls_canonicalized
                    .fetch_add(host.canonicalized, Ordering::Relaxed);
                counters
                    .duplicates_suppressed
                    .fetch_add(host.suppressed, Ordering::Relaxed);
            }
        }
        let totals = &sidecar.totals;
        let count = request.urls.len() as u64;
        totals
            .urls_canonicalized
            .fetch_add(count, Ordering::Relaxed);
        totals
            .urls_changed_static
            .fetch_add(changed_static, Ordering::Relaxed);
        totals
            .urls_changed_learned
            .fetch_add(changed_learned, Ordering::Relaxed);
        totals.urls_invalid.fetch_add(invalid, Ordering::Relaxed);
        totals
            .duplicates_suppressed
            .fetch_add(suppressed, Ordering::Relaxed);
        totals
            .estimated_bytes_saved
            .fetch_add(bytes_saved, Ordering::Relaxed);
        metrics::counter!(telemetry::URLS_CANONICALIZED).increment(count);
        metrics::counter!(telemetry::URLS_CHANGED_STATIC).increment(changed_static);
        metrics::counter!(telemetry::URLS_CHANGED_LEARNED).increment(changed_learned);
        metrics::counter!(telemetry::URLS_INVALID).increment(invalid);
        metrics::counter!(telemetry::DUPLICATES_SUPPRESSED).increment(suppressed);
        metrics::counter!(telemetry::ESTIMATED_BYTES_SAVED).increment(bytes_saved);
        metrics::histogram!(telemetry::CANONICALIZE_BATCH_SIZE).record(count as f64);
        metrics::histogram!(telemetry::CANONICALIZE_DURATION, "rpc" => rpc)
            .record(started.elapsed().as_secs_f64());
        Ok(CanonicalizeResponse {
            results,
            sequence: request.sequence,
        })
    }
}

#[tonic::async_trait]
impl CanonicalizerRpc for CanonicalizerService {
    async fn canonicalize(
        &self,
        request: Request<CanonicalizeRequest>,
    ) -> Result<Response<CanonicalizeResponse>, Status> {
        self.answer(request.into_inner(), "unary")
            .await
            .map(Response::new)
    }

    type CanonicalizeStreamStream = ReceiverStream<Result<CanonicalizeResponse, Status>>;

    async fn canonicalize_stream(
        &self,
        request: Request<Streaming<CanonicalizeRequest>>,
    ) -> Result<Response<Self::CanonicalizeStreamStream>, Status> {
        let mut inbound = request.into_inner();
        let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
        let service = self.clone();
        tokio::spawn(async move {
            while let Some(next) = inbound.next().await {
                // A refused batch ends the stream with its status, like a unary call would.
                let answer = match next {
                    Ok(request) => service.answer(request, "stream").await,
                    Err(status) => Err(status),
                };
                let failed = answer.is_err();
                if sender.send(answer).await.is_err() || failed {
                    break;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(receiver)))
    }
}
