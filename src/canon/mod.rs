//! The hot path: from a discovered URL to its canonical form (the dedup key).
//!
//! - [`normalize`]: static normalization, always applied first (WHATWG parsing, case, ports, dot
//!   segments, percent-encoding, tracking and session parameters).
//! - [`params`]: the well-known tracking and session parameter lists static normalization uses.
//! - [`rules`]: the learned rule data model and its versioned JSON file format.
//! - [`engine`]: learned rules compiled per host, applied after static normalization.
//! - [`seen`]: the bounded seen-set of canonical forms the frontier already enqueued.

pub mod engine;
pub mod normalize;
pub mod params;
pub mod rules;
pub mod seen;
