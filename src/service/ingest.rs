//! The `Ingest` gRPC service: pages the crawler fetched, the evidence rules are learned from.
//!
//! Pages are judged one by one by [`crate::pipeline::accept`], exactly as the offline commands
//! judge records: an invalid page is counted and described in the summary (the first
//! [`MAX_REJECTIONS_REPORTED`]), it does not end the stream; evidence is analysed off the async
//! threads ([`crate::pipeline::analyze`]) and offered to its host's sample. A stream's pages are
//! analysed up to [`ANALYSES_IN_FLIGHT`] at once on the blocking pool (on every core) and observed
//! in the stream's order, each after the page before it, so the template models and samples are
//! those of a page-by-page run; beyond that a fast client is slowed by HTTP/2 flow control;
//! beyond [`MAX_CONCURRENT_STREAMS`] streams at once the call is refused with RESOURCE_EXHAUSTED.
//! The summary is returned only once the stream's samples are durable in the store: a returned
//! summary is the acknowledgement.
//!
//! Pages are decoded leniently ([`crate::pb::lenient`]): a page whose `url` (or another text field)
//! is not UTF-8 is rejected like any other invalid page, and the stream goes on.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status, Streaming};

use super::learning::Learning;
use super::mirrors::LINKS_PER_PAGE;
use super::state::Sidecar;
use crate::ingest::pages::{PageRecord, RecordKind};
use crate::mirrors::PageLinks;
use crate::pb::lenient::ingest_server::Ingest as IngestRpc;
use crate::pb::lenient::ObservedPage;
use crate::pb::{ObservePagesSummary, PageRejection};
use crate::pipeline::{analyze, judge, Rejection, Verdict};
use crate::telemetry;

/// Rejections described in one summary; the count covers all of them.
pub const MAX_REJECTIONS_REPORTED: usize = 100;
/// ObservePages streams processed at once.
pub const MAX_CONCURRENT_STREAMS: usize = 4;
/// Pages of one stream analysed at once: enough to keep every core busy from a single stream, few
/// enough that a stream holds only a few pages' bodies beyond the one being received.
pub const ANALYSES_IN_FLIGHT: usize = 8;
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

/// The page's `server_ip`: `None` when empty, a rejection when it is not an IP address.
fn server_ip(text: &str) -> Result<Option<std::net::IpAddr>, Rejection> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| Rejection {
        field: "server_ip",
        message: format!(
            "{:?} is not an IP address (IPv4 like 192.0.2.1 or IPv6 like 2001:db8::1)",
            truncate(text, 64)
        ),
    })
}

