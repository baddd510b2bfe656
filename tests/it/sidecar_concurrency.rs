//! Canonicalize under load while relearning swaps rule sets: every answer of a batch comes from
//! one consistent rule version, and versions only move forward. Bounded in count and time.

use std::time::{Duration, Instant};

use undust::config::Knobs;
use undust::corpus::{self, CorpusConfig, SiteKind};
use undust::pb::CanonicalizeRequest;

use crate::support::{observed_pages, relearn, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_batch_sees_one_rule_version_while_rules_are_swapped() {
    let server = TestServer::start_with(
        None,
        Knobs {
            relearn_min_new_samples: Some(1_000_000),
            ..Knobs::default()
        },
    )
    .await;
    let corpus = corpus::generate(
        &CorpusConfig::new(9, 1)
            .with_kinds(&[SiteKind::Shop])
            .with_pages(600, 600),
    );
    let site = &corpus.sites[0];
    let pages = observed_pages(site);
    server
        .ingest()
        .await
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe");
    let urls: Vec<String> = site.pages.iter().map(|p| p.url.clone()).collect();

    // Relearn repeatedly in the background: each run puts a new version live.
    let mut admin = server.admin().await;
    let host = site.host.clone();
    let relearner = tokio::spawn(async move {
        let mut versions = Vec::new();
        for _ in 0..5 {
            let job = relearn(&mut admin, &host, true).await;
            versions.push(job.job.expect("job").hosts[0].rules_version);
        }
        versions
    });

    let deadline = Instant::now() + Duration::from_secs(60);
    let mut callers = Vec::new();
    for worker in 0..3 {
        let mut client = server.canonicalizer().await;
        let urls = urls.clone();
        callers.push(tokio::spawn(async move {
            let mut seen_versions = Vec::new();
            for round in 0..200 {
                if Instant::now() > deadline {
                    break;
                }
                let answer = client
                    .canonicalize(CanonicalizeRequest {
                        urls: urls.clone(),
                        dry_run: true,
                        sequence: round,
                        request_id: String::new(),
                    })
                    .await
                    .expect("canonicalize")
                    .into_inner();
                let first = answer.results[0].rules_version;
                assert!(
                    answer.results.iter().all(|r| r.rules_version == first),
                    "worker {worker} round {round}: one batch answered by several rule versions"
                );
                seen_versions.push(first);
                if seen_versions.len() > 20 && seen_versions.last() >= Some(&5) {
                    break;
                }
            }
            seen_versions
        }));
    }
    let versions = relearner.await.expect("relearner");
    assert_eq!(
        versions,
        vec![1, 2, 3, 4, 5],
        "each relearn puts the next version live"
    );
    for caller in callers {
        let seen = caller.await.expect("caller");
        assert!(!seen.is_empty());
        assert!(
            seen.windows(2).all(|w| w[0] <= w[1]),
            "versions never go backwards: {seen:?}"
        );
    }
    server.stop().await;
}
