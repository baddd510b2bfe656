//! The sidecar holds under load and abuse: bounded in-flight Canonicalize work, RESOURCE_EXHAUSTED
//! beyond it, and no work for callers whose deadline passed.

use std::time::Duration;

use undust::config::Knobs;
use undust::pb::{CanonicalizeRequest, Decision};

use crate::support::TestServer;

fn batch(tag: usize, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| format!("http://limits{tag}.example/catalogue/section/item/{i}?ref=list&page={i}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_large_batches_beyond_the_limits_are_refused_with_resource_exhausted() {
    let server = TestServer::start_with(
        None,
        Knobs {
            canonicalize_max_in_flight: Some(2),
            canonicalize_max_in_flight_bytes: Some(1024 * 1024),
            ..Knobs::default()
        },
    )
    .await;
    // 24 clients on their own connections, each sending one 10,000-URL batch (about 700 KB) at
    // the same moment: at most one fits the byte bound next to another.
    let mut clients = Vec::new();
    for _ in 0..24 {
        clients.push(server.canonicalizer().await);
    }
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(clients.len()));
    let calls: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(tag, mut client)| {
            let start = std::sync::Arc::clone(&start);
            tokio::spawn(async move {
                let urls = batch(tag, 10_000);
                start.wait().await;
                client
                    .canonicalize(CanonicalizeRequest {
                        urls,
                        dry_run: false,
                        sequence: tag as u64,
                        request_id: String::new(),
                    })
                    .await
                    .map(|response| response.into_inner().results.len())
            })
        })
        .collect();
    let (mut answered, mut refused) = (0, 0);
    for call in calls {
        match tokio::time::timeout(Duration::from_secs(60), call)
            .await
            .expect("every call ends within 60 s")
            .expect("task")
        {
            Ok(results) => {
                assert_eq!(results, 10_000);
                answered += 1;
            }
            Err(status) => {
                assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
                assert!(
                    status.message().contains("--canonicalize-max-in-flight"),
                    "the refusal names the knob: {}",
                    status.message()
                );
                refused += 1;
            }
        }
    }
    assert!(answered >= 1, "{answered} answered, {refused} refused");
    assert!(refused >= 1, "{answered} answered, {refused} refused");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_deadline_passed_is_not_processed_to_its_end() {
    let server = TestServer::start_with(
        None,
        Knobs {
            max_batch: Some(100_000),
            ..Knobs::default()
        },
    )
    .await;
    let mut client = server.canonicalizer().await;
    // The deadline counts from the request's arrival: it passes while the 100,000 URLs are still
    // being received and decoded, so the server gives up before recording any of them (a caller
    // that gave up must not find its URLs recorded as duplicates when it retries).
    let urls = batch(99, 100_000);
    let mut request = tonic::Request::new(CanonicalizeRequest {
        urls: urls.clone(),
        dry_run: false,
        sequence: 0,
        request_id: String::new(),
    });
    request.set_timeout(Duration::from_millis(1));
    let status = client
        .canonicalize(request)
        .await
        .expect_err("the deadline passes before the answer");
    assert!(
        matches!(
            status.code(),
            tonic::Code::DeadlineExceeded | tonic::Code::Cancelled
        ),
        "{status:?}"
    );
    let mut recorded = 0;
    for chunk in urls.chunks(10_000) {
        let answer = client
            .canonicalize(CanonicalizeRequest {
                urls: chunk.to_vec(),
                dry_run: true,
                sequence: 1,
                request_id: String::new(),
            })
            .await
            .expect("dry run")
            .into_inner();
        recorded += answer
            .results
            .iter()
            .filter(|r| r.decision == Decision::Duplicate as i32)
            .count();
    }
    assert_eq!(
        recorded, 0,
        "URLs of a caller whose deadline had passed were recorded"
    );
    // The same batch with time to spare is answered and recorded whole.
    let mut request = tonic::Request::new(CanonicalizeRequest {
        urls: urls.clone(),
        dry_run: false,
        sequence: 2,
        request_id: String::new(),
    });
    request.set_timeout(Duration::from_secs(60));
    let answer = client
        .canonicalize(request)
        .await
        .expect("answered within its deadline")
        .into_inner();
    assert!(answer
        .results
        .iter()
        .all(|r| r.decision == Decision::New as i32));
    server.stop().await;
}

/// Open files this process may hold (soft limit), from `/proc/self/limits`.
fn open_files_limit() -> usize {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            limits
                .lines()
                .find(|line| line.starts_with("Max open files"))
                .and_then(|line| line.split_whitespace().nth(3)?.parse().ok())
        })
        .unwrap_or(1_024)
}

