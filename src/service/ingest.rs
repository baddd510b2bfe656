//! The `Ingest` gRPC service: pages the crawler fetched, the evidence rules are learned from.
//!
//! Pages are validated one by one; an invalid page is counted and described in the summary (the
//! first [`MAX_REJECTIONS_REPORTED`]), it does not end the stream. Valid 2xx HTML pages are analysed
//! (pagelets, template features, fingerprint) off the async threads and offered to their host's
//! sample. Each stream is processed page by page, so a fast client is slowed by HTTP/2 flow control;
//! beyond [`MAX_CONCURRENT_STREAMS`] streams at once the call is refused with RESOURCE_EXHAUSTED.
//! The summary is returned only once the stream's samples are durable in the store: a returned
//! summary is the acknowledgement.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status, Streaming};

use super::learning::{Learning, ObservedEvidence};
use super::state::Sidecar;
use crate::pb::ingest_server::Ingest as IngestRpc;
use crate::pb::{ObservePagesSummary, ObservedPage, PageRejection};
use crate::telemetry;

/// Rejections described in one summary; the count covers all of them.
pub const MAX_REJECTIONS_REPORTED: usize = 100;
/// ObservePages streams processed at once.
pub const MAX_CONCURRENT_STREAMS: usize = 4;
/// Bytes of a rejected page's URL echoed back.
const ECHOED_URL_BYTES: usize = 256;

/// How long a stream may wait for its next page once the sidecar is draining: a stream that is
/// sending finishes, an idle one ends at once instead of holding the drain for its grace period.
const DRAIN_IDLE: std::time::Duration = std::time::Duration::from_millis(200);

/// The Ingest service.
pub struct IngestService {
    sidecar: Arc<Sidecar>,
    learning: Arc<Learning>,
    streams: Arc<Semaphore>,
    /// Turns `true` when the sidecar starts draining.
    draining: Option<tokio::sync::watch::Receiver<bool>>,
}

/// What to do with one page.
enum Verdict {
    Accept(Box<ObservedEvidence>),
    Skip(&'static str),
    Reject(String),
}

fn truncate(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// Whether a page is HTML by its Content-Type, or, when there is none, by the look of its body.
fn is_html(content_type: &str, body: &[u8]) -> bool {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media.as_str() {
        "text/html" | "application/xhtml+xml" => true,
        "" => {
            let start = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
            start.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'<')
        }
        _ => false,
    }
}

impl IngestService {
    pub fn new(sidecar: Arc<Sidecar>, learning: Arc<Learning>) -> Self {
        IngestService {
            sidecar,
            learning,
            streams: Arc::new(Semaphore::new(MAX_CONCURRENT_STREAMS)),
            draining: None,
        }
    }

    /// Ends idle streams quickly once `draining` turns `true`.
    pub fn with_drain(mut self, draining: tokio::sync::watch::Receiver<bool>) -> Self {
        self.draining = Some(draining);
        self
    }

    /// The stream's next page; an error when none came within the idle timeout (shorter while
    /// draining). Ending the stream releases its slot; its pages were not acknowledged.
    async fn next_page(
        &self,
        stream: &mut Streaming<ObservedPage>,
    ) -> Result<Option<ObservedPage>, Status> {
        let idle = self.sidecar.config.ingest_idle_timeout;
        let mut draining = self.draining.clone();
        let drain_started = async {
            match draining.as_mut() {
                Some(draining) => {
                    let _ = draining.wait_for(|stop| *stop).await;
                }
                None => std::future::pending().await,
            }
        };
        let next = stream.next();
        tokio::pin!(next);
        let waited = tokio::select! {
            next = &mut next => return next.transpose(),
            () = tokio::time::sleep(idle) => idle,
            () = drain_started => match tokio::time::timeout(DRAIN_IDLE, &mut next).await {
                Ok(next) => return next.transpose(),
                Err(_) => DRAIN_IDLE,
            },
        };
        metrics::counter!(telemetry::INGEST_STREAMS_ENDED_IDLE).increment(1);
        Err(Status::deadline_exceeded(format!(
            "no page for {} ms{}; the stream was ended and its pages are not acknowledged: resend \
             them (--ingest-idle-timeout-secs)",
            waited.as_millis(),
            if waited == DRAIN_IDLE {
                " while the sidecar is shutting down"
            } else {
                ""
            }
        )))
    }

