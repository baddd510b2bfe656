//! The hot path: from a discovered URL to its canonical form (the dedup key).
//!
//! - [`normalize`]: static normalization, always applied first (WHATWG parsing, case, ports, dot
//!   segments, percent-encoding, tracking and session parameters).
//! - [`params`]: the well-known tracking and session parameter lists static normalization uses.
//! - [`rules`]: the learned rule data model and its versioned JSON file format.
//! - [`engine`]: learned rules compiled per host, applied after static normalization.
//! - [`seen`]: the bounded seen-set of canonical forms the frontier already enqueued.
//!
//! [`Canonicalizer`] joins the first four: the live rule book (one compiled rule set per host,
//! swapped atomically by relearning) and the static normalizer. The seen-set is separate because
//! the offline CLI canonicalizes without deduplicating.

pub mod engine;
pub mod normalize;
pub mod params;
pub mod rules;
pub mod seen;

use std::sync::Arc;

use dashmap::DashMap;

use self::engine::HostRules;
use self::normalize::{InvalidUrl, StaticNormalizer, StaticStep};

/// One URL's canonical form and how it was reached.
#[derive(Debug, Clone)]
pub struct Canonical {
    /// The dedup key: static normalization, then the host's learned rule if one matched.
    pub canonical: String,
    /// The statically normalized URL when learned rules changed it (what the frontier should
    /// fetch when this form is new); `None` when it equals `canonical`, so the common case
    /// costs one string, not two.
    pub normalized: Option<String>,
    /// Whether static normalization changed the input.
    pub changed_static: bool,
    /// Whether learned rules (site rules, a pattern rule, or both) changed the URL.
    pub learned: bool,
    /// Index of the pattern rule that rewrote the URL, in the rule set it came from.
    pub rule_index: Option<usize>,
}

impl Canonical {
    /// The statically normalized URL.
    pub fn normalized(&self) -> &str {
        self.normalized.as_deref().unwrap_or(&self.canonical)
    }
}

/// The live learned rules of every host. Readers take an `Arc` of one host's compiled rules and
/// keep using it even while relearning swaps in a new version, so a reader never sees half a rule
/// set and never blocks a swap.
///
/// The map is keyed with FxHash: it is looked up once per URL, and only hosts that learned rules
/// are ever inserted, so crawled input cannot fill it with colliding keys.
#[derive(Default)]
pub struct RuleBook {
    hosts: DashMap<String, Arc<HostRules>, rustc_hash::FxBuildHasher>,
}

impl RuleBook {
    /// An empty rule book: every URL gets static normalization only.
    pub fn new() -> Self {
        RuleBook::default()
    }

    /// The live rules of a host.
    pub fn get(&self, host: &str) -> Option<Arc<HostRules>> {
        self.hosts.get(host).map(|entry| Arc::clone(entry.value()))
    }

    /// Puts a compiled rule set live for its host, returning the one it replaces.
    pub fn swap(&self, host: &str, rules: Arc<HostRules>) -> Option<Arc<HostRules>> {
        self.hosts.insert(host.to_owned(), rules)
    }

    /// Removes a host's rules.
    pub fn remove(&self, host: &str) -> Option<Arc<HostRules>> {
        self.hosts.remove(host).map(|(_, rules)| rules)
    }

    /// Hosts that have live rules.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// Whether no host has rules.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// Live rules summed over hosts.
    pub fn rule_count(&self) -> usize {
        self.hosts.iter().map(|entry| entry.value().len()).sum()
    }
}

/// Static normalization followed by the learned rules of the URL's host.
pub struct Canonicalizer {
    normalizer: StaticNormalizer,
    rules: RuleBook,
}

impl Canonicalizer {
    /// A canonicalizer with no learned rules yet.
    pub fn new(normalizer: StaticNormalizer) -> Self {
        Canonicalizer {
            normalizer,
            rules: RuleBook::new(),
        }
    }

    /// The static normalizer.
    pub fn normalizer(&self) -> &StaticNormalizer {
        &self.normalizer
    }

    /// The live rule book.
    pub fn rules(&self) -> &RuleBook {
        &self.rules
    }

    /// Canonicalizes one URL with the rules of its host as found now.
    pub fn canonicalize(&self, input: &str) -> Result<Canonical, InvalidUrl> {
        let url = self.normalizer.normalize(input)?;
        // The shard's read guard is held only while this one URL is rewritten: cheaper than
        // cloning the `Arc`, and a swap waits at most that long.
        let entry = url.host_str().and_then(|host| self.rules.hosts.get(host));
        Ok(Self::finish(
            input,
            url,
            entry.as_deref().map(|rules| &**rules),
        ))
    }

    /// Static normalization alone (the first half of [`Canonicalizer::canonicalize`]).
    pub fn normalize(&self, input: &str) -> Result<url::Url, InvalidUrl> {
        self.normalizer.normalize(input)
    }

    /// The second half: applies the rules a caller looked up for the URL's host (a batch looks a
    /// host up once, so every URL of the host in the batch sees one consistent version).
    pub fn finish(input: &str, url: url::Url, rules: Option<&HostRules>) -> Canonical {
        let rewrite = rules.and_then(|rules| rules.apply(&url));
        let normalized = String::from(url);
        let changed_static = normalized != input;
        match rewrite {
            Some(rewrite) => Canonical {
                canonical: rewrite.canonical,
                normalized: Some(normalized),
                changed_static,
                learned: true,
                rule_index: rewrite.rule_index,
            },
            None => Canonical {
                canonical: normalized,
                normalized: None,
                changed_static,
                learned: false,
                rule_index: None,
            },
        }
    }

    /// The static steps that changed a URL, then the learned rule that matched, if any.
    pub fn explain(&self, input: &str) -> Result<Explanation, InvalidUrl> {
        let (url, steps) = self.normalizer.explain(input)?;
        let rules = url.host_str().and_then(|host| self.rules.get(host));
        let matched = rules.as_ref().and_then(|rules| rules.explain(&url));
        let static_result = url.to_string();
        let canonical = matched
            .as_ref()
            .map_or_else(|| static_result.clone(), |m| m.canonical.clone());
        Ok(Explanation {
            static_result,
            static_steps: steps,
            rules,
            matched,
            canonical,
        })
    }
}

/// Why a URL gets its canonical form.
pub struct Explanation {
    /// The statically normalized URL.
    pub static_result: String,
    /// The static steps that changed the URL, in order.
    pub static_steps: Vec<StaticStep>,
    /// The host's live rule set, if any.
    pub rules: Option<Arc<HostRules>>,
    /// The site rules and the pattern rule that changed the URL, if any.
    pub matched: Option<engine::Explained>,
    /// The final canonical form.
    pub canonical: String,
}
