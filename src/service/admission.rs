//! Admission of Canonicalizer calls when their headers arrive, before their bodies are read.
//!
//! Canonicalize work is bounded by `--canonicalize-max-in-flight` calls holding at most
//! `--canonicalize-max-in-flight-bytes` request bytes. Counting in the handler would be too late:
//! tonic reads and decodes the whole body first, so 128 callers with 32 MB batches held gigabytes
//! before any of them reached a check. [`Admitting`] wraps the Canonicalizer service at the HTTP
//! level instead:
//!
//! - A call takes a slot when its headers arrive. With none free it is answered at once, without
//!   reading its body, by a trailers-only response with RESOURCE_EXHAUSTED that names the flag to
//!   raise; HTTP/2 flow control then holds the sender at its window, so a refused body costs the
//!   server at most that window.
//! - The request body's bytes are counted as its frames arrive. A frame that would take the bytes
//!   held by all calls past the bound fails the call with RESOURCE_EXHAUSTED (tonic answers a
//!   [`Status`] a body fails with as the call's status), unless the call holds the only bytes:
//!   one call is always admitted alone, whatever its size (`--max-message-bytes` bounds it).
//! - A call's slot and bytes are given back when the last of its parts is dropped: its request
//!   body, the handler's future, its response body, and the [`Admitted`] handle the handler may
//!   keep. A caller that cancels or times out has its stream reset, which drops them all. A
//!   `CanonicalizeStream` gives back each batch's bytes once the batch is answered
//!   ([`Admitted::release`]), so a long stream holds the batches it is answering, not all it sent.
//!
//! Gauges [`telemetry::CANONICALIZE_IN_FLIGHT`] and [`telemetry::CANONICALIZE_IN_FLIGHT_BYTES`]
//! show what is held; refusals count in `undust_requests_refused_total{reason="overloaded"}`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tonic::body::Body;
use tonic::codegen::http::{Request, Response};
use tonic::codegen::{Body as HttpBody, Service};
use tonic::server::NamedService;
use tonic::Status;

use crate::telemetry;

/// The in-flight bounds and what all admitted calls hold against them.
pub struct Admission {
    /// Calls admitted at once (`--canonicalize-max-in-flight`).
    max_requests: usize,
    /// Request bytes held at once (`--canonicalize-max-in-flight-bytes`).
    max_bytes: u64,
    requests: AtomicUsize,
    bytes: AtomicU64,
}

