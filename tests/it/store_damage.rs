//! A damaged store never panics the sidecar: random bytes written into the middle of `undust.redb`
//! or a truncated file are detected at start, the file is moved aside, what can be trusted is kept,
//! and the damage is reported (GetStats, metrics) — or, with `--refuse-damaged-store`, refused.

use std::path::Path;
use std::time::Duration;

use undust::config::Knobs;
use undust::corpus::{self, CorpusConfig, SiteKind};
use undust::pb::{CanonicalizeRequest, GetStatsRequest, ObservedPage};

use crate::support::{observed_pages, TestServer};

fn pages(seed: u64, count: usize) -> Vec<ObservedPage> {
    let corpus = corpus::generate(
        &CorpusConfig::new(seed, 1)
            .with_kinds(&[SiteKind::Forum])
            .with_pages(count, count),
    );
    corpus.sites.iter().flat_map(observed_pages).collect()
}

/// A store with samples, templates and seen keys, written by a real sidecar; returns the samples
/// and seen-set entries it holds.
async fn pristine_store(dir: &Path) -> (u64, u64) {
    let server = TestServer::start_with(Some(dir), Knobs::default()).await;
    let mut ingest = server.ingest().await;
    ingest
        .observe_pages(tokio_stream::iter(pages(31, 300)))
        .await
        .expect("observe");
    let mut client = server.canonicalizer().await;
    let urls: Vec<String> = (0..20_000)
        .map(|i| format!("http://damage.example/item/{i}"))
        .collect();
    for chunk in urls.chunks(5_000) {
        client
            .canonicalize(CanonicalizeRequest {
                urls: chunk.to_vec(),
                dry_run: false,
                sequence: 0,
                request_id: String::new(),
            })
            .await
            .expect("record");
    }
    let stats = server
        .admin()
        .await
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner();
    server.stop().await;
    (stats.samples, stats.seen_set_entries)
}

/// Writes 4 KiB of pseudo-random bytes at `at` (deterministic, so a failure can be replayed).
fn scribble(bytes: &mut [u8], at: usize, seed: u64) {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64 ^ seed;
    let end = (at + 4096).min(bytes.len());
    for byte in &mut bytes[at..end] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *byte = state as u8;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_store_is_moved_aside_reported_and_the_sidecar_serves() {
    let pristine_dir = tempfile::tempdir().expect("tempdir");
    let (samples, seen) = pristine_store(pristine_dir.path()).await;
    assert!(
        samples > 100 && seen >= 20_000,
        "{samples} samples, {seen} seen"
    );
    let pristine = std::fs::read(pristine_dir.path().join("store").join("undust.redb"))
        .expect("read the pristine store");
    assert!(pristine.len() > 1_000_000, "{} bytes", pristine.len());

    // Random bytes at several depths of the file (most made redb panic before), and a file cut in
    // half.
    let mut reported = 0;
    let mut damaged: Vec<(String, Vec<u8>)> = [1, 3, 5, 7]
        .into_iter()
        .map(|tenth| {
            let mut bytes = pristine.clone();
            scribble(&mut bytes, pristine.len() * tenth / 10, tenth as u64);
            (format!("scribbled at {tenth}/10"), bytes)
        })
        .collect();
    damaged.push((
        "truncated to half".to_owned(),
        pristine[..pristine.len() / 2].to_vec(),
    ));

    for (what, bytes) in damaged {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("store")).expect("store dir");
        std::fs::write(dir.path().join("store").join("undust.redb"), &bytes).expect("write");
        // Serving at all is the first guarantee: start_with waits (bounded) for SERVING.
        let server = TestServer::start_with(Some(dir.path()), Knobs::default()).await;
        let mut client = server.canonicalizer().await;
        let answer = client
            .canonicalize(CanonicalizeRequest {
                urls: vec!["http://damage.example/after/1".into()],
                dry_run: false,
                sequence: 0,
                request_id: String::new(),
            })
            .await
            .unwrap_or_else(|status| panic!("{what}: canonicalize after damage: {status}"))
            .into_inner();
        assert_eq!(answer.results.len(), 1, "{what}");
        let stats = server
            .admin()
            .await
            .get_stats(GetStatsRequest {})
            .await
            .expect("stats")
            .into_inner();
        // Bytes that land in pages redb no longer uses damage nothing; anything else is reported.
        let intact = stats.samples == samples && stats.seen_set_entries == seen + 1;
        assert!(
            stats.store_damaged || stats.store_values_skipped > 0 || intact,
            "{what}: data was lost without a report: {stats:?}"
        );
        if stats.store_damaged {
            reported += 1;
            assert!(!stats.store_damaged_tables.is_empty(), "{what}: {stats:?}");
            assert!(
                Path::new(&stats.store_moved_to).is_file(),
                "{what}: the damaged file is kept at {}",
                stats.store_moved_to
            );
        }
        let (_, metrics) = crate::support::http_get(server.metrics_addr, "/metrics").await;
        assert!(
            metrics.contains("undust_store_damaged_tables")
                && metrics.contains("undust_store_values_skipped"),
            "{what}: the damage metrics are exported"
        );
        server.stop().await;

        // A restart on the recovered store is clean: the damage was dealt with once.
        let server = TestServer::start_with(Some(dir.path()), Knobs::default()).await;
        let stats = server
            .admin()
            .await
            .get_stats(GetStatsRequest {})
            .await
            .expect("stats")
            .into_inner();
        assert!(!stats.store_damaged, "{what}: restart: {stats:?}");
        server.stop().await;
    }
    assert!(
        reported >= 3,
        "{reported} of 5 damaged files were reported as damaged"
    );
}

#[test]
fn refuse_damaged_store_exits_non_zero_and_leaves_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("undust.redb");
    let garbage: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&file, &garbage).expect("write");
    let tokens = crate::support::token_knobs(dir.path());
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(["serve", "--refuse-damaged-store", "--listen", "127.0.0.1:0"])
        .args([
            "--admin-listen",
            "127.0.0.1:0",
            "--metrics-addr",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .arg("--admin-read-token-file")
        .arg(tokens.admin_read_token_file.expect("read token"))
        .arg("--admin-write-token-file")
        .arg(tokens.admin_write_token_file.expect("write token"))
        .output()
        .expect("run undust serve");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(70), "{stderr}");
    assert!(stderr.contains("--refuse-damaged-store"), "{stderr}");
    assert_eq!(
        std::fs::read(&file).expect("the file is still there"),
        garbage,
        "the damaged file is left untouched"
    );
    let _ = Duration::ZERO;
}
