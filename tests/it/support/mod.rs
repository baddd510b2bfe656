//! Shared helpers: a real sidecar on `127.0.0.1:0` and real gRPC clients for it.

pub mod learned_site;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use undust::config::{Knobs, ServeConfig};
use undust::pb::admin_client::AdminClient;
use undust::pb::canonicalizer_client::CanonicalizerClient;
use undust::pb::ingest_client::IngestClient;
use undust::service::{run, Listeners, ServeError};

pub const READ_TOKEN: &str = "read-token-for-tests-0123456789";
pub const WRITE_TOKEN: &str = "write-token-for-tests-0123456789";

/// Set (to anything but `0`) by CI: missing third-party test data then fails the tests that need
/// it instead of skipping them.
pub const REQUIRE_TESTDATA: &str = "UNDUST_REQUIRE_TESTDATA";

/// Where the third-party test data lives, if it does. Under [`REQUIRE_TESTDATA`] its absence is a
/// failure, not a skip.
pub fn testdata() -> Option<PathBuf> {
    // `../shared/testdata` beside the checkout; a git worktree one level deeper sees it at `../..`.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("../shared/testdata");
    if let Some(found) = [path.clone(), root.join("../../shared/testdata")]
        .into_iter()
        .find(|dir| dir.is_dir())
    {
        return Some(found);
    }
    let required = std::env::var(REQUIRE_TESTDATA).is_ok_and(|value| value != "0");
    assert!(
        !required,
        "{} is not a directory and {REQUIRE_TESTDATA} is set: the third-party test data must be there",
        path.display()
    );
    eprintln!("skipping: ../shared/testdata not found");
    None
}

/// A running sidecar.
pub struct TestServer {
    pub addr: SocketAddr,
    pub admin_addr: SocketAddr,
    pub metrics_addr: SocketAddr,
    /// The directory the server's `store` (its `--data-dir`) and the test tokens are in.
    pub data_dir: PathBuf,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<Result<(), ServeError>>>,
    /// Keeps a temporary data directory alive when the test did not give one.
    _temp: Option<tempfile::TempDir>,
}

/// Writes the test tokens into `dir` and returns knobs pointing at them.
pub fn token_knobs(dir: &Path) -> Knobs {
    let read = dir.join("read.token");
    let write = dir.join("write.token");
    std::fs::write(&read, READ_TOKEN).expect("write read token");
    std::fs::write(&write, WRITE_TOKEN).expect("write write token");
    Knobs {
        admin_read_token_file: Some(read),
        admin_write_token_file: Some(write),
        ..Knobs::default()
    }
}

impl TestServer {
    /// A sidecar with default configuration in a fresh temporary data directory.
    pub async fn start() -> TestServer {
        TestServer::start_with(None, Knobs::default()).await
    }

    /// A sidecar with `knobs` (over the defaults) on `data_dir` (a fresh one when `None`).
    pub async fn start_with(data_dir: Option<&Path>, knobs: Knobs) -> TestServer {
        let temp = match data_dir {
            Some(_) => None,
            None => Some(tempfile::tempdir().expect("tempdir")),
        };
        let dir = data_dir.map(Path::to_path_buf).unwrap_or_else(|| {
            temp.as_ref()
                .map(|t| t.path().to_path_buf())
                .unwrap_or_default()
        });
        let tokens_dir = dir.join("test-tokens");
        std::fs::create_dir_all(&tokens_dir).expect("tokens dir");
        let knobs = knobs.over(Knobs {
            data_dir: Some(dir.join("store")),
            ..token_knobs(&tokens_dir)
        });
        let config = ServeConfig::from_knobs(knobs).expect("valid test configuration");
        let main = TcpListener::bind("127.0.0.1:0").await.expect("bind main");
        let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
        let metrics = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind metrics");
        let addr = main.local_addr().expect("addr");
        let admin_addr = admin.local_addr().expect("addr");
        let metrics_addr = metrics.local_addr().expect("addr");
        let (shutdown, stopped) = oneshot::channel::<()>();
        let handle = tokio::spawn(run(
            config,
            Listeners {
                main,
                admin,
                metrics: Some(metrics),
            },
            async move {
                let _ = stopped.await;
            },
        ));
        let server = TestServer {
            addr,
            admin_addr,
            metrics_addr,
            data_dir: dir,
            shutdown: Some(shutdown),
            handle: Some(handle),
            _temp: temp,
        };
        server.wait_serving().await;
        server
    }

