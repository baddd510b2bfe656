//! All integration tests compile into this one binary (faster builds than one binary per file).
//! One module per area; shared helpers live in `support`.

mod cli;
mod cluster;
mod content;
mod corpus;
mod crash;
mod fleet;
mod learn;
mod pages;
mod serve_admin;
mod serve_canonicalize;
mod serve_ingest;
mod serve_lifecycle;
mod sidecar_concurrency;
mod sidecar_e2e;
mod static_canon;
mod support;
