//! Canonicalize and CanonicalizeStream through a real client: decisions, order, dry runs, limits.

use tokio_stream::StreamExt;
use undust::config::Knobs;
use undust::pb::{CanonicalizeRequest, Decision};

use crate::support::TestServer;

fn request(urls: &[&str]) -> CanonicalizeRequest {
    CanonicalizeRequest {
        urls: urls.iter().map(|u| (*u).to_owned()).collect(),
        dry_run: false,
        sequence: 0,
        request_id: String::new(),
    }
}

#[tokio::test]
async fn repeats_are_duplicates_within_and_across_batches() {
    let server = TestServer::start().await;
    let mut client = server.canonicalizer().await;
    let first = client
        .canonicalize(request(&[
            "HTTP://Example.COM:80/a/./b/../c?utm_source=news&id=7#top",
            "http://example.com/a/c?id=7",
            "http://example.com/other",
        ]))
        .await
        .expect("canonicalize")
        .into_inner();
    let decisions: Vec<i32> = first.results.iter().map(|r| r.decision).collect();
    assert_eq!(
        decisions,
        vec![
            Decision::New as i32,
            Decision::Duplicate as i32,
            Decision::New as i32
        ]
    );
    assert_eq!(first.results[0].canonical, "http://example.com/a/c?id=7");
    assert_eq!(first.results[0].enqueue_url, "http://example.com/a/c?id=7");
    assert_eq!(
        first.results[1].enqueue_url, "http://example.com/a/c?id=7",
        "a duplicate points at the first occurrence"
    );
    assert!(first
        .results
        .iter()
        .all(|r| r.rule_id.is_empty() && r.rules_version == 0));

    let second = client
        .canonicalize(request(&[
            "http://EXAMPLE.com/other#x",
            "http://example.com/new",
        ]))
        .await
        .expect("canonicalize")
        .into_inner();
    assert_eq!(second.results[0].decision, Decision::Duplicate as i32);
    assert_eq!(second.results[1].decision, Decision::New as i32);
    server.stop().await;
}

#[tokio::test]
async fn dry_runs_look_without_recording() {
    let server = TestServer::start().await;
    let mut client = server.canonicalizer().await;
    let mut dry = request(&["http://example.com/x", "http://example.com/x"]);
    dry.dry_run = true;
    let answer = client
        .canonicalize(dry.clone())
        .await
        .expect("dry run")
        .into_inner();
    assert_eq!(answer.results[0].decision, Decision::New as i32);
    assert_eq!(
        answer.results[1].decision,
        Decision::Duplicate as i32,
        "a repeat inside a dry-run batch is still a duplicate"
    );
    let again = client
        .canonicalize(dry)
        .await
        .expect("dry run")
        .into_inner();
    assert_eq!(
        again.results[0].decision,
        Decision::New as i32,
        "the dry run recorded nothing"
    );
    server.stop().await;
}

#[tokio::test]
async fn invalid_urls_get_a_reason_and_never_fail_the_batch() {
    let server = TestServer::start().await;
    let mut client = server.canonicalizer().await;
    let long = format!("http://example.com/{}", "a".repeat(9_000));
    let answer = client
        .canonicalize(request(&[
            "",
            "not a url",
            "ftp://example.com/file",
            &long,
            "http://[::1",
            "http://ok.example/",
        ]))
        .await
        .expect("canonicalize")
        .into_inner();
    assert_eq!(answer.results.len(), 6);
    for result in &answer.results[..5] {
        assert_eq!(result.decision, Decision::Invalid as i32, "{result:?}");
        assert!(!result.invalid_reason.is_empty());
        assert!(result.canonical.is_empty() && result.enqueue_url.is_empty());
    }
    assert!(
        answer.results[3].invalid_reason.contains("8192"),
        "the reason names the limit: {}",
        answer.results[3].invalid_reason
    );
    assert_eq!(answer.results[5].decision, Decision::New as i32);
    server.stop().await;
}

#[tokio::test]
async fn an_oversized_batch_is_refused_whole_with_the_limit_named() {
    let server = TestServer::start_with(
        None,
        Knobs {
            max_batch: Some(3),
            ..Knobs::default()
        },
    )
    .await;
    let mut client = server.canonicalizer().await;
    let status = client
        .canonicalize(request(&[
            "http://a.com/1",
            "http://a.com/2",
            "http://a.com/3",
            "http://a.com/4",
        ]))
        .await
        .expect_err("4 URLs exceed a limit of 3");
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(
        status.message().contains('3') && status.message().contains("max-batch"),
        "{}",
        status.message()
    );
    // Nothing of the refused batch was recorded.
    let answer = client
        .canonicalize(request(&["http://a.com/1"]))
        .await
        .expect("ok")
        .into_inner();
    assert_eq!(answer.results[0].decision, Decision::New as i32);
    server.stop().await;
}

