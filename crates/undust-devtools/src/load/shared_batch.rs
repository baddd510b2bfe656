//! `undust load --shared-batch-bytes N`: many callers sending one big Canonicalize batch at once,
//! the load that grew the sidecar without bound before its in-flight limits (issue 14, item 4).
//!
//! The batch is generated and encoded once, gRPC frame included, into one [`Bytes`]; each call's
//! body is a clone of it (a reference count, not a copy), and answers are drained frame by frame
//! and counted, never decoded. So the load tool holds about one batch whatever `--connections`
//! says, and the memory measured is the sidecar's. The HTTP/2 request is made by hand on tonic's
//! channel for that reason: tonic's own client encodes each request into a buffer of its own.
//!
//! With `--deadline-ms`, each call carries that `grpc-timeout` and the caller gives up at it (its
//! stream is reset), as a frontier with a deadline does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use parking_lot::Mutex;
use prost::Message;
use tonic::codegen::http::{self, HeaderMap};
use tonic::codegen::{Bytes, Service};
use tonic::transport::{Channel, Endpoint};

use super::{percentile, url_mix, LoadArgs};
use crate::pb::CanonicalizeRequest;

/// Largest batch `--shared-batch-bytes` builds.
pub const MAX_SHARED_BATCH_BYTES: usize = 512 * 1024 * 1024;

/// The Canonicalize method's path.
const CANONICALIZE_PATH: &str = "/undust.v1.Canonicalizer/Canonicalize";

/// How each call ended.
#[derive(Default)]
struct Outcomes {
    answered: AtomicU64,
    exhausted: AtomicU64,
    /// The sidecar answered DEADLINE_EXCEEDED or CANCELLED.
    deadline_by_server: AtomicU64,
    /// The caller gave up at its deadline before any answer.
    gave_up: AtomicU64,
    other: AtomicU64,
    answer_bytes: AtomicU64,
}

/// One batch of generated URLs of about `bytes` encoded bytes, as a whole gRPC frame (the
/// uncompressed flag, the length, the message), and its URL count.
fn framed_batch(bytes: usize, dry_run: bool) -> Result<(Bytes, usize), String> {
    // Every generated URL is longer than 40 bytes; each costs its length and 2 or 3 bytes of
    // field tag and length in the message.
    let mut urls = Vec::new();
    let mut encoded = 0usize;
    for url in url_mix(bytes / 40 + 1) {
        if encoded >= bytes {
            break;
        }
        encoded += url.len() + 3;
        urls.push(url);
    }
    let count = urls.len();
    let request = CanonicalizeRequest {
        urls,
        dry_run,
        sequence: 0,
        request_id: String::new(),
    };
    let length = u32::try_from(request.encoded_len())
        .map_err(|_| format!("a batch of {bytes} bytes does not fit a gRPC frame"))?;
    let mut frame = Vec::with_capacity(5 + length as usize);
    frame.push(0);
    frame.extend_from_slice(&length.to_be_bytes());
    request
        .encode(&mut frame)
        .map_err(|err| format!("encode the batch: {err}"))?;
    Ok((Bytes::from(frame), count))
}

/// The grpc-status of an answer (trailers, or headers for a trailers-only answer).
fn grpc_status(headers: &HeaderMap) -> Option<tonic::Code> {
    headers
        .get("grpc-status")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<i32>().ok())
        .map(tonic::Code::from_i32)
}

/// Sends the shared batch once on `channel` and drains the answer; the gRPC status it ended with
/// and the answer's bytes, or `None` when the caller's deadline passed first.
async fn call_once(
    channel: &mut Channel,
    batch: Bytes,
    deadline: Option<Duration>,
) -> Result<Option<(tonic::Code, u64)>, String> {
    let mut request = http::Request::builder()
        .method(http::Method::POST)
        .uri(CANONICALIZE_PATH)
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(deadline) = deadline {
        request = request.header("grpc-timeout", format!("{}m", deadline.as_millis()));
    }
    let request = request
        .body(tonic::body::Body::new(Full::new(batch)))
        .map_err(|err| err.to_string())?;
    std::future::poll_fn(|cx| Service::poll_ready(channel, cx))
        .await
        .map_err(|err| err.to_string())?;
    let response = match Service::call(channel, request).await {
        Ok(response) => response,
        Err(err) => {
            // tonic's channel enforces the `grpc-timeout` it sends: the caller gave up.
            let mut source = std::error::Error::source(&err);
            let mut message = err.to_string();
            while let Some(cause) = source {
                if cause.is::<tonic::TimeoutExpired>() {
                    return Ok(None);
                }
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            return Err(message);
        }
    };
    if let Some(code) = grpc_status(response.headers()) {
        return Ok(Some((code, 0)));
    }
    let mut body = response.into_body();
    let mut bytes = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|err| err.to_string())?;
        if let Some(data) = frame.data_ref() {
            bytes += data.len() as u64;
        } else if let Some(trailers) = frame.trailers_ref() {
            let code = grpc_status(trailers).unwrap_or(tonic::Code::Unknown);
            return Ok(Some((code, bytes)));
        }
    }
    Ok(Some((tonic::Code::Unknown, bytes)))
}

