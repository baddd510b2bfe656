//! Learned rule data model and the versioned, human-readable rule file format.
//!
//! A rule file looks like this (JSON):
//!
//! ```json
//! {"format": "undust-rules", "version": 1, "hosts": [{
//!   "host": "example.com", "version": 3, "learned_at_unix_ms": 1700000000000,
//!   "rules": [{
//!     "id": "example.com#1",
//!     "source_pattern": "http://example.com/item.php?id=*&sid=*",
//!     "target_pattern": "http://example.com/item.php?id=*",
//!     "operations": [
//!       {"op": "keep", "key": "scheme", "value": "http"},
//!       {"op": "replace", "key": "query:id", "from": "query:id"},
//!       {"op": "ignore", "key": "query:sid"}],
//!     "support": 812, "false_positive_rate": 0.0}]}]}
//! ```
//!
//! Reading a rule: a URL with exactly the keys of `source_pattern` and its literal values is
//! rewritten to `target_pattern`, each output key set by one operation:
//!
//! - `keep K=V`: the output's `K` is the literal `V`;
//! - `replace K <- F`: the output's `K` is the input's value of `F` (`lower(F)`: lower-cased;
//!   `first_number(F)` / `last_number(F)`: the first / last maximal run of ASCII digits of the
//!   value, for ids embedded in slugs like `/threads/7869-radio-quick`; a URL whose value has no
//!   digit is not rewritten by the rule);
//! - `ignore K`: the input's `K` does not matter. Query keys and path parameters are dropped;
//!   host labels, path segments, scheme and port cannot be dropped without changing the URL's
//!   shape, so they are set to the `fill` value (`ignore path_0 -> archive`).
//!
//! A rule may also fence a `*` path segment off files (`"not_files": ["path_1"]`, written only
//! when set): there the `*` matches only values that do not name a file ([`files`]), so a rule
//! learned on documents (`/f/report/view` ≡ `/f/report`) leaves `/f/scan.pdf/view` alone.
//!
//! A host may also carry `site_rules`, host-wide normalizations applied before the pattern rules
//! (drop a parameter everywhere, lower-case paths, strip a default document or trailing slashes,
//! sort the query, use https):
//! see [`site`].
//!
//! A host may also carry `aliases`, a table of exact replacements looked up after its rules
//! (written only when non-empty; older files without it load unchanged):
//!
//! ```json
//! "aliases": [{"from": "http://example.com/node/5", "to": "http://example.com/about-us"}]
//! ```
//!
//! Each is a pair of spellings the site declared of one page (`rel=canonical`, `rel=shortlink`,
//! a redirect) that no pattern relates, both canonical forms under the host's rules: a URL whose
//! canonical form is a `from` gets the `to` instead. See [`aliases`].
//!
//! A file may also carry `mirrors`: sets of origins serving one site, folded into a canonical
//! origin before the per-host rules apply (see [`mirror`]).
//!
//! Loading validates everything ([`RuleFile::from_json`]): unknown format or version, bad
//! patterns, operations that do not produce the target pattern are errors naming the rule.

pub mod aliases;
pub mod files;
pub mod key;
pub mod mirror;
pub mod path_pairs;
pub mod pattern;
pub mod post_pages;
pub mod routed_ids;
mod segments;
pub mod site;
pub mod vocabulary;

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use aliases::{Alias, MAX_ALIASES_PER_HOST};
pub use key::{decompose, Component, Key, KeyRef};
pub use mirror::{MirrorAlias, MirrorEvidence, MirrorSet, MirrorSite};
pub use pattern::{Pattern, PatternError, ValuePattern};
pub use site::{PooledSupport, SiteAction, SiteRewriter, SiteRule};

/// The `format` marker of rule files.
pub const RULE_FILE_FORMAT: &str = "undust-rules";
/// The rule file version this build reads and writes.
pub const RULE_FILE_VERSION: u32 = 1;
/// Most rules one host may carry (bounds compile time and memory).
pub const MAX_RULES_PER_HOST: usize = 10_000;

/// One rewrite operation, setting (or dropping) one output key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Operation {
    /// The output key takes a literal value.
    Keep {
        /// Output key.
        key: Key,
        /// Its value.
        value: String,
    },
    /// The output key takes the value of an input key.
    Replace {
        /// Output key.
        key: Key,
        /// Input key the value comes from.
        from: Key,
        /// Lower-case the value (case-insensitive paths).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        lowercase: bool,
        /// Write only a part of the value (an id inside a slug) instead of all of it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extract: Option<Extract>,
    },
    /// The key's value does not matter: dropped, or set to `fill` where it cannot be dropped.
    Ignore {
        /// The ignored key.
        key: Key,
        /// Value written instead (host labels, path segments, scheme, port).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fill: Option<String>,
    },
}

/// A part of a value a `replace` writes instead of the whole value.
///
/// Sites often serve one page both under a slug carrying its id (`/threads/7869-radio-quick`,
/// `/products/culture-health-1742.html`) and under the bare id (`/showthread.php?t=7869`): the
/// id is a run of digits inside the slug. Only this direction (slug to id) is expressible: a
/// slug cannot be made up from an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Extract {
    /// The first maximal run of ASCII digits.
    FirstNumber,
    /// The last maximal run of ASCII digits.
    LastNumber,
}

impl Extract {
    /// The extracted part of `value`, or `None` when it has no ASCII digit (the rule then does
    /// not apply to that URL).
    pub fn apply(self, value: &str) -> Option<&str> {
        let (start, end) = self.span(value)?;
        // Digits are ASCII, so both ends are character boundaries.
        value.get(start..end)
    }

    /// Byte range of the extracted part of `value` ([`Extract::apply`]).
    pub fn span(self, value: &str) -> Option<(usize, usize)> {
        let b = value.as_bytes();
        Some(match self {
            Extract::FirstNumber => {
                let start = b.iter().position(u8::is_ascii_digit)?;
                let len = b[start..]
                    .iter()
                    .position(|c| !c.is_ascii_digit())
                    .unwrap_or(b.len() - start);
                (start, start + len)
            }
            Extract::LastNumber => {
                let end = b.iter().rposition(u8::is_ascii_digit)? + 1;
                let start = b[..end]
                    .iter()
                    .rposition(|c| !c.is_ascii_digit())
                    .map_or(0, |i| i + 1);
                (start, end)
            }
        })
    }

