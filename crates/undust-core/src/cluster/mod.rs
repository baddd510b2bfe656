//! Near-duplicate detection and duplicate clusters for one host.
//!
//! - [`index`]: the permuted-table simhash index (Manku et al.) answering "which fingerprints are
//!   within Hamming distance k of this one?" with incremental insert and removal.
//! - [`clusters`]: union-find over a host's pages, built from near-duplicate fingerprints, exact
//!   content hashes, redirects and `rel=canonical` (with guards against catch-all redirects and
//!   misused canonicals), with stable cluster ids.

pub mod clusters;
pub mod index;

pub use clusters::{
    Cluster, ClusterBuilder, ClusterConfig, ClusterId, ClusterStats, Clustering, Declaration,
    DeclaredPair, PageEvidence, Reason, MAX_REDIRECT_ALIAS_PATHS,
};
pub use index::{IndexError, Layout, SimhashIndex, DEFAULT_MAX_DISTANCE};
