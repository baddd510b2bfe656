//! Per-host state follows the sample budget, not the crawl: a sidecar streamed many more hosts
//! than its budget holds keeps per-host entries only for the hosts it holds.

use undust::config::Knobs;
use undust::pb::{CanonicalizeRequest, ListHostsRequest, ObservedPage};
use undust::service::state::{BUDGET_BYTES_PER_TRACKED_HOST, MIN_TRACKED_HOSTS};

use crate::support::{AdminConnection, TestServer};

/// A small budget: a few dozen hosts of one page each fit.
const BUDGET: u64 = 1 << 20;

fn page_of_host(host: usize) -> ObservedPage {
    let links: String = (0..8)
        .map(|k| format!("<a href=\"/section/{k}\">Section {k} of site {host}</a>"))
        .collect();
    let body = format!(
        "<html><body><nav>{links}</nav><article><p>Story of site {host}: {}</p></article>\
         <footer>site {host}</footer></body></html>",
        "words about crawling and canonical forms ".repeat(6)
    );
    ObservedPage {
        url: format!("http://site{host}.example/story/1"),
        http_status: 200,
        content_type: "text/html; charset=utf-8".into(),
        body: body.into_bytes(),
        server_ip: format!("10.{}.{}.1", host / 256 % 256, host % 256),
        ..ObservedPage::default()
    }
}

/// Every host ListHosts names, page by page (bounded).
async fn all_listed_hosts(admin: &mut AdminConnection) -> Vec<undust::pb::HostSummary> {
    let mut hosts = Vec::new();
    let mut token = String::new();
    for _ in 0..1_000 {
        let page = admin
            .list_hosts(ListHostsRequest {
                page_size: 1_000,
                page_token: token.clone(),
            })
            .await
            .expect("list hosts")
            .into_inner();
        hosts.extend(page.hosts);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    hosts
}

/// 2,000 hosts streamed, of which the budget holds a few dozen: the sidecar's per-host entries
/// (counters, learning state) are of those held, not of every host streamed. Before the counters
/// of a host went with the host, all 2,000 kept an entry (about 150 bytes each, 1 million hosts
/// at most), so ListHosts named 2,000 hosts, nearly all without a sample.
#[tokio::test]
async fn hosts_streamed_beyond_the_budget_keep_no_per_host_entries() {
    let server = TestServer::start_with(
        None,
        Knobs {
            sample_budget_bytes: Some(BUDGET),
            // No relearn during the test: a host with rules keeps its entries by design.
            relearn_min_new_samples: Some(1_000_000),
            relearn_interval_secs: Some(86_400),
            ..Knobs::default()
        },
    )
    .await;
    let streamed = 2_000;
    let mut ingest = server.ingest().await;
    for first in (0..streamed).step_by(500) {
        let pages: Vec<ObservedPage> = (first..first + 500).map(page_of_host).collect();
        let summary = ingest
            .observe_pages(tokio_stream::iter(pages))
            .await
            .expect("observe")
            .into_inner();
        assert_eq!(summary.accepted, 500);
    }
    let stats = server.stats().await;
    let mut admin = server.admin().await;
    let listed = all_listed_hosts(&mut admin).await;
    assert_eq!(listed.len() as u64, stats.hosts);
    assert!(
        stats.hosts < streamed as u64 / 4,
        "{} hosts with per-host entries of {streamed} streamed",
        stats.hosts
    );
    let without_samples: Vec<&str> = listed
        .iter()
        .filter(|host| host.samples == 0)
        .map(|host| host.host.as_str())
        .collect();
    assert!(
        without_samples.is_empty(),
        "{} hosts keep entries without a sample, e.g. {:?}",
        without_samples.len(),
        without_samples.first()
    );
    // The newest hosts are held, with their counters.
    let newest = format!("site{}.example", streamed - 1);
    let newest = listed
        .iter()
        .find(|host| host.host == newest)
        .expect("the newest host is held");
    assert_eq!(newest.pages_observed, 1);
    server.stop().await;
}

/// Canonicalize names many more hosts than the counters may track: the table stays within its
/// limit (the budget's share, at least `MIN_TRACKED_HOSTS`), the hosts in use keep their
/// counts and the totals count every URL. Before, every host got counters up to 1 million hosts.
#[tokio::test]
async fn canonicalized_hosts_are_tracked_within_the_budgets_limit() {
    let server = TestServer::start_with(
        None,
        Knobs {
            sample_budget_bytes: Some(BUDGET),
            ..Knobs::default()
        },
    )
    .await;
    let limit = (BUDGET / BUDGET_BYTES_PER_TRACKED_HOST).max(MIN_TRACKED_HOSTS as u64);
    let mut client = server.canonicalizer().await;
    // 20 batches of a quarter of the limit in new hosts: five times the limit in all, and the
    // host in use comes back well before half the table has been replaced.
    let batches = 20;
    let per_batch = limit as usize / 4;
    for batch in 0..batches {
        let mut urls: Vec<String> = (0..per_batch)
            .map(|i| format!("http://h{batch}-{i}.example/page"))
            .collect();
        // One host in use all along.
        urls.push(format!("http://busy.example/page/{batch}"));
        client
            .canonicalize(CanonicalizeRequest {
                urls,
                dry_run: false,
                sequence: 0,
                request_id: String::new(),
            })
            .await
            .expect("canonicalize");
    }
    let stats = server.stats().await;
    let mut admin = server.admin().await;
    assert_eq!(
        stats.urls_canonicalized,
        batches as u64 * (per_batch as u64 + 1)
    );
    assert!(
        stats.hosts <= limit,
        "{} hosts tracked, limit {limit}",
        stats.hosts
    );
    let listed = all_listed_hosts(&mut admin).await;
    let busy = listed
        .iter()
        .find(|host| host.host == "busy.example")
        .expect("the host in use is still tracked");
    assert_eq!(busy.urls_canonicalized, batches as u64);
    server.stop().await;
}