    /// Waits (bounded) until health reports SERVING.
    pub async fn wait_serving(&self) {
        wait_serving(self.addr).await;
    }

    pub async fn channel(&self) -> Channel {
        connect(self.addr).await
    }

    pub async fn canonicalizer(&self) -> CanonicalizerClient<Channel> {
        CanonicalizerClient::new(self.channel().await).max_decoding_message_size(64 * 1024 * 1024)
    }

    pub async fn ingest(&self) -> IngestClient<Channel> {
        IngestClient::new(self.channel().await)
    }

    /// An admin client sending `token` (none when `None`).
    pub async fn admin_with(&self, token: Option<&'static str>) -> AdminConnection {
        admin_client(self.admin_addr, token).await
    }

    /// An admin client with the write token.
    pub async fn admin(&self) -> AdminConnection {
        self.admin_with(Some(WRITE_TOKEN)).await
    }

    /// The sidecar's `GetStats` answer, read with the write token.
    pub async fn stats(&self) -> undust::pb::GetStatsResponse {
        self.admin()
            .await
            .get_stats(undust::pb::GetStatsRequest {})
            .await
            .expect("stats")
            .into_inner()
    }

    /// Asks the sidecar to stop and waits (bounded) for it to finish.
    pub async fn stop(mut self) {
        self.stop_in_place().await;
    }

    async fn stop_in_place(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(handle) = self.handle.take() {
            let result = tokio::time::timeout(Duration::from_secs(30), handle)
                .await
                .expect("the sidecar stopped within 30 s");
            result
                .expect("the server task did not panic")
                .expect("the sidecar stopped cleanly");
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// Reads `GET path` from an HTTP/1.1 endpoint on loopback, returning status line and body.
pub async fn http_get(addr: SocketAddr, path: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect http");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write request");
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response))
        .await
        .expect("response within 10 s")
        .expect("read response");
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    )
}

/// Adds `authorization: Bearer <token>` to every call (nothing when the token is `None`).
#[derive(Clone, Copy)]
pub struct Bearer(Option<&'static str>);

impl tonic::service::Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(token) = self.0 {
            let value = format!("Bearer {token}")
                .parse()
                .map_err(|_| tonic::Status::internal("bad token"))?;
            request.metadata_mut().insert("authorization", value);
        }
        Ok(request)
    }
}

/// An admin client that authenticates with a bearer token.
pub type AdminConnection = AdminClient<InterceptedService<Channel, Bearer>>;

/// How long a test waits for a connection to a sidecar on loopback.
pub const CONNECT_LIMIT: Duration = Duration::from_secs(30);
/// How long a test waits for one call a sidecar answers without learning (a lookup, a batch).
pub const CALL_LIMIT: Duration = Duration::from_secs(60);
/// How long a test waits for a relearn asked to wait for its job (learning one host or a few).
pub const RELEARN_LIMIT: Duration = Duration::from_secs(180);

/// `work`'s output, or a panic naming `what` once `limit` has passed: a test that waits on a
/// sidecar fails saying what it waited for instead of hanging until CI's timeout.
pub async fn within<T>(
    limit: Duration,
    what: impl std::fmt::Display,
    work: impl std::future::Future<Output = T>,
) -> T {
    match tokio::time::timeout(limit, work).await {
        Ok(output) => output,
        Err(_) => panic!("{what} did not finish within {limit:?}"),
    }
}

/// A channel to the sidecar at `addr` (bounded by [`CONNECT_LIMIT`]).
pub async fn connect(addr: SocketAddr) -> Channel {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .expect("uri")
        .connect_timeout(CONNECT_LIMIT);
    within(
        CONNECT_LIMIT,
        format!("connecting to {addr}"),
        endpoint.connect(),
    )
    .await
    .unwrap_or_else(|err| panic!("connect to {addr}: {err}"))
}

