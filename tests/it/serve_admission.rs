//! Canonicalize admission happens when a call's headers arrive, before its body is read: a call
//! beyond `--canonicalize-max-in-flight` is refused at once, request bytes count against
//! `--canonicalize-max-in-flight-bytes` as they arrive, and the URLs of a caller that has gone are
//! counted as abandoned and never recorded.
//!
//! The calls are made by hand over HTTP/2 (`h2`), so a test controls when a body is sent (tonic's
//! client sends a unary body whole) and which `grpc-timeout` the server sees (tonic's client would
//! also give up at it).

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use h2::client::{ResponseFuture, SendRequest};
use prost::Message;
use tonic::codegen::http;
use undust::config::Knobs;
use undust::pb::{CanonicalizeRequest, Decision};

use crate::support::{http_get, TestServer};

/// How long a test waits for an answer it expects.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// An HTTP/2 connection to the sidecar's gRPC listener.
async fn connect(addr: SocketAddr) -> SendRequest<Bytes> {
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (client, connection) = h2::client::Builder::new()
        .initial_window_size(8 * 1024 * 1024)
        .handshake(tcp)
        .await
        .expect("HTTP/2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// Starts a Canonicalize call: its headers are sent, its body is left to the caller.
async fn start_call(
    client: &mut SendRequest<Bytes>,
    addr: SocketAddr,
    grpc_timeout: Option<&str>,
) -> (ResponseFuture, h2::SendStream<Bytes>) {
    let mut request = http::Request::builder()
        .method("POST")
        .uri(format!(
            "http://{addr}/undust.v1.Canonicalizer/Canonicalize"
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(timeout) = grpc_timeout {
        request = request.header("grpc-timeout", timeout);
    }
    let ready = client.clone().ready().await.expect("stream available");
    *client = ready;
    client
        .send_request(request.body(()).expect("request"), false)
        .expect("send headers")
}

/// A batch as a whole gRPC frame: uncompressed flag, length, message.
fn frame(request: &CanonicalizeRequest) -> Bytes {
    let message = request.encode_to_vec();
    let mut framed = Vec::with_capacity(message.len() + 5);
    framed.push(0);
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(&message);
    Bytes::from(framed)
}

fn batch(tag: &str, count: usize) -> CanonicalizeRequest {
    CanonicalizeRequest {
        urls: (0..count)
            .map(|i| format!("http://admission-{tag}.example/catalogue/item/{i}?ref=list&page={i}"))
            .collect(),
        dry_run: false,
        sequence: 0,
        request_id: String::new(),
    }
}

/// A call's gRPC status: code, message, and whether it came in a trailers-only response (the
/// headers), i.e. before any answer was built.
struct CallStatus {
    code: String,
    message: String,
    trailers_only: bool,
}

async fn status_of(response: ResponseFuture) -> CallStatus {
    let response = tokio::time::timeout(ANSWER_WITHIN, response)
        .await
        .expect("the call is answered in time")
        .expect("response headers");
    status_in(response).await
}

async fn status_in(response: http::Response<h2::RecvStream>) -> CallStatus {
    let (parts, mut body) = response.into_parts();
    let from = |headers: &http::HeaderMap| {
        headers.get("grpc-status").map(|code| {
            (
                code.to_str().unwrap_or_default().to_owned(),
                headers
                    .get("grpc-message")
                    .and_then(|message| message.to_str().ok())
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
    };
    if let Some((code, message)) = from(&parts.headers) {
        return CallStatus {
            code,
            message,
            trailers_only: true,
        };
    }
    let drained = async {
        while let Some(data) = body.data().await {
            let data = data.expect("response body");
            let _ = body.flow_control().release_capacity(data.len());
        }
        body.trailers().await.expect("trailers")
    };
    let trailers = tokio::time::timeout(ANSWER_WITHIN, drained)
        .await
        .expect("the answer ends in time")
        .expect("a gRPC answer ends with trailers");
    let (code, message) = from(&trailers).expect("grpc-status in the trailers");
    CallStatus {
        code,
        message,
        trailers_only: false,
    }
}

/// The value of an unlabelled metric on the sidecar's `/metrics` (0 when not yet exported). The
/// recorder is shared by every server of this test process: read it as "at least".
async fn metric(server: &TestServer, name: &str) -> f64 {
    let (_, text) = http_get(server.metrics_addr, "/metrics").await;
    text.lines()
        .filter_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .find_map(|value| value.trim().parse().ok())
        .unwrap_or(0.0)
}

/// A server that takes batches of `urls` URLs, the other bounds at their defaults.
async fn server_for_batches_of(urls: usize) -> TestServer {
    TestServer::start_with(
        None,
        Knobs {
            max_batch: Some(urls),
            ..Knobs::default()
        },
    )
    .await
}

/// URLs counted abandoned since the counter read `before`, waiting up to a second for the first.
async fn abandoned_since(server: &TestServer, before: f64) -> f64 {
    let mut abandoned = 0.0;
    for _ in 0..20 {
        abandoned = metric(server, "undust_canonicalize_urls_abandoned_total").await - before;
        if abandoned > 0.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    abandoned
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_beyond_the_in_flight_limit_is_refused_before_its_body_is_read() {
    let server = TestServer::start_with(
        None,
        Knobs {
            canonicalize_max_in_flight: Some(1),
            ..Knobs::default()
        },
    )
    .await;
    let mut client = connect(server.addr).await;
    // Two calls send their headers and keep their bodies open: nothing of them is sent. One takes
    // the only slot (which one is up to the server's tasks); the other must be answered without
    // the server waiting for a body that never comes (before admission moved ahead of the body,
    // both waited for their bodies forever).
    let (first, first_body) = start_call(&mut client, server.addr, None).await;
    let (second, second_body) = start_call(&mut client, server.addr, None).await;
    let (mut first, mut second) = (Box::pin(first), Box::pin(second));
    let answered = tokio::time::timeout(ANSWER_WITHIN, async {
        tokio::select! {
            refused = &mut first => (refused, second, second_body, first_body),
            refused = &mut second => (refused, first, first_body, second_body),
        }
    })
    .await
    .expect("one of the calls is answered in time");
    let (refused, mut admitted, admitted_body, _refused_body) = answered;
    let refused = status_in(refused.expect("response headers")).await;
    assert_eq!(refused.code, "8", "RESOURCE_EXHAUSTED: {}", refused.message);
    assert!(refused.trailers_only, "refused before any answer was built");
    assert!(
        refused.message.contains("--canonicalize-max-in-flight"),
        "the refusal names the flag: {}",
        refused.message
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut admitted)
            .await
            .is_err(),
        "the admitted call waits for its body"
    );

    // The admitted caller goes away (its stream is reset): its slot is free again.
    drop(admitted);
    drop(admitted_body);
    let mut canonicalizer = server.canonicalizer().await;
    let mut answered = false;
    for _ in 0..50 {
        match canonicalizer.canonicalize(batch("after", 3)).await {
            Ok(answer) => {
                assert_eq!(answer.into_inner().results.len(), 3);
                answered = true;
                break;
            }
            Err(status) => {
                assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    assert!(
        answered,
        "the slot of a caller that went away was given back"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bytes_count_as_they_arrive_and_a_call_past_the_byte_bound_is_refused() {
    const MAX_BYTES: u64 = 1024 * 1024;
    let server = TestServer::start_with(
        None,
        Knobs {
            canonicalize_max_in_flight: Some(8),
            canonicalize_max_in_flight_bytes: Some(MAX_BYTES),
            ..Knobs::default()
        },
    )
    .await;
    // Two batches of about 650 KB each: either fits the bound alone, not both together.
    let first_batch = batch("first", 8_000);
    let second_batch = batch("second", 8_000);
    let (first_frame, second_frame) = (frame(&first_batch), frame(&second_batch));
    assert!(first_frame.len() as u64 * 2 > MAX_BYTES && (first_frame.len() as u64) < MAX_BYTES);
    let mut client = connect(server.addr).await;

    // The first call sends all of its batch but its last byte, and keeps the body open.
    let (mut first, mut first_body) = start_call(&mut client, server.addr, None).await;
    let sent = first_frame.len() - 1;
    first_body
        .send_data(first_frame.slice(..sent), false)
        .expect("send the first body");
    // Bounded wait until the server holds those bytes (the gauge is shared by this process's
    // servers, so "at least").
    for _ in 0..100 {
        if metric(&server, "undust_canonicalize_in_flight_bytes").await >= sent as f64 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The second call's whole batch would take the bytes held past the bound: refused as its
    // bytes arrive (before, it was admitted, answered, and the bound held nothing back).
    let (second, mut second_body) = start_call(&mut client, server.addr, None).await;
    second_body
        .send_data(second_frame, true)
        .expect("send the second body");
    let refused = status_of(second).await;
    assert_eq!(refused.code, "8", "RESOURCE_EXHAUSTED: {}", refused.message);
    assert!(
        refused
            .message
            .contains("--canonicalize-max-in-flight-bytes"),
        "the refusal names the flag: {}",
        refused.message
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut first)
            .await
            .is_err(),
        "the first call is still receiving"
    );

    // The first call ends its body and is answered whole.
    first_body
        .send_data(first_frame.slice(sent..), true)
        .expect("send the last byte");
    let answered = status_of(first).await;
    assert_eq!(answered.code, "0", "answered: {}", answered.message);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_of_a_caller_whose_deadline_passed_are_counted_abandoned_and_not_recorded() {
    const URLS: usize = 300_000;
    let server = server_for_batches_of(URLS).await;
    let mut client = connect(server.addr).await;
    // The deadline counts from the headers' arrival. It must pass while the batch is being
    // canonicalized, after its 21 MB were received and decoded: as that time depends on the
    // machine, deadlines grow by half until one lands there (a shorter one drops the call before
    // its URLs are known, a longer one gets the answer).
    let mut deadline_ms = 20u64;
    let mut landed = None;
    for attempt in 0..16 {
        let request = batch(&format!("late{attempt}"), URLS);
        let before = metric(&server, "undust_canonicalize_urls_abandoned_total").await;
        let timeout = format!("{deadline_ms}m");
        let (call, mut body) = start_call(&mut client, server.addr, Some(&timeout)).await;
        // The server may have given up before the whole body was sent.
        let _ = body.send_data(frame(&request), true);
        let status = status_of(call).await;
        assert_ne!(
            status.code, "0",
            "answered within {deadline_ms} ms: no deadline landed while the batch was processed"
        );
        assert!(
            status.code == "4" || status.code == "1",
            "DEADLINE_EXCEEDED or CANCELLED: {} {}",
            status.code,
            status.message
        );
        let abandoned = abandoned_since(&server, before).await;
        if abandoned > 0.0 {
            landed = Some((request, abandoned));
            break;
        }
        deadline_ms = deadline_ms * 3 / 2;
    }
    let (request, abandoned) = landed.expect("a deadline landed while a batch was processed");
    assert!(
        abandoned >= (URLS / 2) as f64,
        "most URLs counted abandoned: {abandoned} of {URLS} (deadline {deadline_ms} ms)"
    );

    // None of the batch was recorded: a dry run finds it all new.
    let answer = server
        .canonicalizer()
        .await
        .canonicalize(CanonicalizeRequest {
            dry_run: true,
            ..request
        })
        .await
        .expect("dry run")
        .into_inner();
    let recorded = answer
        .results
        .iter()
        .filter(|result| result.decision == Decision::Duplicate as i32)
        .count();
    assert_eq!(recorded, 0, "URLs of a caller that had gone were recorded");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_caller_leaves_mid_batch_stops_costing_work() {
    const URLS: usize = 300_000;
    let server = server_for_batches_of(URLS).await;
    let mut client = connect(server.addr).await;
    // One batch, the stream left open; the caller then leaves. It must leave while the server
    // is answering the batch, after its 21 MB arrived and were decoded: as that time depends on
    // the machine, the wait grows by half until a departure lands there (an earlier one ends the
    // stream before the batch is known, a later one finds it answered).
    let mut wait_ms = 20u64;
    let mut abandoned = 0.0;
    for attempt in 0..16 {
        let framed = frame(&batch(&format!("stream-gone{attempt}"), URLS));
        let ready = client.clone().ready().await.expect("stream available");
        client = ready;
        let (call, mut body) = client
            .send_request(
                http::Request::builder()
                    .method("POST")
                    .uri(format!(
                        "http://{}/undust.v1.Canonicalizer/CanonicalizeStream",
                        server.addr
                    ))
                    .header("content-type", "application/grpc")
                    .header("te", "trailers")
                    .body(())
                    .expect("request"),
                false,
            )
            .expect("send headers");
        let before = metric(&server, "undust_canonicalize_urls_abandoned_total").await;
        body.send_data(framed, false).expect("send the batch");
        tokio::time::sleep(Duration::from_millis(wait_ms)).await;
        body.send_reset(h2::Reason::CANCEL);
        drop(call);
        abandoned = abandoned_since(&server, before).await;
        if abandoned > 0.0 {
            break;
        }
        wait_ms = wait_ms * 3 / 2;
    }
    assert!(
        abandoned >= (URLS / 2) as f64,
        "most URLs of a batch whose caller left counted abandoned: {abandoned} of {URLS} \
         (last wait {wait_ms} ms)"
    );
    // Its slot and bytes came back.
    let mut held = f64::MAX;
    for _ in 0..100 {
        held = metric(&server, "undust_canonicalize_in_flight_bytes").await;
        if held == 0.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(held, 0.0, "bytes still held after the caller left");
    server.stop().await;
}
