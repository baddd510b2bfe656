//! ObservePages: validation, skipping, summaries, limits and backpressure.

use undust::config::Knobs;
use undust::pb::{GetStatsRequest, ObservedPage};

use crate::support::TestServer;

fn page(url: &str, status: u32, content_type: &str, body: &str) -> ObservedPage {
    ObservedPage {
        url: url.into(),
        http_status: status,
        content_type: content_type.into(),
        body: body.as_bytes().to_vec(),
        ..ObservedPage::default()
    }
}

const HTML: &str = "<html><body><nav><a href=/a>a</a><a href=/b>b</a><a href=/c>c</a></nav>\
    <article><p>Duplicate content detection needs enough words to be meaningful evidence, so this \
    paragraph carries a reasonable amount of text about crawling and canonical forms.</p></article></body></html>";

#[tokio::test]
async fn pages_are_validated_one_by_one_and_summarised() {
    let server = TestServer::start_with(
        None,
        Knobs {
            ingest_max_body_bytes: Some(4_096),
            ..Knobs::default()
        },
    )
    .await;
    let mut ingest = server.ingest().await;
    let pages = vec![
        page(
            "http://shop.example/item?id=1",
            200,
            "text/html; charset=utf-8",
            HTML,
        ),
        page("http://shop.example/item?id=2", 200, "", HTML),
        page("http://shop.example/missing", 404, "text/html", HTML),
        page(
            "http://shop.example/logo.png",
            200,
            "image/png",
            "\u{89}PNG",
        ),
        page("", 200, "text/html", HTML),
        page("ftp://shop.example/file", 200, "text/html", HTML),
        page(
            "http://shop.example/huge",
            200,
            "text/html",
            &"x".repeat(5_000),
        ),
        page("http://shop.example/nostatus", 0, "text/html", HTML),
        ObservedPage {
            final_url: "not a url".into(),
            ..page("http://shop.example/r", 200, "text/html", HTML)
        },
    ];
    let summary = ingest
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.received, 9);
    assert_eq!(summary.accepted, 2);
    assert_eq!(summary.sampled, 2);
    assert_eq!(summary.skipped, 2);
    assert_eq!(summary.rejected, 5);
    let indexes: Vec<u64> = summary.rejections.iter().map(|r| r.index).collect();
    assert_eq!(indexes, vec![4, 5, 6, 7, 8]);
    assert!(
        summary.rejections[2].reason.contains("4096"),
        "{}",
        summary.rejections[2].reason
    );
    assert!(
        summary.rejections[4].reason.starts_with("final_url"),
        "{}",
        summary.rejections[4].reason
    );

    let mut admin = server.admin().await;
    let stats = admin
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner();
    assert_eq!(stats.pages_observed, 2);
    assert_eq!(stats.samples, 2);
    server.stop().await;
}

#[tokio::test]
async fn too_many_concurrent_streams_get_resource_exhausted() {
    let server = TestServer::start().await;
    // Hold the maximum number of streams open, each waiting for its next page.
    let mut senders = Vec::new();
    let mut calls = Vec::new();
    for _ in 0..undust::service::ingest::MAX_CONCURRENT_STREAMS {
        let (sender, receiver) = tokio::sync::mpsc::channel::<ObservedPage>(1);
        let mut ingest = server.ingest().await;
        calls.push(tokio::spawn(async move {
            ingest
                .observe_pages(tokio_stream::wrappers::ReceiverStream::new(receiver))
                .await
        }));
        sender
            .send(page("http://busy.example/1", 200, "text/html", HTML))
            .await
            .expect("send");
        senders.push(sender);
    }
    // Give the server time to accept every stream.
    let mut refused = None;
    for _ in 0..100 {
        let mut ingest = server.ingest().await;
        let result = ingest
            .observe_pages(tokio_stream::iter(vec![page(
                "http://busy.example/2",
                200,
                "text/html",
                HTML,
            )]))
            .await;
        if let Err(status) = result {
            refused = Some(status);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let status = refused.expect("a stream beyond the limit is refused");
    assert_eq!(status.code(), tonic::Code::ResourceExhausted);
    assert!(status.message().contains("retry"), "{}", status.message());
    drop(senders);
    for call in calls {
        let summary = call
            .await
            .expect("task")
            .expect("held streams complete")
            .into_inner();
        assert_eq!(summary.received, 1);
    }
    server.stop().await;
}

/// One URL is one sample, whatever the client resends: the same page 500 times, then a whole
/// stream resent as the proto tells clients to do after a cancelled stream.
#[tokio::test]
async fn a_url_resent_is_one_sample_and_the_latest_fetch_wins() {
    let server = TestServer::start().await;
    let mut ingest = server.ingest().await;
    let same: Vec<ObservedPage> = (0..500)
        .map(|_| page("http://retry.example/item?id=1", 200, "text/html", HTML))
        .collect();
    let summary = ingest
        .observe_pages(tokio_stream::iter(same))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.accepted, 500);
    let stream: Vec<ObservedPage> = (0..50)
        .map(|i| {
            page(
                &format!("http://retry.example/item?id={i}"),
                200,
                "text/html",
                HTML,
            )
        })
        .collect();
    for _ in 0..2 {
        ingest
            .observe_pages(tokio_stream::iter(stream.clone()))
            .await
            .expect("observe");
    }
    let mut admin = server.admin().await;
    let stats = admin
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner();
    assert_eq!(stats.samples, 50, "one sample per URL");
    server.stop().await;
}

/// An article of 80 words of its own: no two pages share text beyond the navigation.
fn article_page(url: &str, words_of: &str) -> ObservedPage {
    let words: Vec<String> = (0..80).map(|k| format!("{words_of}w{k}")).collect();
    let body = format!(
        "<html><body><nav><a href=/a>a</a><a href=/b>b</a><a href=/c>c</a></nav>\
         <article><p>{}</p><p>{}</p></article></body></html>",
        words[..40].join(" "),
        words[40..].join(" ")
    );
    page(url, 200, "text/html", &body)
}

/// A stream's pages are observed in its order, however they are handed to the analysing threads:
/// each URL is sent three times in a row, its text changing each time, and a second URL repeats
/// its last text. One URL keeps one sample, its latest fetch, so each pair is a duplicate
/// cluster; a page observed before the one sent ahead of it leaves an earlier text in the sample
/// and its pair apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streams_pages_are_observed_in_the_order_sent() {
    let server = TestServer::start_with(
        None,
        Knobs {
            relearn_min_new_samples: Some(1_000_000),
            relearn_interval_secs: Some(86_400),
            ..Knobs::default()
        },
    )
    .await;
    let pairs = 40;
    let mut pages = Vec::new();
    for i in 0..pairs {
        for fetch in 0..3 {
            pages.push(article_page(
                &format!("http://order.example/item/{i}"),
                &format!("i{i}f{fetch}"),
            ));
        }
        pages.push(article_page(
            &format!("http://order.example/copy/{i}"),
            &format!("i{i}f2"),
        ));
    }
    let mut ingest = server.ingest().await;
    let summary = ingest
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(
        (summary.accepted, summary.sampled),
        (4 * pairs, 4 * pairs),
        "{summary:?}"
    );
    let mut admin = server.admin().await;
    let job = crate::support::relearn(&mut admin, "order.example", true)
        .await
        .job
        .expect("job");
    let clusters: u64 = job.hosts.iter().map(|host| host.clusters).sum();
    assert_eq!(
        clusters, pairs,
        "every URL's sample is its latest fetch: {job:?}"
    );
    let stats = admin
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner();
    assert_eq!(stats.samples, 2 * pairs, "one sample per URL");
    server.stop().await;
}
