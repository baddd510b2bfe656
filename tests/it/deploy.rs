//! The deployment files are real: the alert rules pass `promtool check rules`, every metric the
//! Grafana dashboard and the alert rules query is one the sidecar exports on `/metrics`, and
//! Debian's `prometheus` scrapes a running sidecar and answers the savings through its HTTP API.
//!
//! `promtool` and `prometheus` come from Debian's `prometheus` package (`.ci/run` installs it).
//! Under `CI=true` a missing tool fails; elsewhere the check is skipped with a notice.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use undust::config::Knobs;
use undust::corpus::{self, CorpusConfig, SiteKind};

use crate::support::{canonicalize_all, http_get, observed_pages, relearn, TestServer};

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(path)
}

/// The path of a tool on `PATH`; `None` (with a notice) when missing outside CI.
fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{name} not found: .ci/run installs Debian's prometheus package"
        );
        eprintln!("skipping: {name} not found (apt-get install prometheus)");
    }
    found
}

/// Metric names (`undust_*`) a text mentions, histogram series suffixes removed.
fn metric_names(text: &str) -> BTreeSet<String> {
    let pattern = regex::Regex::new(r"\bundust_[a-z_]+").expect("regex");
    pattern
        .find_iter(text)
        .map(|m| {
            let name = m.as_str();
            ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix))
                .unwrap_or(name)
                .to_owned()
        })
        .collect()
}

/// Metric families on a `/metrics` page (`# TYPE name kind` lines).
fn exported(metrics: &str) -> BTreeSet<String> {
    metrics
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The value of an unlabelled sample on a `/metrics` page.
fn sample(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            (series == name).then(|| value.parse().ok()).flatten()
        })
        .unwrap_or_else(|| panic!("{name} on /metrics"))
}

/// Most URLs per request in [`busy_sidecar`], so a larger batch is refused.
const MAX_BATCH: usize = 1_000;

/// A sidecar that has canonicalized (with duplicates), ingested (one page invalid), refused an
/// oversized batch and relearned, so the metric families the dashboard and alerts use are touched.
async fn busy_sidecar() -> TestServer {
    let server = TestServer::start_with(
        None,
        Knobs {
            max_batch: Some(MAX_BATCH),
            relearn_min_new_samples: Some(1_000_000),
            relearn_interval_secs: Some(86_400),
            ..Knobs::default()
        },
    )
    .await;
    let corpus = corpus::generate(
        &CorpusConfig::new(9, 1)
            .with_kinds(&[SiteKind::Forum])
            .with_pages(150, 200),
    );
    let site = &corpus.sites[0];
    let mut pages = observed_pages(site);
    pages.push(undust::pb::ObservedPage {
        url: "not a url".into(),
        http_status: 200,
        ..undust::pb::ObservedPage::default()
    });
    let summary = server
        .ingest()
        .await
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.rejected, 1);
    let job = relearn(&mut server.admin().await, &site.host, true).await;
    assert!(job.job.is_some());
    let urls: Vec<String> = site.pages.iter().map(|page| page.url.clone()).collect();
    let mut client = server.canonicalizer().await;
    canonicalize_all(&mut client, &urls, false).await;
    canonicalize_all(&mut client, &urls, false).await;
    let refused = client
        .canonicalize(undust::pb::CanonicalizeRequest {
            urls: vec!["http://example.com/".into(); MAX_BATCH + 1],
            dry_run: true,
            sequence: 0,
            request_id: String::new(),
        })
        .await
        .expect_err("an oversized batch is refused");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    server
}

#[test]
fn alert_rules_pass_promtool() {
    let Some(promtool) = tool("promtool") else {
        return;
    };
    let output = Command::new(promtool)
        .args(["check", "rules"])
        .arg(deploy("prometheus/alerts.yml"))
        .output()
        .expect("run promtool");
    assert!(
        output.status.success(),
        "promtool check rules: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dashboard_and_alert_query_names_a_metric_the_sidecar_exports() {
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(deploy("grafana/dashboards/undust.json")).expect("dashboard"),
    )
    .expect("the dashboard is JSON");
    let panels = dashboard["panels"].as_array().expect("panels");
    let expressions: Vec<String> = panels
        .iter()
        .flat_map(|panel| panel["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|target| target["expr"].as_str().map(str::to_owned))
        .collect();
    assert!(expressions.len() >= panels.len(), "every panel has a query");
    let dashboard_metrics = metric_names(&expressions.join("\n"));
    // What the issue asks the dashboard to show.
    for needed in [
        "undust_duplicates_suppressed_total",
        "undust_estimated_bytes_saved_total",
        "undust_canonicalize_duration_seconds",
        "undust_relearn_runs_total",
        "undust_rules_active",
        "undust_samples",
    ] {
        assert!(
            dashboard_metrics.contains(needed),
            "dashboard shows {needed}"
        );
    }
    let alert_metrics = metric_names(
        &std::fs::read_to_string(deploy("prometheus/alerts.yml")).expect("alert rules"),
    );

    let server = busy_sidecar().await;
    let (status, metrics) = http_get(server.metrics_addr, "/metrics").await;
    assert!(status.contains("200"), "{status}");
    let families = exported(&metrics);
    for name in &dashboard_metrics {
        assert!(
            families.contains(name),
            "{name} is on the dashboard but not exported; exported: {families:?}"
        );
    }
    // Ingest backpressure only appears under overload, which this test does not cause; it is
    // checked against the telemetry catalogue instead.
    for name in &alert_metrics {
        assert!(
            families.contains(name) || name == undust::telemetry::INGEST_BACKPRESSURE,
            "{name} is alerted on but not exported; exported: {families:?}"
        );
    }
    server.stop().await;
}

/// A child process killed when the test ends, however it ends.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_the_sidecar_and_answers_the_savings() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let server = busy_sidecar().await;
    let (_, metrics) = http_get(server.metrics_addr, "/metrics").await;
    let suppressed = sample(&metrics, "undust_duplicates_suppressed_total");
    assert!(
        suppressed >= 150.0,
        "the second pass was all duplicates: {suppressed}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: undust\n    \
             static_configs:\n      - targets: [\"{}\"]\n",
            server.metrics_addr
        ),
    )
    .expect("write config");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port();
    let web: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    let _prometheus = KillOnDrop(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={web}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus"),
    );

    // Bounded: Prometheus starts, scrapes every second, and answers the query.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let answered = loop {
        let response = tokio::time::timeout(
            Duration::from_secs(5),
            try_query(web, "sum(undust_duplicates_suppressed_total)"),
        )
        .await
        .ok()
        .flatten();
        if let Some(value) = response.filter(|value| *value >= suppressed) {
            break value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "Prometheus did not report {suppressed} suppressed duplicates within 90 s (last: {response:?})"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    eprintln!("Prometheus reports {answered} duplicates suppressed");
    server.stop().await;
}

/// The value of an instant query's first sample, if Prometheus answers one.
async fn try_query(web: std::net::SocketAddr, query: &str) -> Option<f64> {
    tokio::net::TcpStream::connect(web).await.ok()?;
    let (status, body) = http_get(web, &format!("/api/v1/query?query={query}")).await;
    if !status.contains("200") {
        return None;
    }
    let json: serde_json::Value = serde_json::from_str(&body).ok()?;
    json["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}
