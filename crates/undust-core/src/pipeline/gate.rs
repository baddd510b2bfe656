//! The gate a learned rule set passes before it may go live, and the one function that learns a
//! host's rules through it ([`learn_checked`]): the sidecar's relearn jobs and `undust learn` both
//! call it, so a rule set the CLI writes is one the sidecar would have put live.
//!
//! The checks run on the host's own labelled evidence, with the very engine that will serve:
//! - every rewrite of a sample is a fixpoint ([`HostRules::fixpoint_violation`]);
//! - the rules merge at most [`GatePolicy::max_false_positive_rate`] of their support pairs across
//!   different clusters, measured with [`crate::learn::eval::measure`] (Eq. 3 of the paper).
//!
//! The learner's own proofing keeps the rate far lower; this is the last line before going live,
//! so it refuses the whole set rather than editing it.
//!
//! Once the rules pass, the host's declared aliases are learned on top of them
//! ([`crate::learn::aliases`]) from the declared pairs the clustering applied, and the set with
//! its alias table is compiled and checked again. A table that would fail the gate is left out
//! (the rules alone, which passed, go live): the table rests on declarations the rules were never
//! measured against, so it is the part to give up.

use std::fmt;

use thiserror::Error;

use crate::canon::engine::{FixpointViolation, HostRules};
use crate::canon::rules::HostRuleSet;
use crate::cluster::DeclaredPair;
use crate::learn::aliases::learn_aliases;
use crate::learn::eval::{canonicalize, measure, Metrics};
use crate::learn::{
    learn_host_with, Finding, LabelledUrl, LearnConfig, LearnError, LearnReport, SharedEvidence,
};

/// Largest share of support pairs a live rule set may merge across different clusters.
pub const DEFAULT_MAX_LIVE_FALSE_POSITIVE_RATE: f64 = 0.01;
/// Labelled URLs a host needs before learning is worth running.
pub const DEFAULT_MIN_SAMPLES_TO_LEARN: usize = 10;

/// What the gate and learning require.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GatePolicy {
    /// Largest share of support pairs merged across clusters (Eq. 3) a live set may have.
    pub max_false_positive_rate: f64,
    /// Labelled URLs a host needs before it is learned.
    pub min_samples: usize,
}

impl Default for GatePolicy {
    fn default() -> Self {
        GatePolicy {
            max_false_positive_rate: DEFAULT_MAX_LIVE_FALSE_POSITIVE_RATE,
            min_samples: DEFAULT_MIN_SAMPLES_TO_LEARN,
        }
    }
}

/// Why the gate refused a rule set.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// A rewrite is not a fixpoint.
    NotIdempotent(FixpointViolation),
    /// The rules merge too many pairs of different clusters.
    MergesDifferentContent {
        /// Pairs merged across clusters.
        false_positive_pairs: u64,
        /// Pairs merged in all.
        support_pairs: u64,
        /// The limit, as a share of support pairs.
        max_rate: f64,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotIdempotent(v) => write!(
                f,
                "the rules are not idempotent: {} -> {} -> {}",
                v.url, v.first.canonical, v.second
            ),
            Refusal::MergesDifferentContent {
                false_positive_pairs,
                support_pairs,
                max_rate,
            } => write!(
                f,
                "the rules merge {false_positive_pairs} of {support_pairs} sample pairs across \
                 different clusters ({:.2}% > {:.2}%)",
                *false_positive_pairs as f64 * 100.0 / (*support_pairs).max(1) as f64,
                max_rate * 100.0
            ),
        }
    }
}

/// Why a host's rules were not learned or not put live.
#[derive(Debug, Error)]
pub enum RelearnError {
    /// Too little evidence to learn from.
    #[error("{have} samples; at least {need} are needed")]
    TooFewSamples {
        /// Labelled URLs the host has.
        have: usize,
        /// Labelled URLs needed.
        need: usize,
    },
    /// The learner could not run.
    #[error(transparent)]
    Learn(#[from] LearnError),
    /// The learned set does not compile (a learner bug: never expected).
    #[error("the learned rules do not compile: {0}")]
    DoesNotCompile(String),
    /// The gate refused the learned set; the previous rules stay live.
    #[error("refused: {0}")]
    Refused(Refusal),
    /// The accepted set could not be made durable (the sidecar's store).
    #[error("the rule set could not be stored: {0}")]
    Store(String),
    /// Another learner holds the host or took it over (a fleet's lease); the rules it publishes
    /// are the ones served.
    #[error("{0}")]
    Contended(String),
}

impl RelearnError {
    /// The outcome label of the relearn counter: `rejected` for a refusal by the gate,
    /// `contended` when another learner holds the host, `failed` otherwise.
    pub fn outcome(&self) -> &'static str {
        match self {
            RelearnError::Refused(_) => "rejected",
            RelearnError::Contended(_) => "contended",
            _ => "failed",
        }
    }
}

/// Checks a compiled rule set against a host's labelled evidence; the measured counts on success.
pub fn check(
    rules: &HostRules,
    labelled: &[LabelledUrl],
    policy: &GatePolicy,
) -> Result<Metrics, Refusal> {
    for sample in labelled {
        let Ok(url) = url::Url::parse(&sample.url) else {
            continue;
        };
        if let Some(violation) = rules.fixpoint_violation(&url) {
            return Err(Refusal::NotIdempotent(violation));
        }
    }
    let metrics = measure(labelled, |url| canonicalize(rules, url));
    if metrics.false_positive_rate() > policy.max_false_positive_rate {
        return Err(Refusal::MergesDifferentContent {
            false_positive_pairs: metrics.false_positive_pairs,
            support_pairs: metrics.support_pairs,
            max_rate: policy.max_false_positive_rate,
        });
    }
    Ok(metrics)
}

