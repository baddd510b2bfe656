//! The connection to Redis and the degraded state.
//!
//! A sidecar is *connected* while its last Redis call succeeded; any connection failure or timeout
//! makes it *degraded*: callers get [`FleetError::Degraded`] at once (no call waits on a dead
//! socket) and answer from local state. [`Link::reconnect`] is driven by the fleet's background
//! task: it retries with exponential backoff (from [`BACKOFF_MIN`] to [`BACKOFF_MAX`]), and once
//! Redis answers a `PING`, the fleet replays what was recorded while cut off before declaring the
//! link connected again. The state is published on a watch channel for health and metrics.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::RwLock;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisError};
use tokio::sync::{watch, Notify};

use super::FleetError;
use crate::telemetry;

/// First wait between reconnection attempts.
pub const BACKOFF_MIN: Duration = Duration::from_millis(50);
/// Longest wait between reconnection attempts (also the worst added delay before catching up
/// once Redis is back).
pub const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// The shared connection and whether it is usable.
pub struct Link {
    client: redis::Client,
    call_timeout: Duration,
    /// The multiplexed connection; `None` while degraded. Cloning it is cheap (a channel handle).
    connection: RwLock<Option<MultiplexedConnection>>,
    connected: AtomicBool,
    /// Wakes the reconnection task when a call fails.
    failed: Notify,
    state: watch::Sender<bool>,
}

impl Link {
    /// A link to `url`, not yet connected.
    pub fn new(url: &str, call_timeout: Duration) -> Result<Link, FleetError> {
        let client = redis::Client::open(url)
            .map_err(|err| FleetError::Url(url.to_owned(), err.to_string()))?;
        Ok(Link {
            client,
            call_timeout,
            connection: RwLock::new(None),
            connected: AtomicBool::new(false),
            failed: Notify::new(),
            state: watch::Sender::new(false),
        })
    }

    /// Whether the last call reached Redis.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }

    /// Connected (`true`) or degraded (`false`), as it changes.
    pub fn watch(&self) -> watch::Receiver<bool> {
        self.state.subscribe()
    }

    /// Runs one call on the connection, within the call timeout. A connection failure or a
    /// timeout marks the link degraded; a refusal by Redis itself (a script error) does not.
    pub async fn call<T, F, Fut>(&self, call: F) -> Result<T, FleetError>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: Future<Output = Result<T, RedisError>>,
    {
        let Some(connection) = self.current() else {
            return Err(FleetError::Degraded);
        };
        self.call_on(connection, call).await
    }

    /// [`Link::call`] on a given connection, connected or not (the reconnection's replay).
    pub async fn call_on<T, F, Fut>(
        &self,
        connection: MultiplexedConnection,
        call: F,
    ) -> Result<T, FleetError>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: Future<Output = Result<T, RedisError>>,
    {
        match tokio::time::timeout(self.call_timeout, call(connection)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) if is_unavailable(&err) => {
                self.degrade(&err.to_string());
                Err(FleetError::Redis(err))
            }
            Ok(Err(err)) => Err(FleetError::Redis(err)),
            Err(_) => {
                self.degrade("call timed out");
                Err(FleetError::Timeout(self.call_timeout))
            }
        }
    }

    fn current(&self) -> Option<MultiplexedConnection> {
        if !self.is_connected() {
            return None;
        }
        self.connection.read().clone()
    }

    /// Marks the link degraded (idempotent) and wakes the reconnection task.
    pub fn degrade(&self, why: &str) {
        if self.connected.swap(false, Ordering::AcqRel) {
            tracing::warn!(
                why,
                "Redis unreachable: answering from local state until it is back"
            );
            metrics::gauge!(telemetry::FLEET_CONNECTED).set(0.0);
            self.state.send_replace(false);
        }
        *self.connection.write() = None;
        self.failed.notify_one();
    }

    /// Opens a fresh connection and checks it with `PING`.
    pub async fn open(&self) -> Result<MultiplexedConnection, FleetError> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.call_timeout))
            .set_response_timeout(Some(self.call_timeout));
        let attempt = async {
            let mut connection = self
                .client
                .get_multiplexed_async_connection_with_config(&config)
                .await?;
            let _: String = redis::cmd("PING").query_async(&mut connection).await?;
            Ok::<_, RedisError>(connection)
        };
        match tokio::time::timeout(self.call_timeout.saturating_mul(2), attempt).await {
            Ok(result) => Ok(result?),
            Err(_) => Err(FleetError::Timeout(self.call_timeout)),
        }
    }

    /// Makes `connection` the link's connection and declares the link connected.
    pub fn connected_with(&self, connection: MultiplexedConnection) {
        *self.connection.write() = Some(connection);
        if !self.connected.swap(true, Ordering::AcqRel) {
            tracing::info!("connected to Redis: the fleet's shared state is in use");
            metrics::gauge!(telemetry::FLEET_CONNECTED).set(1.0);
            self.state.send_replace(true);
        }
    }

    /// Waits until a call fails (or returns at once when the link is already degraded).
    pub async fn wait_degraded(&self) {
        let notified = self.failed.notified();
        if !self.is_connected() {
            return;
        }
        notified.await;
    }
}

/// Whether an error means Redis cannot be reached (as opposed to Redis refusing one call).
fn is_unavailable(err: &RedisError) -> bool {
    err.is_io_error()
        || err.is_connection_dropped()
        || err.is_connection_refusal()
        || err.is_timeout()
        || matches!(
            err.kind(),
            redis::ErrorKind::Server(redis::ServerErrorKind::BusyLoading)
        )
}

/// The waits between reconnection attempts: doubling from [`BACKOFF_MIN`], capped at
/// [`BACKOFF_MAX`].
pub fn backoff(attempt: u32) -> Duration {
    BACKOFF_MIN
        .saturating_mul(1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX))
        .min(BACKOFF_MAX)
}