impl Admission {
    pub fn new(max_requests: usize, max_bytes: u64) -> Arc<Admission> {
        Arc::new(Admission {
            max_requests,
            max_bytes,
            requests: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// A slot for a call whose headers just arrived, or the refusal to answer it with.
    fn admit(self: &Arc<Self>) -> Result<Arc<Ticket>, Status> {
        let requests = self.requests.fetch_add(1, Ordering::AcqRel) + 1;
        if requests > self.max_requests {
            self.requests.fetch_sub(1, Ordering::AcqRel);
            return Err(self.refusal(requests - 1));
        }
        metrics::gauge!(telemetry::CANONICALIZE_IN_FLIGHT).increment(1.0);
        Ok(Arc::new(Ticket {
            admission: Arc::clone(self),
            bytes: AtomicU64::new(0),
        }))
    }

    /// RESOURCE_EXHAUSTED, with what is held and the flags that bound it.
    fn refusal(&self, others: usize) -> Status {
        metrics::counter!(telemetry::REQUESTS_REFUSED, "reason" => "overloaded").increment(1);
        Status::resource_exhausted(format!(
            "canonicalize is saturated ({others} other calls holding {} request bytes; limits {} \
             calls, {} bytes: --canonicalize-max-in-flight, --canonicalize-max-in-flight-bytes); \
             no URL of this batch was recorded, retry it with backoff",
            self.bytes.load(Ordering::Acquire),
            self.max_requests,
            self.max_bytes
        ))
    }
}

/// One admitted call's share of the bounds: its slot and the request bytes it holds, given back
/// when dropped.
struct Ticket {
    admission: Arc<Admission>,
    bytes: AtomicU64,
}

impl Ticket {
    /// Counts `len` more request bytes of this call, or refuses them when they would take the
    /// bytes held past the bound while other calls hold some too.
    fn hold(&self, len: u64) -> Result<(), Status> {
        let admission = &*self.admission;
        let own = self.bytes.fetch_add(len, Ordering::AcqRel);
        let before = admission.bytes.fetch_add(len, Ordering::AcqRel);
        let others = before.saturating_sub(own);
        if others > 0 && before.saturating_add(len) > admission.max_bytes {
            self.bytes.fetch_sub(len, Ordering::AcqRel);
            admission.bytes.fetch_sub(len, Ordering::AcqRel);
            let calls = admission.requests.load(Ordering::Acquire).saturating_sub(1);
            return Err(admission.refusal(calls));
        }
        metrics::gauge!(telemetry::CANONICALIZE_IN_FLIGHT_BYTES).increment(len as f64);
        Ok(())
    }

    /// Gives back up to `len` of the bytes this call holds.
    fn release(&self, len: u64) {
        let mut released = 0;
        let _ = self
            .bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                released = held.min(len);
                Some(held - released)
            });
        self.admission.bytes.fetch_sub(released, Ordering::AcqRel);
        metrics::gauge!(telemetry::CANONICALIZE_IN_FLIGHT_BYTES).decrement(released as f64);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let held = *self.bytes.get_mut();
        self.admission.bytes.fetch_sub(held, Ordering::AcqRel);
        self.admission.requests.fetch_sub(1, Ordering::AcqRel);
        metrics::gauge!(telemetry::CANONICALIZE_IN_FLIGHT).decrement(1.0);
        metrics::gauge!(telemetry::CANONICALIZE_IN_FLIGHT_BYTES).decrement(held as f64);
    }
}

/// The handle an admitted call's handler finds in its request's extensions.
#[derive(Clone)]
pub struct Admitted(Arc<Ticket>);

impl Admitted {
    /// Gives back the bytes of a batch the call has answered (a `CanonicalizeStream` holds only
    /// the batches it is answering): its encoded length and gRPC frame header. A compressed batch
    /// was counted compressed, so at most what the call holds is given back.
    pub fn release(&self, encoded_len: usize) {
        self.0.release(encoded_len as u64 + GRPC_FRAME_HEADER);
    }
}

/// Bytes of the header before every gRPC message: compressed flag and length.
const GRPC_FRAME_HEADER: u64 = 5;

/// A gRPC service (the Canonicalizer) behind admission.
#[derive(Clone)]
pub struct Admitting<S> {
    inner: S,
    admission: Arc<Admission>,
}

impl<S> Admitting<S> {
    pub fn new(inner: S, admission: Arc<Admission>) -> Admitting<S> {
        Admitting { inner, admission }
    }
}

impl<S: NamedService> NamedService for Admitting<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> Service<Request<Body>> for Admitting<S>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible>,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<tonic::codegen::StdError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let ticket = match self.admission.admit() {
            Ok(ticket) => ticket,
            // Trailers-only, and the body is never polled.
            Err(status) => return Box::pin(std::future::ready(Ok(status.into_http()))),
        };
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(Admitted(Arc::clone(&ticket)));
        let body = Body::new(Counted {
            inner: body,
            ticket: Arc::clone(&ticket),
        });
        let response = self.inner.call(Request::from_parts(parts, body));
        Box::pin(async move {
            let response = response.await?;
            // The answer is held until it is sent: it is the larger part of a call's memory.
            Ok(response.map(|body| {
                Body::new(Holding {
                    inner: Box::pin(body),
                    _ticket: ticket,
                })
            }))
        })
    }
}

/// A request body whose bytes count against the bound as they arrive.
struct Counted {
    inner: Body,
    ticket: Arc<Ticket>,
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Status>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            if let Some(data) = frame.data_ref() {
                if let Err(status) = self.ticket.hold(data.len() as u64) {
                    return Poll::Ready(Some(Err(status)));
                }
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its call's ticket until it is sent or dropped.
struct Holding<B> {
    inner: Pin<Box<B>>,
    _ticket: Arc<Ticket>,
}

impl<B: HttpBody> HttpBody for Holding<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        self.inner.as_mut().poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
