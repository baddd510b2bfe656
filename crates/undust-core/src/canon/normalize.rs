//! Static normalization: the host-independent canonicalization every URL goes through before any
//! learned rule sees it.
//!
//! A URL is parsed once with the WHATWG parser of the `url` crate, which already lowercases the
//! scheme and host, maps internationalized hosts to ASCII (IDNA), drops default ports, resolves
//! dot segments (also `%2e` ones) and percent-encodes what must be encoded. On top of that,
//! cheap byte-level passes then
//!
//! 1. drop `user:password@` (credentials are never part of what a page is, and a canonical
//!    form is stored and echoed to crawlers: keeping them would spread a secret), unless
//!    configured to keep it, and drop the fragment (never sent to the server),
//! 2. strip trailing dots from the host, and `www.` when configured,
//! 3. normalize percent-encoding in path and query: hex digits uppercase, escapes of unreserved
//!    characters (`A-Z a-z 0-9 - . _ ~`) decoded, a stray `%` encoded as `%25`, and the bytes
//!    the parser leaves raw though RFC 3986 allows them nowhere there (`[ ] { } | ^`, the
//!    backtick and `\`) encoded; reserved characters are never decoded, so their meaning never
//!    changes,
//! 4. remove session ids (`;jsessionid=` path parameters, `PHPSESSID`, `ASPSESSIONID*`,
//!    `CFID`/`CFTOKEN`, `sid`-like names only when the value is a random token, ASP.NET cookieless
//!    `(S(...))` segments),
//! 5. remove tracking parameters (`utm_*`, `gclid`, `fbclid`, ... plus user extras),
//! 6. drop empty parameters (`?&a=1&&b=2&`), optionally sort parameters, and drop an empty `?`.
//!
//! A cheap read-only scan decides which passes can act, so an already canonical URL costs one parse
//! and one scan (or, when [`crate::canon::fast`] can prove it canonical from its bytes, no parse:
//! the same scan runs on the parts it slices out of the input, and when only the steps on the
//! path and query act, they run on those parts: [`StaticNormalizer::normalize_parts`]); a pass
//! that acts edits only its component through the `url` crate's setters. No
//! pass creates work for an earlier one, so one round reaches the fixpoint unless the parser
//! re-normalizes an edited component (dot segments exposed by a removed path parameter); then the
//! round repeats, a bounded number of times. Hence `normalize(normalize(x)) == normalize(x)`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use url::{Host, Url};

use super::params;
use super::split::{split_byte, split_once_byte};

/// Default [`StaticConfig::max_url_bytes`]: 8 KiB, the request-line limit of common servers
/// (Apache 8190 bytes, nginx 8 KiB buffers), so a longer URL cannot be fetched from most sites and
/// is junk or an attack rather than a page.
pub const DEFAULT_MAX_URL_BYTES: usize = 8 * 1024;
/// Largest accepted [`StaticConfig::max_url_bytes`]: keeps per-request memory bounded.
pub const MAX_URL_BYTES_LIMIT: usize = 1024 * 1024;
/// Default [`StaticConfig::remove_tracking_params`]: on, tracking parameters never select content.
pub const DEFAULT_REMOVE_TRACKING_PARAMS: bool = true;
/// Default [`StaticConfig::remove_session_ids`]: on, session ids never select content.
pub const DEFAULT_REMOVE_SESSION_IDS: bool = true;
/// Default [`StaticConfig::sort_query`]: off, parameter order matters on some sites; the learned
/// per-host rules decide where it does not.
pub const DEFAULT_SORT_QUERY: bool = false;
/// Default [`StaticConfig::strip_www`]: off, `www.example.com` and `example.com` may be different
/// sites; learned rules and redirects show where they are not.
pub const DEFAULT_STRIP_WWW: bool = false;
/// Default [`StaticConfig::strip_trailing_dot`]: on, `example.com.` is the same DNS name.
pub const DEFAULT_STRIP_TRAILING_DOT: bool = true;
/// Default [`StaticConfig::remove_empty_params`]: on, `?&a=1&&b=2&` means `?a=1&b=2` to every
/// server framework.
pub const DEFAULT_REMOVE_EMPTY_PARAMS: bool = true;
/// Default [`StaticConfig::strip_userinfo`]: on, `user:password@` never selects content, and
/// canonical forms are stored, logged and sent to crawlers, where a password must not go.
pub const DEFAULT_STRIP_USERINFO: bool = true;
/// Longest accepted user-supplied parameter name (bytes), so lookups use a fixed stack buffer.
pub const MAX_PARAM_NAME_BYTES: usize = 128;
/// How many times the passes may run before the URL counts as not converging. Real URLs reach
/// their fixpoint in one pass and are confirmed by the second.
const MAX_PASSES: usize = 4;

/// Static normalization settings. `Default` gives the documented `DEFAULT_*` constants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StaticConfig {
    /// URLs longer than this many bytes (input or normalized) are rejected as
    /// [`InvalidUrl::TooLong`]. Default [`DEFAULT_MAX_URL_BYTES`].
    pub max_url_bytes: usize,
    /// Remove the built-in tracking parameters ([`params::TRACKING_PARAMS`],
    /// [`params::TRACKING_PREFIXES`]). Default [`DEFAULT_REMOVE_TRACKING_PARAMS`].
    pub remove_tracking_params: bool,
    /// More tracking parameter names to remove (ASCII case-insensitive); a trailing `*` makes the
    /// entry a name prefix (`ref_*`). Applied even when `remove_tracking_params` is off (that
    /// flag only switches off the built-in list).
    pub extra_tracking_params: Vec<String>,
    /// Remove session ids ([`params::SESSION_PARAMS`] and friends, `;jsessionid=` path
    /// parameters, ASP.NET cookieless segments). Default [`DEFAULT_REMOVE_SESSION_IDS`].
    pub remove_session_ids: bool,
    /// Sort query parameters by name then value (stable). Default [`DEFAULT_SORT_QUERY`].
    pub sort_query: bool,
    /// Strip a leading `www.` label from domain hosts. Default [`DEFAULT_STRIP_WWW`].
    pub strip_www: bool,
    /// Strip trailing dots from domain hosts. Default [`DEFAULT_STRIP_TRAILING_DOT`].
    pub strip_trailing_dot: bool,
    /// Drop empty query parameters (`&&`, leading or trailing `&`).
    /// Default [`DEFAULT_REMOVE_EMPTY_PARAMS`].
    pub remove_empty_params: bool,
    /// Drop the userinfo (`user:password@`) of URLs. Default [`DEFAULT_STRIP_USERINFO`].
    pub strip_userinfo: bool,
}

