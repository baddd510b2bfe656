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

/// The Canonicalizer service.
#[derive(Clone)]
pub struct CanonicalizerService {
    sidecar: Arc<Sidecar>,
}

impl CanonicalizerService {
    pub fn new(sidecar: Arc<Sidecar>) -> Self {
        CanonicalizerService { sidecar }
    }

    /// Answers one batch and makes what it recorded durable before the answer goes out (see
    /// [`crate::service::durable`]). `rpc` labels the latency metric.
    pub async fn answer_durably(
        &self,
        request: CanonicalizeRequest,
        rpc: &'static str,
    ) -> Result<CanonicalizeResponse, Status> {
        let started = Instant::now();
        let (response, recorded_in) = self.answer(request)?;
        if let Some(drain) = recorded_in {
            self.sidecar.durable.wait(drain).await?;
        }
        metrics::histogram!(telemetry::CANONICALIZE_DURATION, "rpc" => rpc)
            .record(started.elapsed().as_secs_f64());
        Ok(response)
    }

    /// Answers one batch; with the answer, the seen-log drain that will hold the canonical forms it
    /// recorded (`None` when it recorded none).
    pub fn answer(
        &self,
        request: CanonicalizeRequest,
    ) -> Result<(CanonicalizeResponse, Option<u64>), Status> {
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
        // Keys are recorded under the durability gate, so the drain that will hold them is known.
        let recording = record.then(|| sidecar.durable.recording());
        let mut recorded_new = false;
        let mut hosts: FxHashMap<String, BatchHost> = FxHashMap::default();
        // A dry run records nothing, yet a repeat inside the batch is still a duplicate.
        let mut dry_seen: FxHashSet<u64> = FxHashSet::default();
        let (mut changed_static, mut changed_learned, mut invalid, mut suppressed) =
            (0u64, 0u64, 0u64, 0u64);
        let mut bytes_saved = 0u64;
        let mut results = Vec::with_capacity(request.urls.len());

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
            if !hosts.contains_key(host_name) {
                let entry = BatchHost {
                    rules: sidecar.canonicalizer.rules().get(host_name),
                    counters: sidecar.host(host_name),
                    canonicalized: 0,
                    suppressed: 0,
                };
                hosts.insert(host_name.to_owned(), entry);
            }
            let Some(host) = hosts.get_mut(host_name) else {
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

            let key = key_of(&canonical.canonical);
            let seen = if record {
                // The URL to remember is only worth a copy when a learned rule rewrote it: otherwise
                // it is the canonical form itself.
                let first = canonical.normalized.as_deref();
                sidecar.seen.check(key, true, first)
            } else {
                match sidecar.seen.check(key, false, None) {
                    Seen::Duplicate => Seen::Duplicate,
                    Seen::New if dry_seen.insert(key) => Seen::New,
                    Seen::New => Seen::Duplicate,
                }
            };
            let normalized = canonical
                .normalized
                .unwrap_or_else(|| canonical.canonical.clone());
            let (decision, enqueue_url) = match seen {
                Seen::New => {
                    recorded_new |= record;
                    (Decision::New, normalized)
                }
                Seen::Duplicate => {
                    host.suppressed += 1;
                    suppressed += 1;
                    bytes_saved += sidecar.page_size_estimate(host.counters.as_deref());
                    let first = sidecar.seen.first_occurrence(key).unwrap_or(normalized);
                    (Decision::Duplicate, first)
                }
            };
            results.push(CanonicalizeResult {
                canonical: canonical.canonical,
                enqueue_url,
                decision: decision as i32,
                rule_id,
                invalid_reason: String::new(),
                rules_version,
            });
        }

        for host in hosts.values() {
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
        let recorded_in = recording
            .filter(|_| recorded_new)
            .map(|recording| recording.drain_to_wait_for());
        Ok((
            CanonicalizeResponse {
                results,
                sequence: request.sequence,
            },
            recorded_in,
        ))
    }
}

#[tonic::async_trait]
impl CanonicalizerRpc for CanonicalizerService {
    async fn canonicalize(
        &self,
        request: Request<CanonicalizeRequest>,
    ) -> Result<Response<CanonicalizeResponse>, Status> {
        self.answer_durably(request.into_inner(), "unary")
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
                    Ok(request) => service.answer_durably(request, "stream").await,
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
