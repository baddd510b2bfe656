//! The one path from fetched pages to live rules, shared by both shells: the sidecar
//! (`service::learning`, fed by the Ingest RPC) and the offline commands (`undust clusters`,
//! `learn`, `eval`). Whatever `undust eval` shows on a crawl is what the sidecar learns from the
//! same pages, because both call these functions and nothing else between a page and a rule.
//!
//! The stages, in the data's order:
//!
//! 1. [`accept`]: a fetched page is *evidence*, *skipped* (not evidence: a non-2xx status, not
//!    HTML) or *rejected* (invalid: a bad URL in any field, an impossible status, an oversized body),
//!    with the reason. [`accept::judge`] is the only place that decides.
//! 2. [`evidence`]: an accepted page is read once ([`evidence::analyze`]: pagelets, template
//!    features, the canonical its record or its HTML declares), observed into its host's template
//!    model, and kept as an [`EvidencePage`](evidence::EvidencePage) (URL evidence and a content
//!    digest, no body) in the host's bounded reservoir ([`crate::ingest::sample`]).
//! 3. [`evidence::cluster_pages`]: a host's evidence pages, fingerprinted against the host's template
//!    model, become duplicate clusters ([`crate::cluster`]) and labelled URLs for the learner.
//! 4. [`gate`]: the learner's rule set ([`crate::learn`]) is compiled and checked against the host's
//!    own labelled evidence before it may go live ([`gate::learn_checked`]): idempotent on every
//!    sample, merging (almost) no samples of different clusters. The host's alias table is
//!    learned there too, on top of the checked rules, from the declared pairs (canonical,
//!    shortlink, redirect) the clustering applied ([`crate::learn::aliases`]).
//!
//! Both shells sample with the same reservoir and the same default bounds (one URL, one sample; at
//! most 20,000 pages per host); a crawl that fits the bounds is learned from whole by both.

pub mod accept;
pub mod evidence;
pub mod gate;

pub use accept::{judge, url_evidence, AcceptPolicy, Evidence, Rejection, SkipReason, Verdict};
pub use evidence::{analyze, cluster_pages, labelled, AnalyzedPage, EvidencePage, HostClusters};
pub use gate::{learn_checked, Beside, CheckedRules, GatePolicy, RelearnError};
