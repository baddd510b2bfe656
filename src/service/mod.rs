//! The sidecar: gRPC services over the pure algorithms, and their lifecycle.
//!
//! - [`server`]: [`run`] binds nothing itself; it restores state, serves, and drains on shutdown.
//! - [`canonicalize`]: the frontier's hot path (`Canonicalize`, `CanonicalizeStream`);
//!   [`admission`]: its in-flight bounds, applied when a call's headers arrive, before its body is
//!   read; [`durable`]: when its answers may be sent (after what they recorded is on disk).
//! - [`ingest`]: fetched pages in (`ObservePages`), validated, analysed, sampled, acknowledged once
//!   durable.
//! - [`learning`]: per-host samples and template models, the relearn scheduler and jobs, rule
//!   versions and rollback, persistence of samples, rules and the seen-set.
//! - [`admin`] and [`auth`]: the operators' service and its bearer tokens.
//! - [`mirrors`]: host summaries for mirror detection, fed by ingest, relearn and Canonicalize
//!   (detection, its hysteresis and the operator's decisions: `learning::mirrors`).
//! - [`listen`]: accepting connections with a limit, a first-byte timeout and accept backoff.
//! - [`state`]: what the services share; [`rules_pb`]: rules as protobuf messages.

pub mod admin;
pub mod admission;
pub mod auth;
pub mod canonicalize;
pub mod durable;
pub mod ingest;
pub mod learning;
pub mod listen;
pub mod mirrors;
pub mod replay;
pub mod rules_pb;
pub mod server;
pub mod state;

pub use server::{run, Listeners, ServeError};