fn truncate(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
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

    /// Waits for an analysis and counts its page when it was sampled.
    async fn count_sampled(
        analysis: Option<tokio::task::JoinHandle<bool>>,
        summary: &mut ObservePagesSummary,
    ) -> Result<(), Status> {
        let Some(analysis) = analysis else {
            return Ok(());
        };
        let sampled = analysis
            .await
            .map_err(|err| Status::internal(format!("page analysis failed: {err}")))?;
        if sampled {
            summary.sampled += 1;
            metrics::counter!(telemetry::PAGES_SAMPLED).increment(1);
        }
        Ok(())
    }

    /// The page as the pipeline reads records: a status of 0 (unset) is kept so that acceptance
    /// rejects it, as it rejects any impossible status. A text field that is not UTF-8 rejects the
    /// page, naming the field.
    fn record(page: ObservedPage) -> Result<PageRecord, Rejection> {
        let text = |field: &'static str, bytes: Vec<u8>| {
            String::from_utf8(bytes).map_err(|err| Rejection {
                field,
                message: super::canonicalize::not_utf8(&err.utf8_error()),
            })
        };
        let optional = |field: &'static str, bytes: Vec<u8>| {
            text(field, bytes).map(|text| (!text.is_empty()).then_some(text))
        };
        Ok(PageRecord {
            url: text("url", page.url)?,
            final_url: optional("final_url", page.final_url)?,
            status: Some(u16::try_from(page.http_status).unwrap_or(u16::MAX)),
            content_type: optional("content_type", page.content_type)?,
            body: page.body,
            rel_canonical: optional("rel_canonical", page.rel_canonical)?,
            // A crawler reports what it fetched: content, never an archive's revisit.
            kind: RecordKind::Page,
            server_ip: server_ip(&text("server_ip", page.server_ip)?)?.map(|ip| ip.to_string()),
            payload_digest: None,
        })
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
        // Analyses under way, oldest first; each says whether its page was sampled.
        let mut in_flight: VecDeque<tokio::task::JoinHandle<bool>> = VecDeque::new();
        // Closed (or sent to) once the latest evidence page has been observed.
        let mut last_observed: Option<std::sync::mpsc::Receiver<()>> = None;
        while let Some(page) = self.next_page(&mut stream).await? {
            summary.received += 1;
            metrics::counter!(telemetry::PAGES_OBSERVED).increment(1);
            let url_echo = truncate(&String::from_utf8_lossy(&page.url), ECHOED_URL_BYTES);
            let body_len = page.body.len() as u64;
            let record = Self::record(page);
            let server_ip = record
                .as_ref()
                .ok()
                .and_then(|record| record.server_ip.as_deref())
                .and_then(|ip| ip.parse::<std::net::IpAddr>().ok());
            let verdict = match record {
                Ok(record) => judge(
                    record,
                    self.sidecar.canonicalizer.normalizer(),
                    self.learning.accept_policy(),
                ),
                Err(rejection) => Verdict::Rejected(rejection),
            };
            match verdict {
                Verdict::Rejected(rejection) => {
                    let reason = if rejection.field == "body" {
                        format!("{rejection} (--ingest-max-body-bytes)")
                    } else {
                        rejection.to_string()
                    };
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
                Verdict::Skipped(_) => {
                    summary.skipped += 1;
                    metrics::counter!(telemetry::PAGES_SKIPPED).increment(1);
                }
                Verdict::Evidence(evidence) => {
                    summary.accepted += 1;
                    let counters = self.sidecar.host(&evidence.host);
                    counters.pages_observed.fetch_add(1, Ordering::Relaxed);
                    counters.page_bytes.fetch_add(body_len, Ordering::Relaxed);
                    self.sidecar
                        .totals
                        .pages_observed
                        .fetch_add(1, Ordering::Relaxed);
                    self.sidecar
                        .totals
                        .page_bytes
                        .fetch_add(body_len, Ordering::Relaxed);
                    let learning = Arc::clone(&self.learning);
                    let sidecar = Arc::clone(&self.sidecar);
                    let (observed, now_observed) = std::sync::mpsc::sync_channel::<()>(1);
                    let previous = last_observed.replace(now_observed);
                    in_flight.push_back(tokio::task::spawn_blocking(move || {
                        let url = evidence.url.clone();
                        let served_from = evidence.final_url.clone().unwrap_or_else(|| url.clone());
                        let page = analyze(
                            *evidence,
                            sidecar.canonicalizer.normalizer(),
                            learning.content_config(),
                        );
                        // The page's out-links for mirror detection (the template model takes
                        // the page itself).
                        let links = PageLinks::of(
                            &served_from,
                            &page.analysis.link_base(&served_from),
                            page.analysis.links.iter().map(String::as_str),
                            LINKS_PER_PAGE,
                        );
                        // Observed in the stream's order: after the page before it (whose sender
                        // is dropped when it is done, even by a panic).
                        if let Some(previous) = previous {
                            let _ = previous.recv();
                        }
                        let sampled =
                            learning.observe_fetched(page, &url, &served_from, server_ip, links);
                        drop(observed);
                        sampled
                    }));
                    while in_flight.len() >= ANALYSES_IN_FLIGHT {
                        Self::count_sampled(in_flight.pop_front(), &mut summary).await?;
                    }
                }
            }
            index += 1;
        }
        while !in_flight.is_empty() {
            Self::count_sampled(in_flight.pop_front(), &mut summary).await?;
        }
        // The summary is the acknowledgement: make the stream's samples durable first.
        let learning = Arc::clone(&self.learning);
        tokio::task::spawn_blocking(move || learning.persist_samples())
            .await
            .map_err(|err| Status::internal(format!("persisting samples failed: {err}")))?
            .map_err(|err| {
                Status::unavailable(format!("samples could not be made durable: {err}"))
            })?;
        // With a fleet, the other sidecars' learners see these samples once acknowledged.
        self.learning.share_evidence().await;
        Ok(Response::new(summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_addresses_parse_and_bad_ones_are_rejected_by_name() {
        assert_eq!(server_ip("").unwrap(), None);
        assert_eq!(server_ip(" 192.0.2.7 ").unwrap(), "192.0.2.7".parse().ok());
        assert_eq!(
            server_ip("2001:db8::1").unwrap(),
            "2001:db8::1".parse().ok()
        );
        let err = server_ip("example.com").unwrap_err();
        assert_eq!(err.field, "server_ip");
        assert!(
            err.to_string()
                .contains("\"example.com\" is not an IP address"),
            "{err}"
        );
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