    /// Whether a rule reading both the first and the last number of `value` may apply to it:
    /// only when the value holds two runs of digits or more. MyBB's `forum-55-page-2.html`
    /// (`fid=55&page=2`) holds two; `thread-13077.html` holds one, which both extractions
    /// would read, writing one id as two (`fid=13077&page=13077`) and merging the thread
    /// with every other URL that number reaches.
    pub fn splits(value: &str) -> bool {
        let mut runs = 0;
        let mut in_run = false;
        for b in value.bytes() {
            let digit = b.is_ascii_digit();
            if digit && !in_run {
                runs += 1;
                if runs == 2 {
                    return true;
                }
            }
            in_run = digit;
        }
        false
    }

    /// Name in rule text (`first_number(path_1)`).
    pub fn name(self) -> &'static str {
        match self {
            Extract::FirstNumber => "first_number",
            Extract::LastNumber => "last_number",
        }
    }
}

impl Operation {
    /// The key this operation is about.
    pub fn key(&self) -> &Key {
        match self {
            Operation::Keep { key, .. }
            | Operation::Replace { key, .. }
            | Operation::Ignore { key, .. } => key,
        }
    }

    /// Whether this operation puts its key in the output.
    pub fn outputs(&self) -> bool {
        !matches!(self, Operation::Ignore { fill: None, .. })
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Keep { key, value } => write!(f, "keep {key}={value}"),
            Operation::Replace {
                key,
                from,
                lowercase,
                extract,
            } => {
                write!(f, "replace {key} <- ")?;
                match (extract, lowercase) {
                    (Some(e), false) => write!(f, "{}({from})", e.name()),
                    (Some(e), true) => write!(f, "{}(lower({from}))", e.name()),
                    (None, true) => write!(f, "lower({from})"),
                    (None, false) => write!(f, "{from}"),
                }
            }
            Operation::Ignore { key, fill: None } => write!(f, "ignore {key}"),
            Operation::Ignore { key, fill: Some(v) } => write!(f, "ignore {key} -> {v}"),
        }
    }
}

/// One learned rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Stable identifier (`host#n`).
    pub id: String,
    /// URLs this rule rewrites.
    pub source_pattern: String,
    /// What the rewritten URLs look like.
    pub target_pattern: String,
    /// One operation per output key, plus `ignore` for dropped input keys.
    pub operations: Vec<Operation>,
    /// Training URLs the rule rewrote.
    pub support: u64,
    /// False-positive pairs / support pairs on the training set (Lei et al., eq. 3).
    pub false_positive_rate: f64,
    /// Distinct duplicate clusters backing the rule.
    #[serde(default)]
    pub support_clusters: u64,
    /// Path segments of the source whose `*` matches only values that do not name a file
    /// ([`files`]): the rule was shown on documents (`/f/report/view` ≡ `/f/report`), and a
    /// file's bare URL is its bytes while `/f/scan.pdf/view` is a page about it (Zope, Plone,
    /// WebDAV), so the files beside the documents stay as they are. Absent from older rule
    /// files: every value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_files: Vec<Key>,
}

/// The rules of one host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostRuleSet {
    /// Host name.
    pub host: String,
    /// Increases every time the host's rules are re-learned.
    pub version: u64,
    /// When the rules were learned.
    pub learned_at_unix_ms: i64,
    /// Host-wide normalizations applied before the pattern rules (see [`site`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub site_rules: Vec<SiteRule>,
    /// The rules.
    pub rules: Vec<Rule>,
    /// Declared aliases: exact replacements of one canonical form by another, looked up after
    /// the site and pattern rules (see [`aliases`]). Absent from older rule files: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<Alias>,
}

/// A rule file: rules for many hosts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleFile {
    /// Always [`RULE_FILE_FORMAT`].
    pub format: String,
    /// Always [`RULE_FILE_VERSION`] for files this build writes.
    pub version: u32,
    /// Per-host rule sets.
    pub hosts: Vec<HostRuleSet>,
    /// Mirror sets: origins folded into one canonical origin before the per-host rules (see
    /// [`mirror`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mirrors: Vec<MirrorSet>,
}

/// Why rules cannot be loaded or compiled.
#[derive(Debug, Error)]
pub enum RuleError {
    /// Not JSON, or JSON of the wrong shape.
    #[error("rule file is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The `format` marker is not [`RULE_FILE_FORMAT`].
    #[error("not an undust rule file (format {0:?})")]
    UnknownFormat(String),
    /// A version this build does not read.
    #[error("unsupported rule file version {0} (this build reads {RULE_FILE_VERSION})")]
    UnsupportedVersion(u32),
    /// A pattern does not parse.
    #[error("rule {rule}: bad {which} pattern {pattern:?}: {reason}")]
    BadPattern {
        /// Rule id.
        rule: String,
        /// `source` or `target`.
        which: &'static str,
        /// The pattern text.
        pattern: String,
        /// Why.
        reason: PatternError,
    },
    /// Operations inconsistent with the patterns.
    #[error("rule {rule}: {reason}")]
    BadOperations {
        /// Rule id.
        rule: String,
        /// Why.
        reason: String,
    },
    /// A mirror set that cannot be served.
    #[error("mirror set {set}: {reason}")]
    BadMirrorSet {
        /// Set id.
        set: String,
        /// Why.
        reason: String,
    },
    /// A declared alias that cannot be served (see [`aliases`]).
    #[error("host {host}: alias {from} -> {to}: {reason}")]
    BadAlias {
        /// Host.
        host: String,
        /// The alias's `from`.
        from: String,
        /// The alias's `to`.
        to: String,
        /// Why.
        reason: String,
    },
    /// Too many declared aliases for one host.
    #[error("host {host}: {count} aliases exceed the limit of {MAX_ALIASES_PER_HOST}")]
    TooManyAliases {
        /// Host.
        host: String,
        /// Alias count.
        count: usize,
    },
    /// Too many rules for one host.
    #[error("host {host}: {count} rules exceed the limit of {MAX_RULES_PER_HOST}")]
    TooManyRules {
        /// Host.
        host: String,
        /// Rule count.
        count: usize,
    },
}

impl RuleFile {
    /// A file of the current version.
    pub fn new(hosts: Vec<HostRuleSet>) -> Self {
        RuleFile {
            format: RULE_FILE_FORMAT.to_owned(),
            version: RULE_FILE_VERSION,
            hosts,
            mirrors: Vec::new(),
        }
    }

    /// The same file with mirror sets.
    pub fn with_mirrors(mut self, mirrors: Vec<MirrorSet>) -> Self {
        self.mirrors = mirrors;
        self
    }