impl Default for StaticConfig {
    fn default() -> Self {
        Self {
            max_url_bytes: DEFAULT_MAX_URL_BYTES,
            remove_tracking_params: DEFAULT_REMOVE_TRACKING_PARAMS,
            extra_tracking_params: Vec::new(),
            remove_session_ids: DEFAULT_REMOVE_SESSION_IDS,
            sort_query: DEFAULT_SORT_QUERY,
            strip_www: DEFAULT_STRIP_WWW,
            strip_trailing_dot: DEFAULT_STRIP_TRAILING_DOT,
            remove_empty_params: DEFAULT_REMOVE_EMPTY_PARAMS,
            strip_userinfo: DEFAULT_STRIP_USERINFO,
        }
    }
}

/// A [`StaticConfig`] that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `max_url_bytes` is zero or above [`MAX_URL_BYTES_LIMIT`].
    #[error("max_url_bytes must be between 1 and {MAX_URL_BYTES_LIMIT}, got {0}")]
    MaxUrlBytes(usize),
    /// An `extra_tracking_params` entry is not a usable parameter name.
    #[error("extra tracking parameter {param:?}: {reason}")]
    ExtraParam {
        /// The entry as given.
        param: String,
        /// Why it was refused.
        reason: &'static str,
    },
}

/// Why a URL cannot be canonicalized. `Display` is the reason sent to clients.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidUrl {
    /// The input is empty or only whitespace.
    #[error("empty URL")]
    Empty,
    /// The input, or its normalized form, is longer than the configured limit.
    #[error("URL is {len} bytes long, over the limit of {max} bytes")]
    TooLong {
        /// Length in bytes.
        len: usize,
        /// The configured limit ([`StaticConfig::max_url_bytes`]).
        max: usize,
    },
    /// The WHATWG parser rejected the input (the text is the parser's reason).
    #[error("unparseable URL: {0}")]
    Unparseable(String),
    /// The scheme is not `http` or `https`.
    #[error("unsupported scheme {0:?}: only http and https URLs are canonicalized")]
    UnsupportedScheme(String),
    /// The URL has no host.
    #[error("URL has no host")]
    NoHost,
    /// Normalization kept changing the URL (defensive bound; no known input reaches it).
    #[error("URL did not reach a stable canonical form")]
    Unstable,
}

/// One normalization step that changed the URL, as reported by [`StaticNormalizer::explain`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaticStep {
    /// Step name: `lowercase-scheme`, `lowercase-host`, `remove-default-port`,
    /// `resolve-dot-segments`, `parse`, `strip-userinfo`,
    /// `remove-fragment`, `strip-trailing-dot`, `strip-www`, `normalize-percent-encoding`,
    /// `remove-session-ids`, `remove-tracking-params`, `remove-empty-params`, `sort-query`,
    /// `drop-empty-query`.
    pub step: &'static str,
    /// The URL after this step.
    pub result: String,
}

/// How a query or path parameter name is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Always removed as tracking.
    Tracking,
    /// Always removed as a session id.
    Session,
    /// Removed as a session id when its value looks like a random token.
    SessionIfToken,
}

/// What a query rewrite does with one parameter.
enum Action {
    Keep,
    Drop,
    /// Write this instead.
    Replace(String),
}

/// The changes one step makes; applied through the `url` crate's setters so only the touched
/// component is re-serialized.
#[derive(Default)]
struct Edits {
    host: Option<String>,
    path: Option<String>,
    query: Option<Option<String>>,
    drop_fragment: bool,
    drop_userinfo: bool,
}

impl Edits {
    fn is_empty(&self) -> bool {
        self.host.is_none()
            && self.path.is_none()
            && self.query.is_none()
            && !self.drop_fragment
            && !self.drop_userinfo
    }

    /// Applies the edits. `None` when none of them took effect (a host the parser refuses, such
    /// as `foo.09` after stripping the dots of `foo.09..`, is left as it was); otherwise whether
    /// the parser stored every component exactly as given.
    fn apply(self, url: &mut Url) -> Option<bool> {
        let mut changed = false;
        let mut exact = true;
        if self.drop_userinfo {
            // Only fails for URLs that cannot have credentials (no host), which never get here.
            changed |= url.set_password(None).is_ok() && url.set_username("").is_ok();
        }
        if self.drop_fragment {
            url.set_fragment(None);
            changed = true;
        }
        if let Some(host) = self.host {
            if url.set_host(Some(&host)).is_ok() {
                changed = true;
                exact &= url.host_str() == Some(host.as_str());
            }
        }
        if let Some(path) = self.path {
            url.set_path(&path);
            changed = true;
            exact &= url.path() == path;
        }
        if let Some(query) = self.query {
            url.set_query(query.as_deref());
            changed = true;
            exact &= url.query() == query.as_deref();
        }
        changed.then_some(exact)
    }
}

/// One static step: what it reads decides whether it can also run on a URL's parts
/// ([`StaticNormalizer::normalize_parts`]).
#[derive(Clone, Copy)]
enum Step {
    /// Reads the whole URL.
    Url(fn(&StaticNormalizer, &Url) -> Edits),
    /// Reads only the path and the query, and edits only those.
    Parts(fn(&StaticNormalizer, &str, Option<&str>) -> Edits),
}

/// What a pass left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Nothing further can change: the URL is canonical.
    Fixpoint,
    /// The parser re-normalized a component; run another pass to confirm.
    Again,
}

/// Whether a step may act, judged from the scan.
type NeededFn = fn(&Scan) -> bool;

/// What a cheap read-only scan of the URL found: which steps can possibly change it. The common
/// URL needs no step at all and costs one scan; a step runs only when its flag is set.
#[derive(Debug, Default, Clone, Copy)]
struct Scan {
    userinfo: bool,
    fragment: bool,
    host_trailing_dot: bool,
    host_www: bool,
    percent: bool,
    session: bool,
    tracking: bool,
    empty_params: bool,
    unsorted: bool,
    empty_query: bool,
}

impl Scan {
    fn any(&self) -> bool {
        self.userinfo
            || self.fragment
            || self.host_trailing_dot
            || self.host_www
            || self.percent
            || self.session
            || self.tracking
            || self.empty_params
            || self.unsorted
            || self.empty_query
    }
}

/// What [`StaticNormalizer::scan_parts`] reads of a URL: its serialized components.
struct ScanParts<'a> {
    /// Whether the URL carries a user name or password.
    userinfo: bool,
    /// Whether the URL has a fragment.
    fragment: bool,
    /// The host when it is a domain name (IP addresses have no dots or `www.` to strip).
    domain: Option<&'a str>,
    /// Whether the path holds an escape that may not be normal (`%`) or a byte the percent step
    /// encodes.
    path_percent: bool,
    /// Whether every escape in path and query is known to be normal (the fast path checked
    /// them): then the percent step's trigger is not looked for.
    escapes_normal: bool,
    /// Whether the path holds `;` or `(`, which may start a session id.
    path_session_marker: bool,
    query: Option<&'a str>,
}

