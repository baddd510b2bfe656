//! The `Ingest` gRPC service: pages the crawler fetched, the evidence rules are learned from.
//!
//! Pages are judged one by one by [`crate::pipeline::accept`], exactly as the offline commands
//! judge records: an invalid page is counted and described in the summary (the first
//! [`MAX_REJECTIONS_REPORTED`]), it does not end the stream; evidence is analysed off the async
//! threads ([`crate::pipeline::analyze`]) and offered to its host's sample. A stream's accepted
//! pages go to the blocking pool in runs of up to [`PAGES_PER_RUN`] (a run is handed off when it is
//! full or when no further page has arrived yet, so a page never waits for the next one): one task
//! per run instead of one per page saves most of the hand-off's wake-ups and scheduling (a fifth
//! of the server's CPU per page at stop 23: BENCHMARKS.md). Up to [`ANALYSES_IN_FLIGHT`] pages of a stream are analysed at once (on
//! every core), and runs are observed in the stream's order, each after the run before it and its
//! pages in order, so the template models and samples are those of a page-by-page run; beyond
//! that a fast client is slowed by HTTP/2 flow control; beyond [`MAX_CONCURRENT_STREAMS`] streams
//! at once the call is refused with RESOURCE_EXHAUSTED.
//! The summary is returned only once the stream's samples are durable in the store: a returned
//! summary is the acknowledgement.
//!
//! Pages are decoded leniently ([`crate::pb::lenient`]): a page whose `url` (or another text field)
//! is not UTF-8 is rejected like any other invalid page, and the stream goes on.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::sync::Semaphore;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};

use super::learning::Learning;
use super::mirrors::LINKS_PER_PAGE;
use super::state::Sidecar;
use crate::ingest::pages::{PageRecord, RecordKind};
use crate::mirrors::PageLinks;
use crate::pb::lenient::ingest_server::Ingest as IngestRpc;
use crate::pb::lenient::ObservedPage;
use crate::pb::{ObservePagesSummary, PageRejection};
use crate::pipeline::{analyze, judge, Evidence, Rejection, Verdict};
use crate::telemetry;

/// Rejections described in one summary; the count covers all of them.
pub const MAX_REJECTIONS_REPORTED: usize = 100;
/// ObservePages streams processed at once.
pub const MAX_CONCURRENT_STREAMS: usize = 4;
/// Pages of one stream analysed at once: enough to keep every core busy from a single stream, few
/// enough that a stream holds only a few pages' bodies beyond the one being received.
pub const ANALYSES_IN_FLIGHT: usize = 8;
/// Most accepted pages of one stream handed to the blocking pool as one task: a run's pages are
/// analysed one after the other, so a stream still has [`ANALYSES_IN_FLIGHT`] / this many runs
/// (two) analysed at once, one per core of a 2-core machine.
pub const PAGES_PER_RUN: usize = 4;
const _: () = assert!(PAGES_PER_RUN <= ANALYSES_IN_FLIGHT);
/// Bytes of a rejected page's URL echoed back.
const ECHOED_URL_BYTES: usize = 256;

/// How long a stream may wait for its next page once the sidecar is draining: a stream that is
/// sending finishes, an idle one ends at once instead of holding the drain for its grace period.
const DRAIN_IDLE: std::time::Duration = std::time::Duration::from_millis(200);

/// An accepted page waiting in its stream's run to be handed off.
struct Accepted {
    evidence: Box<Evidence>,
    server_ip: Option<IpAddr>,
}

