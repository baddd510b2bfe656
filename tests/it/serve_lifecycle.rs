//! Health transitions, graceful shutdown, metrics exposition, configuration errors.

use std::time::Duration;

use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;
use undust::pb::CanonicalizeRequest;

use crate::support::{http_get, TestServer};

async fn health_of(server: &TestServer, service: &str) -> Result<i32, tonic::Status> {
    let mut health = HealthClient::new(server.channel().await);
    health
        .check(HealthCheckRequest {
            service: service.to_owned(),
        })
        .await
        .map(|r| r.into_inner().status)
}

#[tokio::test]
async fn health_reports_serving_for_the_sidecar_and_each_service() {
    let server = TestServer::start().await;
    for service in ["", "undust.v1.Canonicalizer", "undust.v1.Ingest"] {
        assert_eq!(
            health_of(&server, service).await.expect("health"),
            ServingStatus::Serving as i32,
            "{service:?}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn shutdown_turns_health_not_serving_and_lets_watchers_see_it() {
    let server = TestServer::start().await;
    let mut health = HealthClient::new(server.channel().await);
    let mut watch = health
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect("watch")
        .into_inner();
    let first = watch
        .message()
        .await
        .expect("first status")
        .expect("a status");
    assert_eq!(first.status, ServingStatus::Serving as i32);
    let stopping = tokio::spawn(server.stop());
    // The sidecar turns NOT_SERVING before it stops its listeners, so a watcher always sees it.
    let update = tokio::time::timeout(Duration::from_secs(10), watch.message())
        .await
        .expect("a status within 10 s")
        .expect("the watch stream is still up")
        .expect("NOT_SERVING arrives before the stream ends");
    assert_eq!(update.status, ServingStatus::NotServing as i32);
    drop(watch);
    stopping.await.expect("stopped cleanly");
}

/// A call in flight when shutdown begins is answered in full: the stream is opened and answered
/// once before the drain, the drain is seen to have begun (health turned NOT_SERVING on a watch),
/// and only then is the next batch sent on the same stream.
#[tokio::test]
async fn in_flight_calls_finish_during_the_drain() {
    let server = TestServer::start().await;
    let channel = server.channel().await;
    let mut watch = HealthClient::new(channel.clone())
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect("watch")
        .into_inner();
    let first = watch.message().await.expect("status").expect("a status");
    assert_eq!(first.status, ServingStatus::Serving as i32);

    let (batches, requests) = tokio::sync::mpsc::channel::<CanonicalizeRequest>(2);
    let mut client = undust::pb::canonicalizer_client::CanonicalizerClient::new(channel)
        .max_decoding_message_size(64 * 1024 * 1024);
    let batch = |sequence: u64| CanonicalizeRequest {
        urls: (0..10_000)
            .map(|i| format!("http://drain.example/{sequence}/{i}?utm_medium=x"))
            .collect(),
        dry_run: false,
        sequence,
        request_id: String::new(),
    };
    batches.send(batch(1)).await.expect("send the first batch");
    let mut answers = client
        .canonicalize_stream(tokio_stream::wrappers::ReceiverStream::new(requests))
        .await
        .expect("open the stream")
        .into_inner();
    let answer = answers.message().await.expect("answer").expect("an answer");
    assert_eq!((answer.sequence, answer.results.len()), (1, 10_000));

    let stopping = tokio::spawn(server.stop());
    let update = tokio::time::timeout(Duration::from_secs(10), watch.message())
        .await
        .expect("a status within 10 s")
        .expect("the watch stream is still up")
        .expect("NOT_SERVING arrives");
    assert_eq!(update.status, ServingStatus::NotServing as i32, "draining");
    drop(watch);

    batches.send(batch(2)).await.expect("send during the drain");
    let answer = tokio::time::timeout(Duration::from_secs(10), answers.message())
        .await
        .expect("answered within 10 s")
        .expect("the in-flight stream is not cut off")
        .expect("an answer");
    assert_eq!((answer.sequence, answer.results.len()), (2, 10_000));
    drop(batches);
    assert!(
        answers.message().await.expect("a clean end").is_none(),
        "the stream ends when the client closes it"
    );
    stopping.await.expect("stopped cleanly");
}

#[tokio::test]
async fn metrics_are_exposed_in_prometheus_text_without_hosts_or_urls() {
    let server = TestServer::start().await;
    let mut client = server.canonicalizer().await;
    client
        .canonicalize(CanonicalizeRequest {
            urls: vec![
                "http://metrics.example/a".into(),
                "http://metrics.example/a".into(),
                "bad".into(),
            ],
            dry_run: false,
            sequence: 0,
            request_id: String::new(),
        })
        .await
        .expect("canonicalize");
    let (status, body) = http_get(server.metrics_addr, "/metrics").await;
    assert!(status.contains("200"), "{status}");
    for name in [
        "undust_urls_canonicalized_total",
        "undust_duplicates_suppressed_total",
        "undust_urls_invalid_total",
        "undust_urls_changed_static_total",
        "undust_canonicalize_duration_seconds_bucket",
        "# HELP undust_duplicates_suppressed_total",
    ] {
        assert!(body.contains(name), "{name} missing from /metrics:\n{body}");
    }
    assert!(
        !body.contains("metrics.example"),
        "no label may hold a host"
    );
    let (status, _) = http_get(server.metrics_addr, "/other").await;
    assert!(status.contains("404"), "{status}");
    server.stop().await;
}

#[test]
fn invalid_configuration_exits_64_before_binding() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(["serve", "--max-batch", "0", "--listen", "127.0.0.1:1"])
        .output()
        .expect("run undust");
    assert_eq!(
        output.status.code(),
        Some(64),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("--max-batch"));

    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("undust.toml");
    std::fs::write(&config, "no-such-knob = 1\n").expect("write");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .expect("run undust");
    assert_eq!(output.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no-such-knob"));
}

/// The host's ListHosts entry.
async fn host_entry(server: &TestServer, host: &str) -> undust::pb::HostSummary {
    let hosts = server
        .admin()
        .await
        .list_hosts(undust::pb::ListHostsRequest {
            page_size: 1_000,
            page_token: String::new(),
        })
        .await
        .expect("list hosts")
        .into_inner()
        .hosts;
    hosts
        .into_iter()
        .find(|entry| entry.host == host)
        .expect("host listed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_resumes_the_relearn_schedule_and_the_bytes_saved_estimate() {
    use undust::corpus::{self, CorpusConfig, SiteKind};
    use undust::pb::GetStatsRequest;

    let data = tempfile::tempdir().expect("tempdir");
    let corpus = corpus::generate(
        &CorpusConfig::new(5, 1)
            .with_kinds(&[SiteKind::Shop])
            .with_pages(250, 400),
    );
    let site = &corpus.sites[0];
    let pages = crate::support::observed_pages(site);
    // Due once every page of the site is sampled, never by the interval.
    let knobs = || undust::config::Knobs {
        relearn_min_new_samples: Some(pages.len() as u64),
        relearn_interval_secs: Some(86_400),
        ..undust::config::Knobs::default()
    };
    let (first, rest) = pages.split_at(pages.len() - 10);

    let server = TestServer::start_with(Some(data.path()), knobs()).await;
    let summary = server
        .ingest()
        .await
        .observe_pages(tokio_stream::iter(first.to_vec()))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.sampled as usize, first.len());
    assert_eq!(
        host_entry(&server, &site.host).await.last_learned_unix_ms,
        0
    );
    // Duplicates saved bytes (estimated from the pages observed).
    let url = site.pages[0].url.clone();
    server
        .canonicalizer()
        .await
        .canonicalize(CanonicalizeRequest {
            urls: vec![url.clone(), url],
            ..CanonicalizeRequest::default()
        })
        .await
        .expect("canonicalize");
    let saved = server
        .admin()
        .await
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner()
        .estimated_bytes_saved;
    assert!(saved > 0);
    server.stop().await;

    let server = TestServer::start_with(Some(data.path()), knobs()).await;
    let restored = server
        .admin()
        .await
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner()
        .estimated_bytes_saved;
    assert_eq!(
        restored, saved,
        "the bytes-saved estimate survives a restart"
    );
    server
        .ingest()
        .await
        .observe_pages(tokio_stream::iter(rest.to_vec()))
        .await
        .expect("observe");
    // The pages sampled before the restart still count: the host is due now, as it would be
    // without the restart. Bounded wait for the scheduler (it ticks every second).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        if host_entry(&server, &site.host).await.last_learned_unix_ms > 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the host was not relearned after the restart: its new-sample count was forgotten"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.stop().await;
}