/// The passes, in order, each with the scan flag that says it may act. Percent-encoding comes
/// before the parameter steps so that `utm%5Fsource` is recognized as `utm_source`.
const STEPS: [(&str, Step, NeededFn); 10] = [
    (
        "strip-userinfo",
        Step::Url(StaticNormalizer::step_userinfo),
        |s| s.userinfo,
    ),
    (
        "remove-fragment",
        Step::Url(StaticNormalizer::step_fragment),
        |s| s.fragment,
    ),
    (
        "strip-trailing-dot",
        Step::Url(StaticNormalizer::step_trailing_dot),
        |s| s.host_trailing_dot,
    ),
    ("strip-www", Step::Url(StaticNormalizer::step_www), |s| {
        s.host_www
    }),
    (
        "normalize-percent-encoding",
        Step::Url(StaticNormalizer::step_percent),
        |s| s.percent,
    ),
    (
        "remove-session-ids",
        Step::Parts(StaticNormalizer::step_session),
        |s| s.session,
    ),
    (
        "remove-tracking-params",
        Step::Parts(StaticNormalizer::step_tracking),
        |s| s.tracking,
    ),
    (
        "remove-empty-params",
        Step::Parts(StaticNormalizer::step_empty_params),
        |s| s.empty_params,
    ),
    (
        "sort-query",
        Step::Parts(StaticNormalizer::step_sort),
        |s| s.unsorted,
    ),
    (
        "drop-empty-query",
        Step::Parts(StaticNormalizer::step_empty_query),
        |s| s.empty_query,
    ),
];

/// The static normalizer: immutable after construction, `Send + Sync`, cheap to share in an `Arc`.
#[derive(Debug, Clone)]
pub struct StaticNormalizer {
    config: StaticConfig,
    /// Exact parameter names (lowercase) and their class.
    exact: HashMap<Box<[u8]>, Class>,
    /// Parameter name prefixes (lowercase) and their class.
    prefixes: Vec<(Box<[u8]>, Class)>,
    /// Per lowercase first byte, a bit per length (0..=63) of the exact names starting with it:
    /// most parameters (`id`, `page`, `q`) are rejected by this table without hashing.
    exact_lengths: [u64; 256],
    /// Per lowercase first byte, whether a prefix starts with it.
    prefix_first: [bool; 256],
}

impl StaticNormalizer {
    /// Builds a normalizer, validating the configuration.
    pub fn new(config: StaticConfig) -> Result<Self, ConfigError> {
        if config.max_url_bytes == 0 || config.max_url_bytes > MAX_URL_BYTES_LIMIT {
            return Err(ConfigError::MaxUrlBytes(config.max_url_bytes));
        }
        let mut exact: HashMap<Box<[u8]>, Class> = HashMap::new();
        let mut prefixes: Vec<(Box<[u8]>, Class)> = Vec::new();
        if config.remove_session_ids {
            for name in params::SESSION_PARAMS_IF_TOKEN {
                exact.insert(name.as_bytes().into(), Class::SessionIfToken);
            }
            for name in params::SESSION_PARAMS {
                exact.insert(name.as_bytes().into(), Class::Session);
            }
            for prefix in params::SESSION_PREFIXES {
                prefixes.push((prefix.as_bytes().into(), Class::Session));
            }
        }
        if config.remove_tracking_params {
            // Inserted after the session names: an explicit tracking name always wins.
            for name in params::TRACKING_PARAMS {
                exact.insert(name.as_bytes().into(), Class::Tracking);
            }
            for prefix in params::TRACKING_PREFIXES {
                prefixes.push((prefix.as_bytes().into(), Class::Tracking));
            }
        }
        for raw in &config.extra_tracking_params {
            let refuse = |reason| ConfigError::ExtraParam {
                param: raw.clone(),
                reason,
            };
            let (name, is_prefix) = match raw.strip_suffix('*') {
                Some(stem) => (stem, true),
                None => (raw.as_str(), false),
            };
            if name.is_empty() {
                return Err(refuse("empty name"));
            }
            if name.len() > MAX_PARAM_NAME_BYTES {
                return Err(refuse("longer than 128 bytes"));
            }
            if name
                .bytes()
                .any(|b| b <= b' ' || b >= 0x7f || matches!(b, b'&' | b'=' | b'#' | b'?' | b'*'))
            {
                return Err(refuse(
                    "must be printable ASCII without '&', '=', '#', '?', or '*' except a trailing '*'",
                ));
            }
            let lower: Box<[u8]> = name.to_ascii_lowercase().into_bytes().into();
            if is_prefix {
                prefixes.push((lower, Class::Tracking));
            } else {
                exact.insert(lower, Class::Tracking);
            }
        }
        let mut exact_lengths = [0u64; 256];
        for key in exact.keys() {
            if let Some(&b) = key.first() {
                exact_lengths[usize::from(b)] |= length_bit(key.len());
            }
        }
        let mut prefix_first = [false; 256];
        for (prefix, _) in &prefixes {
            if let Some(&b) = prefix.first() {
                prefix_first[usize::from(b)] = true;
            }
        }
        Ok(Self {
            config,
            exact,
            prefixes,
            exact_lengths,
            prefix_first,
        })
    }

    /// The configuration this normalizer was built with.
    pub fn config(&self) -> &StaticConfig {
        &self.config
    }

    /// Canonicalizes `input` (an absolute http or https URL).
    pub fn normalize(&self, input: &str) -> Result<Url, InvalidUrl> {
        self.run(input, None)
    }

    /// Canonicalizes `input` and reports every step that changed it, in order, with the URL after
    /// each. Parser work is attributed to `lowercase-scheme`, `lowercase-host`,
    /// `remove-default-port` and `resolve-dot-segments` where it can be, the rest of it to `parse`. The URL returned is the
    /// one [`normalize`](Self::normalize) returns.
    pub fn explain(&self, input: &str) -> Result<(Url, Vec<StaticStep>), InvalidUrl> {
        let mut steps = Vec::new();
        let url = self.run(input, Some(&mut steps))?;
        Ok((url, steps))
    }

