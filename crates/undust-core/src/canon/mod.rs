//! The hot path: from a discovered URL to its canonical form (the dedup key).
//!
//! - [`normalize`]: static normalization, always applied first (WHATWG parsing, case, ports, dot
//!   segments, percent-encoding, tracking and session parameters).
//! - [`params`]: the well-known tracking and session parameter lists static normalization uses.
//! - [`rules`]: the learned rule data model and its versioned JSON file format.
//! - [`engine`]: learned rules compiled per host, applied after static normalization.
//! - [`mirror`]: mirror sets compiled: alias origins folded onto their canonical site before the
//!   per-host rules, so one canonical form spans mirrored hosts.
//! - [`seen`]: the bounded seen-set of canonical forms the frontier already enqueued.
//! - [`view`]: a normalized URL's parts, borrowed, which mirror folding swaps and the rule
//!   engine reads, so the canonical text is written once.
//!
//! [`Canonicalizer`] joins the first four: the live rule book (one compiled rule set per host,
//! swapped atomically by relearning) and the static normalizer. The seen-set is separate because
//! the offline CLI canonicalizes without deduplicating.

pub mod engine;
pub mod mirror;
pub mod normalize;
pub mod params;
pub mod rules;
pub mod seen;
pub mod view;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use parking_lot::RwLock;

use self::engine::HostRules;
use self::mirror::MirrorTable;
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
    /// Whether a mirror set folded the URL onto another origin (then `learned` is true too).
    pub mirrored: bool,
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
    /// Live mirror sets, swapped whole by [`Canonicalizer::set_mirrors`].
    mirrors: RwLock<Arc<MirrorTable>>,
    /// Whether any alias is loaded: the common case (none) costs one relaxed load, not a lock.
    has_mirrors: AtomicBool,
}

impl Canonicalizer {
    /// A canonicalizer with no learned rules yet.
    pub fn new(normalizer: StaticNormalizer) -> Self {
        Canonicalizer {
            normalizer,
            rules: RuleBook::new(),
            mirrors: RwLock::new(Arc::new(MirrorTable::default())),
            has_mirrors: AtomicBool::new(false),
        }
    }

    /// Puts compiled mirror sets live (replacing all previous ones), returning the old table.
    pub fn set_mirrors(&self, table: Arc<MirrorTable>) -> Arc<MirrorTable> {
        let empty = table.is_empty();
        let old = std::mem::replace(&mut *self.mirrors.write(), table);
        self.has_mirrors.store(!empty, Ordering::Release);
        old
    }

    /// The live mirror sets.
    pub fn mirrors(&self) -> Arc<MirrorTable> {
        Arc::clone(&self.mirrors.read())
    }

    /// The URL on its mirror set's canonical site when `url` is on an alias (the first step of
    /// the learned half, before the per-host rules of the canonical host). Batch callers that
    /// use [`Canonicalizer::finish`] call this first and look the rules up for the folded URL's
    /// host, passing the folded URL and the original to [`Canonicalizer::finish_folded`].
    pub fn fold(&self, url: &url::Url) -> Option<url::Url> {
        if !self.has_mirrors.load(Ordering::Acquire) {
            return None;
        }
        self.mirrors.read().fold_url(url)
    }

    /// The rules a folded URL gets: its canonical host's. How the rules of a mirror set's hosts
    /// merge: the canonical host's rule set wins whole when it has one (rule sets of two hosts
    /// were never checked together by the live-rule gate, so they are not mixed rule by rule);
    /// when it has none, the alias host's own rules answer the alias's folded URLs, but only for
    /// a whole-origin alias of a whole-origin canonical (same paths on both, so rules learned on
    /// the alias's paths mean the same on the canonical's). A folder alias gets the canonical
    /// host's rules or none.
    pub fn rules_for_folded(&self, url: &url::Url, folded: &url::Url) -> Option<Arc<HostRules>> {
        let canonical = folded.host_str().and_then(|host| self.rules.get(host));
        if canonical.is_some() || url.path() != folded.path() {
            return canonical;
        }
        url.host_str().and_then(|host| self.rules.get(host))
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
        if self.has_mirrors.load(Ordering::Acquire) {
            if let Some(canonical) = self.canonicalize_folded(input, &url) {
                return Ok(canonical);
            }
        }
        // The shard's read guard is held only while this one URL is rewritten: cheaper than
        // cloning the `Arc`, and a swap waits at most that long.
        let entry = url.host_str().and_then(|host| self.rules.hosts.get(host));
        Ok(Self::finish(
            input,
            url,
            entry.as_deref().map(|rules| &**rules),
        ))
    }

