//! Credentials in URLs (`user:password@`) are secrets: canonical forms and enqueue URLs drop them
//! by default, the store never holds them, and the data directory and its files are private to the
//! sidecar's user.

use undust::config::Knobs;
use undust::pb::{CanonicalizeRequest, Decision, ObservedPage};

use crate::support::TestServer;

const PASSWORD: &str = "s3cretPassw0rd";

fn page(url: String, seed: u64) -> ObservedPage {
    ObservedPage {
        url,
        http_status: 200,
        content_type: "text/html".into(),
        body: format!(
            "<html><body><article><p>{}</p></article></body></html>",
            crate::support::prose(seed, 120)
        )
        .into_bytes(),
        ..ObservedPage::default()
    }
}

#[tokio::test]
async fn passwords_in_urls_are_neither_answered_nor_stored_and_the_data_is_private() {
    let temp = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_with(Some(temp.path()), Knobs::default()).await;
    let mut client = server.canonicalizer().await;
    let secret_url = format!("http://alice:{PASSWORD}@shop.example/item?id=1&utm_source=x");
    let answer = client
        .canonicalize(CanonicalizeRequest {
            urls: vec![secret_url.clone(), "http://shop.example/item?id=1".into()],
            ..CanonicalizeRequest::default()
        })
        .await
        .expect("canonicalize")
        .into_inner();
    assert_eq!(answer.results[0].decision, Decision::New as i32);
    assert_eq!(answer.results[0].canonical, "http://shop.example/item?id=1");
    assert_eq!(
        answer.results[0].enqueue_url,
        "http://shop.example/item?id=1"
    );
    assert_eq!(
        answer.results[1].decision,
        Decision::Duplicate as i32,
        "with and without credentials, one page"
    );

    let mut ingest = server.ingest().await;
    let pages: Vec<ObservedPage> = (0..20)
        .map(|i| page(format!("http://bob:{PASSWORD}@shop.example/item?id={i}"), i))
        .collect();
    let summary = ingest
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.sampled, 20, "{summary:?}");
    let data_dir = server.data_dir.join("store");
    server.stop().await;

    let mut stored = Vec::new();
    for entry in std::fs::read_dir(&data_dir).expect("data dir") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            stored.extend(std::fs::read(&path).expect("read store file"));
        }
    }
    assert!(
        stored
            .windows(b"shop.example".len())
            .any(|w| w == b"shop.example"),
        "the samples were stored"
    );
    assert!(
        !stored
            .windows(PASSWORD.len())
            .any(|w| w == PASSWORD.as_bytes()),
        "a password reached the data directory"
    );

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &std::path::Path| {
            std::fs::metadata(path)
                .expect("metadata")
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode(&data_dir), 0o700, "the data directory is private");
        let store_file = data_dir.join("undust.redb");
        assert_eq!(mode(&store_file), 0o600, "the store is private");
    }
}

#[tokio::test]
async fn credentials_are_kept_in_canonical_forms_only_when_asked() {
    let server = TestServer::start_with(
        None,
        Knobs {
            strip_userinfo: Some(false),
            ..Knobs::default()
        },
    )
    .await;
    let mut client = server.canonicalizer().await;
    let answer = client
        .canonicalize(CanonicalizeRequest {
            urls: vec!["http://alice:pw@shop.example/item#x".into()],
            ..CanonicalizeRequest::default()
        })
        .await
        .expect("canonicalize")
        .into_inner();
    assert_eq!(
        answer.results[0].canonical,
        "http://alice:pw@shop.example/item"
    );
    server.stop().await;
}