    /// Parses and validates a rule file.
    pub fn from_json(text: &str) -> Result<Self, RuleError> {
        let file: RuleFile = serde_json::from_str(text)?;
        if file.format != RULE_FILE_FORMAT {
            return Err(RuleError::UnknownFormat(file.format));
        }
        if file.version != RULE_FILE_VERSION {
            return Err(RuleError::UnsupportedVersion(file.version));
        }
        for h in &file.hosts {
            h.validate()?;
        }
        mirror::validate_mirror_sets(&file.mirrors)?;
        Ok(file)
    }

    /// Pretty-printed JSON.
    pub fn to_json_pretty(&self) -> Result<String, RuleError> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}

/// A rule with parsed, cross-checked patterns.
#[derive(Clone, Debug)]
pub struct ValidatedRule {
    /// Parsed source pattern.
    pub source: Pattern,
    /// Parsed target pattern.
    pub target: Pattern,
}

impl HostRuleSet {
    /// Rules of both kinds: site rules and pattern rules (aliases are not counted).
    pub fn len(&self) -> usize {
        self.site_rules.len() + self.rules.len()
    }

    /// Whether the host has nothing to apply: no rule of either kind and no alias.
    pub fn is_empty(&self) -> bool {
        self.site_rules.is_empty() && self.rules.is_empty() && self.aliases.is_empty()
    }