/// Runs the shared-batch mode (see the module docs).
pub async fn drive_shared(args: &LoadArgs, endpoint: Endpoint) -> Result<(), String> {
    let (batch, count) = framed_batch(args.shared_batch_bytes, args.dry_run)?;
    let deadline = (args.deadline_ms > 0).then(|| Duration::from_millis(args.deadline_ms));
    eprintln!(
        "undust load: one shared batch of {count} URLs ({} bytes), {} callers, deadline {}, {} s",
        batch.len(),
        args.connections,
        deadline.map_or_else(|| "none".to_owned(), |d| format!("{d:?}")),
        args.seconds
    );
    let run_until = Instant::now() + Duration::from_secs(args.seconds);
    let calls = Arc::new(AtomicU64::new(0));
    let outcomes = Arc::new(Outcomes::default());
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let mut callers = Vec::new();
    for _ in 0..args.connections {
        let mut channel = endpoint
            .connect()
            .await
            .map_err(|err| format!("connect {}: {err}", args.addr))?;
        let (batch, calls, outcomes, latencies) = (
            batch.clone(),
            Arc::clone(&calls),
            Arc::clone(&outcomes),
            Arc::clone(&latencies),
        );
        let max_batches = args.max_batches;
        callers.push(tokio::spawn(async move {
            let mut local = Vec::new();
            while Instant::now() < run_until {
                if calls.fetch_add(1, Ordering::Relaxed) >= max_batches {
                    break;
                }
                let at = Instant::now();
                let call = call_once(&mut channel, batch.clone(), deadline);
                let ended = match deadline {
                    Some(deadline) => tokio::time::timeout(deadline, call)
                        .await
                        .unwrap_or(Ok(None)),
                    None => call.await,
                };
                let outcome = match ended {
                    Ok(None) => &outcomes.gave_up,
                    Ok(Some((tonic::Code::Ok, bytes))) => {
                        local.push(at.elapsed());
                        outcomes.answer_bytes.fetch_add(bytes, Ordering::Relaxed);
                        &outcomes.answered
                    }
                    Ok(Some((tonic::Code::ResourceExhausted, _))) => &outcomes.exhausted,
                    Ok(Some((tonic::Code::DeadlineExceeded | tonic::Code::Cancelled, _))) => {
                        &outcomes.deadline_by_server
                    }
                    Ok(Some((code, _))) => {
                        eprintln!("undust load: batch answered {code:?}");
                        &outcomes.other
                    }
                    Err(err) => {
                        eprintln!("undust load: batch failed: {err}");
                        &outcomes.other
                    }
                };
                outcome.fetch_add(1, Ordering::Relaxed);
                if std::ptr::eq(outcome, &outcomes.other) {
                    // Anything but an answer, shedding or a deadline ends this caller.
                    break;
                }
                if std::ptr::eq(outcome, &outcomes.exhausted) {
                    // Shed: back off a little before the retry, as a client would.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            latencies.lock().extend(local);
        }));
    }
    for caller in callers {
        let _ = caller.await;
    }
    let elapsed = started.elapsed();
    let mut answered = std::mem::take(&mut *latencies.lock());
    answered.sort_unstable();
    let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    println!(
        "shared batches: {} answered ({} URLs, {} answer bytes) in {:.2} s",
        load(&outcomes.answered),
        load(&outcomes.answered) * count as u64,
        load(&outcomes.answer_bytes),
        elapsed.as_secs_f64()
    );
    println!(
        "batch latency (answered): p50 {:?}, p99 {:?}, max {:?} over {} batches",
        percentile(&answered, 0.5),
        percentile(&answered, 0.99),
        answered.last().copied().unwrap_or_default(),
        answered.len()
    );
    println!(
        "RESOURCE_EXHAUSTED: {}; deadline exceeded or cancelled by the sidecar: {}; given up by \
         the caller at its deadline: {}; other failures: {}",
        load(&outcomes.exhausted),
        load(&outcomes.deadline_by_server),
        load(&outcomes.gave_up),
        load(&outcomes.other)
    );
    if load(&outcomes.other) > 0 {
        return Err("some batches failed (see above)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared frame is one gRPC message of about the size asked, which decodes as the batch.
    #[test]
    fn the_shared_frame_is_one_grpc_message_of_the_size_asked() {
        let (frame, count) = framed_batch(100_000, true).expect("batch");
        assert_eq!(frame[0], 0, "uncompressed");
        let length = u32::from_be_bytes([frame[1], frame[2], frame[3], frame[4]]) as usize;
        assert_eq!(length + 5, frame.len());
        // Each URL is counted with 3 bytes of tag and length; most need 2, so the batch comes
        // out a little smaller than asked.
        assert!((95_000..=100_100).contains(&length), "{length} bytes");
        let request = CanonicalizeRequest::decode(&frame[5..]).expect("decodes");
        assert_eq!(request.urls.len(), count);
        assert!(request.dry_run);
    }
}
