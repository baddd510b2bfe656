//! The hot path: from a discovered URL to its canonical form (the dedup key).
//!
//! - [`normalize`]: static normalization, always applied first (WHATWG parsing, case, ports, dot
//!   segments, percent-encoding, tracking and session parameters).
//! - [`fast`]: the fast path of static normalization: inputs provably already normalized are
//!   sliced into their parts without parsing, and those only the steps on path and query change
//!   are edited on their parts.
//! - [`params`]: the well-known tracking and session parameter lists static normalization uses.
//! - [`rules`]: the learned rule data model and its versioned JSON file format.
//! - [`engine`]: learned rules compiled per host, applied after static normalization.
//! - [`mirror`]: mirror sets compiled: alias origins folded onto their canonical site before the
//!   per-host rules, so one canonical form spans mirrored hosts.
//! - [`seen`]: the bounded seen-set of canonical forms the frontier already enqueued.
//! - [`split`]: splitting short URL parts at one ASCII byte, cheaper than `str::split` there.
//! - [`view`]: a normalized URL's parts, borrowed, which mirror folding swaps and the rule
//!   engine reads, so the canonical text is written once.
//!
//! [`Canonicalizer`] joins the first five: the live rule book (one compiled rule set per host,
//! swapped atomically by relearning) and the static normalizer. The seen-set is separate because
//! the offline CLI canonicalizes without deduplicating.

pub mod engine;
pub mod fast;
pub mod mirror;
pub mod normalize;
pub mod params;
pub mod rules;
pub mod seen;
pub mod split;
pub mod view;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dashmap::mapref::one::Ref;
use dashmap::DashMap;
use parking_lot::RwLock;

use self::engine::HostRules;
use self::fast::FastForm;
use self::mirror::MirrorTable;
use self::normalize::{InvalidUrl, StaticNormalizer, StaticStep};
use self::view::UrlView;

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

/// A URL after static normalization, as [`Canonicalizer::static_form`] gives it.
#[derive(Debug, Clone)]
pub enum StaticForm<'a> {
    /// The input itself, which the fast path ([`fast::recognize`]) proved to be its own static
    /// normalization, with its parts.
    Input {
        /// The input (and the normalized URL's text).
        text: &'a str,
        /// Its parts.
        view: UrlView<'a>,
    },
    /// The input with its path or query edited by static steps, written by the fast path
    /// ([`fast::recognize_form`]) without parsing.
    Edited(view::UrlText),
    /// The URL the parser and the static steps made of the input.
    Parsed(url::Url),
}