    /// Validates every rule; returns the parsed patterns in rule order.
    pub fn validate(&self) -> Result<Vec<ValidatedRule>, RuleError> {
        if self.rules.len() > MAX_RULES_PER_HOST {
            return Err(RuleError::TooManyRules {
                host: self.host.clone(),
                count: self.rules.len(),
            });
        }
        if self.site_rules.len() > MAX_RULES_PER_HOST {
            return Err(RuleError::TooManyRules {
                host: self.host.clone(),
                count: self.site_rules.len(),
            });
        }
        aliases::validate(&self.host, &self.aliases)?;
        for rule in &self.site_rules {
            let bad = |reason: &str| RuleError::BadOperations {
                rule: rule.id.clone(),
                reason: reason.to_owned(),
            };
            match &rule.action {
                SiteAction::IgnoreParam { name, beside } => {
                    if bad_param_name(name) || beside.as_deref().is_some_and(bad_beside) {
                        return Err(bad(
                            "a parameter name must be non-empty without & = # (beside: names or name=value parts joined by &)",
                        ));
                    }
                }
                SiteAction::IgnoreParamValue {
                    name,
                    value,
                    beside,
                } => {
                    if bad_param_name(name)
                        || value.contains(['&', '#'])
                        || beside.as_deref().is_some_and(bad_beside)
                    {
                        return Err(bad(
                            "a parameter at its default value needs a name without & = # and a value without & # (beside: names or name=value parts joined by &)",
                        ));
                    }
                }
                SiteAction::LowercaseSegments { segments } => {
                    if *segments == 0 {
                        return Err(bad("lower-cased segments must be at least one"));
                    }
                }
                SiteAction::DefaultDocument { name } => {
                    if name.is_empty() || name.contains(['/', '?', '#']) {
                        return Err(bad("a default document must be a non-empty file name"));
                    }
                }
                SiteAction::SegmentAlias {
                    canonical, aliases, ..
                } => {
                    let bad_value = |v: &String| v.is_empty() || v.contains(['/', '?', '#', ';']);
                    if aliases.is_empty()
                        || bad_value(canonical)
                        || aliases.iter().any(|a| bad_value(a) || a == canonical)
                    {
                        return Err(bad(
                            "segment aliases must be non-empty segment values other than the canonical one",
                        ));
                    }
                }
                SiteAction::DropSegment { value, .. } => {
                    if value.is_empty() || value.contains(['/', '?', '#', ';']) {
                        return Err(bad("a dropped segment must be a non-empty segment value"));
                    }
                }
                SiteAction::QueryValueToPath {
                    path,
                    name,
                    prefix,
                    namespace_separator,
                } => {
                    let bad_path = |v: &String| !v.starts_with('/') || v.contains(['?', '#']);
                    if bad_path(path)
                        || bad_path(prefix)
                        || !prefix.ends_with('/')
                        || name.contains(['&', '=', '#'])
                        || namespace_separator
                            .is_some_and(|c| !c.is_ascii_punctuation() || "/?#&=%".contains(c))
                    {
                        return Err(bad(
                            "a query value moved to the path needs a path, a parameter name (or none), a prefix ending with / and a namespace separator that is punctuation other than / ? # & = %",
                        ));
                    }
                }
                SiteAction::PathPairsToQuery { script } => {
                    if bad_script(script) {
                        return Err(bad(
                            "query parameters written as path pairs need a script path starting with / and not ending with /",
                        ));
                    }
                }
                SiteAction::QueryPath { path, .. } => {
                    if bad_script(path) {
                        return Err(bad(
                            "a path written as the query string needs a script path starting with / and not ending with /",
                        ));
                    }
                }
                SiteAction::IdInSlug {
                    short,
                    depth,
                    suffix,
                } => {
                    if !short.starts_with('/')
                        || !short.ends_with('/')
                        || short.contains(['?', '#'])
                        || *depth == 0
                        || suffix.contains(['/', '?', '#'])
                    {
                        return Err(bad(
                            "an id in a slug needs a short path starting and ending with /, a depth and a suffix without / ? #",
                        ));
                    }
                }
                SiteAction::SlugInSegment {
                    prefix, separator, ..
                } => {
                    if !prefix.starts_with('/')
                        || !prefix.ends_with('/')
                        || prefix.contains(['?', '#'])
                        || !site::TITLE_SEPARATORS.contains(separator)
                    {
                        return Err(bad(
                            "a titled id needs a page type prefix starting and ending with / and a separator among . - : _ ~ ,",
                        ));
                    }
                }
                SiteAction::TitledIdInQuery {
                    name, separator, ..
                } => {
                    if name.is_empty()
                        || name.contains(['&', '=', '#'])
                        || !site::TITLE_SEPARATORS.contains(separator)
                    {
                        return Err(bad(
                            "a titled id in a query value needs a parameter name without & = # and a separator among . - : _ ~ ,",
                        ));
                    }
                }
                SiteAction::AbbreviatedHash { after, length } => {
                    if after.is_empty()
                        || after.contains(['/', '?', '#', ';'])
                        || !(site::MIN_HASH_ABBREVIATION..=site::MAX_HASH_ABBREVIATION)
                            .contains(length)
                    {
                        return Err(bad(
                            "an abbreviated hash needs the segment before it (non-empty, without / ? # ;) and a length of 7 to 39 digits",
                        ));
                    }
                }
                SiteAction::StripExtension { extension } => {
                    if !site::is_extension(extension) {
                        return Err(bad(
                            "an extension is a dot followed by one to eight letters or digits, one a letter",
                        ));
                    }
                }
                SiteAction::SlugBesideId { prefix, .. } => {
                    if !prefix.starts_with('/')
                        || !prefix.ends_with('/')
                        || prefix.contains(['?', '#'])
                    {
                        return Err(bad("a slug's page type prefix must start and end with /"));
                    }
                }
                SiteAction::TemplatedSegmentToQuery {
                    dir,
                    before,
                    after,
                    script,
                    name,
                    fixed,
                    titled,
                    ..
                } => {
                    let literal = |v: &String| !v.contains(['/', '?', '#', '&', '=']);
                    // A title ends where the marker starts: the marker opens with a separator.
                    let plain_title_end =
                        !*titled || before.starts_with(|c: char| !c.is_ascii_alphanumeric());
                    // The script must not read as a templated segment itself, so the query
                    // form is a fixpoint.
                    let script_templated =
                        site::SegmentTemplate::of(&rule.action).is_some_and(|t| t.reads(script));
                    if !dir.starts_with('/')
                        || !dir.ends_with('/')
                        || dir.contains(['?', '#'])
                        || !literal(before)
                        || !literal(after)
                        || (before.is_empty() && after.is_empty())
                        || !plain_title_end
                        || !script.starts_with('/')
                        || script.contains(['?', '#'])
                        || script_templated
                        || name.is_empty()
                        || name.contains(['&', '=', '#'])
                        || !site::fixed_query_parts(fixed)
                    {
                        return Err(bad(
                            "a templated segment needs a directory starting and ending with /, literals without / ? # & = (not both empty; a titled one's first literal starting with a separator), a script path that is not itself templated, a parameter name and fixed parts name=value joined by &",
                        ));
                    }
                }
                SiteAction::TemplatedPairToQuery {
                    dir,
                    before,
                    between,
                    after,
                    script,
                    first,
                    second,
                    fixed,
                } => {
                    let literal = |v: &String| !v.contains(['/', '?', '#', '&', '=']);
                    let name = |n: &String| !n.is_empty() && !n.contains(['&', '=', '#']);
                    // The script must not read as the template itself, so the query form is a
                    // fixpoint.
                    let script_templated =
                        site::SegmentTemplate::of(&rule.action).is_some_and(|t| t.reads(script));
                    if !dir.starts_with('/')
                        || !dir.ends_with('/')
                        || dir.contains(['?', '#'])
                        || !literal(before)
                        || !literal(between)
                        || !literal(after)
                        || !site::pair_literals_delimit(before, between, after)
                        || !script.starts_with('/')
                        || script.contains(['?', '#'])
                        || script_templated
                        || !name(first)
                        || !name(second)
                        || first == second
                        || !site::fixed_query_parts(fixed)
                    {
                        return Err(bad(
                            "a templated pair needs a directory starting and ending with /, literals without / ? # & = and no digit beside a number, a literal between the numbers, a script path that is not itself templated, two parameter names and fixed parts name=value joined by &",
                        ));
                    }
                }
                SiteAction::DefaultValueSuffix { name, suffix } => {
                    if name.is_empty()
                        || name.contains(['&', '=', '#'])
                        || !site::is_value_suffix(suffix)
                    {
                        return Err(bad(
                            "a default value suffix needs a parameter name and one to eight characters, the first not a digit, without & = ; + ? # / '",
                        ));
                    }
                }
                SiteAction::DefaultViewTail { tail } => {
                    if !site::is_view_tail(tail) {
                        return Err(bad(
                            "a default view's tail is one to three non-empty path segments, each after a /",
                        ));
                    }
                }
                SiteAction::ContextTail { dir } => {
                    if !dir.starts_with('/')
                        || !dir.ends_with('/')
                        || dir.len() < 3
                        || dir.contains(['?', '#'])
                        || dir.contains("//")
                    {
                        return Err(bad(
                            "a context tail needs a directory of at least one segment, starting and ending with /, without ? # or an empty segment",
                        ));
                    }
                }
                SiteAction::KeylessIdInQuery { script, name } => {
                    if !script.starts_with('/')
                        || script.contains(['?', '#'])
                        || name.is_empty()
                        || name.contains(['&', '=', '#'])
                    {
                        return Err(bad(
                            "a keyless id needs a script path starting with / without ? # and a parameter name without & = #",
                        ));
                    }
                }
                SiteAction::RoutedIdToQuery {
                    dir,
                    routes,
                    script,
                    fixed,
                    name,
                    at,
                    extension,
                } => {
                    if let Some(reason) = routed_ids::routed_id_error(
                        dir,
                        routes,
                        script,
                        fixed,
                        name,
                        *at,
                        extension.as_deref(),
                    ) {
                        return Err(bad(reason));
                    }
                }
                SiteAction::PostToPage {
                    prefix,
                    kept,
                    key,
                    per_page_min,
                    per_page_max,
                } => {
                    if let Some(reason) = post_pages::post_page_error(
                        prefix,
                        *kept,
                        key,
                        *per_page_min,
                        *per_page_max,
                    ) {
                        return Err(bad(reason));
                    }
                }
                SiteAction::Vocabulary {
                    path,
                    name,
                    entries,
                    renamed,
                } => {
                    if let Some(reason) = vocabulary::vocabulary_error(path, name, entries, renamed)
                    {
                        return Err(bad(reason));
                    }
                }
                SiteAction::SharedFiles { files } => {
                    if files.is_empty() || files.len() > site::MAX_SHARED_FILES {
                        return Err(bad(&format!(
                            "shared files need 1 to {} files",
                            site::MAX_SHARED_FILES
                        )));
                    }
                    if let Some(reason) = files.iter().find_map(site::SharedFile::error) {
                        return Err(bad(reason));
                    }
                    // A copy another file of the name holds would be rewritten again: the
                    // canonical form would not be a fixpoint.
                    let rewritten_again = files.iter().any(|a| {
                        files
                            .iter()
                            .any(|b| a.name == b.name && a.copy != b.copy && a.holds(&b.copy))
                    });
                    if rewritten_again {
                        return Err(bad(
                            "shared files of one name must not hold one another's copies",
                        ));
                    }
                }
                SiteAction::LowercasePath
                | SiteAction::LowercasePathAndQuery
                | SiteAction::SortQuery
                | SiteAction::UseHttps
                | SiteAction::StripTrailingSlash => {}
            }
        }
        self.rules.iter().map(Rule::validate).collect()
    }
}