    fn run(&self, input: &str, mut trace: Option<&mut Vec<StaticStep>>) -> Result<Url, InvalidUrl> {
        let max = self.config.max_url_bytes;
        if input.len() > max {
            return Err(InvalidUrl::TooLong {
                len: input.len(),
                max,
            });
        }
        if input.bytes().all(|b| b <= b' ') {
            return Err(InvalidUrl::Empty);
        }
        let mut url = Url::parse(input).map_err(|e| InvalidUrl::Unparseable(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(InvalidUrl::UnsupportedScheme(url.scheme().to_owned()));
        }
        if url.host().is_none() {
            return Err(InvalidUrl::NoHost);
        }
        if let Some(steps) = trace.as_deref_mut() {
            explain_parse(input, &url, steps);
        }
        for _ in 0..MAX_PASSES {
            if self.pass(&mut url, trace.as_deref_mut()) == Outcome::Again {
                continue;
            }
            let len = url.as_str().len();
            if len > max {
                return Err(InvalidUrl::TooLong { len, max });
            }
            return Ok(url);
        }
        Err(InvalidUrl::Unstable)
    }

    /// Runs every step that the scan says may act, once.
    fn pass(&self, url: &mut Url, mut trace: Option<&mut Vec<StaticStep>>) -> Outcome {
        let mut scan = self.scan(url);
        if !scan.any() {
            return Outcome::Fixpoint;
        }
        let mut outcome = Outcome::Fixpoint;
        for (name, step, needed) in STEPS {
            if !needed(&scan) {
                continue;
            }
            let edits = match step {
                Step::Url(step) => step(self, url),
                Step::Parts(step) => step(self, url.path(), url.query()),
            };
            if edits.is_empty() {
                continue;
            }
            // When the parser stores exactly what a step computed, the pass's own result stands:
            // no step creates work for an earlier one (removals and decoding of unreserved
            // characters never produce a new fragment, host change, escape or parameter), and
            // the rescan below shows later steps the new state. When the parser re-normalized
            // something (dot segments exposed by a removed path parameter, say), only another
            // pass can confirm the fixpoint.
            let before = trace.as_ref().map(|_| url.as_str().to_owned());
            let Some(exact) = edits.apply(url) else {
                continue;
            };
            if !exact {
                outcome = Outcome::Again;
            }
            // The URL changed: later steps decide on what it is now.
            scan = self.scan(url);
            if let Some(steps) = trace.as_deref_mut() {
                if before.as_deref() != Some(url.as_str()) {
                    steps.push(StaticStep {
                        step: name,
                        result: url.as_str().to_owned(),
                    });
                }
            }
        }
        outcome
    }

    fn step_userinfo(&self, url: &Url) -> Edits {
        Edits {
            drop_userinfo: self.config.strip_userinfo
                && (!url.username().is_empty() || url.password().is_some()),
            ..Edits::default()
        }
    }

    fn step_fragment(&self, url: &Url) -> Edits {
        Edits {
            drop_fragment: url.fragment().is_some(),
            ..Edits::default()
        }
    }

    fn step_trailing_dot(&self, url: &Url) -> Edits {
        let mut edits = Edits::default();
        if self.config.strip_trailing_dot {
            if let Some(Host::Domain(host)) = url.host() {
                let trimmed = host.trim_end_matches('.');
                if trimmed.len() != host.len() && !trimmed.is_empty() {
                    edits.host = Some(trimmed.to_owned());
                }
            }
        }
        edits
    }

    fn step_www(&self, url: &Url) -> Edits {
        let mut edits = Edits::default();
        if !self.config.strip_www {
            return edits;
        }
        let Some(Host::Domain(host)) = url.host() else {
            return edits;
        };
        // All leading `www.` labels go at once (`www.www.example.com` happens), so one pass
        // reaches the fixpoint. Keep `www.com`, and never turn a name into something the parser
        // would read as an IPv4 address (last label starting with a digit).
        let mut stripped = host;
        while let Some(rest) = stripped.strip_prefix("www.") {
            let last_label_alpha = rest
                .trim_end_matches('.')
                .rsplit('.')
                .next()
                .and_then(|label| label.bytes().next())
                .is_some_and(|b| b.is_ascii_alphabetic());
            if !rest.contains('.') || !last_label_alpha {
                break;
            }
            stripped = rest;
        }
        if stripped.len() != host.len() {
            edits.host = Some(stripped.to_owned());
        }
        edits
    }

    fn step_percent(&self, url: &Url) -> Edits {
        Edits {
            path: normalize_escapes(url.path()),
            query: url.query().and_then(normalize_escapes).map(Some),
            ..Edits::default()
        }
    }

    fn step_session(&self, path: &str, query: Option<&str>) -> Edits {
        let mut edits = Edits::default();
        if !self.config.remove_session_ids {
            return edits;
        }
        edits.path = self.strip_path_sessions(path);
        if let Some(query) = query {
            edits.query = rewrite_query(query, |param| self.session_action(param)).map(Some);
        }
        edits
    }

    fn step_tracking(&self, _path: &str, query: Option<&str>) -> Edits {
        let query = query.and_then(|query| {
            rewrite_query(query, |param| {
                glued_action(param, |piece| self.is_tracking_param(piece))
            })
        });
        Edits {
            query: query.map(Some),
            ..Edits::default()
        }
    }

    fn step_empty_params(&self, _path: &str, query: Option<&str>) -> Edits {
        let mut edits = Edits::default();
        if self.config.remove_empty_params {
            if let Some(query) = query {
                edits.query = rewrite_query(query, |param| {
                    if param.is_empty() {
                        Action::Drop
                    } else {
                        Action::Keep
                    }
                })
                .map(Some);
            }
        }
        edits
    }

    fn step_sort(&self, _path: &str, query: Option<&str>) -> Edits {
        let mut edits = Edits::default();
        if !self.config.sort_query {
            return edits;
        }
        let Some(query) = query else {
            return edits;
        };
        let order = |a: &&str, b: &&str| split_param(a).cmp(&split_param(b));
        let mut it = query.split('&');
        let mut sorted = true;
        if let Some(mut prev) = it.next() {
            for param in it {
                if order(&prev, &param).is_gt() {
                    sorted = false;
                    break;
                }
                prev = param;
            }
        }
        if !sorted {
            let mut all: Vec<&str> = query.split('&').collect();
            all.sort_by(order);
            edits.query = Some(Some(all.join("&")));
        }
        edits
    }

    fn step_empty_query(&self, _path: &str, query: Option<&str>) -> Edits {
        Edits {
            query: (query == Some("")).then_some(None),
            ..Edits::default()
        }
    }

    /// The class of a parameter name, if it is one of ours (ASCII case-insensitive).
    fn classify(&self, key: &str) -> Option<Class> {
        let key = key.as_bytes();
        let first = usize::from(key.first()?.to_ascii_lowercase());
        if self.exact_lengths[first] & length_bit(key.len()) != 0
            && key.len() <= MAX_PARAM_NAME_BYTES
        {
            let mut buf = [0u8; MAX_PARAM_NAME_BYTES];
            let lower = buf.get_mut(..key.len())?;
            for (dst, src) in lower.iter_mut().zip(key) {
                *dst = src.to_ascii_lowercase();
            }
            if let Some(&class) = self.exact.get(&*lower) {
                return Some(class);
            }
        }
        if !self.prefix_first[first] {
            return None;
        }
        self.prefixes
            .iter()
            .find(|(prefix, _)| {
                key.len() > prefix.len() && key[..prefix.len()].eq_ignore_ascii_case(prefix)
            })
            .map(|&(_, class)| class)
    }

    /// One read-only look at the URL deciding which steps may act.
    fn scan(&self, url: &Url) -> Scan {
        let domain = match url.host() {
            Some(Host::Domain(host)) => Some(host),
            _ => None,
        };
        let path = url.path().as_bytes();
        self.scan_parts(&ScanParts {
            userinfo: !url.username().is_empty() || url.password().is_some(),
            fragment: url.fragment().is_some(),
            domain,
            path_percent: needs_percent_step(path),
            escapes_normal: false,
            path_session_marker: path.iter().any(|&b| b == b';' || b == b'('),
            query: url.query(),
        })
    }

    /// Whether no static step can change a URL with these parts, given that every escape in
    /// them is already normal (`%` and two uppercase hex digits of a byte that is not unreserved:
    /// the percent step leaves those alone). A URL the parser stores as it is written and of
    /// which this holds is its own static normalization. The fast path ([`crate::canon::fast`])
    /// checks the escapes and asks this of the parts it sliced out of the input, so the other
    /// steps' triggers are decided by this one scan for both paths. The fast path has already
    /// looked at every byte of the path, so it says whether the path holds `;` or `(` (what
    /// the session step looks for in a path) instead of this scan reading the path again.
    pub(crate) fn leaves_unchanged(
        &self,
        view: &crate::canon::view::UrlView<'_>,
        path_session_marker: bool,
    ) -> bool {
        debug_assert_eq!(
            path_session_marker,
            view.path.bytes().any(|b| b == b';' || b == b'(')
        );
        let scan = self.scan_parts(&ScanParts {
            userinfo: !view.userinfo.is_empty(),
            fragment: view.fragment.is_some(),
            domain: view.host_is_domain.then_some(view.host),
            path_percent: false,
            escapes_normal: true,
            path_session_marker,
            query: view.query,
        });
        !Scan {
            percent: false,
            ..scan
        }
        .any()
    }

    /// The static form's path and query of a URL whose host is the domain `host`, without
    /// user info, fragment or any escape that is not normal, and which the
    /// parser stores as written (what the fast path proves of its input), when only steps that
    /// read and edit the path and the query act on it (session ids, tracking and empty
    /// parameters, sorting, an empty query): the steps run on the text as [`Self::normalize`]
    /// runs them on the parsed URL, in the same order, each when the scan of what the previous
    /// ones left says it may act. `None` when another step may act, or when an edited path would
    /// not be stored as written (a removed path parameter that leaves a `.` or `..` segment,
    /// which the parser resolves): then only the parser's way is sure.
    ///
    /// The parser stores an edited query as written: the steps only remove parameters, cut one
    /// at a `;` and reorder them, so its bytes stay bytes the parser kept in the input's query.
    /// The same holds of an edited path's bytes, and its segments are checked.
    pub(crate) fn normalize_parts<'a>(
        &self,
        host: &str,
        path: &'a str,
        query: Option<&'a str>,
        path_session_marker: bool,
    ) -> Option<(Cow<'a, str>, Option<Cow<'a, str>>)> {
        let scan_of = |query: Option<&str>, path_session_marker: bool| {
            self.scan_parts(&ScanParts {
                userinfo: false,
                fragment: false,
                domain: Some(host),
                path_percent: false,
                escapes_normal: true,
                path_session_marker,
                query,
            })
        };
        let mut path = Cow::Borrowed(path);
        let mut query = query.map(Cow::Borrowed);
        let mut scan = scan_of(query.as_deref(), path_session_marker);
        for (_, step, needed) in STEPS {
            if !needed(&scan) {
                continue;
            }
            let Step::Parts(step) = step else {
                return None;
            };
            let edits = step(self, &path, query.as_deref());
            if edits.is_empty() {
                continue;
            }
            debug_assert!(edits.host.is_none() && !edits.drop_fragment && !edits.drop_userinfo);
            if let Some(edited) = edits.path {
                if split_byte(edited.strip_prefix('/')?, b'/').any(|s| s == "." || s == "..") {
                    return None;
                }
                path = Cow::Owned(edited);
            }
            if let Some(edited) = edits.query {
                query = edited.map(Cow::Owned);
            }
            let marker = path.bytes().any(|b| b == b';' || b == b'(');
            scan = scan_of(query.as_deref(), marker);
        }
        Some((path, query))
    }

