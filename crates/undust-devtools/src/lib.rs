//! Development tooling of undust, kept out of the product crates: the synthetic multi-site crawl
//! generator ([`corpus`]: tests, benchmarks, `undust corpus`) and the bounded load generator
//! ([`load`]: `undust load`).
#![forbid(unsafe_code)]
#![deny(rust_2018_idioms)]

pub mod corpus;
pub mod load;

/// Exit code for bad usage (EX_USAGE from sysexits.h).
pub const EXIT_USAGE: u8 = 64;
/// Exit code for an internal failure (EX_SOFTWARE).
pub const EXIT_SOFTWARE: u8 = 70;

/// Generated gRPC clients for `proto/undust/v1`.
pub mod pb {
    #![allow(missing_docs, clippy::all, clippy::pedantic)]
    tonic::include_proto!("undust.v1");
}
