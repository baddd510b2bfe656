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
    // How long a whole batch takes on this machine (a dry run of other URLs records nothing).
    let started = std::time::Instant::now();
    client
        .canonicalize(CanonicalizeRequest {
            urls: batch(98, 100_000),
            dry_run: true,
            sequence: 0,
        })
        .await
        .expect("untimed batch");
    let whole = started.elapsed();
    let urls = batch(99, 100_000);
    let mut request = tonic::Request::new(CanonicalizeRequest {
        urls: urls.clone(),
        dry_run: false,
        sequence: 0,
    });
    // A third of what the whole batch takes: the server starts, then the caller gives up.
    request.set_timeout(whole / 3);
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
    // The server stopped at a chunk boundary: most of the batch was never recorded.
    let mut recorded = 0;
    for chunk in urls.chunks(10_000) {
        let answer = client
            .canonicalize(CanonicalizeRequest {
                urls: chunk.to_vec(),
                dry_run: true,
                sequence: 1,
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
    assert!(
        recorded < 90_000,
        "{recorded} of 100,000 URLs were processed for a caller that had timed out"
    );
    server.stop().await;
}
