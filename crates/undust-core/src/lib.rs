//! undust's pure core: everything between a fetched page and a canonical URL that needs neither an
//! async runtime nor RPC nor metrics, so the sidecar, the offline command line and the tests run
//! the very same code on plain data.
//!
//! # Layout
//!
//! The modules follow the data's path:
//!
//! - [`ingest`]: reading fetched pages (JSON lines, WARC) and keeping a bounded, representative
//!   sample per host.
//! - [`content`]: what a page says once its site's template is removed: pagelets, per-host
//!   template models, 64-bit simhash fingerprints.
//! - [`cluster`]: near-duplicate fingerprints (permuted-table index) joined into duplicate clusters.
//! - [`learn`]: the pattern-tree learner: duplicate clusters in, deployable normalization rules out.
//! - [`mirrors`]: mirrored hosts (Bharat et al.): origins serving one site, proposed by URL, IP
//!   and link signals, confirmed by content, written as mirror sets the canonicalizer serves.
//! - [`canon`]: the hot path: static normalization, the compiled rule engine, the seen-set.
//! - [`pipeline`]: the one path from fetched pages to live rules that both shells (the sidecar and
//!   the offline commands) call: what a page is as evidence, a host's evidence into clusters and
//!   rules, and the gate a rule set passes before it goes live.
//!
//!
//! Beside them, [`heap`] turns what a structure holds into the bytes the allocator really takes,
//! for the memory budgets that account it.
//!
//! Dependencies only point down this list's data path: `content` knows nothing of `cluster`,
//! `canon` nothing of configuration files or telemetry.
#![forbid(unsafe_code)]
#![deny(rust_2018_idioms)]

pub mod canon;
pub mod cluster;
pub mod content;
pub mod heap;
pub mod ingest;
pub mod learn;
pub mod mirrors;
pub mod pipeline;
