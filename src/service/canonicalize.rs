//! The `Canonicalizer` gRPC service: the frontier's hot path.
//!
//! A batch is answered in input order. Each host's rule set is looked up once per batch and that
//! version answers every URL of the host in the batch. Counters are summed per batch and published
//! once, to keep atomic traffic off the per-URL path.
//!
//! Work is bounded before it reaches this service: [`crate::service::admission`] admits at most
//! `--canonicalize-max-in-flight` calls holding at most `--canonicalize-max-in-flight-bytes`
//! request bytes when their headers arrive, and refuses the others with RESOURCE_EXHAUSTED before
//! their bodies are read (a queue would only hold memory and make every answer late). A batch is
//! answered in chunks of [`CHUNK_URLS`]: between chunks the caller's deadline (`grpc-timeout`) is
//! checked and the task yields, so a caller that timed out or cancelled (its future is dropped)
//! stops costing work at the next chunk; the URLs it left are counted in
//! `undust_canonicalize_urls_abandoned_total`, and none of its batch is recorded.
//!
//! Mirror sets fold a URL of an alias site onto its canonical site before the rules, which are
//! then the canonical host's (looked up once per batch too); the answer's `enqueue_url` stays
//! the URL discovered, a real fetchable URL. Folded URLs are counted per batch.
//!
//! The seen-set answers the whole batch at once after its URLs are canonicalized: with `--fleet`
//! the shared seen-set in one Redis round trip (durable as Redis is configured, see the fleet
//! module), else the embedded one, under the durability gate, and the answer waits until the NEW
//! canonical forms it recorded are committed ([`crate::service::durable`]).
//!
//! Requests are decoded leniently ([`crate::pb::lenient`]): a URL that is not UTF-8 is answered
//! INVALID with the offset of its first bad byte, and the rest of the batch is answered as usual.

use prost::Message;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status, Streaming};

use super::admission::Admitted;
use super::state::{HostCounters, Sidecar};
use crate::canon::engine::HostRules;
use crate::canon::seen::{key_of, Seen};
use crate::canon::Canonicalizer;
use crate::pb::lenient::canonicalizer_server::Canonicalizer as CanonicalizerRpc;
use crate::pb::lenient::CanonicalizeRequest;
use crate::pb::{CanonicalizeResponse, CanonicalizeResult, Decision};
use crate::telemetry;

/// Responses a stream may buffer before it stops reading requests (flow control).
const STREAM_BUFFER: usize = 8;

/// URLs answered between two checks of the caller's deadline (and yields to the runtime): about a
/// millisecond of work.
const CHUNK_URLS: usize = 1_000;

/// How far a batch got; when dropped before [`Progress::finish`] (its caller's deadline passed,
/// or the caller cancelled and the answer's future was dropped), the URLs not yet canonicalized
/// are counted as abandoned.
struct Progress {
    urls: usize,
    canonicalized: usize,
    finished: bool,
}

impl Progress {
    fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if !self.finished {
            metrics::counter!(telemetry::CANONICALIZE_URLS_ABANDONED)
                .increment(self.urls.saturating_sub(self.canonicalized) as u64);
        }
    }
}

/// When a request's headers arrived, stamped by [`stamp_arrival`] before its body is read: a
/// caller's `grpc-timeout` counts from then, not from when the handler starts after a large body
/// was received and decoded.
#[derive(Debug, Clone, Copy)]
pub struct Arrived(Instant);

/// The interceptor that stamps [`Arrived`] on every Canonicalizer request.
pub fn stamp_arrival(mut request: Request<()>) -> Result<Request<()>, Status> {
    request.extensions_mut().insert(Arrived(Instant::now()));
    Ok(request)
}

