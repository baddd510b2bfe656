//! Starting, running and stopping the sidecar.
//!
//! [`run`] takes listeners that are already bound (so `main` can refuse bad configuration before
//! binding, and tests can bind `127.0.0.1:0`) and a shutdown future. The life of a sidecar:
//!
//! 1. Health starts NOT_SERVING (tonic-health's default for the overall status is SERVING, which
//!    would lie while state is restored).
//! 2. The store in `--data-dir` is opened and everything it holds is restored: learned rules are
//!    compiled and live, samples and template models are back, the seen-set is refilled.
//! 3. Health turns SERVING (a latch: it never turns back until shutdown).
//! 4. When `shutdown` completes: health turns NOT_SERVING, listeners stop accepting, in-flight calls
//!    get `--shutdown-grace-secs` to finish, background work (relearning, persistence) is told to
//!    stop and its last writes are flushed. A drain that exceeds the grace period is logged and
//!    abandoned (tonic's `serve_with_shutdown` has no deadline of its own).

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::transport::Server;
use tonic_health::ServingStatus;

use super::admin::AdminService;
use super::admission::{Admission, Admitting};
use super::auth::Tokens;
use super::canonicalize::CanonicalizerService;
use super::ingest::IngestService;
use super::learning::Learning;
use super::listen::guarded;
use super::state::Sidecar;
use crate::canon::normalize::StaticNormalizer;
use crate::canon::Canonicalizer;
use crate::config::ServeConfig;
use crate::fleet::Fleet;
use crate::pb::admin_server::AdminServer;
use crate::pb::lenient::canonicalizer_server::CanonicalizerServer;
use crate::pb::lenient::ingest_server::IngestServer;
use crate::store::{OnDamage, Store};
use crate::telemetry;

/// The sockets a sidecar serves on, bound by the caller.
pub struct Listeners {
    /// Canonicalizer, Ingest, health (and reflection when enabled).
    pub main: TcpListener,
    /// Admin.
    pub admin: TcpListener,
    /// Prometheus `/metrics`; `None` to not serve metrics.
    pub metrics: Option<TcpListener>,
}

impl Listeners {
    /// Binds the configured addresses.
    pub async fn bind(config: &ServeConfig) -> std::io::Result<Listeners> {
        Ok(Listeners {
            main: TcpListener::bind(config.listen).await?,
            admin: TcpListener::bind(config.admin_listen).await?,
            metrics: Some(TcpListener::bind(config.metrics_addr).await?),
        })
    }
}

