//! Accepting connections without being starved by them.
//!
//! Every listener of the sidecar (gRPC main, admin, metrics) accepts through [`guarded`]:
//!
//! - At most [`MAX_CONNECTIONS`] connections per listener are open at once; a connection beyond it
//!   is closed as soon as it is accepted (and counted), so the process keeps file descriptors for
//!   its store and for the connections it serves.
//! - A connection must send its first byte within [`FIRST_BYTE_TIMEOUT`], or it is closed: a flood
//!   of connections that send nothing holds slots for seconds, not forever, and never reaches the
//!   HTTP/2 server. Waiting for that byte happens in its own task, so a health check that arrives
//!   behind a thousand silent connections is served at once.
//! - An accept error (EMFILE when descriptors run out) backs off for [`ACCEPT_BACKOFF`] instead of
//!   retrying in a tight loop (which spun a core at 100% under a flood of 1,100 idle connections).
//!
//! Connections that did send something are watched by HTTP/2 keepalive (see `server.rs`).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_stream::wrappers::ReceiverStream;

use crate::telemetry;

/// Connections open at once on one listener.
pub const MAX_CONNECTIONS: usize = 8_192;
/// How long a new connection may stay silent before it is closed.
pub const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause after a failed accept (out of descriptors, out of memory).
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// Connections that spoke, waiting to be picked up by the server.
const READY_QUEUE: usize = 1_024;

/// An accepted connection that holds one of its listener's slots until it is dropped.
pub struct Guarded {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl Guarded {
    /// The underlying TCP stream.
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

impl tonic::transport::server::Connected for Guarded {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
    }
}

/// Connections of `listener` that passed the guards, until `stop` completes. `name` labels the
/// refusal metric.
pub fn guarded(
    listener: TcpListener,
    name: &'static str,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> ReceiverStream<io::Result<Guarded>> {
    let (ready, incoming) = mpsc::channel(READY_QUEUE);
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    tokio::spawn(async move {
        tokio::pin!(stop);
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = &mut stop => return,
                () = ready.closed() => return,
            };
            let stream = match accepted {
                Ok((stream, _peer)) => stream,
                Err(err) => {
                    tracing::debug!(%err, listener = name, "accept failed; backing off");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            };
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                metrics::counter!(telemetry::CONNECTIONS_REFUSED, "listener" => name, "reason" => "limit")
                    .increment(1);
                drop(stream);
                continue;
            };
            // tonic sets TCP_NODELAY only on listeners it binds itself; without it a response's
            // last segment waits for the peer's delayed ACK (measured: 40 ms p99 stalls).
            if let Err(err) = stream.set_nodelay(true) {
                tracing::debug!(%err, "TCP_NODELAY not set");
            }
            let ready = ready.clone();
            tokio::spawn(async move {
                // `peek`, not `readable`: readiness may be reported before any byte arrived.
                let mut first = [0u8; 1];
                match tokio::time::timeout(FIRST_BYTE_TIMEOUT, stream.peek(&mut first)).await {
                    Ok(Ok(1..)) => {
                        let _ = ready
                            .send(Ok(Guarded {
                                stream,
                                _slot: slot,
                            }))
                            .await;
                    }
                    // Closed by the peer before sending anything, or broken.
                    Ok(Ok(0) | Err(_)) => {}
                    Err(_) => {
                        metrics::counter!(telemetry::CONNECTIONS_REFUSED, "listener" => name, "reason" => "silent")
                            .increment(1);
                    }
                }
            });
        }
    });
    ReceiverStream::new(incoming)
}