impl Rule {
    /// Parses the patterns and checks that the operations turn a source URL into a target URL.
    pub fn validate(&self) -> Result<ValidatedRule, RuleError> {
        let bad_pattern = |which, pattern: &str, reason| RuleError::BadPattern {
            rule: self.id.clone(),
            which,
            pattern: pattern.to_owned(),
            reason,
        };
        let source = Pattern::parse(&self.source_pattern)
            .map_err(|e| bad_pattern("source", &self.source_pattern, e))?;
        let target = Pattern::parse(&self.target_pattern)
            .map_err(|e| bad_pattern("target", &self.target_pattern, e))?;
        let bad = |reason: String| RuleError::BadOperations {
            rule: self.id.clone(),
            reason,
        };
        if !(0.0..=1.0).contains(&self.false_positive_rate) {
            return Err(bad(format!(
                "false_positive_rate {} outside [0, 1]",
                self.false_positive_rate
            )));
        }
        for (i, key) in self.not_files.iter().enumerate() {
            if !matches!(key, Key::Path(_)) || source.get(key) != Some(&ValuePattern::Any) {
                return Err(bad(format!(
                    "not_files names {key}, which is not a path segment with * in the source"
                )));
            }
            if self.not_files[..i].contains(key) {
                return Err(bad(format!("not_files names {key} twice")));
            }
        }
        for (i, op) in self.operations.iter().enumerate() {
            if self.operations[..i].iter().any(|o| o.key() == op.key()) {
                return Err(bad(format!("two operations on {}", op.key())));
            }
            match op {
                Operation::Keep { key, value } => {
                    if target.get(key) != Some(&ValuePattern::Literal(value.clone())) {
                        return Err(bad(format!(
                            "`{op}` but the target has {key}={:?}",
                            target.get(key)
                        )));
                    }
                }
                Operation::Replace {
                    key,
                    from,
                    lowercase,
                    extract,
                } => {
                    if *lowercase && extract.is_some() {
                        return Err(bad(format!("`{op}`: an extracted number has no case")));
                    }
                    if source.get(from).is_none() {
                        return Err(bad(format!("`{op}`: {from} is not in the source pattern")));
                    }
                    if target.get(key) != Some(&ValuePattern::Any) {
                        return Err(bad(format!("`{op}`: target must have {key}=*")));
                    }
                    let (tc, fc) = (key.component(), from.component());
                    let host_like =
                        |c| matches!(c, Component::Host | Component::Scheme | Component::Port);
                    if (host_like(tc) || host_like(fc)) && tc != fc {
                        return Err(bad(format!(
                            "`{op}`: cannot move a value into or out of {tc:?}"
                        )));
                    }
                }
                Operation::Ignore { key, fill: None } => {
                    if target.get(key).is_some() {
                        return Err(bad(format!("`{op}` drops {key} but the target has it")));
                    }
                    if !matches!(key.component(), Component::Query | Component::PathParam)
                        && source.get(key).is_none()
                    {
                        return Err(bad(format!("`{op}`: {key} is not in the source pattern")));
                    }
                }
                Operation::Ignore { key, fill: Some(v) } => {
                    if target.get(key) != Some(&ValuePattern::Literal(v.clone())) {
                        return Err(bad(format!(
                            "`{op}` but the target has {key}={:?}",
                            target.get(key)
                        )));
                    }
                }
            }
        }
        for (k, _) in &target.entries {
            if !self.operations.iter().any(|o| o.key() == k && o.outputs()) {
                return Err(bad(format!("no operation produces target key {k}")));
            }
        }
        // Keys of the source that no operation mentions would silently vanish: make the
        // file say so.
        for (k, _) in &source.entries {
            let mentioned = self
                .operations
                .iter()
                .any(|o| o.key() == k || matches!(o, Operation::Replace { from, .. } if from == k));
            if !mentioned {
                return Err(bad(format!(
                    "source key {k} is neither kept, replaced nor ignored"
                )));
            }
        }
        Ok(ValidatedRule { source, target })
    }
}

/// Whether `name` cannot be a query parameter's name in a site rule.
fn bad_param_name(name: &str) -> bool {
    name.is_empty() || name.contains(['&', '=', '#'])
}

/// Whether `path` cannot be a script's path: it must start with `/`, not end with one, and hold
/// no `?` or `#`.
fn bad_script(path: &str) -> bool {
    !path.starts_with('/') || path.ends_with('/') || path.contains(['?', '#'])
}