/// An admin client for `addr` sending `token` (none when `None`).
pub async fn admin_client(addr: SocketAddr, token: Option<&'static str>) -> AdminConnection {
    AdminClient::with_interceptor(connect(addr).await, Bearer(token))
}

/// Waits (bounded) until the sidecar at `addr` reports SERVING.
pub async fn wait_serving(addr: SocketAddr) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let endpoint = Endpoint::from_shared(format!("http://{addr}"))
            .expect("uri")
            .connect_timeout(Duration::from_secs(5));
        if let Ok(channel) = endpoint.connect().await {
            let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
            let request = tonic_health::pb::HealthCheckRequest {
                service: String::new(),
            };
            let check = tokio::time::timeout(Duration::from_secs(5), health.check(request));
            if let Ok(Ok(response)) = check.await {
                if response.into_inner().status
                    == tonic_health::pb::health_check_response::ServingStatus::Serving as i32
                {
                    return;
                }
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the sidecar did not become SERVING within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every page of a generated site, rendered, as the crawler would report it.
pub fn observed_pages(site: &undust::corpus::Site) -> Vec<undust::pb::ObservedPage> {
    site.pages
        .iter()
        .map(|page| undust::pb::ObservedPage {
            url: page.url.clone(),
            http_status: 200,
            content_type: "text/html; charset=utf-8".into(),
            body: undust::corpus::render_html(site, page).into_bytes(),
            ..undust::pb::ObservedPage::default()
        })
        .collect()
}

/// Asks for a relearn of `host` (every host when empty), expecting success.
pub async fn relearn(
    admin: &mut AdminConnection,
    host: &str,
    wait: bool,
) -> undust::pb::RelearnResponse {
    let call = admin.relearn(undust::pb::RelearnRequest {
        host: host.to_owned(),
        wait,
    });
    within(RELEARN_LIMIT, format!("the relearn of {host:?}"), call)
        .await
        .expect("relearn")
        .into_inner()
}

/// Canonicalizes `urls` in batches of 1,000, returning one result per URL in order.
pub async fn canonicalize_all(
    client: &mut CanonicalizerClient<Channel>,
    urls: &[String],
    dry_run: bool,
) -> Vec<undust::pb::CanonicalizeResult> {
    let mut results = Vec::with_capacity(urls.len());
    for chunk in urls.chunks(1_000) {
        let request = undust::pb::CanonicalizeRequest {
            urls: chunk.to_vec(),
            dry_run,
            sequence: 0,
            request_id: String::new(),
        };
        results.extend(
            within(
                CALL_LIMIT,
                "a Canonicalize batch",
                client.canonicalize(request),
            )
            .await
            .expect("canonicalize")
            .into_inner()
            .results,
        );
    }
    results
}

/// Deterministic filler prose of `words` words: different seeds give unrelated texts (far apart
/// in simhash), the same seed the same text.
pub fn prose(seed: u64, words: usize) -> String {
    const VOCABULARY: [&str; 64] = [
        "river", "harbour", "council", "budget", "village", "engine", "orchard", "ledger",
        "winter", "market", "signal", "bridge", "canvas", "rocket", "garden", "silver", "thunder",
        "meadow", "library", "tunnel", "lantern", "compass", "factory", "glacier", "harvest",
        "island", "journal", "kettle", "ladder", "mirror", "needle", "ocean", "pepper", "quarry",
        "railway", "saddle", "temple", "uniform", "valley", "wagon", "yellow", "zephyr", "anchor",
        "barley", "candle", "desert", "falcon", "granite", "hollow", "ivory", "jasmine", "kernel",
        "lemon", "marble", "nectar", "olive", "pillar", "quartz", "ribbon", "summit", "timber",
        "velvet", "walnut", "basket",
    ];
    // SplitMix64: a fixed, dependency-free sequence per seed.
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xd1b5_4a32_d192_ed03;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..words)
        .map(|_| VOCABULARY[(next() % VOCABULARY.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Cases each property test runs: `UNDUST_PROPTEST_CASES` when set (longer fuzzing runs, e.g.
/// `UNDUST_PROPTEST_CASES=100000 cargo test --test it proptest`), else `default` (bounded for CI).
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("UNDUST_PROPTEST_CASES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}