/// Why the sidecar could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("static normalization configuration: {0}")]
    Static(#[from] crate::canon::normalize::ConfigError),
    #[error("{0}")]
    Tokens(#[from] super::auth::TokenError),
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("fleet: {0}")]
    Fleet(#[from] crate::fleet::FleetError),
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Runs the sidecar until `shutdown` completes and the drain ends.
pub async fn run(
    config: ServeConfig,
    listeners: Listeners,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let (health, health_service) = tonic_health::server::health_reporter();
    set_health(&health, ServingStatus::NotServing).await;

    // The recorder first: what restoring the store and the learning state records (damage
    // counted, mirror and rule gauges) must reach /metrics, not a recorder-less void.
    let metrics_handle = telemetry::install();
    let normalizer = StaticNormalizer::new(config.static_config.clone())?;
    crate::store::create_private_dir(&config.data_dir).map_err(|err| {
        crate::store::StoreError::Io {
            path: config.data_dir.clone(),
            message: err.to_string(),
        }
    })?;
    let tokens = Tokens::load(
        config.admin_read_token_file.as_deref(),
        config.admin_write_token_file.as_deref(),
        &config.data_dir,
    )?;
    let on_damage = if config.refuse_damaged_store {
        OnDamage::Refuse
    } else {
        OnDamage::Recover
    };
    let store = Arc::new(Store::open_with(&config.data_dir, on_damage)?);
    let mut sidecar = Sidecar::new(config.clone(), Canonicalizer::new(normalizer));
    let fleet = match &config.fleet {
        Some(fleet_config) => {
            let fleet = Arc::new(Fleet::new(fleet_config.clone(), &config.seen_set)?);
            // A Redis that is down at start does not keep the sidecar from serving: it starts
            // degraded and the maintenance task connects when Redis is back.
            if let Err(err) = fleet.establish().await {
                tracing::warn!(%err, "Redis unreachable at start: answering from local state");
            }
            sidecar = sidecar.with_fleet(Arc::clone(&fleet));
            Some(fleet)
        }
        None => None,
    };
    let sidecar = Arc::new(sidecar);
    let learning = Learning::restore(Arc::clone(&sidecar), Arc::clone(&store))?;
    if on_damage == OnDamage::Refuse && store.skipped() > 0 {
        return Err(crate::store::StoreError::Damaged {
            path: store.path().to_owned(),
            reason: format!("{} stored values failed their checksum", store.skipped()),
        }
        .into());
    }

    let (stop_sender, stop) = watch::channel(false);
    let stopped = |mut stop: watch::Receiver<bool>| async move {
        // Either a send of `true` or the sender going away means stop.
        while stop.changed().await.is_ok() {
            if *stop.borrow_and_update() {
                break;
            }
        }
    };
    // The background loop outlives the servers: answers draining during shutdown may wait for their
    // canonical forms to be committed by it.
    let (background_stop_sender, background_stop) = watch::channel(false);
    let background = learning.start(background_stop);
    let fleet_tasks = fleet.map(|fleet| {
        let maintain = tokio::spawn(Arc::clone(&fleet).maintain(stop.clone()));
        let health_task = tokio::spawn(report_fleet_health(
            health.clone(),
            fleet.link.watch(),
            stop.clone(),
        ));
        // Rule sets published by any sidecar of the fleet are put live here.
        let follow = tokio::spawn(Arc::clone(&learning).follow_fleet(fleet, stop.clone()));
        (maintain, health_task, follow)
    });

    let canonicalizer = CanonicalizerServer::new(CanonicalizerService::new(Arc::clone(&sidecar)))
        .max_decoding_message_size(config.max_message_bytes)
        .max_encoding_message_size(config.max_message_bytes.saturating_mul(4))
        .accept_compressed(tonic::codec::CompressionEncoding::Gzip)
        .send_compressed(tonic::codec::CompressionEncoding::Gzip);
    let canonicalizer = tonic::service::interceptor::InterceptedService::new(
        canonicalizer,
        super::canonicalize::stamp_arrival,
    );
    // Admission sees a call's headers before tonic reads its body.
    let canonicalizer = Admitting::new(
        canonicalizer,
        Admission::new(
            config.canonicalize_max_in_flight,
            config.canonicalize_max_in_flight_bytes,
        ),
    );
    let ingest = IngestServer::new(
        IngestService::new(Arc::clone(&sidecar), Arc::clone(&learning)).with_drain(stop.clone()),
    )
    .max_decoding_message_size(config.max_message_bytes)
    .accept_compressed(tonic::codec::CompressionEncoding::Gzip);
    let admin = AdminServer::new(AdminService::new(
        Arc::clone(&sidecar),
        Arc::clone(&learning),
        Arc::clone(&store),
        tokens,
    ))
    .max_decoding_message_size(1024 * 1024);

    // Batches of thousands of URLs answer with hundreds of kilobytes: HTTP/2's default 64 KiB
    // windows would make every response wait for window updates (measured: throughput grew
    // linearly with connections while the cores idled).
    let mut main_router = keepalive(Server::builder())
        .initial_stream_window_size(Some(HTTP2_STREAM_WINDOW))
        .initial_connection_window_size(Some(HTTP2_CONNECTION_WINDOW))
        .add_service(health_service)
        .add_service(canonicalizer)
        .add_service(ingest);
    if config.reflection {
        let reflection = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(crate::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .build_v1()
            .map_err(|err| crate::store::StoreError::Io {
                path: "reflection".into(),
                message: err.to_string(),
            })?;
        main_router = main_router.add_service(reflection);
    }
    let main_addr = listeners.main.local_addr().ok();
    let admin_addr = listeners.admin.local_addr().ok();
    let main_server = main_router.serve_with_incoming_shutdown(
        guarded(listeners.main, "main", stopped(stop.clone())),
        stopped(stop.clone()),
    );
    let admin_server = keepalive(Server::builder())
        .add_service(admin)
        .serve_with_incoming_shutdown(
            guarded(listeners.admin, "admin", stopped(stop.clone())),
            stopped(stop.clone()),
        );
    let metrics_task = match (listeners.metrics, metrics_handle) {
        (Some(listener), Some(handle)) => {
            tracing::info!(addr = ?listener.local_addr().ok(), "metrics listening");
            Some(tokio::spawn(telemetry::serve(
                guarded(listener, "metrics", stopped(stop.clone())),
                handle,
                stopped(stop.clone()),
            )))
        }
        (Some(_), None) => {
            tracing::warn!("another metrics recorder is installed; /metrics is not served");
            None
        }
        (None, _) => None,
    };
    // After the recorder is installed, or the figures would go nowhere on a first start.
    metrics::gauge!(telemetry::STORE_DAMAGED_TABLES)
        .set(store.damage().map_or(0, |damage| damage.tables.len()) as f64);
    metrics::gauge!(telemetry::STORE_VALUES_SKIPPED).set(store.skipped() as f64);
    tracing::info!(addr = ?main_addr, "canonicalizer and ingest listening");
    tracing::info!(addr = ?admin_addr, "admin listening");

    sidecar.set_ready();
    set_health(&health, ServingStatus::Serving).await;
    tracing::info!(
        rules_hosts = sidecar.canonicalizer.rules().len(),
        seen = sidecar.seen.len(),
        samples = learning.sample_count(),
        "undust is serving"
    );

    let main_task = tokio::spawn(main_server);
    let admin_task = tokio::spawn(admin_server);
    shutdown.await;
    tracing::info!(grace = ?config.shutdown_grace, "shutting down: draining in-flight calls");
    set_health(&health, ServingStatus::NotServing).await;
    let _ = stop_sender.send(true);
    let drain = async {
        let main = main_task.await;
        let admin = admin_task.await;
        if let Some(task) = metrics_task {
            let _ = task.await;
        }
        let _ = background_stop_sender.send(true);
        let _ = background.await;
        if let Some((maintain, health_task, follow)) = fleet_tasks {
            let _ = maintain.await;
            let _ = health_task.await;
            let _ = follow.await;
        }
        (main, admin)
    };
    match tokio::time::timeout(config.shutdown_grace, drain).await {
        Ok((main, admin)) => {
            for result in [main, admin] {
                if let Ok(Err(err)) = result {
                    tracing::error!(%err, "gRPC server ended with an error");
                }
            }
        }
        Err(_) => {
            tracing::warn!(grace = ?config.shutdown_grace, "drain exceeded the grace period; stopping anyway")
        }
    }
    // Whatever the drain did, acknowledged state is flushed before returning.
    learning.flush();
    tracing::info!("undust stopped");
    Ok(())
}

/// HTTP/2 keepalive on a listener: a peer that stops answering PINGs (a frozen client, a dead
/// host behind a NAT) loses its connection, and with it the slots its calls held.
fn keepalive(builder: Server) -> Server {
    builder
        .http2_keepalive_interval(Some(HTTP2_KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(HTTP2_KEEPALIVE_TIMEOUT))
}

/// How often an idle HTTP/2 connection is pinged, and how long the answer may take.
const HTTP2_KEEPALIVE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);
const HTTP2_KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// HTTP/2 flow-control windows of the main listener.
const HTTP2_STREAM_WINDOW: u32 = 4 * 1024 * 1024;
const HTTP2_CONNECTION_WINDOW: u32 = 16 * 1024 * 1024;

/// Sets the overall status and every service's status at once.
async fn set_health(health: &tonic_health::server::HealthReporter, status: ServingStatus) {
    health.set_service_status("", status).await;
    for name in SERVICE_NAMES {
        health.set_service_status(name, status).await;
    }
}

/// Health's name for the fleet link: SERVING while Redis is reachable, NOT_SERVING while the
/// sidecar is degraded (still answering, from local state). The overall status is not affected.
pub const FLEET_HEALTH_NAME: &str = "undust.v1.Fleet";

/// Mirrors the fleet link's state into health until `stop`.
async fn report_fleet_health(
    health: tonic_health::server::HealthReporter,
    mut state: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let status = if *state.borrow_and_update() {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        };
        health.set_service_status(FLEET_HEALTH_NAME, status).await;
        tokio::select! {
            changed = state.changed() => if changed.is_err() { return },
            _ = stop.wait_for(|stop| *stop) => return,
        }
    }
}

/// Fully qualified names of the services health reports on.
const SERVICE_NAMES: [&str; 2] = ["undust.v1.Canonicalizer", "undust.v1.Ingest"];