    /// [`StaticNormalizer::scan`] on a URL's serialized parts.
    fn scan_parts(&self, url: &ScanParts<'_>) -> Scan {
        let config = &self.config;
        let mut scan = Scan {
            userinfo: config.strip_userinfo && url.userinfo,
            fragment: url.fragment,
            ..Scan::default()
        };
        if let Some(host) = url.domain {
            scan.host_trailing_dot = config.strip_trailing_dot && host.ends_with('.');
            scan.host_www = config.strip_www && host.starts_with("www.");
        }
        scan.percent = url.path_percent;
        scan.session = config.remove_session_ids && url.path_session_marker;
        let Some(query) = url.query else {
            return scan;
        };
        scan.empty_query = query.is_empty();
        // Parts whose escapes are normal come from the fast path, which never passes a byte the
        // percent step encodes (`crate::canon::fast`'s plain bytes are RFC 3986's), so only the
        // parser's parts are read again.
        scan.percent |= !url.escapes_normal && needs_percent_step(query.as_bytes());
        let mut previous: Option<&str> = None;
        for param in split_byte(query, b'&') {
            if param.is_empty() {
                scan.empty_params |= config.remove_empty_params;
            }
            let (key, value) = split_param(param);
            // A parameter with `;`-glued pieces is judged piece by piece, as the step does.
            let glued = param.as_bytes().contains(&b';');
            match self.classify(key) {
                Some(Class::Tracking) if !glued => scan.tracking = true,
                Some(Class::Session) if !glued => scan.session = true,
                Some(Class::SessionIfToken) if !glued => {
                    scan.session |= params::looks_like_session_token(value);
                }
                _ => {}
            }
            if config.remove_session_ids && !scan.session && glued {
                scan.session = !matches!(self.session_action(param), Action::Keep);
            }
            if !scan.tracking && glued {
                scan.tracking = param.split(';').any(|piece| self.is_tracking_param(piece));
            }
            if config.sort_query && !scan.unsorted {
                if let Some(prev) = previous {
                    scan.unsorted = split_param(prev) > (key, value);
                }
                previous = Some(param);
            }
        }
        scan
    }

    /// What the session step does to one query parameter ([`glued_action`]).
    fn session_action(&self, param: &str) -> Action {
        glued_action(param, |piece| self.is_session_param(piece))
    }

    /// Whether a `name=value` query parameter (or `;`-glued piece) is a tracking parameter.
    fn is_tracking_param(&self, param: &str) -> bool {
        self.classify(split_param(param).0) == Some(Class::Tracking)
    }

    /// Whether a `name=value` path (or `;`-glued) parameter is a session id.
    fn is_session_param(&self, param: &str) -> bool {
        let (key, value) = split_param(param);
        match self.classify(key) {
            Some(Class::Session) => true,
            Some(Class::SessionIfToken) => params::looks_like_session_token(value),
            _ => false,
        }
    }