/// A stream's runs handed off and not yet counted, oldest first.
#[derive(Default)]
struct RunsInFlight {
    /// Each run's task (answering how many of its pages were sampled) and its number of pages.
    runs: VecDeque<(tokio::task::JoinHandle<u64>, usize)>,
    /// Pages in `runs`.
    pages: usize,
    /// Closed (or sent to) once the latest run handed off has been observed.
    last_observed: Option<std::sync::mpsc::Receiver<()>>,
}

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

    /// The stream's next page when it has already arrived, without waiting; `Pending` when the
    /// next page (or the stream's end) is still to come.
    fn arrived(stream: &mut Streaming<ObservedPage>) -> Poll<Result<Option<ObservedPage>, Status>> {
        // A waker that wakes nothing: if nothing has arrived, the caller awaits the stream
        // properly, which registers its own waker.
        let mut context = Context::from_waker(Waker::noop());
        Pin::new(stream)
            .poll_next(&mut context)
            .map(Option::transpose)
    }

    /// Hands `run` (the stream's accepted pages not yet handed off, in order) to the blocking
    /// pool: its pages are analysed, then, once the run before it has been observed
    /// (`last_observed`), observed in order. The task answers how many of them were sampled.
    fn hand_off(&self, run: &mut Vec<Accepted>, in_flight: &mut RunsInFlight) {
        if run.is_empty() {
            return;
        }
        let pages = std::mem::replace(run, Vec::with_capacity(PAGES_PER_RUN));
        let count = pages.len();
        let learning = Arc::clone(&self.learning);
        let sidecar = Arc::clone(&self.sidecar);
        let (observed, now_observed) = std::sync::mpsc::sync_channel::<()>(1);
        let previous = in_flight.last_observed.replace(now_observed);
        let task = tokio::task::spawn_blocking(move || {
            let analysed: Vec<_> = pages
                .into_iter()
                .map(|accepted: Accepted| {
                    let Accepted {
                        evidence,
                        server_ip,
                    } = accepted;
                    let url = evidence.url.clone();
                    let served_from = evidence.final_url.clone().unwrap_or_else(|| url.clone());
                    let page = analyze(
                        *evidence,
                        sidecar.canonicalizer.normalizer(),
                        learning.content_config(),
                    );
                    // The page's out-links for mirror detection (the template model takes the
                    // page itself).
                    let links = PageLinks::of(
                        &served_from,
                        &page.analysis.link_base(&served_from),
                        page.analysis.links.iter().map(String::as_str),
                        LINKS_PER_PAGE,
                    );
                    (page, url, served_from, server_ip, links)
                })
                .collect();
            // Observed in the stream's order: after the run before it (whose sender is dropped
            // when it is done, even by a panic).
            if let Some(previous) = previous {
                let _ = previous.recv();
            }
            let mut sampled = 0u64;
            for (page, url, served_from, server_ip, links) in analysed {
                if learning.observe_fetched(page, &url, &served_from, server_ip, links) {
                    sampled += 1;
                }
            }
            drop(observed);
            sampled
        });
        in_flight.pages += count;
        in_flight.runs.push_back((task, count));
    }

    /// Waits for the oldest run handed off and counts its sampled pages.
    async fn count_sampled(
        in_flight: &mut RunsInFlight,
        summary: &mut ObservePagesSummary,
    ) -> Result<(), Status> {
        let Some((analysis, pages)) = in_flight.runs.pop_front() else {
            return Ok(());
        };
        in_flight.pages -= pages;
        let sampled = analysis
            .await
            .map_err(|err| Status::internal(format!("page analysis failed: {err}")))?;
        summary.sampled += sampled;
        metrics::counter!(telemetry::PAGES_SAMPLED).increment(sampled);
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
        let mut in_flight = RunsInFlight::default();
        // Accepted pages not yet handed off, in the stream's order.
        let mut run: Vec<Accepted> = Vec::with_capacity(PAGES_PER_RUN);
        loop {
            // A page already received joins the run; before waiting for one, the run is handed
            // off, so that no page waits for the next.
            let next = match Self::arrived(&mut stream) {
                Poll::Ready(next) => next?,
                Poll::Pending => {
                    self.hand_off(&mut run, &mut in_flight);
                    self.next_page(&mut stream).await?
                }
            };
            let Some(page) = next else {
                break;
            };
            summary.received += 1;
            metrics::counter!(telemetry::PAGES_OBSERVED).increment(1);
            let url_echo = truncate(&String::from_utf8_lossy(&page.url), ECHOED_URL_BYTES);
            let body_len = page.body.len() as u64;
            let record = Self::record(page);
            let server_ip = record
                .as_ref()
                .ok()
                .and_then(|record| record.server_ip.as_deref())
                .and_then(|ip| ip.parse::<IpAddr>().ok());
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
                    run.push(Accepted {
                        evidence,
                        server_ip,
                    });
                    if run.len() == PAGES_PER_RUN {
                        self.hand_off(&mut run, &mut in_flight);
                    }
                    // At most ANALYSES_IN_FLIGHT pages' bodies held beyond the one received next.
                    while in_flight.pages + run.len() >= ANALYSES_IN_FLIGHT
                        && !in_flight.runs.is_empty()
                    {
                        Self::count_sampled(&mut in_flight, &mut summary).await?;
                    }
                }
            }
            index += 1;
        }
        self.hand_off(&mut run, &mut in_flight);
        while !in_flight.runs.is_empty() {
            Self::count_sampled(&mut in_flight, &mut summary).await?;
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
