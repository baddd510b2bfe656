//! A fleet of sidecars on one real Redis (issue 15): cross-node dedup, rule publication, leases,
//! Redis restarts and network cuts.
//!
//! Each test starts its own `redis-server` (Debian's package; `.ci/run` installs it) on a free
//! loopback port with its data in a temporary directory, append-only with `fsync` on every write,
//! and kills it at the end. Where `redis-server` is missing the tests print a notice and pass,
//! except under `CI=true`, where a missing Redis fails them.

use std::collections::HashMap;
use std::net::TcpListener as StdListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;
use undust::config::Knobs;
use undust::corpus::{self, CorpusConfig, SiteKind};
use undust::fleet::{Fleet, FleetConfig, PublishOutcome};
use undust::pb::{
    CanonicalizeRequest, Decision, GetRulesRequest, JobState, ObservedPage, RollbackRulesRequest,
};

use crate::support::{canonicalize_all, observed_pages, relearn, within, TestServer, CALL_LIMIT};

/// How long a test waits for one ingest stream of a generated site to be acknowledged.
const INGEST_LIMIT: Duration = Duration::from_secs(120);

/// A `redis-server` child process owned by a test.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Redis {
    /// Starts Redis on a free loopback port, or `None` (with a notice) where it is not installed
    /// and this is not CI.
    pub fn start() -> Option<Redis> {
        let found = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !found {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "redis-server is not installed, and CI=true requires it (.ci/run installs it)"
            );
            eprintln!("skipping: redis-server is not installed (apt-get install redis-server)");
            return None;
        }
        let port = StdListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let mut redis = Redis {
            child: None,
            port,
            dir: tempfile::tempdir().expect("tempdir"),
        };
        redis.spawn();
        Some(redis)
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .arg("--dir")
            .arg(self.dir.path())
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .args(["--daemonize", "no", "--logfile", "redis.log"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        self.wait_ready();
    }

    /// Waits (bounded) until Redis answers PING with PONG (not LOADING).
    fn wait_ready(&self) {
        let client = redis::Client::open(self.url()).expect("url");
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let pong = client
                .get_connection_with_timeout(Duration::from_millis(200))
                .and_then(|mut connection| redis::cmd("PING").query::<String>(&mut connection));
            if pong.is_ok_and(|pong| pong == "PONG") {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server did not answer within 20 s (see {})",
                self.dir.path().join("redis.log").display()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Kills Redis with SIGKILL: no shutdown save, only what the append-only file holds survives.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts Redis again on the same port and directory (reloading its append-only file).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// A plain connection for assertions.
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .expect("url")
            .get_connection_with_timeout(Duration::from_secs(5))
            .expect("connect to the test Redis")
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Knobs of a fleet sidecar.
pub fn fleet_knobs(redis: &Redis) -> Knobs {
    Knobs {
        fleet: Some(redis.url()),
        fleet_rules_poll_ms: Some(100),
        fleet_lease_secs: Some(2),
        ..Knobs::default()
    }
}

/// `count` distinct URLs over a few hosts, tagged so tests never share URLs.
fn urls(tag: &str, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| format!("https://{tag}-{}.example/item/{i}?ref=x", i % 7))
        .collect()
}

fn decisions(results: &[undust::pb::CanonicalizeResult]) -> Vec<Decision> {
    results
        .iter()
        .map(|result| Decision::try_from(result.decision).expect("a known decision"))
        .collect()
}

/// The fleet status health reports on a sidecar.
async fn fleet_health(server: &TestServer) -> ServingStatus {
    let mut health = HealthClient::new(server.channel().await);
    let check = health.check(HealthCheckRequest {
        service: undust::service::server::FLEET_HEALTH_NAME.into(),
    });
    let status = within(CALL_LIMIT, "the fleet health check", check)
        .await
        .expect("fleet health")
        .into_inner()
        .status;
    ServingStatus::try_from(status).expect("a known status")
}

/// Waits (bounded, on health's Watch stream) until the sidecar's fleet status is `wanted`.
async fn wait_fleet_health(server: &TestServer, wanted: ServingStatus, within_limit: Duration) {
    let mut health = HealthClient::new(server.channel().await);
    let watch = health.watch(HealthCheckRequest {
        service: undust::service::server::FLEET_HEALTH_NAME.into(),
    });
    let mut stream = within(within_limit, "the fleet health watch", watch)
        .await
        .expect("watch fleet health")
        .into_inner();
    let wait = async {
        while let Some(update) = stream.message().await.expect("health stream") {
            if update.status == wanted as i32 {
                return;
            }
        }
        panic!("the health stream ended");
    };
    tokio::time::timeout(within_limit, wait)
        .await
        .unwrap_or_else(|_| panic!("fleet health did not turn {wanted:?} within {within_limit:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_sidecars_answer_each_url_new_exactly_once_even_when_racing() {
    let Some(redis) = Redis::start() else { return };
    let nodes = [
        TestServer::start_with(None, fleet_knobs(&redis)).await,
        TestServer::start_with(None, fleet_knobs(&redis)).await,
        TestServer::start_with(None, fleet_knobs(&redis)).await,
    ];
    for node in &nodes {
        assert_eq!(fleet_health(node).await, ServingStatus::Serving);
    }

    // Sequential: a URL enqueued on one node is a duplicate on the others.
    let first = urls("seq", 3_000);
    let mut client = nodes[0].canonicalizer().await;
    let answers = decisions(&canonicalize_all(&mut client, &first, false).await);
    assert!(answers.iter().all(|d| *d == Decision::New));
    for node in &nodes[1..] {
        let mut client = node.canonicalizer().await;
        let answers = decisions(&canonicalize_all(&mut client, &first, false).await);
        assert_eq!(
            answers
                .iter()
                .filter(|d| **d == Decision::Duplicate)
                .count(),
            first.len(),
            "every URL another node enqueued is a duplicate here"
        );
    }

    // Racing: the three nodes send the same fresh URLs at once, in batches in different orders,
    // from several callers each. Across the fleet, each URL is NEW exactly once.
    let raced = Arc::new(urls("race", 6_000));
    let mut callers = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        for caller in 0..2 {
            let client = node.canonicalizer().await;
            let raced = Arc::clone(&raced);
            callers.push(tokio::spawn(async move {
                let mut client = client;
                let mut order: Vec<usize> = (0..raced.len()).collect();
                if (n + caller) % 2 == 1 {
                    order.reverse();
                }
                order.rotate_left((n * 997 + caller * 311) % raced.len());
                let mut news = Vec::new();
                for chunk in order.chunks(500) {
                    let request = CanonicalizeRequest {
                        urls: chunk.iter().map(|&i| raced[i].clone()).collect(),
                        ..CanonicalizeRequest::default()
                    };
                    let results = client
                        .canonicalize(request)
                        .await
                        .expect("canonicalize")
                        .into_inner()
                        .results;
                    for (&i, result) in chunk.iter().zip(results) {
                        if result.decision == Decision::New as i32 {
                            news.push(i);
                        }
                    }
                }
                news
            }));
        }
    }
    let mut new_count: HashMap<usize, usize> = HashMap::new();
    for caller in callers {
        for i in tokio::time::timeout(Duration::from_secs(60), caller)
            .await
            .expect("racing callers finish within 60 s")
            .expect("caller")
        {
            *new_count.entry(i).or_default() += 1;
        }
    }
    assert_eq!(
        new_count.len(),
        raced.len(),
        "every raced URL was NEW somewhere"
    );
    assert!(
        new_count.values().all(|&count| count == 1),
        "a URL was NEW on more than one caller: {:?}",
        new_count
            .iter()
            .filter(|(_, &count)| count > 1)
            .take(5)
            .collect::<Vec<_>>()
    );

    // What Redis holds: exactly the distinct canonical forms, in compact integer sets.
    let mut connection = redis.connection();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("undust:s:*")
        .query(&mut connection)
        .expect("keys");
    let mut members = 0usize;
    for key in &keys {
        let encoding: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg(key)
            .query(&mut connection)
            .expect("encoding");
        assert_eq!(encoding, "intset", "{key}");
        members += redis::cmd("SCARD")
            .arg(key)
            .query::<usize>(&mut connection)
            .expect("scard");
    }
    assert_eq!(members, first.len() + raced.len());
    for node in nodes {
        node.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restarted_redis_keeps_every_acknowledged_seen_set_entry() {
    let Some(mut redis) = Redis::start() else {
        return;
    };
    let writer = TestServer::start_with(None, fleet_knobs(&redis)).await;
    let recorded = urls("aof", 5_000);
    let mut client = writer.canonicalizer().await;
    let answers = decisions(&canonicalize_all(&mut client, &recorded, false).await);
    assert!(answers.iter().all(|d| *d == Decision::New));

    // SIGKILL: no save on shutdown; only the append-only file (fsync on every write) remains.
    redis.restart();

    // A sidecar that never saw these URLs learns from the restarted Redis that all are known.
    let reader = TestServer::start_with(None, fleet_knobs(&redis)).await;
    assert_eq!(fleet_health(&reader).await, ServingStatus::Serving);
    let mut client = reader.canonicalizer().await;
    let answers = decisions(&canonicalize_all(&mut client, &recorded, false).await);
    assert_eq!(
        answers
            .iter()
            .filter(|d| **d == Decision::Duplicate)
            .count(),
        recorded.len(),
        "an acknowledged seen-set entry was lost in the restart"
    );
    writer.stop().await;
    reader.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cut_from_redis_keeps_answers_flowing_reports_degraded_and_catches_up() {
    let Some(mut redis) = Redis::start() else {
        return;
    };
    let cut = TestServer::start_with(None, fleet_knobs(&redis)).await;
    let other = TestServer::start_with(None, fleet_knobs(&redis)).await;
    let before = urls("before", 1_000);
    let mut client = cut.canonicalizer().await;
    canonicalize_all(&mut client, &before, false).await;

    redis.kill();
    // Answers continue from local state: what this node recorded stays a duplicate, new URLs are
    // NEW (and recorded for replay), and health reports the degraded fleet link.
    let during = urls("during", 2_000);
    let started = std::time::Instant::now();
    let answers = decisions(&canonicalize_all(&mut client, &during, false).await);
    assert!(answers.iter().all(|d| *d == Decision::New));
    let repeats = decisions(&canonicalize_all(&mut client, &before, false).await);
    assert!(repeats.iter().all(|d| *d == Decision::Duplicate));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answers while cut off took {:?}",
        started.elapsed()
    );
    wait_fleet_health(&cut, ServingStatus::NotServing, Duration::from_secs(5)).await;
    crate::support::wait_serving(cut.addr).await;
    let (_, metrics) = crate::support::http_get(cut.metrics_addr, "/metrics").await;
    assert!(
        metrics.contains("undust_fleet_connected 0"),
        "metrics show the degraded link"
    );

    // Redis comes back (with its append-only file): the node reconnects, replays what it recorded
    // meanwhile, and the other node sees those URLs as duplicates.
    redis.restart();
    wait_fleet_health(&cut, ServingStatus::Serving, Duration::from_secs(10)).await;
    let mut other_client = other.canonicalizer().await;
    // The other node's link broke too; wait until it is back before asking it.
    let _ = canonicalize_all(&mut other_client, &urls("probe", 1), true).await;
    wait_fleet_health(&other, ServingStatus::Serving, Duration::from_secs(10)).await;
    let seen_elsewhere = decisions(&canonicalize_all(&mut other_client, &during, false).await);
    assert_eq!(
        seen_elsewhere
            .iter()
            .filter(|d| **d == Decision::Duplicate)
            .count(),
        during.len(),
        "keys recorded while cut off were replayed into Redis"
    );
    let seen_before = decisions(&canonicalize_all(&mut other_client, &before, false).await);
    assert!(seen_before.iter().all(|d| *d == Decision::Duplicate));
    cut.stop().await;
    other.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_learner_whose_lease_expired_cannot_overwrite_newer_rules() {
    let Some(redis) = Redis::start() else { return };
    let config = |lease_ms: u64| FleetConfig {
        url: redis.url(),
        lease_ttl: Duration::from_millis(lease_ms),
        rules_poll: Duration::from_millis(100),
        call_timeout: undust::fleet::DEFAULT_CALL_TIMEOUT,
        evidence_per_host: 100,
        evidence_max_hosts: 100,
        mirror_summaries_per_pass: undust::config::DEFAULT_FLEET_MIRROR_SUMMARIES_PER_PASS,
    };
    let seen = undust::config::ServeConfig::from_knobs(Knobs::default())
        .expect("defaults")
        .seen_set;
    let slow = Fleet::new(config(300), &seen).expect("fleet");
    let fast = Fleet::new(config(10_000), &seen).expect("fleet");
    slow.establish().await.expect("connect");
    fast.establish().await.expect("connect");

    let old = slow
        .leases
        .acquire("shop.example")
        .await
        .expect("redis")
        .expect("free lease");
    assert!(
        fast.leases
            .acquire("shop.example")
            .await
            .expect("redis")
            .is_none(),
        "one learner at a time"
    );
    // The slow learner "pauses": its lease expires and the other sidecar takes the host.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let new = loop {
        if let Some(lease) = fast.leases.acquire("shop.example").await.expect("redis") {
            break lease;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the lease never expired"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(new.token > old.token, "fencing tokens increase");
    assert!(
        !slow.leases.renew(&old).await.expect("redis"),
        "the lost lease cannot be renewed"
    );

    let published = fast
        .rules
        .publish(&new, b"new rules", 1)
        .await
        .expect("redis");
    let PublishOutcome::Published { version, .. } = published else {
        panic!("the lease holder publishes: {published:?}");
    };
    assert_eq!(version, 1);
    let stale = slow
        .rules
        .publish(&old, b"old rules", 1)
        .await
        .expect("redis");
    assert_eq!(stale, PublishOutcome::Fenced { newer: new.token });

    // Every sidecar sees exactly the newer set.
    let (epoch, changes) = slow.rules.changes_since(0).await.expect("redis");
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].body, b"new rules");
    assert_eq!(changes[0].token, new.token);
    let (same, none) = slow.rules.changes_since(epoch).await.expect("redis");
    assert_eq!((same, none.len()), (epoch, 0));

    // After release, the next learner gets a larger token still, and its version follows.
    fast.leases.release(&new).await.expect("redis");
    let next = slow
        .leases
        .acquire("shop.example")
        .await
        .expect("redis")
        .expect("released lease is free");
    assert!(next.token > new.token);
    let again = slow
        .rules
        .publish(&next, b"newest", 7)
        .await
        .expect("redis");
    assert!(matches!(
        again,
        PublishOutcome::Published { version: 7, .. }
    ));
}

/// Redis's `used_memory`, in bytes.
fn used_memory(connection: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query(connection)
        .expect("info");
    info.lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|value| value.trim().parse().ok())
        .expect("used_memory in INFO")
}

/// Bytes per seen URL in Redis (INFO memory before and after), in exact mode. One million URLs by
/// default; `UNDUST_FLEET_MEMORY_URLS=10000000` for the BENCHMARKS.md figure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_seen_set_costs_at_most_16_bytes_per_url_in_redis() {
    let Some(redis) = Redis::start() else { return };
    let count: u64 = std::env::var("UNDUST_FLEET_MEMORY_URLS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1_000_000);
    // The bound is twice the URLs inserted, so no generation is dropped: every URL is held.
    let seen_config = undust::config::SeenSetConfig {
        max_entries: count * 2,
        ..undust::config::ServeConfig::from_knobs(Knobs::default())
            .expect("defaults")
            .seen_set
    };
    let fleet = Fleet::new(
        FleetConfig {
            url: redis.url(),
            lease_ttl: Duration::from_secs(30),
            rules_poll: Duration::from_millis(500),
            call_timeout: Duration::from_secs(5),
            evidence_per_host: 100,
            evidence_max_hosts: 100,
            mirror_summaries_per_pass: undust::config::DEFAULT_FLEET_MIRROR_SUMMARIES_PER_PASS,
        },
        &seen_config,
    )
    .expect("fleet");
    fleet.establish().await.expect("connect");
    // A tiny local set: every key goes to Redis.
    let local = undust::canon::seen::SeenSet::new(&undust::config::SeenSetConfig {
        max_entries: 1_000,
        first_occurrence_cache: 0,
        ..seen_config.clone()
    });
    let mut connection = redis.connection();
    let before = used_memory(&mut connection);
    let mut new = 0u64;
    let keys: Vec<u64> = (0..count)
        .map(|i| undust::canon::seen::key_of(&format!("https://h{}.example/p/{i}", i % 1000)))
        .collect();
    for chunk in keys.chunks(1_000) {
        let answers = fleet
            .seen
            .check_batch(&local, chunk, &vec![None; chunk.len()], true)
            .await;
        new += answers
            .iter()
            .filter(|seen| **seen == undust::canon::seen::Seen::New)
            .count() as u64;
    }
    assert!(fleet.link.is_connected());
    assert_eq!(new, count, "every distinct URL was NEW once");
    let after = used_memory(&mut connection);
    // Generations rotated (a bucket's current one holds half its share), but nothing was dropped.
    let buckets: Vec<String> = redis::cmd("KEYS")
        .arg("undust:s:*")
        .query(&mut connection)
        .expect("keys");
    let mut held = 0u64;
    for bucket in &buckets {
        held += redis::cmd("SCARD")
            .arg(bucket)
            .query::<u64>(&mut connection)
            .expect("scard");
    }
    assert_eq!(held, count, "every URL is held");
    let per_url = (after - before) as f64 / count as f64;
    eprintln!(
        "fleet seen-set: {count} URLs, {} bytes in Redis, {per_url:.2} bytes per URL \
         ({} buckets)",
        after - before,
        1u64 << fleet.seen.geometry().bits
    );
    assert!(per_url <= 16.0, "{per_url:.2} bytes per URL");
}

/// Knobs of a fleet sidecar that learns only when asked (the tests ask), polling the board at the
/// default interval, so propagation is measured as deployed.
fn learning_knobs(redis: &Redis) -> Knobs {
    Knobs {
        fleet_rules_poll_ms: Some(undust::config::DEFAULT_FLEET_RULES_POLL_MS),
        relearn_min_new_samples: Some(1_000_000),
        ..fleet_knobs(redis)
    }
}

/// One generated site, as a crawler would report it.
fn one_site(seed: u64, kind: SiteKind, pages: usize) -> undust::corpus::Site {
    let corpus = corpus::generate(
        &CorpusConfig::new(seed, 1)
            .with_kinds(&[kind])
            .with_pages(pages, pages),
    );
    corpus.sites.into_iter().next().expect("one site")
}

/// Streams pages to a sidecar's Ingest; the pages it sampled (acknowledged, so shared).
async fn ingest_on(server: &TestServer, pages: Vec<ObservedPage>) -> u64 {
    let mut ingest = server.ingest().await;
    let call = ingest.observe_pages(tokio_stream::iter(pages));
    let summary = within(INGEST_LIMIT, "an ingest stream", call)
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.rejected, 0, "{:?}", summary.rejections);
    summary.sampled
}

/// The live rule version of `host` on a sidecar (0: none).
async fn live_version(server: &TestServer, host: &str) -> u64 {
    let mut admin = server.admin().await;
    let call = admin.get_rules(GetRulesRequest {
        host: host.into(),
        ..Default::default()
    });
    within(CALL_LIMIT, format!("GetRules of {host}"), call)
        .await
        .expect("get rules")
        .into_inner()
        .version
}

/// How long until every sidecar serves `version` of `host` (bounded by `within`, polled every
/// 5 ms: this is the measured propagation time).
async fn served_by_all_within(
    servers: &[&TestServer],
    host: &str,
    version: u64,
    within: Duration,
) -> Duration {
    let started = std::time::Instant::now();
    for server in servers {
        loop {
            let live = live_version(server, host).await;
            if live == version {
                break;
            }
            assert!(
                started.elapsed() < within,
                "{} still serves version {live} of {host}, not {version}, after {within:?}",
                server.addr
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    started.elapsed()
}

/// Canonical forms of `urls` on a sidecar (dry run: records nothing).
async fn forms(server: &TestServer, urls: &[String]) -> Vec<String> {
    let mut client = server.canonicalizer().await;
    canonicalize_all(&mut client, urls, true)
        .await
        .into_iter()
        .map(|result| result.canonical)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relearn_asked_on_one_sidecar_learns_from_all_and_is_served_by_all_within_2_s() {
    let Some(redis) = Redis::start() else { return };
    let nodes = [
        TestServer::start_with(None, learning_knobs(&redis)).await,
        TestServer::start_with(None, learning_knobs(&redis)).await,
        TestServer::start_with(None, learning_knobs(&redis)).await,
    ];
    let [a, b, c] = &nodes;
    let site = one_site(41, SiteKind::Forum, 400);
    let host = site.host.clone();
    let urls: Vec<String> = site.pages.iter().map(|page| page.url.clone()).collect();
    let pages = observed_pages(&site);
    let (even, odd): (Vec<_>, Vec<_>) =
        pages.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    // B and C crawl the site between them; A saw none of it.
    let sampled = ingest_on(b, even.into_iter().map(|(_, page)| page).collect()).await
        + ingest_on(c, odd.into_iter().map(|(_, page)| page).collect()).await;
    assert_eq!(sampled, urls.len() as u64);
    let before = forms(a, &urls).await;

    // The relearn is asked on A, which learns from B's and C's samples.
    let job = relearn(&mut a.admin().await, &host, true)
        .await
        .job
        .expect("job");
    let learned = &job.hosts[0];
    assert_eq!(
        learned.state,
        JobState::Succeeded as i32,
        "{}",
        learned.error
    );
    assert_eq!(
        learned.samples,
        urls.len() as u64,
        "every page sampled on B and C is evidence for A's relearn"
    );
    assert!(learned.rules > 0 && learned.clusters > 0, "{learned:?}");
    let version = learned.rules_version;
    let took = served_by_all_within(&[a, b, c], &host, version, Duration::from_secs(2)).await;
    eprintln!("version {version} of {host} served by all three sidecars {took:?} after the relearn answered");
    let after = forms(a, &urls).await;
    assert_ne!(before, after, "the learned rules change canonical forms");
    assert_eq!(forms(b, &urls).await, after, "B serves A's rules");
    assert_eq!(forms(c, &urls).await, after, "C serves A's rules");
    let mut admin_c = c.admin().await;
    let call = admin_c.get_rules(GetRulesRequest {
        host: host.clone(),
        ..Default::default()
    });
    let first_rules = within(CALL_LIMIT, "GetRules on C", call)
        .await
        .expect("rules")
        .into_inner();

    // A second relearn, asked on B (which publishes a newer version), then a rollback asked on C:
    // the first rules come back everywhere, as a new version.
    let job = relearn(&mut b.admin().await, &host, true)
        .await
        .job
        .expect("job");
    let second = job.hosts[0].rules_version;
    assert_eq!(job.hosts[0].state, JobState::Succeeded as i32);
    assert!(second > version);
    served_by_all_within(&[a, b, c], &host, second, Duration::from_secs(2)).await;
    let call = admin_c.rollback_rules(RollbackRulesRequest {
        host: host.clone(),
        to_version: version,
    });
    let rolled = within(CALL_LIMIT, "RollbackRules on C", call)
        .await
        .expect("rollback from C")
        .into_inner();
    assert!(rolled.version > second, "a rollback is a new fleet version");
    served_by_all_within(&[a, b, c], &host, rolled.version, Duration::from_secs(2)).await;
    for node in [a, b, c] {
        let mut admin = node.admin().await;
        let call = admin.get_rules(GetRulesRequest {
            host: host.clone(),
            ..Default::default()
        });
        let rules = within(CALL_LIMIT, format!("GetRules on {}", node.addr), call)
            .await
            .expect("rules")
            .into_inner();
        assert_eq!(
            rules.rules, first_rules.rules,
            "{} serves version {version}'s rules",
            node.addr
        );
        assert!(rules.previous_versions.contains(&second));
    }
    assert_eq!(forms(b, &urls).await, after);
    for node in nodes {
        node.stop().await;
    }
}

/// A fleet sidecar as a real process, so it can be killed with -9 or paused with SIGSTOP.
struct FleetProcess {
    child: Child,
    admin: std::net::SocketAddr,
    _dir: tempfile::TempDir,
}

impl FleetProcess {
    async fn spawn(redis: &Redis) -> FleetProcess {
        let dir = tempfile::tempdir().expect("tempdir");
        let knobs = crate::support::token_knobs(dir.path());
        let free = || {
            StdListener::bind("127.0.0.1:0")
                .and_then(|listener| listener.local_addr())
                .expect("free port")
        };
        let (addr, admin, metrics) = (free(), free(), free());
        let child = Command::new(env!("CARGO_BIN_EXE_undust"))
            .arg("serve")
            .args(["--listen", &addr.to_string()])
            .args(["--admin-listen", &admin.to_string()])
            .args(["--metrics-addr", &metrics.to_string()])
            .arg("--data-dir")
            .arg(dir.path().join("store"))
            .arg("--admin-read-token-file")
            .arg(knobs.admin_read_token_file.expect("read token"))
            .arg("--admin-write-token-file")
            .arg(knobs.admin_write_token_file.expect("write token"))
            .args(["--relearn-min-new-samples", "1000000"])
            .args(["--fleet", &redis.url(), "--fleet-lease-secs", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn undust");
        crate::support::wait_serving(addr).await;
        FleetProcess {
            child,
            admin,
            _dir: dir,
        }
    }

    async fn admin(&self) -> crate::support::AdminConnection {
        crate::support::admin_client(self.admin, Some(crate::support::WRITE_TOKEN)).await
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal}");
    }
}

impl Drop for FleetProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fencing token of the lease `host` has in Redis, once it has one (polled every
/// millisecond, at most `within`).
fn wait_lease_token(connection: &mut redis::Connection, host: &str, within: Duration) -> u64 {
    let deadline = std::time::Instant::now() + within;
    loop {
        let value: Option<String> = redis::cmd("GET")
            .arg(undust::fleet::lease::lease_key(host))
            .query(connection)
            .expect("get lease");
        if let Some(token) = value
            .as_deref()
            .and_then(|value| value.split(':').next())
            .and_then(|token| token.parse().ok())
        {
            return token;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no lease on {host} within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The token the board's rule set of `host` was published under (0: none).
fn board_token(connection: &mut redis::Connection, host: &str) -> u64 {
    redis::cmd("HGET")
        .arg(format!("undust:rules:{host}"))
        .arg("token")
        .query::<Option<u64>>(connection)
        .expect("hget")
        .unwrap_or(0)
}

/// Asks `server` to relearn `host` until it succeeds (bounded by `within`); the relearn answers
/// that came before, and the successful one.
async fn relearn_until_learned(
    server: &TestServer,
    host: &str,
    within: Duration,
) -> (Vec<undust::pb::HostRelearn>, undust::pb::HostRelearn) {
    let started = std::time::Instant::now();
    let mut refused = Vec::new();
    loop {
        let job = relearn(&mut server.admin().await, host, true)
            .await
            .job
            .expect("job");
        let outcome = job.hosts[0].clone();
        if outcome.state == JobState::Succeeded as i32 {
            return (refused, outcome);
        }
        assert!(
            started.elapsed() < within,
            "{host} not learned within {within:?}: {outcome:?}"
        );
        refused.push(outcome);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_learner_killed_or_paused_mid_relearn_loses_the_host_and_its_late_write_is_fenced() {
    let Some(redis) = Redis::start() else { return };
    let mut connection = redis.connection();
    let b = TestServer::start_with(None, learning_knobs(&redis)).await;
    let killed = FleetProcess::spawn(&redis).await;
    let paused = FleetProcess::spawn(&redis).await;

    // Sites crawled by B: the fleet's evidence for whichever sidecar learns them. Large enough
    // that a relearn takes long enough to be caught holding its lease.
    let sites = [
        one_site(51, SiteKind::Shop, 800),
        one_site(52, SiteKind::Forum, 800),
        one_site(53, SiteKind::Forum, 800),
        one_site(54, SiteKind::Shop, 800),
    ];
    for site in &sites {
        ingest_on(&b, observed_pages(site)).await;
    }
    eprintln!("ingested");

    // 1. kill -9 of the learner while it holds the lease: the lease expires (2 s) and B learns.
    let host = &sites[0].host;
    let started = relearn(&mut killed.admin().await, host, false).await;
    assert!(!started.job_id.is_empty());
    let dead_token = wait_lease_token(&mut connection, host, Duration::from_secs(30));
    drop(killed); // SIGKILL
    eprintln!("killed the learner holding lease {dead_token}");
    assert_eq!(
        board_token(&mut connection, host),
        0,
        "the killed learner published before it was killed; the test needs a slower relearn"
    );
    let (refused, learned) = relearn_until_learned(&b, host, Duration::from_secs(20)).await;
    // Refused while the dead learner's lease lives (a Redis call timing out on this loaded
    // machine is the only other acceptable refusal).
    assert!(!refused.is_empty(), "B learned while the dead lease lived");
    assert!(
        refused.iter().all(|r| {
            r.error.contains("another sidecar of the fleet is learning")
                || r.error.contains("timed out")
        }),
        "{refused:?}"
    );
    assert!(learned.rules > 0, "{learned:?}");
    let token = board_token(&mut connection, host);
    assert!(token > dead_token, "B learned under a newer lease");

    // 2. A learner paused (SIGSTOP) while it holds the lease: B takes the host over after the
    //    lease expires; the paused learner, resumed, is fenced and its rules never land. A pause
    //    that lands while the lease's own reply is in flight makes the resumed learner time out
    //    instead (it never learns, which is safe too); then the next site is tried, at most three.
    let mut fenced = false;
    for site in &sites[1..] {
        let host = &site.host;
        let started = relearn(&mut paused.admin().await, host, false).await;
        let stale_token = wait_lease_token(&mut connection, host, Duration::from_secs(30));
        paused.signal("STOP");
        eprintln!("paused the learner holding lease {stale_token}");
        assert_eq!(
            board_token(&mut connection, host),
            0,
            "published before the pause"
        );
        let (_, learned) = relearn_until_learned(&b, host, Duration::from_secs(20)).await;
        let token = board_token(&mut connection, host);
        assert!(token > stale_token);
        paused.signal("CONT");
        eprintln!("B learned under lease {token}; resumed the paused learner");
        let mut admin = paused.admin().await;
        let resumed = std::time::Instant::now();
        let job = loop {
            let call = admin.get_relearn_job(undust::pb::GetRelearnJobRequest {
                job_id: started.job_id.clone(),
            });
            let job = within(CALL_LIMIT, "GetRelearnJob on the resumed learner", call)
                .await
                .expect("job")
                .into_inner();
            if job.finished_at_unix_ms > 0 {
                break job;
            }
            assert!(
                resumed.elapsed() < Duration::from_secs(30),
                "the resumed learner's job did not finish within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let late = &job.hosts[0];
        assert_eq!(late.state, JobState::Failed as i32, "{late:?}");
        assert_eq!(
            board_token(&mut connection, host),
            token,
            "a fenced-out write landed"
        );
        assert_eq!(live_version(&b, host).await, learned.rules_version);
        eprintln!("the resumed learner: {}", late.error);
        if late.error.contains("fenced") {
            fenced = true;
            break;
        }
        assert!(late.error.contains("could not be taken"), "{}", late.error);
    }
    assert!(fenced, "no pause landed while the learner was learning");
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_evidence_keeps_the_newest_samples_per_host_and_the_hosts_sampled_last() {
    let Some(redis) = Redis::start() else { return };
    let seen = undust::config::ServeConfig::from_knobs(Knobs::default())
        .expect("defaults")
        .seen_set;
    let fleet = Fleet::new(
        FleetConfig {
            url: redis.url(),
            lease_ttl: Duration::from_secs(30),
            rules_poll: Duration::from_millis(500),
            call_timeout: undust::fleet::DEFAULT_CALL_TIMEOUT,
            evidence_per_host: 10,
            evidence_max_hosts: 2,
            mirror_summaries_per_pass: undust::config::DEFAULT_FLEET_MIRROR_SUMMARIES_PER_PASS,
        },
        &seen,
    )
    .expect("fleet");
    fleet.establish().await.expect("connect");
    let evidence = &fleet.evidence;
    for i in 0..25u64 {
        evidence.offer("a.example", i, format!("a{i}").into_bytes());
    }
    // A page sampled again replaces its sample, and counts as the newest.
    evidence.offer("a.example", 3, b"a3-again".to_vec());
    assert_eq!(evidence.flush().await.expect("flush"), 26);
    let mut held: Vec<String> = evidence
        .fetch("a.example")
        .await
        .expect("fetch")
        .into_iter()
        .map(|bytes| String::from_utf8(bytes).expect("utf-8"))
        .collect();
    held.sort();
    let mut newest: Vec<String> = (16..25).map(|i| format!("a{i}")).collect();
    newest.push("a3-again".into());
    newest.sort();
    assert_eq!(held, newest, "the newest 10 samples of the host");

    // A third host takes the place of the host sampled least recently.
    evidence.offer("b.example", 1, b"b1".to_vec());
    evidence.flush().await.expect("flush");
    evidence.offer("a.example", 99, b"a99".to_vec());
    evidence.offer("c.example", 1, b"c1".to_vec());
    evidence.flush().await.expect("flush");
    assert!(evidence.fetch("b.example").await.expect("fetch").is_empty());
    assert_eq!(evidence.fetch("a.example").await.expect("fetch").len(), 10);
    assert_eq!(evidence.fetch("c.example").await.expect("fetch").len(), 1);
    let mut connection = redis.connection();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("undust:ev:*:b.example")
        .query(&mut connection)
        .expect("keys");
    assert!(keys.is_empty(), "an evicted host leaves no keys: {keys:?}");

    // Cut off: samples wait in the queue and go once Redis answers again.
    drop(redis);
    evidence.offer("c.example", 2, b"c2".to_vec());
    assert!(evidence.flush().await.is_err());
    assert_eq!(evidence.queued(), 1, "kept for the next flush");
}
