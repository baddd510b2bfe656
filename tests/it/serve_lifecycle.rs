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
    let next = tokio::time::timeout(Duration::from_secs(10), watch.message())
        .await
        .expect("a status within 10 s");
    // Either the NOT_SERVING update arrives, or the stream ends as the server goes away.
    if let Ok(Some(update)) = next {
        assert_eq!(update.status, ServingStatus::NotServing as i32);
    }
    stopping.await.expect("stopped cleanly");
}

#[tokio::test]
async fn in_flight_calls_finish_during_the_drain() {
    let server = TestServer::start().await;
    let mut client = server.canonicalizer().await;
    let urls: Vec<String> = (0..10_000)
        .map(|i| format!("http://drain.example/{i}?utm_medium=x"))
        .collect();
    let call = tokio::spawn(async move {
        client
            .canonicalize(CanonicalizeRequest {
                urls,
                dry_run: false,
                sequence: 7,
            })
            .await
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    server.stop().await;
    let answer = call.await.expect("task");
    // The call either completed before shutdown or during the drain; it was not cut off midway.
    if let Ok(answer) = answer {
        assert_eq!(answer.into_inner().results.len(), 10_000);
    }
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
