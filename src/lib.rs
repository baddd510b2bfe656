//! undust removes DUST (Different URLs with Similar Text) from web crawls.
//!
//! It learns, per host, which URL differences do not change a page's content, and rewrites every
//! URL a crawler discovers to a canonical form so duplicates never enter the crawl queue.
//!
//! # Layout
//!
//! The modules follow the data's path through the sidecar:
//!
//! - [`ingest`]: reading fetched pages (gRPC stream, JSON lines, WARC) and keeping a bounded,
//!   representative sample per host.
//! - [`content`]: what a page says once its site's template is removed: pagelets, per-host
//!   template models, 64-bit simhash fingerprints.
//! - [`cluster`]: near-duplicate fingerprints (permuted-table index) joined into duplicate clusters.
//! - [`learn`]: the pattern-tree learner: duplicate clusters in, deployable normalization rules out.
//! - [`canon`]: the hot path: static normalization, the compiled rule engine, the seen-set.
//! - [`service`]: gRPC services (canonicalizer, ingest, admin), health, shutdown.
//!
//! Beside them: [`config`] (every knob and its default), [`telemetry`] (every metric),
//! [`store`] (the embedded store in `--data-dir`), [`corpus`] (synthetic multi-site crawls for
//! tests, benchmarks and trying undust out) and [`cli`] (the `undust` command).
//!
//! The algorithms (`content`, `cluster`, `learn`, `canon`) know nothing of gRPC or tokio, so the
//! offline CLI and the tests use them on plain data.
#![forbid(unsafe_code)]
#![deny(rust_2018_idioms)]

pub use undust_core::{canon, cluster, content, heap, ingest, learn, mirrors, pipeline};
pub use undust_devtools::corpus;

pub mod cli;
pub mod config;
pub mod fleet;
pub mod service;
pub mod store;
pub mod telemetry;

/// Generated protobuf and gRPC code for `proto/undust/v1`.
pub mod pb {
    #![allow(missing_docs, clippy::all, clippy::pedantic)]
    tonic::include_proto!("undust.v1");

    /// The encoded file descriptor set, served by gRPC reflection when it is enabled.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("undust_descriptor");

    /// The server side of the Canonicalizer and Ingest services as they decode requests: the
    /// requests' `string` fields arrive as bytes (same wire format), so one URL that is not UTF-8
    /// is answered INVALID, or its page rejected, instead of failing the whole request (see
    /// `build.rs`). Every other message is the public one above.
    pub mod lenient {
        #![allow(missing_docs, clippy::all, clippy::pedantic)]
        include!(concat!(env!("OUT_DIR"), "/lenient/undust.v1.rs"));
    }
}