    /// Removes `;jsessionid=...`-style path parameters and ASP.NET cookieless segments; `None`
    /// when the path has neither.
    fn strip_path_sessions(&self, path: &str) -> Option<String> {
        let bytes = path.as_bytes();
        if !bytes.iter().any(|&b| b == b';' || b == b'(') {
            return None;
        }
        let mut out = String::with_capacity(path.len());
        let mut changed = false;
        for segment in path.split('/').skip(1) {
            let start = out.len();
            out.push('/');
            let mut pieces = segment.split(';');
            out.push_str(pieces.next().unwrap_or(""));
            for piece in pieces {
                if self.is_session_param(piece) {
                    changed = true;
                } else {
                    out.push(';');
                    out.push_str(piece);
                }
            }
            // Checked on what is left of the segment, so `(S(x));jsessionid=y` goes in one pass.
            if params::is_aspnet_cookieless_segment(&out[start + 1..]) {
                out.truncate(start);
                changed = true;
            }
        }
        if !changed {
            return None;
        }
        if out.is_empty() {
            out.push('/');
        }
        Some(out)
    }
}

/// The bit standing for a name length in `exact_lengths` (lengths of 63 and more share a bit).
fn length_bit(len: usize) -> u64 {
    1u64 << len.min(63)
}

/// WHATWG strips leading and trailing C0 controls and spaces before parsing.
fn is_c0_or_space(c: char) -> bool {
    c <= ' '
}

/// `name=value` → (`name`, `value`); a parameter without `=` has an empty value.
fn split_param(param: &str) -> (&str, &str) {
    split_once_byte(param, b'=').unwrap_or((param, ""))
}

/// What a step that drops some parameters does to one query parameter, `drop` saying which.
/// Pieces glued with `;` are judged one by one and only the pieces `drop` names go: a servlet
/// glues its path parameter to a value (`a=1;jsessionid=…`), and servers that take `;` as a
/// separator (SMF, Perl's CGI.pm, as HTML 4 recommended) read `PHPSESSID=…;topic=5.0` or
/// `utm_source=x;topic=5.0` as two parameters, so dropping the whole pair for its first name
/// would merge every topic of the forum.
fn glued_action(param: &str, drop: impl Fn(&str) -> bool) -> Action {
    if !param.as_bytes().contains(&b';') {
        return if drop(param) {
            Action::Drop
        } else {
            Action::Keep
        };
    }
    if !param.split(';').any(&drop) {
        return Action::Keep;
    }
    let mut kept = String::with_capacity(param.len());
    for piece in param.split(';') {
        if piece.is_empty() || drop(piece) {
            continue;
        }
        if !kept.is_empty() {
            kept.push(';');
        }
        kept.push_str(piece);
    }
    if kept.is_empty() {
        Action::Drop
    } else {
        Action::Replace(kept)
    }
}

/// Applies `act` to every `&`-separated parameter. Returns the new query, or `None` when every
/// parameter is kept (the common case allocates nothing).
fn rewrite_query(query: &str, mut act: impl FnMut(&str) -> Action) -> Option<String> {
    let mut offset = 0;
    let mut first_change = None;
    for param in query.split('&') {
        if !matches!(act(param), Action::Keep) {
            first_change = Some(offset);
            break;
        }
        offset += param.len() + 1;
    }
    let start = first_change?;
    let mut out = String::with_capacity(query.len());
    // Everything before the first change is kept verbatim (without its trailing separator).
    let mut wrote_any = start > 0;
    if wrote_any {
        out.push_str(&query[..start - 1]);
    }
    for param in query[start..].split('&') {
        let action = act(param);
        let kept = match action {
            Action::Keep => param,
            Action::Drop => continue,
            Action::Replace(ref with) => with,
        };
        if wrote_any {
            out.push('&');
        }
        out.push_str(kept);
        wrote_any = true;
    }
    Some(out)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

/// RFC 3986 unreserved characters: the only ones whose escapes can be decoded without changing
/// what the URL means.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Whether the escape (or stray `%`) at `bytes[i]` needs rewriting, and the decoded byte if valid.
fn escape_at(bytes: &[u8], i: usize) -> (bool, Option<u8>) {
    match (
        bytes.get(i + 1).copied().and_then(hex_value),
        bytes.get(i + 2).copied().and_then(hex_value),
    ) {
        (Some(hi), Some(lo)) => {
            let value = hi * 16 + lo;
            let lowercase_hex =
                bytes[i + 1].is_ascii_lowercase() || bytes[i + 2].is_ascii_lowercase();
            (is_unreserved(value) || lowercase_hex, Some(value))
        }
        _ => (true, None),
    }
}

/// Bytes the WHATWG parser leaves raw in a path or a query although RFC 3986 allows them in
/// neither: `[`, `]`, `{`, `}`, `|`, `^`, `` ` `` and `\`. A server decodes escapes before it
/// maps a path or reads a parameter, so `?f[0]=a` and `?f%5B0%5D=a` are one request to it (the
/// array keys of PHP's and every other form decoder, which TYPO3, Drupal's facets and shop
/// filters write both ways). The percent step writes them escaped: the spelling RFC 3986 asks
/// for, PHP's `http_build_query` writes and w3lib's `canonicalize_url` (Scrapy's request
/// fingerprints) produces.
const fn is_raw_disallowed(b: u8) -> bool {
    matches!(b, b'[' | b']' | b'{' | b'}' | b'|' | b'^' | b'`' | b'\\')
}

/// `%` and the bytes of [`is_raw_disallowed`], by byte value: one lookup a byte where nine
/// comparisons cost 6% of `static_canon/normalize_default` (measured: BENCHMARKS.md, stop 53).
const PERCENT_STEP_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b as u8 == b'%' || is_raw_disallowed(b as u8);
        b += 1;
    }
    table
};

/// Whether the percent step may change a path or a query: it holds an escape or a byte RFC 3986
/// does not allow raw ([`is_raw_disallowed`]).
fn needs_percent_step(s: &[u8]) -> bool {
    s.iter().any(|&b| PERCENT_STEP_BYTES[usize::from(b)])
}

/// Appends `%XX` (uppercase hex digits) for `value`.
fn push_escape(out: &mut String, value: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(value >> 4)]));
    out.push(char::from(HEX[usize::from(value & 15)]));
}