    /// [`Canonicalizer::canonicalize`] of a URL on a mirror alias: folded as a [`view::UrlView`]
    /// (no `Url` rewritten) and given the rules [`Canonicalizer::rules_for_folded`] picks, with
    /// the canonical text written once. `None` when the URL is on no alias.
    fn canonicalize_folded(&self, input: &str, url: &url::Url) -> Option<Canonical> {
        let table = self.mirrors.read();
        let view = view::UrlView::of(url)?;
        let folded = table.fold_view(&view)?;
        // As in `rules_for_folded`: the canonical host's rules, else (same paths on both) the
        // alias host's. The shard guards are held while this one URL is rewritten.
        let mut entry = self.rules.hosts.get(folded.host);
        if entry.is_none() && view.path == folded.path {
            entry = self.rules.hosts.get(view.host);
        }
        let rewrite = entry.as_deref().and_then(|rules| rules.apply_view(&folded));
        let (canonical, rule_index) = match rewrite {
            Some(rewrite) => (rewrite.canonical, rewrite.rule_index),
            None => (folded.to_text(), None),
        };
        let normalized = url.as_str();
        Some(Canonical {
            canonical,
            changed_static: normalized != input,
            normalized: Some(normalized.to_owned()),
            learned: true,
            rule_index,
            mirrored: true,
        })
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
                mirrored: false,
            },
            None => Canonical {
                canonical: normalized,
                normalized: None,
                changed_static,
                learned: false,
                rule_index: None,
                mirrored: false,
            },
        }
    }

    /// [`Canonicalizer::finish`] for a URL a mirror set folded: `url` is the statically
    /// normalized URL (what the frontier fetches), `folded` the same on the canonical site,
    /// `rules` those of the canonical site's host.
    pub fn finish_folded(
        input: &str,
        url: url::Url,
        folded: url::Url,
        rules: Option<&HostRules>,
    ) -> Canonical {
        let rewrite = rules.and_then(|rules| rules.apply(&folded));
        let normalized = String::from(url);
        let changed_static = normalized != input;
        let (canonical, rule_index) = match rewrite {
            Some(rewrite) => (rewrite.canonical, rewrite.rule_index),
            None => (String::from(folded), None),
        };
        Canonical {
            canonical,
            normalized: Some(normalized),
            changed_static,
            learned: true,
            rule_index,
            mirrored: true,
        }
    }

    /// The static steps that changed a URL, then the learned rule that matched, if any.
    pub fn explain(&self, input: &str) -> Result<Explanation, InvalidUrl> {
        let (url, steps) = self.normalizer.explain(input)?;
        let static_result = url.to_string();
        let mirror = self.fold(&url);
        let mirror_set = mirror
            .as_ref()
            .and_then(|_| self.mirrors.read().fold(&url).map(|f| f.set_id));
        let rules = match &mirror {
            Some(folded) => self.rules_for_folded(&url, folded),
            None => url.host_str().and_then(|host| self.rules.get(host)),
        };
        let url = mirror.clone().unwrap_or(url);
        let matched = rules.as_ref().and_then(|rules| rules.explain(&url));
        let canonical = matched
            .as_ref()
            .map_or_else(|| url.to_string(), |m| m.canonical.clone());
        Ok(Explanation {
            mirror: mirror.map(String::from),
            mirror_set,
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
    /// The URL on its mirror set's canonical site, when the URL's site is an alias.
    pub mirror: Option<String>,
    /// The id of that mirror set.
    pub mirror_set: Option<String>,
    /// The host's live rule set, if any.
    pub rules: Option<Arc<HostRules>>,
    /// The site rules and the pattern rule that changed the URL, if any.
    pub matched: Option<engine::Explained>,
    /// The final canonical form.
    pub canonical: String,
}