#[tokio::test]
async fn an_oversized_message_is_refused_with_out_of_range() {
    let server = TestServer::start_with(
        None,
        Knobs {
            max_message_bytes: Some(64 * 1024),
            ..Knobs::default()
        },
    )
    .await;
    let mut client = server.canonicalizer().await;
    let urls: Vec<String> = (0..2_000)
        .map(|i| format!("http://example.com/page/{i}/with/a/long/path"))
        .collect();
    let status = client
        .canonicalize(CanonicalizeRequest {
            urls,
            dry_run: false,
            sequence: 0,
            request_id: String::new(),
        })
        .await
        .expect_err("about 90 KB exceeds 64 KiB");
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
    server.stop().await;
}

#[tokio::test]
async fn the_stream_answers_each_request_in_order_with_its_sequence() {
    let server = TestServer::start().await;
    let mut client = server.canonicalizer().await;
    let requests = (0..20u64).map(|i| CanonicalizeRequest {
        urls: vec![format!("http://stream.example/{}", i % 10)],
        dry_run: false,
        sequence: 1_000 + i,
        request_id: String::new(),
    });
    let mut responses = client
        .canonicalize_stream(tokio_stream::iter(requests))
        .await
        .expect("stream")
        .into_inner();
    let mut seen = Vec::new();
    while let Some(response) = responses.next().await {
        let response = response.expect("response");
        seen.push((response.sequence, response.results[0].decision));
    }
    assert_eq!(seen.len(), 20);
    for (i, (sequence, decision)) in seen.iter().enumerate() {
        assert_eq!(*sequence, 1_000 + i as u64);
        let expected = if i < 10 {
            Decision::New
        } else {
            Decision::Duplicate
        };
        assert_eq!(*decision, expected as i32, "request {i}");
    }
    server.stop().await;
}

#[tokio::test]
async fn concurrent_batches_with_the_same_urls_get_exactly_one_new_each() {
    let server = TestServer::start().await;
    let urls: Vec<String> = (0..500)
        .map(|i| format!("http://race.example/{i}"))
        .collect();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let mut client = server.canonicalizer().await;
        let urls = urls.clone();
        tasks.push(tokio::spawn(async move {
            let answer = client
                .canonicalize(CanonicalizeRequest {
                    urls,
                    dry_run: false,
                    sequence: 0,
                    request_id: String::new(),
                })
                .await
                .expect("canonicalize")
                .into_inner();
            answer
                .results
                .iter()
                .filter(|r| r.decision == Decision::New as i32)
                .count()
        }));
    }
    let mut news = 0;
    for task in tasks {
        news += task.await.expect("task");
    }
    assert_eq!(news, 500);
    server.stop().await;
}

#[tokio::test]
async fn a_batch_retried_under_its_request_id_gets_its_first_answer() {
    let server = TestServer::start().await;
    let mut client = server.canonicalizer().await;
    let urls = [
        "http://retry.example/a",
        "http://retry.example/b?utm_source=x",
    ];
    let with_id = |id: &str, urls: &[&str]| CanonicalizeRequest {
        request_id: id.to_owned(),
        ..request(urls)
    };
    let decisions = |response: &undust::pb::CanonicalizeResponse| -> Vec<i32> {
        response.results.iter().map(|r| r.decision).collect()
    };
    let first = client
        .canonicalize(with_id("batch-1", &urls))
        .await
        .expect("first attempt")
        .into_inner();
    assert_eq!(decisions(&first), vec![Decision::New as i32; 2]);
    // The answer was lost on the way: the client retries the batch under its id, twice at once.
    let (mut one, mut two) = (client.clone(), client.clone());
    let (again, concurrent) = tokio::join!(
        one.canonicalize(with_id("batch-1", &urls)),
        two.canonicalize(with_id("batch-1", &urls)),
    );
    for retry in [again, concurrent] {
        let retry = retry.expect("retry").into_inner();
        assert_eq!(
            retry.results, first.results,
            "the first answer, not DUPLICATE"
        );
    }
    // Another batch with the same URLs is a repeat.
    let other = client
        .canonicalize(with_id("batch-2", &urls))
        .await
        .expect("another batch")
        .into_inner();
    assert_eq!(decisions(&other), vec![Decision::Duplicate as i32; 2]);
    // An id reused for different URLs is a client bug, refused with a message.
    let reused = client
        .canonicalize(with_id("batch-1", &["http://retry.example/c"]))
        .await
        .expect_err("an id names one batch");
    assert_eq!(reused.code(), tonic::Code::FailedPrecondition);
    assert!(reused.message().contains("different batch"), "{reused:?}");
    server.stop().await;
}
