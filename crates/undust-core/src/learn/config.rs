//! Every threshold of the learner, with its documented default.
//!
//! [`LearnConfig::default`] is the robust configuration used in production;
//! [`LearnConfig::paper`] switches the robustness guards off and keeps only the thresholds of
//! Lei et al. (WWW 2010), for comparison and for the paper's worked examples.

use serde::{Deserialize, Serialize};

/// Minimum overlap (eq. 6) of two duplicate nodes; the paper's empirical value.
pub const O_MIN: f64 = 0.5;
/// Minimum rate of common values for a key-key mapping (Algorithm 3); the paper's value.
pub const SIGMA_MIN: f64 = 0.5;
/// Maximum false-positive rate (eq. 3) of a rule on the training set (section 5.2.3). The paper
/// sweeps 0 to 0.1; 1% keeps rules whose rare errors come from label noise while the per-key
/// negative evidence below catches systematic merges.
pub const FPR_MAX: f64 = 0.01;
/// Minimum duplicate rate `1 - clusters/urls` of a node for the `s = t` case (section 5.2.1).
/// The paper reuses `o_min`; a node in which every page appears exactly twice has rate 0.5,
/// which sampling easily pushes below 0.5, so we accept 0.3.
pub const DUP_RATE_MIN: f64 = 0.3;
/// A mapped key whose values differ inside at least this share of the common duplicate
/// clusters is a "fake replace" and becomes an ignore (section 5.2.2).
pub const FAKE_REPLACE_MIN: f64 = 0.5;
/// A value is salient only if it occurs in at least this many distinct duplicate clusters
/// (values are counted per cluster, not per URL, so an id repeated by its own duplicates does
/// not look like a directory name).
pub const MIN_SALIENT_CLUSTERS: u32 = 3;
/// More salient values than this at one split means the key is an identifier: all trivial.
pub const MAX_SALIENT_VALUES: usize = 64;
/// Distinct duplicate clusters a rule must merge (robustness to clusters that merged different
/// pages: one bad cluster cannot create a rule).
pub const MIN_SUPPORT_CLUSTERS: u32 = 3;
/// Distinct values an ignored key must show inside merged duplicates (absence counts as a
/// value, so `?print=1` versus no `print` is 2).
pub const MIN_IGNORED_VALUES: u32 = 2;
/// Maximum share of negative groups for an ignored key: among the groups of training URLs that
/// the rule makes identical and that differ in that key, the share holding URLs of different
/// clusters. Pagination, sort orders and variants fail this at once.
pub const KEY_NEGATIVE_RATE_MAX: f64 = 0.01;
/// A value of a discarded key met in at least this share of the clusters a rule matches (and in
/// at least two of them) marks a page type, such as `/print` or
/// `/comments`, rather than an identifier: it must itself appear inside merged duplicates.
/// Evidence that `/print` is a copy of the article says nothing about `/comments`. 1 or more
/// switches the check off.
pub const FREQUENT_VALUE_SHARE: f64 = 0.05;
/// Damping of the random walk of eq. 7 (teleport back to node volumes), for convergence on
/// periodic graphs; PageRank's usual value.
pub const DAMPING: f64 = 0.85;
/// Power-iteration bound of the random walk.
pub const MAX_WALK_ITERATIONS: usize = 100;
/// Most training URLs per host; the rest are ignored (reported).
pub const MAX_SAMPLES: usize = 1_000_000;
/// Most pattern-tree nodes per host.
pub const MAX_TREE_NODES: usize = 200_000;
/// Deepest pattern-tree path.
pub const MAX_TREE_DEPTH: usize = 128;
/// A duplicate cluster spread over more tree nodes than this is not used to find duplicate
/// nodes (it is either noise or a catch-all such as an error page).
pub const MAX_NODES_PER_CLUSTER: usize = 64;
/// Common clusters examined per node pair when building operations.
pub const MAX_EVIDENCE_CLUSTERS: usize = 256;
/// Most candidate rules proofed per host (the strongest overlaps first).
pub const MAX_CANDIDATES: usize = 4_000;

/// How deployable rules are chosen among qualified candidates (section 5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Strategy {
    /// Random walk over the candidate graph picks destinations; chains are concatenated.
    #[default]
    Graph,
    /// The straightforward strategy: lowest fpr per source, ancestors over descendants,
    /// minimum-support rule removed from each cycle.
    Naive,
}

/// Learner thresholds; see the constants for their meaning and defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LearnConfig {
    /// [`O_MIN`].
    pub o_min: f64,
    /// [`SIGMA_MIN`].
    pub sigma_min: f64,
    /// [`FPR_MAX`].
    pub fpr_max: f64,
    /// [`DUP_RATE_MIN`].
    pub dup_rate_min: f64,
    /// [`FAKE_REPLACE_MIN`].
    pub fake_replace_min: f64,
    /// [`MIN_SALIENT_CLUSTERS`].
    pub min_salient_clusters: u32,
    /// [`MAX_SALIENT_VALUES`].
    pub max_salient_values: usize,
    /// [`MIN_SUPPORT_CLUSTERS`].
    pub min_support_clusters: u32,
    /// [`MIN_IGNORED_VALUES`].
    pub min_ignored_values: u32,
    /// [`KEY_NEGATIVE_RATE_MAX`].
    pub key_negative_rate_max: f64,
    /// [`FREQUENT_VALUE_SHARE`].
    pub frequent_value_share: f64,
    /// Rule selection strategy.
    pub strategy: Strategy,
    /// [`DAMPING`].
    pub damping: f64,
    /// [`MAX_WALK_ITERATIONS`].
    pub max_walk_iterations: usize,
    /// [`MAX_SAMPLES`].
    pub max_samples: usize,
    /// Look for host-wide normalizations (`learn::site`) before building the pattern tree.
    /// Off in [`LearnConfig::paper`], which learns pattern rules only.
    pub site_rules: bool,
}

impl Default for LearnConfig {
    fn default() -> Self {
        LearnConfig {
            o_min: O_MIN,
            sigma_min: SIGMA_MIN,
            fpr_max: FPR_MAX,
            dup_rate_min: DUP_RATE_MIN,
            fake_replace_min: FAKE_REPLACE_MIN,
            min_salient_clusters: MIN_SALIENT_CLUSTERS,
            max_salient_values: MAX_SALIENT_VALUES,
            min_support_clusters: MIN_SUPPORT_CLUSTERS,
            min_ignored_values: MIN_IGNORED_VALUES,
            key_negative_rate_max: KEY_NEGATIVE_RATE_MAX,
            frequent_value_share: FREQUENT_VALUE_SHARE,
            strategy: Strategy::Graph,
            damping: DAMPING,
            max_walk_iterations: MAX_WALK_ITERATIONS,
            max_samples: MAX_SAMPLES,
            site_rules: true,
        }
    }
}

impl LearnConfig {
    /// The paper's thresholds without this crate's robustness guards (one cluster suffices,
    /// no per-key negative evidence, the paper's duplicate rate threshold `o_min`).
    pub fn paper() -> Self {
        LearnConfig {
            dup_rate_min: O_MIN,
            min_salient_clusters: 2,
            min_support_clusters: 1,
            min_ignored_values: 1,
            key_negative_rate_max: 1.0,
            frequent_value_share: 1.0,
            fpr_max: 0.05,
            site_rules: false,
            ..LearnConfig::default()
        }
    }

    /// The same configuration with another strategy.
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }
}