/// Uppercases escape hex digits, decodes escapes of unreserved characters, encodes stray `%`
/// signs and the bytes RFC 3986 does not allow raw ([`is_raw_disallowed`]). `None` when `s` is
/// already normal.
fn normalize_escapes(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    // Find the first byte that needs work without allocating.
    let mut i = 0;
    let first = loop {
        i += bytes[i..]
            .iter()
            .position(|&b| PERCENT_STEP_BYTES[usize::from(b)])?;
        if bytes[i] != b'%' {
            break i;
        }
        match escape_at(bytes, i) {
            (true, _) => break i,
            (false, _) => i += 3,
        }
    };
    let mut out = String::with_capacity(s.len() + 4);
    out.push_str(&s[..first]);
    let mut i = first;
    let mut copied_from = first;
    while i < bytes.len() {
        let b = bytes[i];
        if is_raw_disallowed(b) {
            out.push_str(&s[copied_from..i]);
            push_escape(&mut out, b);
            i += 1;
            copied_from = i;
            continue;
        }
        if b != b'%' {
            i += 1;
            continue;
        }
        out.push_str(&s[copied_from..i]);
        match escape_at(bytes, i) {
            (_, Some(value)) if is_unreserved(value) => out.push(char::from(value)),
            (_, Some(value)) => push_escape(&mut out, value),
            (_, None) => {
                out.push_str("%25");
                i += 1;
                copied_from = i;
                continue;
            }
        }
        i += 3;
        copied_from = i;
    }
    out.push_str(&s[copied_from..]);
    Some(out)
}

/// Byte ranges of the host and the port digits in a raw (trimmed) absolute URL, located the way
/// the WHATWG parser finds them for special schemes; `None` when the input is not of that shape.
fn raw_authority(raw: &str) -> Option<(std::ops::Range<usize>, Option<std::ops::Range<usize>>)> {
    let colon = raw.find(':')?;
    let after_scheme = colon + 1;
    let rest = &raw[after_scheme..];
    let skipped = rest.len() - rest.trim_start_matches(['/', '\\']).len();
    let auth_start = after_scheme + skipped;
    let auth_len = raw[auth_start..]
        .find(['/', '\\', '?', '#'])
        .unwrap_or(raw.len() - auth_start);
    let authority = &raw[auth_start..auth_start + auth_len];
    let host_start = authority.rfind('@').map_or(0, |at| at + 1);
    let host_port = &authority[host_start..];
    let host_len = if host_port.starts_with('[') {
        host_port.find(']')? + 1
    } else {
        host_port.rfind(':').unwrap_or(host_port.len())
    };
    let host = auth_start + host_start..auth_start + host_start + host_len;
    let port = host_port[host_len..]
        .strip_prefix(':')
        .map(|digits| host.end + 1..host.end + 1 + digits.len());
    Some((host, port))
}

/// The raw URL with `.` and `..` path segments (also `%2e` spellings) resolved as RFC 3986
/// section 5.2.4 does; `None` when the path has none or uses `\\` separators.
fn without_dot_segments(raw: &str) -> Option<String> {
    let (host, port) = raw_authority(raw)?;
    let path_start = port.map_or(host.end, |p| p.end);
    let path_len = raw[path_start..]
        .find(['?', '#'])
        .unwrap_or(raw.len() - path_start);
    let path = &raw[path_start..path_start + path_len];
    if !path.starts_with('/') || path.contains('\\') {
        return None;
    }
    let is_dot = |s: &str| s == "." || s.eq_ignore_ascii_case("%2e");
    let is_dot_dot = |s: &str| {
        matches!(s.len(), 2 | 4 | 6) && s.to_ascii_lowercase().replace("%2e", ".") == ".."
    };
    let segments: Vec<&str> = path[1..].split('/').collect();
    if !segments.iter().any(|s| is_dot(s) || is_dot_dot(s)) {
        return None;
    }
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    let last = segments.len() - 1;
    for (i, segment) in segments.into_iter().enumerate() {
        if is_dot(segment) || is_dot_dot(segment) {
            if is_dot_dot(segment) {
                out.pop();
            }
            // A final dot segment leaves the directory: `/a/b/..` is `/a/`.
            if i == last {
                out.push("");
            }
        } else {
            out.push(segment);
        }
    }
    Some(format!(
        "{}/{}{}",
        &raw[..path_start],
        out.join("/"),
        &raw[path_start + path_len..]
    ))
}

