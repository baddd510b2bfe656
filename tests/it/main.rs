//! All integration tests compile into this one binary (faster builds than one binary per file).
//! One module per area; shared helpers live in `support`.

mod admin_cli;
mod aliases;
mod canon_fast;
mod cli;
mod cluster;
mod content;
mod cores;
mod corpus;
mod crash;
mod deploy;
mod fleet;
mod fleet_mirrors;
mod learn;
mod learn_shapes;
mod mirrors;
mod mirrors_serve;
mod one_pipeline;
mod pages;
mod real_crawls;
mod real_pages;
mod rule_engine;
mod serve_admin;
mod serve_admission;
mod serve_bad_bytes;
mod serve_canonicalize;
mod serve_ingest;
mod serve_lifecycle;
mod serve_limits;
mod serve_memory;
mod serve_secrets;
mod sidecar_concurrency;
mod sidecar_e2e;
mod static_canon;
mod store_damage;
mod support;