impl StaticForm<'_> {
    /// The normalized URL's text.
    pub fn as_str(&self) -> &str {
        match self {
            StaticForm::Input { text, .. } => text,
            StaticForm::Edited(text) => text.as_str(),
            StaticForm::Parsed(url) => url.as_str(),
        }
    }

    /// The normalized URL's parts; `None` only for a URL without a host, which static
    /// normalization never returns.
    pub fn view(&self) -> Option<UrlView<'_>> {
        match self {
            StaticForm::Input { view, .. } => Some(view.clone()),
            StaticForm::Edited(text) => Some(text.view()),
            StaticForm::Parsed(url) => UrlView::of(url),
        }
    }

    /// The normalized URL parsed (for callers that keep a `url::Url`: parsing a normalized
    /// URL's text gives it back unchanged).
    pub fn to_url(&self) -> Option<url::Url> {
        match self {
            StaticForm::Input { text, .. } => url::Url::parse(text).ok(),
            StaticForm::Edited(text) => url::Url::parse(text.as_str()).ok(),
            StaticForm::Parsed(url) => Some(url.clone()),
        }
    }

    /// Whether static normalization changed `input` (of which this is the static form). The
    /// fast path's form is the input itself, the same bytes: those are not compared.
    pub fn changed(&self, input: &str) -> bool {
        let text = self.as_str();
        let same_bytes = std::ptr::eq(text.as_ptr(), input.as_ptr()) && text.len() == input.len();
        !same_bytes && text != input
    }

    /// The normalized URL's text, owned.
    pub fn into_string(self) -> String {
        match self {
            StaticForm::Input { text, .. } => text.to_owned(),
            StaticForm::Edited(text) => text.into_string(),
            StaticForm::Parsed(url) => url.into(),
        }
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

    /// The live rules of a host, borrowed from the map: the shard's read guard is held while
    /// the entry lives, which for one URL's rewrite is cheaper than cloning the `Arc`, and a
    /// swap waits at most that long.
    fn entry(&self, host: &str) -> Option<Ref<'_, String, Arc<HostRules>>> {
        self.hosts.get(host)
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
    /// the learned half, before the per-host rules of the canonical host), as a parsed URL
    /// (for explaining; the hot path folds views: [`Canonicalizer::canonicalize_with`]).
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
        self.rules_for_folded_view(&UrlView::of(url)?, &UrlView::of(folded)?)
    }

    /// [`Canonicalizer::rules_for_folded`] of a normalized URL's parts and their fold.
    pub fn rules_for_folded_view(
        &self,
        view: &UrlView<'_>,
        folded: &UrlView<'_>,
    ) -> Option<Arc<HostRules>> {
        self.folded_rules_entry(view, folded)
            .map(|entry| Arc::clone(entry.value()))
    }

    /// The rule book's entry [`Canonicalizer::rules_for_folded`] picks, borrowed.
    fn folded_rules_entry(
        &self,
        view: &UrlView<'_>,
        folded: &UrlView<'_>,
    ) -> Option<Ref<'_, String, Arc<HostRules>>> {
        let canonical = self.rules.entry(folded.host);
        if canonical.is_some() || view.path != folded.path {
            return canonical;
        }
        self.rules.entry(view.host)
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
        let form = self.static_form(input)?;
        Ok(self.canonicalize_live(input, form))
    }

    /// [`Canonicalizer::canonicalize`] without the fast path: the input parsed whatever it is.
    /// Both give the same [`Canonical`] for every input; the differential tests compare them.
    pub fn canonicalize_parsed(&self, input: &str) -> Result<Canonical, InvalidUrl> {
        let form = StaticForm::Parsed(self.normalizer.normalize(input)?);
        Ok(self.canonicalize_live(input, form))
    }

    /// Static normalization alone (the first half of [`Canonicalizer::canonicalize`]): the
    /// input itself when the fast path proves it normalized, the fast path's text when only
    /// steps on the path and query edit an input it sliced, else the parser's and the static
    /// steps' result.
    pub fn static_form<'a>(&self, input: &'a str) -> Result<StaticForm<'a>, InvalidUrl> {
        match fast::recognize_form(&self.normalizer, input) {
            Some(FastForm::Input(view)) => Ok(StaticForm::Input { text: input, view }),
            Some(FastForm::Edited(text)) => Ok(StaticForm::Edited(text)),
            None => self.normalizer.normalize(input).map(StaticForm::Parsed),
        }
    }

    /// Static normalization alone, as a parsed URL (the parser's way, whatever the input; the
    /// hot path uses [`Canonicalizer::static_form`]).
    pub fn normalize(&self, input: &str) -> Result<url::Url, InvalidUrl> {
        self.normalizer.normalize(input)
    }

    /// The learned half with the mirror sets and rules live now. The rule book's shard guard
    /// is held while this one URL is rewritten: cheaper than cloning the `Arc`, and a swap waits
    /// at most that long.
    fn canonicalize_live(&self, input: &str, form: StaticForm<'_>) -> Canonical {
        let table = self
            .has_mirrors
            .load(Ordering::Acquire)
            .then(|| self.mirrors.read());
        let mirrors = table.as_deref().map(|table| &**table);
        let (canonical, _rules) = Self::canonicalize_with(input, form, mirrors, |view, folded| {
            let entry = match folded {
                Some(folded) => self.folded_rules_entry(view, folded),
                None => self.rules.entry(view.host),
            };
            entry.map(|entry| Ref::map(entry, |rules| &**rules))
        });
        canonical
    }

    /// The learned half of canonicalization, for one statically normalized URL: folded onto its
    /// mirror set's canonical site when `mirrors` has it on an alias, then rewritten by the rules
    /// `rules` picks, given the URL's parts and their fold (the host's own rules when not folded,
    /// [`Canonicalizer::rules_for_folded_view`]'s when folded). Callers choose where the rules
    /// come from: [`Canonicalizer::canonicalize`] the live rule book, a batch the versions it
    /// looked up once for all its URLs. The canonical text is written once, from views: no `Url`
    /// is rewritten. Returns the rules that were applied, so a batch can name the rule.
    pub fn canonicalize_with<R>(
        input: &str,
        form: StaticForm<'_>,
        mirrors: Option<&MirrorTable>,
        rules: impl FnOnce(&UrlView<'_>, Option<&UrlView<'_>>) -> Option<R>,
    ) -> (Canonical, Option<R>)
    where
        R: std::ops::Deref<Target = HostRules>,
    {
        let Some(view) = form.view() else {
            return (Self::unlearned(input, form), None);
        };
        if let Some(folded) = mirrors.and_then(|table| table.fold_view(&view)) {
            let rules = rules(&view, Some(&folded));
            let rewrite = rules.as_ref().and_then(|rules| rules.apply_view(&folded));
            let (canonical, rule_index) = match rewrite {
                Some(rewrite) => (rewrite.canonical, rewrite.rule_index),
                None => (folded.to_text(), None),
            };
            let canonical = Canonical {
                canonical,
                changed_static: form.changed(input),
                normalized: Some(form.as_str().to_owned()),
                learned: true,
                rule_index,
                mirrored: true,
            };
            return (canonical, rules);
        }
        let rules = rules(&view, None);
        let Some(rewrite) = rules.as_ref().and_then(|rules| rules.apply_view(&view)) else {
            return (Self::unlearned(input, form), rules);
        };
        let changed_static = form.changed(input);
        let canonical = Canonical {
            canonical: rewrite.canonical,
            changed_static,
            normalized: Some(form.into_string()),
            learned: true,
            rule_index: rewrite.rule_index,
            mirrored: false,
        };
        (canonical, rules)
    }

    /// The canonical form of a URL no learned rule or mirror set changed: its static form.
    fn unlearned(input: &str, form: StaticForm<'_>) -> Canonical {
        let changed_static = form.changed(input);
        Canonical {
            changed_static,
            canonical: form.into_string(),
            normalized: None,
            learned: false,
            rule_index: None,
            mirrored: false,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::normalize::StaticConfig;
    use crate::canon::rules::{Alias, HostRuleSet, MirrorAlias, MirrorSet, MirrorSite};

    /// A mirror's URL is folded onto the canonical origin first, and the canonical host's alias
    /// table applies to it there: one canonical form across the mirrors, idempotent.
    #[test]
    fn aliases_apply_to_urls_folded_onto_their_canonical_host() {
        let canonicalizer =
            Canonicalizer::new(StaticNormalizer::new(StaticConfig::default()).expect("config"));
        let set = HostRuleSet {
            host: "www.site.test".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: Vec::new(),
            rules: Vec::new(),
            aliases: vec![Alias {
                from: "http://www.site.test/node/5".into(),
                to: "http://www.site.test/about-us".into(),
            }],
        };
        let rules = HostRules::compile(&set).expect("compiles");
        canonicalizer.rules().swap("www.site.test", Arc::new(rules));
        let site = |origin: &str| MirrorSite {
            origin: origin.into(),
            path_prefix: String::new(),
        };
        let mirrors = MirrorTable::compile(&[MirrorSet {
            id: "mirror:http://www.site.test".into(),
            canonical: site("http://www.site.test"),
            aliases: vec![MirrorAlias {
                site: site("http://mirror.site.test"),
                pinned: false,
                evidence: None,
            }],
            forbidden: Vec::new(),
        }])
        .expect("valid mirror set");
        canonicalizer.set_mirrors(Arc::new(mirrors));
        for url in [
            "http://www.site.test/node/5",
            "http://mirror.site.test/node/5",
            "http://mirror.site.test/about-us",
        ] {
            let once = canonicalizer.canonicalize(url).expect("valid").canonical;
            assert_eq!(once, "http://www.site.test/about-us", "{url}");
            let twice = canonicalizer.canonicalize(&once).expect("valid").canonical;
            assert_eq!(twice, once, "{url}");
            // The parser's way gives the same form as the fast path.
            let parsed = canonicalizer.canonicalize_parsed(url).expect("valid");
            assert_eq!(parsed.canonical, once, "{url}");
        }
        assert_eq!(
            canonicalizer
                .canonicalize("http://mirror.site.test/node/6")
                .expect("valid")
                .canonical,
            "http://www.site.test/node/6"
        );
    }
}