/// Attributes the parser's own normalizations to named steps where a simple edit of the raw
/// input reproduces the parse exactly; whatever is left is reported as `parse`.
fn explain_parse(input: &str, parsed: &Url, steps: &mut Vec<StaticStep>) {
    let mut current = input.trim_matches(is_c0_or_space).to_owned();
    let same_parse = |candidate: &str| Url::parse(candidate).ok().as_ref() == Some(parsed);
    if let Some(colon) = current.find(':') {
        if current[..colon].bytes().any(|b| b.is_ascii_uppercase()) {
            let candidate = format!(
                "{}{}",
                current[..colon].to_ascii_lowercase(),
                &current[colon..]
            );
            if same_parse(&candidate) {
                current = candidate;
                steps.push(StaticStep {
                    step: "lowercase-scheme",
                    result: current.clone(),
                });
            }
        }
    }
    if let Some((host, _)) = raw_authority(&current) {
        if current[host.clone()]
            .bytes()
            .any(|b| b.is_ascii_uppercase())
        {
            let candidate = format!(
                "{}{}{}",
                &current[..host.start],
                current[host.clone()].to_ascii_lowercase(),
                &current[host.end..]
            );
            if same_parse(&candidate) {
                current = candidate;
                steps.push(StaticStep {
                    step: "lowercase-host",
                    result: current.clone(),
                });
            }
        }
    }
    if parsed.port().is_none() {
        if let Some((_, Some(port))) = raw_authority(&current) {
            let candidate = format!("{}{}", &current[..port.start - 1], &current[port.end..]);
            if same_parse(&candidate) {
                current = candidate;
                steps.push(StaticStep {
                    step: "remove-default-port",
                    result: current.clone(),
                });
            }
        }
    }
    if let Some(candidate) = without_dot_segments(&current) {
        if same_parse(&candidate) {
            current = candidate;
            steps.push(StaticStep {
                step: "resolve-dot-segments",
                result: current.clone(),
            });
        }
    }
    if current != parsed.as_str() {
        steps.push(StaticStep {
            step: "parse",
            result: parsed.as_str().to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(input: &str) -> String {
        StaticNormalizer::new(StaticConfig::default())
            .map(|n| n.normalize(input))
            .map(|r| r.map(String::from).unwrap_or_else(|e| format!("ERR {e}")))
            .unwrap_or_else(|e| format!("CONFIG {e}"))
    }

    #[test]
    fn basic_normalizations() {
        assert_eq!(
            norm("HTTP://Example.COM:80/a/./b/../c#frag"),
            "http://example.com/a/c"
        );
        assert_eq!(norm("https://example.com:443/?"), "https://example.com/");
        assert_eq!(
            norm("http://example.com/%7euser/%41%2f%3a"),
            "http://example.com/~user/A%2F%3A"
        );
        assert_eq!(
            norm("http://example.com/a%zz%"),
            "http://example.com/a%25zz%25"
        );
        assert_eq!(norm("http://bücher.de./x"), "http://xn--bcher-kva.de/x");
    }

    #[test]
    fn brackets_and_other_bytes_rfc_3986_forbids_are_escaped_in_path_and_query() {
        // TYPO3 v9+ links write `tx_news_pi1%5Bnews%5D`, older typolinks and hand-written links
        // `tx_news_pi1[news]`: one key to PHP, one form here.
        let raw = norm("http://a.example/p[1]?tx_news_pi1[news]=5&f={a}|b^c`d");
        assert_eq!(
            raw,
            "http://a.example/p%5B1%5D?tx_news_pi1%5Bnews%5D=5&f=%7Ba%7D%7Cb%5Ec%60d"
        );
        assert_eq!(
            norm("http://a.example/p%5b1%5d?tx_news_pi1%5bnews%5d=5&f=%7Ba%7D%7Cb%5Ec%60d"),
            raw
        );
        assert_eq!(norm(&raw), raw, "a fixpoint");
        // Reserved characters and sub-delimiters keep their spelling: `(`, `,` and `;` may
        // mean something to the server, and `%2C` stays apart from `,`.
        assert_eq!(
            norm("http://a.example/a(b),c;d?q=(x),y;z&r=%2C"),
            "http://a.example/a(b),c;d?q=(x),y;z&r=%2C"
        );
    }

    #[test]
    fn params_and_sessions() {
        assert_eq!(
            norm("http://shop.example/p?id=3&utm_source=x&UTM_Medium=y&gclid=z&&sid=3"),
            "http://shop.example/p?id=3&sid=3"
        );
        assert_eq!(
            norm("http://a.example/x;JSESSIONID=ABC123?sid=9682993c8daa2c5497996114facdc805&q=1"),
            "http://a.example/x?q=1"
        );
        assert_eq!(
            norm("http://a.example/(S(4hqa0555fwsecu455xqckv45))/page.aspx?a=1;jsessionid=x1"),
            "http://a.example/page.aspx?a=1"
        );
        assert_eq!(norm("http://a.example/?utm_source=x"), "http://a.example/");
    }

    #[test]
    fn session_ids_glued_with_semicolons_leave_the_other_pieces() {
        // SMF's redirects put the session first and glue the topic to it; its pages put it
        // after (`topic=5.0;PHPSESSID=…`), with view flags after that (`;wap2`). Only the
        // session piece goes: the topic names the page.
        let sid = "PHPSESSID=0f1e2d3c4b5a69788796a5b4c3d2e1f0";
        assert_eq!(
            norm(&format!("http://forum.example/index.php?{sid};topic=5.0")),
            "http://forum.example/index.php?topic=5.0"
        );
        assert_ne!(
            norm(&format!("http://forum.example/index.php?{sid};topic=5.0")),
            norm(&format!("http://forum.example/index.php?{sid};topic=6.0"))
        );
        assert_eq!(
            norm(&format!(
                "http://forum.example/index.php?topic=5.0;{sid};wap2"
            )),
            "http://forum.example/index.php?topic=5.0;wap2"
        );
        assert_eq!(
            norm(&format!("http://forum.example/index.php?board=2.0&{sid}")),
            "http://forum.example/index.php?board=2.0"
        );
        // Every piece a session id: the parameter goes.
        assert_eq!(
            norm("http://a.example/p?sid=9682993c8daa2c5497996114facdc805;jsessionid=x1&q=1"),
            "http://a.example/p?q=1"
        );
    }

    #[test]
    fn tracking_parameters_glued_with_semicolons_leave_the_other_pieces() {
        // The same separator, with a campaign tag first: the topic stays, in either order.
        for url in [
            "http://forum.example/index.php?utm_source=news;topic=5.0",
            "http://forum.example/index.php?topic=5.0;utm_source=news",
        ] {
            assert_eq!(
                norm(url),
                "http://forum.example/index.php?topic=5.0",
                "{url}"
            );
        }
        assert_ne!(
            norm("http://forum.example/index.php?utm_source=news;topic=5.0"),
            norm("http://forum.example/index.php?utm_source=news;topic=6.0")
        );
        assert_eq!(
            norm("http://a.example/p?utm_source=x;utm_medium=y&q=1"),
            "http://a.example/p?q=1"
        );
    }

    #[test]
    fn userinfo_is_stripped_by_default_and_explained() {
        assert_eq!(
            norm("http://alice:s3cret@Example.com/a#x"),
            "http://example.com/a"
        );
        assert_eq!(norm("https://bob@example.com/"), "https://example.com/");
        assert_eq!(norm("http://:pw@example.com/"), "http://example.com/");
        let normalizer = StaticNormalizer::new(StaticConfig::default()).ok();
        let explained = normalizer.map(|n| n.explain("http://alice:s3cret@example.com/a"));
        let Some(Ok((url, steps))) = explained else {
            panic!("explain failed");
        };
        assert_eq!(url.as_str(), "http://example.com/a");
        assert_eq!(
            steps,
            vec![StaticStep {
                step: "strip-userinfo",
                result: "http://example.com/a".into(),
            }]
        );
        let keep = StaticNormalizer::new(StaticConfig {
            strip_userinfo: false,
            ..StaticConfig::default()
        })
        .ok();
        let kept = keep.map(|n| n.normalize("http://alice:s3cret@example.com/a?utm_source=x"));
        assert_eq!(
            kept.and_then(|r| r.ok()).map(String::from).as_deref(),
            Some("http://alice:s3cret@example.com/a")
        );
    }

    #[test]
    fn errors() {
        assert_eq!(norm(""), "ERR empty URL");
        assert_eq!(norm("  \t"), "ERR empty URL");
        assert!(norm("ftp://x.example/").starts_with("ERR unsupported scheme"));
        assert!(norm("/relative").starts_with("ERR unparseable URL"));
        assert!(norm(&format!("http://a.example/{}", "a".repeat(9000))).contains("8192"));
    }

    #[test]
    fn config_validation() {
        let bad = StaticConfig {
            extra_tracking_params: vec!["a&b".into()],
            ..StaticConfig::default()
        };
        assert!(StaticNormalizer::new(bad).is_err());
        let bad = StaticConfig {
            max_url_bytes: 0,
            ..StaticConfig::default()
        };
        assert!(StaticNormalizer::new(bad).is_err());
        let ok = StaticConfig {
            extra_tracking_params: vec!["ref".into(), "aff_*".into()],
            remove_tracking_params: false,
            ..StaticConfig::default()
        };
        let n = StaticNormalizer::new(ok).ok();
        let out = n.map(|n| n.normalize("http://a.example/?ref=1&aff_id=2&utm_source=x&k=v"));
        assert_eq!(
            out.and_then(|r| r.ok()).map(String::from).as_deref(),
            Some("http://a.example/?utm_source=x&k=v")
        );
    }
}