async fn health_answers(addr: std::net::SocketAddr) -> bool {
    let check = async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .expect("uri")
            .connect()
            .await
            .ok()?;
        tonic_health::pb::health_client::HealthClient::new(channel)
            .check(tonic_health::pb::HealthCheckRequest {
                service: String::new(),
            })
            .await
            .ok()
    };
    tokio::time::timeout(Duration::from_secs(3), check)
        .await
        .ok()
        .flatten()
        .is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_under_a_flood_of_idle_connections_and_silent_ones_are_closed() {
    use tokio::io::AsyncReadExt;
    let server = TestServer::start().await;
    // Client and server ends both live in this process: two descriptors per connection.
    let limit = open_files_limit();
    let flood = 1_100.min(limit.saturating_sub(300) / 2);
    assert!(flood >= 100, "only {limit} open files allowed");
    let mut silent = Vec::with_capacity(flood);
    for _ in 0..flood {
        silent.push(
            tokio::net::TcpStream::connect(server.addr)
                .await
                .expect("connect"),
        );
    }
    assert!(
        health_answers(server.addr).await,
        "health under {flood} idle connections"
    );
    let (status, _) = crate::support::http_get(server.metrics_addr, "/metrics").await;
    assert!(status.contains("200"), "metrics under the flood: {status}");

    // Silent connections are closed by the server after the first-byte timeout (10 s).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut closed = 0;
    for stream in &mut silent {
        let mut byte = [0u8; 1];
        match tokio::time::timeout_at(deadline, stream.read(&mut byte)).await {
            Ok(Ok(0)) | Ok(Err(_)) => closed += 1,
            Ok(Ok(_)) | Err(_) => {}
        }
    }
    assert_eq!(
        closed, flood,
        "every silent connection was closed by the server"
    );
    let (_, metrics) = crate::support::http_get(server.metrics_addr, "/metrics").await;
    assert!(
        metrics.contains("undust_connections_refused_total"),
        "silent connections are counted"
    );
    assert!(health_answers(server.addr).await);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_ingest_streams_lose_their_slots_and_drain_ends_them_at_once() {
    let server = TestServer::start_with(
        None,
        Knobs {
            ingest_idle_timeout_secs: Some(1),
            ..Knobs::default()
        },
    )
    .await;
    // Four frozen clients take every ingest slot (MAX_CONCURRENT_STREAMS) and send nothing.
    let mut senders = Vec::new();
    let mut calls = Vec::new();
    for _ in 0..undust::service::ingest::MAX_CONCURRENT_STREAMS {
        let (sender, receiver) = tokio::sync::mpsc::channel::<undust::pb::ObservedPage>(1);
        senders.push(sender);
        let mut client = server.ingest().await;
        calls.push(tokio::spawn(async move {
            client
                .observe_pages(tokio_stream::wrappers::ReceiverStream::new(receiver))
                .await
        }));
    }
    for call in calls {
        let status = tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .expect("a silent stream ends within 10 s")
            .expect("task")
            .expect_err("a silent stream is not acknowledged");
        assert_eq!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");
        assert!(status.message().contains("resend"), "{status:?}");
    }
    // The slots are free again.
    let page = undust::pb::ObservedPage {
        url: "http://idle.example/a".into(),
        http_status: 200,
        content_type: "text/html".into(),
        body: b"<html><body><p>hello</p></body></html>".to_vec(),
        ..undust::pb::ObservedPage::default()
    };
    let summary = server
        .ingest()
        .await
        .observe_pages(tokio_stream::iter(vec![page]))
        .await
        .expect("ingest after the silent streams ended")
        .into_inner();
    assert_eq!(summary.received, 1);
    drop(senders);
    server.stop().await;

    // Draining: a silent stream (60 s idle timeout, 10 s grace) ends at once.
    let server = TestServer::start().await;
    let (sender, receiver) = tokio::sync::mpsc::channel::<undust::pb::ObservedPage>(1);
    let mut client = server.ingest().await;
    let call = tokio::spawn(async move {
        client
            .observe_pages(tokio_stream::wrappers::ReceiverStream::new(receiver))
            .await
    });
    // The stream is open once the server holds its slot: a second burst of probes is not needed,
    // the call future is polled by the spawned task; give the request a moment to arrive.
    tokio::task::yield_now().await;
    let started = std::time::Instant::now();
    server.stop().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the drain took {:?}; an idle stream must not hold it for the grace period",
        started.elapsed()
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), call).await;
    drop(sender);
}