    fn judge(&self, page: ObservedPage) -> Verdict {
        let normalizer = self.sidecar.canonicalizer.normalizer();
        if page.url.is_empty() {
            return Verdict::Reject("url is required".into());
        }
        let url = match normalizer.normalize(&page.url) {
            Ok(url) => url,
            Err(reason) => return Verdict::Reject(format!("url: {reason}")),
        };
        let final_url = if page.final_url.is_empty() {
            None
        } else {
            match normalizer.normalize(&page.final_url) {
                Ok(url) => Some(url),
                Err(reason) => return Verdict::Reject(format!("final_url: {reason}")),
            }
        };
        let rel_canonical = if page.rel_canonical.is_empty() {
            None
        } else {
            match normalizer.normalize(&page.rel_canonical) {
                Ok(url) => Some(url),
                Err(reason) => return Verdict::Reject(format!("rel_canonical: {reason}")),
            }
        };
        if !(100..=599).contains(&page.http_status) {
            return Verdict::Reject(format!(
                "http_status {} is not an HTTP status (100 to 599)",
                page.http_status
            ));
        }
        let max_body = self.sidecar.config.learning.ingest_max_body_bytes;
        if page.body.len() > max_body {
            return Verdict::Reject(format!(
                "body of {} bytes exceeds the limit of {max_body} bytes (--ingest-max-body-bytes)",
                page.body.len()
            ));
        }
        if !(200..=299).contains(&page.http_status) {
            return Verdict::Skip("status");
        }
        if !is_html(&page.content_type, &page.body) {
            return Verdict::Skip("content type");
        }
        Verdict::Accept(Box::new(ObservedEvidence {
            url,
            final_url,
            rel_canonical,
            body: page.body,
        }))
    }
}

#[tonic::async_trait]
impl IngestRpc for IngestService {
    async fn observe_pages(
        &self,
        request: Request<Streaming<ObservedPage>>,
    ) -> Result<Response<ObservePagesSummary>, Status> {
        let Ok(_permit) = Arc::clone(&self.streams).try_acquire_owned() else {
            metrics::counter!(telemetry::INGEST_BACKPRESSURE).increment(1);
            return Err(Status::resource_exhausted(format!(
                "ingest is saturated ({MAX_CONCURRENT_STREAMS} streams in progress); retry the pages \
                 of this stream later with backoff"
            )));
        };
        let mut stream = request.into_inner();
        let mut summary = ObservePagesSummary::default();
        let mut index = 0u64;
        while let Some(page) = self.next_page(&mut stream).await? {
            summary.received += 1;
            metrics::counter!(telemetry::PAGES_OBSERVED).increment(1);
            let url_echo = truncate(&page.url, ECHOED_URL_BYTES);
            let body_len = page.body.len() as u64;
            match self.judge(page) {
                Verdict::Reject(reason) => {
                    summary.rejected += 1;
                    metrics::counter!(telemetry::PAGES_REJECTED).increment(1);
                    if summary.rejections.len() < MAX_REJECTIONS_REPORTED {
                        summary.rejections.push(PageRejection {
                            index,
                            url: url_echo,
                            reason,
                        });
                    }
                }
                Verdict::Skip(_why) => {
                    summary.skipped += 1;
                    metrics::counter!(telemetry::PAGES_SKIPPED).increment(1);
                }
                Verdict::Accept(evidence) => {
                    summary.accepted += 1;
                    let host = evidence.url.host_str().unwrap_or_default().to_owned();
                    if let Some(counters) = self.sidecar.host(&host) {
                        counters.pages_observed.fetch_add(1, Ordering::Relaxed);
                        counters.page_bytes.fetch_add(body_len, Ordering::Relaxed);
                    }
                    self.sidecar
                        .totals
                        .pages_observed
                        .fetch_add(1, Ordering::Relaxed);
                    self.sidecar
                        .totals
                        .page_bytes
                        .fetch_add(body_len, Ordering::Relaxed);
                    let learning = Arc::clone(&self.learning);
                    let sampled = tokio::task::spawn_blocking(move || learning.observe(*evidence))
                        .await
                        .map_err(|err| Status::internal(format!("page analysis failed: {err}")))?;
                    if sampled {
                        summary.sampled += 1;
                        metrics::counter!(telemetry::PAGES_SAMPLED).increment(1);
                    }
                }
            }
            index += 1;
        }
        // The summary is the acknowledgement: make the stream's samples durable first.
        let learning = Arc::clone(&self.learning);
        tokio::task::spawn_blocking(move || learning.persist_samples())
            .await
            .map_err(|err| Status::internal(format!("persisting samples failed: {err}")))?
            .map_err(|err| {
                Status::unavailable(format!("samples could not be made durable: {err}"))
            })?;
        Ok(Response::new(summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_recognised_by_type_or_by_body() {
        assert!(is_html("text/html; charset=utf-8", b""));
        assert!(is_html("application/xhtml+xml", b""));
        assert!(is_html("", b"  \n<!doctype html><p>x"));
        assert!(is_html("", b"\xEF\xBB\xBF<html>"));
        assert!(!is_html("", b"{\"json\": true}"));
        assert!(!is_html("application/pdf", b"<html>"));
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