/// A learned rule set that passed the gate.
#[derive(Debug)]
pub struct CheckedRules {
    /// The rule set (version and learning time are the caller's to stamp).
    pub set: HostRuleSet,
    /// The compiled engine the gate checked.
    pub compiled: HostRules,
    /// How learning went.
    pub report: LearnReport,
    /// The rules measured on the host's evidence.
    pub metrics: Metrics,
}

/// The other hosts of a crawl a host is learned beside ([`crate::learn::shared_evidence`]).
pub struct Beside<'a> {
    /// What they recorded, read by the host's learning.
    pub read: &'a SharedEvidence,
    /// Where the host's own findings go, to be recorded by the caller: learned before the gate,
    /// they are given whether or not the gate passes its rules.
    pub findings: &'a mut Vec<Finding>,
}

/// Learns `host`'s rules from its labelled evidence and checks them, then its alias table from
/// `declared`, the declared pairs its clustering applied ([`crate::cluster::Clustering::declared`];
/// empty when the evidence has none, as pre-labelled clusters do). With `beside`, the host is
/// learned beside the other hosts of its crawl. See the module docs.
pub fn learn_checked(
    host: &str,
    labelled: &[LabelledUrl],
    declared: &[DeclaredPair],
    config: &LearnConfig,
    policy: &GatePolicy,
    beside: Option<Beside<'_>>,
) -> Result<CheckedRules, RelearnError> {
    if labelled.len() < policy.min_samples {
        return Err(RelearnError::TooFewSamples {
            have: labelled.len(),
            need: policy.min_samples,
        });
    }
    let read = beside.as_ref().map(|b| b.read);
    let mut outcome = learn_host_with(host, labelled, config, read)?;
    if let Some(beside) = beside {
        *beside.findings = std::mem::take(&mut outcome.findings);
    }
    let mut set = outcome.rules;
    set.host = host.to_owned();
    let compiled =
        HostRules::compile(&set).map_err(|err| RelearnError::DoesNotCompile(err.to_string()))?;
    let metrics = check(&compiled, labelled, policy).map_err(RelearnError::Refused)?;
    let aliases = learn_aliases(host, &compiled, declared);
    if !aliases.is_empty() {
        let mut with_aliases = set.clone();
        with_aliases.aliases = aliases;
        let compiled_with = HostRules::compile(&with_aliases)
            .map_err(|err| RelearnError::DoesNotCompile(err.to_string()))?;
        if let Ok(metrics) = check(&compiled_with, labelled, policy) {
            return Ok(CheckedRules {
                set: with_aliases,
                compiled: compiled_with,
                report: outcome.report,
                metrics,
            });
        }
    }
    Ok(CheckedRules {
        set,
        compiled,
        report: outcome.report,
        metrics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::rules::site::{SiteAction, SiteRule};
    use crate::canon::rules::HostRuleSet;

    fn lu(url: &str, cluster: u64) -> LabelledUrl {
        LabelledUrl {
            url: url.to_owned(),
            cluster,
        }
    }

    fn set_with(site_rules: Vec<SiteRule>) -> HostRules {
        let set = HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules,
            rules: Vec::new(),
            aliases: Vec::new(),
        };
        HostRules::compile(&set).expect("compiles")
    }

    #[test]
    fn a_set_merging_different_pages_is_refused_and_a_harmless_one_passes() {
        let ignore_page = SiteRule {
            id: "example.com#s1".into(),
            action: SiteAction::IgnoreParam {
                name: "page".into(),
                beside: None,
            },
            support: 10,
            support_clusters: 3,
            false_positive_rate: 0.0,
            pooled: None,
        };
        let rules = set_with(vec![ignore_page]);
        let paginated: Vec<LabelledUrl> = (0..20)
            .map(|i| lu(&format!("http://example.com/list?page={i}"), i))
            .collect();
        let refusal = check(&rules, &paginated, &GatePolicy::default()).expect_err("refused");
        assert!(matches!(refusal, Refusal::MergesDifferentContent { .. }));
        assert!(refusal.to_string().contains("across different clusters"));

        let same: Vec<LabelledUrl> = (0..20)
            .map(|i| lu(&format!("http://example.com/list?page={i}"), 7))
            .collect();
        let metrics = check(&rules, &same, &GatePolicy::default()).expect("passes");
        assert_eq!(metrics.false_positive_pairs, 0);
        assert_eq!(metrics.canonical, 1);
    }

    #[test]
    fn too_little_evidence_is_a_typed_error() {
        let few = vec![lu("http://example.com/a", 1)];
        let err = learn_checked(
            "example.com",
            &few,
            &[],
            &LearnConfig::default(),
            &GatePolicy::default(),
            None,
        )
        .expect_err("too few");
        assert!(matches!(
            err,
            RelearnError::TooFewSamples { have: 1, need: 10 }
        ));
        assert_eq!(err.outcome(), "failed");
    }
}