/// The caller's deadline from its `grpc-timeout` header (`<digits><H|M|S|m|u|n>`), if any, counted
/// from the request's arrival.
fn deadline_of<T>(request: &Request<T>) -> Option<Instant> {
    let text = request.metadata().get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = text.split_at(text.len().checked_sub(1)?);
    let amount: u64 = digits.parse().ok()?;
    let timeout = match unit {
        "H" => Duration::from_secs(amount.saturating_mul(3600)),
        "M" => Duration::from_secs(amount.saturating_mul(60)),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    };
    let arrived = request
        .extensions()
        .get::<Arrived>()
        .map_or_else(Instant::now, |arrived| arrived.0);
    arrived.checked_add(timeout)
}

/// Why a URL that is not UTF-8 is INVALID: where its first bad byte is, so the crawler can find it.
pub fn not_utf8(err: &std::str::Utf8Error) -> String {
    format!(
        "not valid UTF-8 (first invalid byte at offset {}); percent-encode non-UTF-8 bytes",
        err.valid_up_to()
    )
}

/// What one batch learned about one host.
struct BatchHost {
    rules: Option<Arc<HostRules>>,
    counters: Arc<HostCounters>,
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

/// Index of `host` in the batch's hosts, its rules looked up (and its counters found) on its
/// first URL of the batch.
fn batch_host(
    hosts: &mut FxHashMap<String, usize>,
    batch_hosts: &mut Vec<BatchHost>,
    sidecar: &Sidecar,
    host: &str,
) -> usize {
    if let Some(&index) = hosts.get(host) {
        return index;
    }
    batch_hosts.push(BatchHost {
        rules: sidecar.canonicalizer.rules().get(host),
        counters: sidecar.host(host),
        canonicalized: 0,
        suppressed: 0,
    });
    hosts.insert(host.to_owned(), batch_hosts.len() - 1);
    batch_hosts.len() - 1
}

/// The Canonicalizer service.
#[derive(Clone)]
pub struct CanonicalizerService {
    sidecar: Arc<Sidecar>,
}

impl CanonicalizerService {
    /// The service; serve it behind [`crate::service::admission::Admitting`], which bounds the
    /// work in flight.
    pub fn new(sidecar: Arc<Sidecar>) -> Self {
        CanonicalizerService { sidecar }
    }

    /// Answers one batch and makes what it recorded durable before the answer goes out (see
    /// [`crate::service::durable`]). `rpc` labels the latency metric; past `deadline` the rest of
    /// the batch is not processed.
    pub async fn answer_durably(
        &self,
        request: CanonicalizeRequest,
        rpc: &'static str,
        deadline: Option<Instant>,
    ) -> Result<CanonicalizeResponse, Status> {
        let started = Instant::now();
        // A retry under the same request id gets the first attempt's answer (service::replay).
        let (response, recorded_in) = self
            .sidecar
            .replay
            .answer(request, |request| self.answer(request, deadline))
            .await?;
        if let Some(drain) = recorded_in {
            self.sidecar.durable.wait(drain).await?;
        }
        metrics::histogram!(telemetry::CANONICALIZE_DURATION, "rpc" => rpc)
            .record(started.elapsed().as_secs_f64());
        Ok(response)
    }