/// Whether `beside` is not names, or names and the values they must have, joined by `&`.
fn bad_beside(beside: &str) -> bool {
    beside.split('&').any(|part| match part.split_once('=') {
        Some((name, value)) => bad_param_name(name) || value.contains(['&', '=', '#']),
        None => bad_param_name(part),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_rule() -> Rule {
        Rule {
            id: "example.com#1".into(),
            source_pattern: "http://example.com/item.php?id=*&sid=*".into(),
            target_pattern: "http://example.com/item.php?id=*".into(),
            operations: vec![
                Operation::Keep {
                    key: Key::Scheme,
                    value: "http".into(),
                },
                Operation::Keep {
                    key: Key::Auth(0),
                    value: "example".into(),
                },
                Operation::Keep {
                    key: Key::Auth(1),
                    value: "com".into(),
                },
                Operation::Keep {
                    key: Key::Path(0),
                    value: "item.php".into(),
                },
                Operation::Replace {
                    key: "query:id".parse().unwrap(),
                    from: "query:id".parse().unwrap(),
                    lowercase: false,
                    extract: None,
                },
                Operation::Ignore {
                    key: "query:sid".parse().unwrap(),
                    fill: None,
                },
            ],
            support: 10,
            false_positive_rate: 0.0,
            support_clusters: 4,
            not_files: Vec::new(),
        }
    }

    /// A fence off files is written only when set, and rule files written before it load
    /// with every value matched.
    #[test]
    fn a_fence_off_files_is_written_only_when_set() {
        let mut file = RuleFile::new(vec![HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: Vec::new(),
            rules: vec![sample_rule()],
            aliases: Vec::new(),
        }]);
        let old = file.to_json_pretty().unwrap();
        assert!(!old.contains("not_files"), "{old}");
        assert!(RuleFile::from_json(&old).unwrap().hosts[0].rules[0]
            .not_files
            .is_empty());
        let rule = &mut file.hosts[0].rules[0];
        rule.source_pattern = "http://example.com/*?id=*&sid=*".into();
        rule.target_pattern = "http://example.com/*?id=*".into();
        rule.operations[3] = Operation::Replace {
            key: Key::Path(0),
            from: Key::Path(0),
            lowercase: false,
            extract: None,
        };
        rule.not_files = vec![Key::Path(0)];
        let text = file.to_json_pretty().unwrap();
        assert!(text.contains(r#""not_files": ["#), "{text}");
        assert_eq!(RuleFile::from_json(&text).unwrap(), file);
    }

    #[test]
    fn operations_display_as_documented() {
        let ops = [
            (
                Operation::Keep {
                    key: Key::Path(2),
                    value: "display".into(),
                },
                "keep path_2=display",
            ),
            (
                Operation::Replace {
                    key: Key::Path(1),
                    from: "query:pageid".parse().unwrap(),
                    lowercase: false,
                    extract: None,
                },
                "replace path_1 <- query:pageid",
            ),
            (
                Operation::Replace {
                    key: "query:t".parse().unwrap(),
                    from: Key::Path(1),
                    lowercase: false,
                    extract: Some(Extract::FirstNumber),
                },
                "replace query:t <- first_number(path_1)",
            ),
            (
                Operation::Ignore {
                    key: "query:sid".parse().unwrap(),
                    fill: None,
                },
                "ignore query:sid",
            ),
            (
                Operation::Ignore {
                    key: Key::Path(0),
                    fill: Some("archive".into()),
                },
                "ignore path_0 -> archive",
            ),
        ];
        for (op, text) in ops {
            assert_eq!(op.to_string(), text);
        }
    }

    #[test]
    fn extract_takes_first_or_last_digit_run() {
        let (f, l) = (Extract::FirstNumber, Extract::LastNumber);
        assert_eq!(f.apply("7869-radio-quick"), Some("7869"));
        assert_eq!(l.apply("culture-health-world-1742.html"), Some("1742"));
        assert_eq!(f.apply("a12b345"), Some("12"));
        assert_eq!(l.apply("a12b345"), Some("345"));
        assert_eq!(l.apply("12b"), Some("12"));
        assert_eq!(f.apply("42"), Some("42"));
        assert_eq!(f.apply("été-٣"), None, "non-ASCII digits are not digits");
        assert_eq!(l.apply(""), None);
        let op = Operation::Replace {
            key: "query:t".parse().unwrap(),
            from: Key::Path(1),
            lowercase: false,
            extract: Some(Extract::LastNumber),
        };
        let json = serde_json::to_string(&op).unwrap();
        assert!(json.contains(r#""extract":"last_number""#), "{json}");
        assert_eq!(serde_json::from_str::<Operation>(&json).unwrap(), op);
    }

    #[test]
    fn file_round_trips_and_validates() {
        let set = HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: Vec::new(),
            rules: vec![sample_rule()],
            aliases: Vec::new(),
        };
        let file = RuleFile::new(vec![set]);
        let text = file.to_json_pretty().unwrap();
        assert!(text.contains("\"format\": \"undust-rules\""));
        assert_eq!(RuleFile::from_json(&text).unwrap(), file);
    }

    /// A host's alias table is written as documented and read back as it was written.
    #[test]
    fn alias_tables_round_trip_as_documented() {
        let set = HostRuleSet {
            host: "example.com".into(),
            version: 2,
            learned_at_unix_ms: 0,
            site_rules: Vec::new(),
            rules: vec![sample_rule()],
            aliases: vec![
                Alias {
                    from: "http://example.com/node/5".into(),
                    to: "http://example.com/about-us".into(),
                },
                Alias {
                    from: "http://example.com/?p=7".into(),
                    to: "http://example.com/2019/05/hello/".into(),
                },
            ],
        };
        let file = RuleFile::new(vec![set]);
        let text = file.to_json_pretty().expect("serializes");
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(
            json["hosts"][0]["aliases"][0],
            serde_json::json!({"from": "http://example.com/node/5", "to": "http://example.com/about-us"})
        );
        assert_eq!(RuleFile::from_json(&text).expect("loads"), file);
        // An empty table is not written.
        let mut bare = file.clone();
        bare.hosts[0].aliases.clear();
        assert!(!bare
            .to_json_pretty()
            .expect("serializes")
            .contains("aliases"));
        // A bad table is refused on load, naming the host and the alias.
        let mut bad = file;
        bad.hosts[0].aliases[1].to = "http://example.com/node/5".into();
        let err =
            RuleFile::from_json(&bad.to_json_pretty().expect("serializes")).expect_err("a chain");
        assert!(
            err.to_string().starts_with(
                "host example.com: alias http://example.com/?p=7 -> http://example.com/node/5"
            ),
            "{err}"
        );
    }

    /// A rule file written before alias tables existed loads unchanged, with no aliases, and is
    /// written back byte for byte.
    #[test]
    fn an_older_file_without_aliases_loads_unchanged() {
        let older = RuleFile::new(vec![HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 1_700_000_000_000,
            site_rules: Vec::new(),
            rules: vec![sample_rule()],
            aliases: Vec::new(),
        }])
        .to_json_pretty()
        .expect("serializes");
        assert!(!older.contains("aliases"));
        let loaded = RuleFile::from_json(&older).expect("loads");
        assert!(loaded.hosts[0].aliases.is_empty());
        assert_eq!(loaded.hosts[0].rules, vec![sample_rule()]);
        assert_eq!(loaded.to_json_pretty().expect("serializes"), older);
        // As the module documentation writes it, without the field at all.
        let documented = r#"{"format": "undust-rules", "version": 1, "hosts": [{
          "host": "example.com", "version": 3, "learned_at_unix_ms": 1700000000000,
          "rules": []}]}"#;
        let loaded = RuleFile::from_json(documented).expect("loads");
        assert!(loaded.hosts[0].aliases.is_empty());
    }

    #[test]
    fn addresses_spelled_in_several_shapes_round_trip_and_bad_ones_are_refused() {
        let site = |n: usize, action: SiteAction| site::SiteRule {
            id: format!("example.com#s{n}"),
            action,
            support: 5,
            support_clusters: 3,
            false_positive_rate: 0.0,
            pooled: None,
        };
        let template = SiteAction::TemplatedSegmentToQuery {
            dir: "/forum/index.php/".into(),
            before: "topic,".into(),
            after: ".html".into(),
            script: "/forum/index.php".into(),
            name: "topic".into(),
            numbers: false,
            fixed: String::new(),
            titled: false,
        };
        let suffix = SiteAction::DefaultValueSuffix {
            name: "topic".into(),
            suffix: ".0".into(),
        };
        let tail = SiteAction::DefaultViewTail {
            tail: "/l/latest".into(),
        };
        let file = |actions: Vec<SiteAction>| {
            RuleFile::new(vec![HostRuleSet {
                host: "example.com".into(),
                version: 1,
                learned_at_unix_ms: 0,
                site_rules: actions
                    .into_iter()
                    .enumerate()
                    .map(|(n, a)| site(n, a))
                    .collect(),
                rules: Vec::new(),
                aliases: Vec::new(),
            }])
        };
        let pair = SiteAction::TemplatedPairToQuery {
            dir: "/forum/".into(),
            before: "thread-".into(),
            between: "-page-".into(),
            after: ".html".into(),
            script: "/forum/showthread.php".into(),
            first: "tid".into(),
            second: "page".into(),
            fixed: String::new(),
        };
        let numbered = SiteAction::TemplatedSegmentToQuery {
            dir: "/forum/".into(),
            before: "thread-".into(),
            after: ".html".into(),
            script: "/forum/showthread.php".into(),
            name: "tid".into(),
            numbers: true,
            fixed: String::new(),
            titled: false,
        };
        let context = SiteAction::ContextTail {
            dir: "/picture.php/".into(),
        };
        let titled = |before: &str| SiteAction::TemplatedSegmentToQuery {
            dir: "/catalog/".into(),
            before: before.into(),
            after: ".html".into(),
            script: "/catalog/product_info.php".into(),
            name: "products_id".into(),
            numbers: true,
            fixed: String::new(),
            titled: true,
        };
        let good = file(vec![
            template.clone(),
            suffix,
            tail,
            pair.clone(),
            numbered,
            context,
            titled("-p-"),
        ]);
        let text = good.to_json_pretty().unwrap();
        assert_eq!(text.matches("\"numbers\": true").count(), 2, "{text}");
        // Written only when set, so older readers and files see the templates they know.
        assert_eq!(text.matches("\"titled\"").count(), 1, "{text}");
        for op in [
            "\"op\": \"templated_pair_to_query\"",
            "\"op\": \"templated_segment_to_query\"",
            "\"op\": \"default_value_suffix\"",
            "\"op\": \"default_view_tail\"",
            "\"op\": \"context_tail\"",
        ] {
            assert!(text.contains(op), "{op} in {text}");
        }
        assert_eq!(RuleFile::from_json(&text).unwrap(), good);
        let SiteAction::TemplatedSegmentToQuery {
            dir,
            before,
            after,
            name,
            ..
        } = template
        else {
            unreachable!()
        };
        let SiteAction::TemplatedPairToQuery {
            dir: pair_dir,
            before: pair_before,
            after: pair_after,
            script: pair_script,
            first,
            second,
            ..
        } = pair
        else {
            unreachable!()
        };
        let bad_pair =
            |between: &str, script: &str, second: &str| SiteAction::TemplatedPairToQuery {
                dir: pair_dir.clone(),
                before: pair_before.clone(),
                between: between.into(),
                after: pair_after.clone(),
                script: script.into(),
                first: first.clone(),
                second: second.into(),
                fixed: String::new(),
            };
        let bad = [
            // Nothing between the numbers, or a digit beside one: two numbers read more ways
            // than one.
            bad_pair("", &pair_script, &second),
            bad_pair("-page-2", &pair_script, &second),
            // A script that reads as the template, one name for both numbers.
            bad_pair("-page-", "/forum/thread-1-page-2.html", &second),
            bad_pair("-page-", &pair_script, &first),
            // A script that reads as a templated segment itself: the query form would move again.
            SiteAction::TemplatedSegmentToQuery {
                dir: dir.clone(),
                before: before.clone(),
                after: after.clone(),
                script: "/forum/index.php/topic,5.html".into(),
                name: name.clone(),
                numbers: false,
                fixed: String::new(),
                titled: false,
            },
            // Neither literal: a whole segment, not a template.
            SiteAction::TemplatedSegmentToQuery {
                dir,
                before: String::new(),
                after: String::new(),
                script: "/forum/index.php".into(),
                name,
                numbers: false,
                fixed: String::new(),
                titled: false,
            },
            // A titled template's marker must start with a separator: the title's end.
            titled("p-"),
            // A suffix that leaves a bare number, one that adds a parameter.
            SiteAction::DefaultValueSuffix {
                name: "topic".into(),
                suffix: "0".into(),
            },
            SiteAction::DefaultValueSuffix {
                name: "topic".into(),
                suffix: ".0&x=1".into(),
            },
            // Four segments, an empty one, no leading slash.
            SiteAction::DefaultViewTail {
                tail: "/a/b/c/d".into(),
            },
            SiteAction::DefaultViewTail {
                tail: "/l//latest".into(),
            },
            SiteAction::DefaultViewTail {
                tail: "l/latest".into(),
            },
            // A context tail's directory: none, without its slashes, with an empty segment.
            SiteAction::ContextTail { dir: "/".into() },
            SiteAction::ContextTail {
                dir: "picture.php".into(),
            },
            SiteAction::ContextTail {
                dir: "/a//b/".into(),
            },
        ];
        for action in bad {
            let text = serde_json::to_string(&file(vec![action.clone()])).unwrap();
            let err = RuleFile::from_json(&text).unwrap_err();
            assert!(
                err.to_string().contains("example.com#s0"),
                "{action:?}: {err}"
            );
        }
    }

    #[test]
    fn shared_files_round_trip_and_bad_ones_are_named() {
        let file = |files: &[(&str, &str, &str)]| {
            one_site_rule(SiteAction::SharedFiles {
                files: files
                    .iter()
                    .map(|&(folder, name, copy)| site::SharedFile {
                        folder: folder.into(),
                        name: name.into(),
                        copy: copy.into(),
                    })
                    .collect(),
            })
        };
        let good = file(&[
            ("/", "logo.gif", "/logo.gif"),
            ("/", "site.css", "/faq/site.css"),
        ]);
        let text = good.to_json_pretty().unwrap();
        assert!(text.contains("\"op\": \"shared_files\""), "{text}");
        assert_eq!(RuleFile::from_json(&text).unwrap(), good);
        for bad in [
            // None, a page, a copy of another name, deeper than a subfolder, outside the
            // folder, no leading slash, an empty segment, a name with a slash.
            &[][..],
            &[("/", "index.html", "/index.html")],
            &[("/", "logo.gif", "/faq/other.gif")],
            &[("/", "logo.gif", "/a/b/logo.gif")],
            &[("/docs/", "logo.gif", "/logo.gif")],
            &[("docs/", "logo.gif", "docs/logo.gif")],
            &[("/a//", "logo.gif", "/a//logo.gif")],
            &[("/", "a/logo.gif", "/a/logo.gif")],
            &[("/", "logo.gif", "/xlogo.gif")],
            // Two files of one name, one holding the other's copy.
            &[
                ("/", "logo.gif", "/logo.gif"),
                ("/faq/", "logo.gif", "/faq/logo.gif"),
            ],
        ] {
            let text = serde_json::to_string(&file(bad)).unwrap();
            let err = RuleFile::from_json(&text).unwrap_err();
            assert!(err.to_string().contains("example.com#s0"), "{bad:?}: {err}");
        }
    }

    /// A rule file of one host with one site rule, `example.com#s0`.
    fn one_site_rule(action: SiteAction) -> RuleFile {
        RuleFile::new(vec![HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: vec![site::SiteRule {
                id: "example.com#s0".into(),
                action,
                support: 5,
                support_clusters: 3,
                false_positive_rate: 0.0,
                pooled: None,
            }],
            rules: Vec::new(),
            aliases: Vec::new(),
        }])
    }

    #[test]
    fn posts_opening_their_page_round_trip_and_bad_ones_are_named() {
        let file = one_site_rule;
        let paged = file(SiteAction::PostToPage {
            prefix: "/t/".into(),
            kept: 2,
            key: "page".into(),
            per_page_min: 20,
            per_page_max: Some(20),
        });
        let text = paged.to_json_pretty().unwrap();
        assert!(text.contains("\"op\": \"post_to_page\""), "{text}");
        assert!(text.contains("\"per_page_max\": 20"), "{text}");
        assert_eq!(RuleFile::from_json(&text).unwrap(), paged);
        // Page 1 only: the parameter and the upper bound are not written, and a file without
        // them loads as that rule.
        let thin = file(SiteAction::PostToPage {
            prefix: "/t/".into(),
            kept: 1,
            key: String::new(),
            per_page_min: 12,
            per_page_max: None,
        });
        let text = thin.to_json_pretty().unwrap();
        assert!(
            !text.contains("per_page_max") && !text.contains("\"key\""),
            "{text}"
        );
        assert_eq!(RuleFile::from_json(&text).unwrap(), thin);
        let bad = [
            // Pages beyond the first without their parameter; a range upside down; no segment
            // of the thread kept; a prefix without its slashes.
            (String::new(), 2, "/t/", Some(20), 20),
            ("page".to_owned(), 2, "/t/", Some(10), 20),
            ("page".to_owned(), 0, "/t/", Some(20), 20),
            ("page".to_owned(), 2, "t", Some(20), 20),
            ("page".to_owned(), 2, "/t/", None, 20),
        ];
        for (key, kept, prefix, per_page_max, per_page_min) in bad {
            let action = SiteAction::PostToPage {
                prefix: prefix.into(),
                kept,
                key,
                per_page_min,
                per_page_max,
            };
            let text = serde_json::to_string(&file(action.clone())).unwrap();
            let err = RuleFile::from_json(&text).unwrap_err();
            assert!(
                err.to_string().contains("example.com#s0"),
                "{action:?}: {err}"
            );
            assert!(
                err.to_string().contains("post-to-page"),
                "{action:?}: {err}"
            );
        }
    }

    #[test]
    fn loading_rejects_bad_files_naming_the_rule() {
        let mut file = RuleFile::new(vec![HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: Vec::new(),
            rules: vec![sample_rule()],
            aliases: Vec::new(),
        }]);
        file.version = 2;
        let text = serde_json::to_string(&file).unwrap();
        assert!(matches!(
            RuleFile::from_json(&text),
            Err(RuleError::UnsupportedVersion(2))
        ));
        file.version = 1;
        file.format = "other".into();
        let text = serde_json::to_string(&file).unwrap();
        assert!(matches!(
            RuleFile::from_json(&text),
            Err(RuleError::UnknownFormat(_))
        ));
        file.format = RULE_FILE_FORMAT.into();
        file.hosts[0].rules[0].source_pattern = "not a pattern".into();
        let err = RuleFile::from_json(&serde_json::to_string(&file).unwrap()).unwrap_err();
        assert!(err.to_string().contains("example.com#1"), "{err}");
        let mut rule = sample_rule();
        rule.operations.pop();
        let err = rule.validate().unwrap_err();
        assert!(err.to_string().contains("query:sid"), "{err}");
        assert!(RuleFile::from_json("{}").is_err());
    }

    #[test]
    fn default_values_and_scoped_case_are_validated() {
        let set = |action: SiteAction| HostRuleSet {
            host: "example.com".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: vec![SiteRule {
                id: "example.com#s1".into(),
                action,
                support: 3,
                support_clusters: 3,
                false_positive_rate: 0.0,
                pooled: None,
            }],
            rules: Vec::new(),
            aliases: Vec::new(),
        };
        let value = |name: &str, value: &str| SiteAction::IgnoreParamValue {
            name: name.into(),
            value: value.into(),
            beside: None,
        };
        let beside = |beside: &str| SiteAction::IgnoreParamValue {
            name: "id_lang".into(),
            value: "1".into(),
            beside: Some(beside.into()),
        };
        for good in [
            value("state", "open"),
            value("q", ""),
            beside("id_product"),
            beside("id_product&controller=product"),
            SiteAction::LowercaseSegments { segments: 2 },
        ] {
            assert!(set(good.clone()).validate().is_ok(), "{good:?}");
        }
        for bad in [
            value("", "open"),
            value("a=b", "open"),
            value("state", "open&x=1"),
            value("state", "open#x"),
            beside(""),
            beside("id_product&"),
            beside("a=b=c"),
            SiteAction::LowercaseSegments { segments: 0 },
        ] {
            let err = set(bad.clone()).validate().unwrap_err();
            assert!(err.to_string().contains("example.com#s1"), "{bad:?}: {err}");
        }
    }
}
