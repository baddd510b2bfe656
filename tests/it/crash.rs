//! Crash recovery of the real binary: `kill -9` during ingest, during relearn and after
//! Canonicalize, then a restart on the same data directory.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use undust::corpus::{self, CorpusConfig, SiteKind};
use undust::pb::canonicalizer_client::CanonicalizerClient;
use undust::pb::ingest_client::IngestClient;
use undust::pb::{CanonicalizeRequest, Decision, GetStatsRequest, JobState, ObservedPage};

use crate::support::{
    admin_client, observed_pages, relearn, token_knobs, wait_serving, AdminConnection, WRITE_TOKEN,
};

/// A free loopback port (bound then released; the sidecar binds it right after).
fn free_port() -> SocketAddr {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
}

/// The real binary on a data directory, killed with SIGKILL when dropped.
pub(crate) struct Sidecar {
    child: Child,
    addr: SocketAddr,
    admin: SocketAddr,
}

impl Sidecar {
    pub(crate) async fn spawn(dir: &Path) -> Sidecar {
        let knobs = token_knobs(dir);
        let (addr, admin, metrics) = (free_port(), free_port(), free_port());
        let child = Command::new(env!("CARGO_BIN_EXE_undust"))
            .arg("serve")
            .args([
                "--listen",
                &addr.to_string(),
                "--admin-listen",
                &admin.to_string(),
            ])
            .args(["--metrics-addr", &metrics.to_string()])
            .arg("--data-dir")
            .arg(dir.join("store"))
            .arg("--admin-read-token-file")
            .arg(knobs.admin_read_token_file.expect("read token"))
            .arg("--admin-write-token-file")
            .arg(knobs.admin_write_token_file.expect("write token"))
            .args(["--relearn-min-new-samples", "1000000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn undust");
        let sidecar = Sidecar { child, addr, admin };
        sidecar.wait_serving().await;
        sidecar
    }

    async fn wait_serving(&self) {
        wait_serving(self.addr).await;
    }

    pub(crate) fn kill9(mut self) {
        // SIGKILL: no drain, no flush.
        self.child.kill().expect("kill -9");
        let _ = self.child.wait();
    }

    pub(crate) async fn ingest(&self) -> IngestClient<tonic::transport::Channel> {
        IngestClient::connect(format!("http://{}", self.addr))
            .await
            .expect("connect")
    }

    async fn canonicalizer(&self) -> CanonicalizerClient<tonic::transport::Channel> {
        CanonicalizerClient::connect(format!("http://{}", self.addr))
            .await
            .expect("connect")
    }

    pub(crate) async fn admin(&self) -> AdminConnection {
        admin_client(self.admin, Some(WRITE_TOKEN)).await
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pages(seed: u64, count: usize) -> Vec<ObservedPage> {
    let corpus = corpus::generate(
        &CorpusConfig::new(seed, 1)
            .with_kinds(&[SiteKind::Forum])
            .with_pages(count, count),
    );
    corpus.sites.iter().flat_map(observed_pages).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_data_survives_kill_9_during_ingest_relearn_and_canonicalize() {
    let dir = tempfile::tempdir().expect("tempdir");

    // 1. Acknowledged samples survive; a stream cut by the kill leaves a consistent store.
    let sidecar = Sidecar::spawn(dir.path()).await;
    let mut ingest = sidecar.ingest().await;
    let batch = pages(21, 300);
    let summary = ingest
        .observe_pages(tokio_stream::iter(batch.clone()))
        .await
        .expect("observe")
        .into_inner();
    assert!(summary.sampled > 0);
    // Pages of one URL share a sample, so what was acknowledged is what the sidecar holds now.
    let acknowledged = sidecar
        .admin()
        .await
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner()
        .samples;
    assert!(acknowledged > 0);
    // An unacknowledged stream in flight when the process dies.
    let (sender, receiver) = tokio::sync::mpsc::channel(4);
    let mut second = sidecar.ingest().await;
    let in_flight = tokio::spawn(async move {
        second
            .observe_pages(tokio_stream::wrappers::ReceiverStream::new(receiver))
            .await
    });
    for page in pages(22, 50) {
        if sender.send(page).await.is_err() {
            break;
        }
    }
    sidecar.kill9();
    drop(sender);
    assert!(
        in_flight.await.expect("task").is_err(),
        "the stream cut by the kill was never acknowledged"
    );

    let sidecar = Sidecar::spawn(dir.path()).await;
    let mut admin = sidecar.admin().await;
    let stats = admin
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner();
    assert!(
        stats.samples >= acknowledged,
        "{} samples restored, {acknowledged} were acknowledged",
        stats.samples
    );

    // 2. Killed during a relearn: restart serves, and a relearn then succeeds.
    let started = relearn(&mut admin, "", false).await;
    assert!(!started.job_id.is_empty());
    sidecar.kill9();
    let sidecar = Sidecar::spawn(dir.path()).await;
    let mut admin = sidecar.admin().await;
    let job = relearn(&mut admin, "", true).await;
    assert!(job
        .job
        .expect("job")
        .hosts
        .iter()
        .all(|h| h.state == JobState::Succeeded as i32));

    // 3. Acknowledged canonical forms survive a kill -9 sent the moment the answer arrives: the
    //    answer waits for their commit (--seen-durability commit, the default).
    let mut client = sidecar.canonicalizer().await;
    let urls: Vec<String> = (0..2_000)
        .map(|i| format!("http://crash.example/item/{i}"))
        .collect();
    let answer = client
        .canonicalize(CanonicalizeRequest {
            urls: urls.clone(),
            dry_run: false,
            sequence: 0,
            request_id: String::new(),
        })
        .await
        .expect("record")
        .into_inner();
    assert!(answer
        .results
        .iter()
        .all(|r| r.decision == Decision::New as i32));
    sidecar.kill9();
    let sidecar = Sidecar::spawn(dir.path()).await;
    let mut client = sidecar.canonicalizer().await;
    let answer = client
        .canonicalize(CanonicalizeRequest {
            urls,
            dry_run: true,
            sequence: 0,
            request_id: String::new(),
        })
        .await
        .expect("look")
        .into_inner();
    let duplicates = answer
        .results
        .iter()
        .filter(|r| r.decision == Decision::Duplicate as i32)
        .count();
    assert_eq!(
        duplicates, 2_000,
        "every acknowledged canonical form is still known after kill -9"
    );
    sidecar.kill9();
}