    /// The seen-set's answers for a batch's valid URLs, in order, and the seen-log drain that
    /// will hold what they recorded locally (`None` when nothing NEW was recorded, or with a fleet,
    /// whose shared seen-set is the durable one): the fleet's shared seen-set when `--fleet` is set
    /// (one Redis round trip, local state while Redis is unreachable), else the embedded one.
    async fn seen(&self, answered: &[Answered], record: bool) -> (Vec<Seen>, Option<u64>) {
        let sidecar = &*self.sidecar;
        let (mut decisions, recorded_in) = match &sidecar.fleet {
            Some(fleet) => {
                let keys: Vec<u64> = answered.iter().map(|entry| entry.key).collect();
                let first: Vec<Option<&str>> = answered.iter().map(Answered::first_url).collect();
                let decisions = fleet
                    .seen
                    .check_batch(&sidecar.seen, &keys, &first, record)
                    .await;
                (decisions, None)
            }
            None => {
                // Keys are recorded under the durability gate, so the drain that will hold them
                // is known. No await while it is held.
                let recording = record.then(|| sidecar.durable.recording());
                let decisions: Vec<Seen> = answered
                    .iter()
                    .map(|entry| sidecar.seen.check(entry.key, record, entry.first_url()))
                    .collect();
                let recorded_new = record && decisions.contains(&Seen::New);
                let recorded_in = recording
                    .filter(|_| recorded_new)
                    .map(|recording| recording.drain_to_wait_for());
                (decisions, recorded_in)
            }
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
        (decisions, recorded_in)
    }

    /// Answers one batch; with the answer, the seen-log drain that will hold the canonical forms it
    /// recorded (`None` when it recorded none). Past `deadline` the rest of the batch is not
    /// processed.
    pub async fn answer(
        &self,
        request: CanonicalizeRequest,
        deadline: Option<Instant>,
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
        let mut hosts: FxHashMap<String, usize> = FxHashMap::default();
        let mut batch_hosts: Vec<BatchHost> = Vec::new();
        let (mut changed_static, mut changed_learned, mut invalid, mut suppressed) =
            (0u64, 0u64, 0u64, 0u64);
        let mut bytes_saved = 0u64;
        let mut results = Vec::with_capacity(request.urls.len());
        // Mirror sets as of this batch (one table answers the whole batch), the rules of the
        // canonical hosts folded URLs land on, and a spread sample of the batch's URLs for
        // mirror detection's path sets.
        let mirror_table = sidecar.canonicalizer.mirrors();
        let mirrors = (!mirror_table.is_empty()).then_some(&*mirror_table);
        type FoldedRules = (String, String, bool, Option<Arc<HostRules>>);
        let mut folded_rules: Vec<FoldedRules> = Vec::new();
        let mut folded_urls = 0u64;
        let mut watched = sidecar.mirrors.batch_sample(request.urls.len());
        // Valid URLs wait here, by position in `results`, until the seen-set answered them all
        // (with a fleet, in one round trip to Redis for the whole batch).
        let mut answered: Vec<Answered> = Vec::with_capacity(request.urls.len());
        let mut progress = Progress {
            urls: request.urls.len(),
            canonicalized: 0,
            finished: false,
        };

        for (index, input) in request.urls.iter().enumerate() {
            if index % CHUNK_URLS == 0 {
                progress.canonicalized = index;
                if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    metrics::counter!(telemetry::REQUESTS_REFUSED, "reason" => "deadline")
                        .increment(1);
                    return Err(Status::deadline_exceeded(format!(
                        "the caller's deadline passed after {index} of {} URLs; none was \
                         recorded",
                        request.urls.len()
                    )));
                }
                if index > 0 {
                    // Lets a cancelled call's future be dropped here, and other calls run.
                    tokio::task::yield_now().await;
                }
            }
            let normalized = std::str::from_utf8(input)
                .map_err(|err| not_utf8(&err))
                .and_then(|input| {
                    let form = sidecar
                        .canonicalizer
                        .static_form(input)
                        .map_err(|reason| reason.to_string())?;
                    Ok((input, form))
                });
            let (input, form) = match normalized {
                Ok(normalized) => normalized,
                Err(invalid_reason) => {
                    invalid += 1;
                    results.push(CanonicalizeResult {
                        decision: Decision::Invalid as i32,
                        invalid_reason,
                        ..CanonicalizeResult::default()
                    });
                    continue;
                }
            };
            watched.offer(index, || form.to_url());
            // The rules come from the batch's lookups: the URL's host's, or for a URL folded
            // onto a canonical site, what `rules_for_folded_view` picks, looked up once per
            // batch by both hosts and whether the path stayed (a folder alias). A batch folds few
            // distinct hosts, so a scan without allocation beats a map.
            let mut host_index = None;
            let (canonical, rules) =
                Canonicalizer::canonicalize_with(input, form, mirrors, |view, folded| {
                    let index = batch_host(&mut hosts, &mut batch_hosts, sidecar, view.host);
                    host_index = Some(index);
                    let Some(folded) = folded else {
                        return batch_hosts.get(index).and_then(|host| host.rules.clone());
                    };
                    let (from, to) = (view.host, folded.host);
                    let same_path = view.path == folded.path;
                    let cached = folded_rules
                        .iter()
                        .find(|(f, t, p, _)| f == from && t == to && *p == same_path)
                        .map(|(_, _, _, rules)| rules.clone());
                    cached.unwrap_or_else(|| {
                        let rules = sidecar.canonicalizer.rules_for_folded_view(view, folded);
                        folded_rules.push((
                            from.to_owned(),
                            to.to_owned(),
                            same_path,
                            rules.clone(),
                        ));
                        rules
                    })
                });
            let host_index =
                host_index.unwrap_or_else(|| batch_host(&mut hosts, &mut batch_hosts, sidecar, ""));
            let Some(host) = batch_hosts.get_mut(host_index) else {
                continue;
            };
            folded_urls += u64::from(canonical.mirrored);
            changed_static += u64::from(canonical.changed_static);
            let (rule_id, rules_version) = match &rules {
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

        progress.canonicalized = progress.urls;
        // A caller already gone must not have its URLs recorded: it would retry and be told they
        // are duplicates of answers it never received.
        if record && deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            metrics::counter!(telemetry::REQUESTS_REFUSED, "reason" => "deadline").increment(1);
            return Err(Status::deadline_exceeded(format!(
                "the caller's deadline passed after the {} URLs were canonicalized; none was \
                 recorded",
                request.urls.len()
            )));
        }
        sidecar.mirrors.observe_batch(watched);
        let (decisions, recorded_in) = self.seen(&answered, record).await;
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
                        Arc::clone(&host.counters)
                    });
                    suppressed += 1;
                    bytes_saved += sidecar.page_size_estimate(counters.as_deref());
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
            host.counters
                .urls_canonicalized
                .fetch_add(host.canonicalized, Ordering::Relaxed);
            host.counters
                .duplicates_suppressed
                .fetch_add(host.suppressed, Ordering::Relaxed);
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
        metrics::counter!(telemetry::URLS_FOLDED).increment(folded_urls);
        metrics::counter!(telemetry::DUPLICATES_SUPPRESSED).increment(suppressed);
        metrics::counter!(telemetry::ESTIMATED_BYTES_SAVED).increment(bytes_saved);
        metrics::histogram!(telemetry::CANONICALIZE_BATCH_SIZE).record(count as f64);
        progress.finish();
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
        let deadline = deadline_of(&request);
        self.answer_durably(request.into_inner(), "unary", deadline)
            .await
            .map(Response::new)
    }

    type CanonicalizeStreamStream = ReceiverStream<Result<CanonicalizeResponse, Status>>;

    async fn canonicalize_stream(
        &self,
        request: Request<Streaming<CanonicalizeRequest>>,
    ) -> Result<Response<Self::CanonicalizeStreamStream>, Status> {
        let deadline = deadline_of(&request);
        let admitted = request.extensions().get::<Admitted>().cloned();
        let mut inbound = request.into_inner();
        let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
        let service = self.clone();
        tokio::spawn(async move {
            while let Some(next) = inbound.next().await {
                // A refused batch ends the stream with its status, like a unary call would.
                let answer = match next {
                    Ok(request) => {
                        let encoded_len = request.encoded_len();
                        // A caller that has gone (its answers are no longer read) drops the batch
                        // being answered, as a unary caller's reset does: the rest of its URLs
                        // are counted abandoned and nothing more of it is recorded.
                        let answer = tokio::select! {
                            answer = service.answer_durably(request, "stream", deadline) => answer,
                            () = sender.closed() => break,
                        };
                        // The stream holds the batches it is answering, not all it sent.
                        if let Some(admitted) = &admitted {
                            admitted.release(encoded_len);
                        }
                        answer
                    }
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
