//! One URL that is not UTF-8 fails neither its batch nor its ingest stream: the bytes are sent raw
//! on the wire (a client whose messages declare the `string` fields as `bytes`, the same wire
//! format), and the server answers that URL INVALID, or rejects that page, and the rest as usual.

use tokio_stream::StreamExt;
use tonic::codegen::http::uri::PathAndQuery;
use tonic_prost::ProstCodec;
use undust::pb::{CanonicalizeResponse, Decision, ObservePagesSummary};

use crate::support::TestServer;

/// `CanonicalizeRequest` as the wire sees it, with `urls` as raw bytes.
#[derive(Clone, PartialEq, prost::Message)]
struct RawCanonicalizeRequest {
    #[prost(bytes = "vec", repeated, tag = "1")]
    urls: Vec<Vec<u8>>,
    #[prost(bool, tag = "2")]
    dry_run: bool,
    #[prost(uint64, tag = "3")]
    sequence: u64,
}

/// `ObservedPage` as the wire sees it, with its text fields as raw bytes.
#[derive(Clone, PartialEq, prost::Message)]
struct RawObservedPage {
    #[prost(bytes = "vec", tag = "1")]
    url: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    final_url: Vec<u8>,
    #[prost(uint32, tag = "3")]
    http_status: u32,
    #[prost(bytes = "vec", tag = "4")]
    content_type: Vec<u8>,
    #[prost(bytes = "vec", tag = "5")]
    body: Vec<u8>,
}

const HTML: &str = "<html><body><article><p>Duplicate content detection needs enough words to be \
    meaningful evidence, so this paragraph carries a reasonable amount of text about crawling and \
    canonical forms.</p></article></body></html>";

fn raw_page(url: &[u8], content_type: &[u8]) -> RawObservedPage {
    RawObservedPage {
        url: url.to_vec(),
        http_status: 200,
        content_type: content_type.to_vec(),
        body: HTML.as_bytes().to_vec(),
        ..RawObservedPage::default()
    }
}

async fn raw_client(server: &TestServer) -> tonic::client::Grpc<tonic::transport::Channel> {
    let mut grpc = tonic::client::Grpc::new(server.channel().await);
    grpc.ready().await.expect("ready");
    grpc
}

#[tokio::test]
async fn a_url_that_is_not_utf8_is_invalid_and_the_rest_of_its_batch_is_answered() {
    let server = TestServer::start().await;
    let mut grpc = raw_client(&server).await;
    let request = RawCanonicalizeRequest {
        urls: vec![
            b"http://example.com/a?utm_source=x".to_vec(),
            b"http://example.com/\xff\xfeb".to_vec(),
            b"http://example.com/a".to_vec(),
        ],
        dry_run: false,
        sequence: 7,
    };
    let codec: ProstCodec<RawCanonicalizeRequest, CanonicalizeResponse> = ProstCodec::default();
    let response = grpc
        .unary(
            tonic::Request::new(request),
            PathAndQuery::from_static("/undust.v1.Canonicalizer/Canonicalize"),
            codec,
        )
        .await
        .expect("the batch is answered despite one bad URL")
        .into_inner();
    assert_eq!(response.sequence, 7);
    let decisions: Vec<i32> = response.results.iter().map(|r| r.decision).collect();
    assert_eq!(
        decisions,
        vec![
            Decision::New as i32,
            Decision::Invalid as i32,
            Decision::Duplicate as i32
        ]
    );
    let invalid = &response.results[1];
    assert!(
        invalid.invalid_reason.contains("UTF-8") && invalid.invalid_reason.contains("offset 19"),
        "{}",
        invalid.invalid_reason
    );
    assert!(invalid.canonical.is_empty() && invalid.enqueue_url.is_empty());
    assert_eq!(response.results[2].enqueue_url, "http://example.com/a");

    // On a stream, the batch with the bad URL is answered and the next one still is.
    let mut grpc = raw_client(&server).await;
    let batches = vec![
        RawCanonicalizeRequest {
            urls: vec![b"http://example.com/\xc3(".to_vec()],
            dry_run: false,
            sequence: 1,
        },
        RawCanonicalizeRequest {
            urls: vec![b"http://example.com/z".to_vec()],
            dry_run: false,
            sequence: 2,
        },
    ];
    let codec: ProstCodec<RawCanonicalizeRequest, CanonicalizeResponse> = ProstCodec::default();
    let mut answers = grpc
        .streaming(
            tonic::Request::new(tokio_stream::iter(batches)),
            PathAndQuery::from_static("/undust.v1.Canonicalizer/CanonicalizeStream"),
            codec,
        )
        .await
        .expect("stream")
        .into_inner();
    let first = answers.next().await.expect("first").expect("answered");
    assert_eq!(first.sequence, 1);
    assert_eq!(first.results[0].decision, Decision::Invalid as i32);
    let second = answers.next().await.expect("second").expect("answered");
    assert_eq!(second.sequence, 2);
    assert_eq!(second.results[0].decision, Decision::New as i32);
    assert!(answers.next().await.is_none());
    server.stop().await;
}

#[tokio::test]
async fn a_page_with_a_url_that_is_not_utf8_is_rejected_and_the_stream_goes_on() {
    let server = TestServer::start().await;
    let mut grpc = raw_client(&server).await;
    let pages = vec![
        raw_page(b"http://shop.example/item?id=1", b"text/html"),
        raw_page(b"http://shop.example/\xe9t\xe9", b"text/html"),
        raw_page(b"http://shop.example/item?id=2", b"text/\xffhtml"),
        raw_page(b"http://shop.example/item?id=3", b"text/html"),
    ];
    let codec: ProstCodec<RawObservedPage, ObservePagesSummary> = ProstCodec::default();
    let summary = grpc
        .client_streaming(
            tonic::Request::new(tokio_stream::iter(pages)),
            PathAndQuery::from_static("/undust.v1.Ingest/ObservePages"),
            codec,
        )
        .await
        .expect("the stream is summarised despite bad pages")
        .into_inner();
    assert_eq!(summary.received, 4);
    assert_eq!(summary.accepted, 2);
    assert_eq!(summary.rejected, 2);
    let indexes: Vec<u64> = summary.rejections.iter().map(|r| r.index).collect();
    assert_eq!(indexes, vec![1, 2]);
    let url = &summary.rejections[0];
    assert!(
        url.reason.starts_with("url: not valid UTF-8") && url.reason.contains("offset 20"),
        "{}",
        url.reason
    );
    assert_eq!(
        url.url, "http://shop.example/\u{fffd}t\u{fffd}",
        "echoed lossily"
    );
    assert!(
        summary.rejections[1]
            .reason
            .starts_with("content_type: not valid UTF-8"),
        "{}",
        summary.rejections[1].reason
    );
    server.stop().await;
}
