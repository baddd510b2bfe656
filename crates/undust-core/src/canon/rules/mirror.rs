//! Mirror sets in the rule file: host aliases that fold URLs of several origins into one
//! canonical origin (and folder) before the per-host rules apply.
//!
//! ```json
//! "mirrors": [{
//!   "id": "mirror:www.site.org",
//!   "canonical": {"origin": "https://www.site.org"},
//!   "aliases": [
//!     {"origin": "http://site.org",
//!      "evidence": {"techniques": ["ip4", "hosts", "paths", "content"],
//!                   "matching_pages": 41, "mismatching_pages": 1, "examples": ["/a.html"]}},
//!     {"origin": "http://mirror.example.edu", "path_prefix": "/pub/site", "pinned": true}],
//!   "forbidden": [{"origin": "https://blog.site.org"}]}]
//! ```
//!
//! An alias URL (`alias origin` + `alias prefix` + `rest`) has the canonical form
//! `canonical origin` + `canonical prefix` + `rest`; URLs of the alias origin outside its prefix
//! are not touched (a mirror network host serves other sites too). `pinned` aliases were asserted
//! by an operator and are kept whatever detection says; `forbidden` sites must never join the
//! set (relearning drops them; listing one as an alias too is an error).
//!
//! Validation ([`validate_mirror_sets`]) checks that origins are `http(s)://host[:port]`, that
//! prefixes are folders (`/a/b`: a leading slash, no trailing slash, no `?` or `#`), that every
//! set has aliases, and that no site is in two sets or twice in one.

use serde::{Deserialize, Serialize};
use url::Url;

use super::RuleError;

/// One site of a mirror set: an origin and a folder of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MirrorSite {
    /// `scheme://host[:port]`.
    pub origin: String,
    /// Folder the site lives under (`""`: the whole origin).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path_prefix: String,
}

impl MirrorSite {
    /// The site `origin` + `path_prefix`, as text (`http://mirror.edu/pub/site`).
    pub fn display(&self) -> String {
        format!("{}{}", self.origin, self.path_prefix)
    }
}

/// Why a site is an alias.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirrorEvidence {
    /// Techniques that proposed the pair (`ip4`, `hosts`, `paths`, `prefix`, `content`, ...).
    pub techniques: Vec<String>,
    /// Aligned pages with the same content.
    pub matching_pages: u64,
    /// Aligned pages with different content.
    pub mismatching_pages: u64,
    /// A few matching paths (as on the alias).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// An alias of a mirror set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirrorAlias {
    /// The alias site.
    #[serde(flatten)]
    pub site: MirrorSite,
    /// Asserted by an operator: kept whatever detection says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    /// What detection found (absent for a pinned alias nobody measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<MirrorEvidence>,
}

/// Origins serving one site: one canonical, the others folded into it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirrorSet {
    /// Stable identifier (`mirror:` + the canonical site).
    pub id: String,
    /// Where canonical forms point.
    pub canonical: MirrorSite,
    /// Sites folded into the canonical one.
    pub aliases: Vec<MirrorAlias>,
    /// Sites an operator ruled out: never aliases of this set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<MirrorSite>,
}

/// The origin of a URL: `scheme://host[:port]` (the port only when not the scheme's default).
pub fn origin_of(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    })
}

/// Most mirror sets one rule file may carry, and most aliases per set.
pub const MAX_MIRROR_SETS: usize = 100_000;
/// Most aliases of one set.
pub const MAX_ALIASES_PER_SET: usize = 1_000;

fn bad(set: &str, reason: String) -> RuleError {
    RuleError::BadMirrorSet {
        set: set.to_owned(),
        reason,
    }
}

/// Checks one site: a bare origin and a folder prefix.
pub fn validate_site(set: &str, site: &MirrorSite) -> Result<(), RuleError> {
    let url = Url::parse(&site.origin)
        .map_err(|e| bad(set, format!("origin {:?} does not parse: {e}", site.origin)))?;
    let bare = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty()
        && origin_of(&url).as_deref() == Some(site.origin.as_str());
    if !bare {
        return Err(bad(
            set,
            format!(
                "origin {:?} must be a lower-case http(s)://host[:port] without path (as {:?})",
                site.origin,
                origin_of(&url).unwrap_or_default()
            ),
        ));
    }
    let p = &site.path_prefix;
    if !p.is_empty() && (!p.starts_with('/') || p.ends_with('/') || p.contains(['?', '#'])) {
        return Err(bad(
            set,
            format!(
                "path prefix {p:?} must be a folder like /pub/site (no trailing slash, ? or #)"
            ),
        ));
    }
    Ok(())
}

/// Validates the mirror sets of a rule file.
pub fn validate_mirror_sets(sets: &[MirrorSet]) -> Result<(), RuleError> {
    if sets.len() > MAX_MIRROR_SETS {
        return Err(bad(
            "",
            format!("{} mirror sets exceed {MAX_MIRROR_SETS}", sets.len()),
        ));
    }
    let mut seen: std::collections::HashMap<&MirrorSite, &str> = std::collections::HashMap::new();
    for set in sets {
        if set.aliases.is_empty() {
            return Err(bad(
                &set.id,
                "a mirror set needs at least one alias".to_owned(),
            ));
        }
        if set.aliases.len() > MAX_ALIASES_PER_SET {
            return Err(bad(
                &set.id,
                format!("{} aliases exceed {MAX_ALIASES_PER_SET}", set.aliases.len()),
            ));
        }
        validate_site(&set.id, &set.canonical)?;
        for site in std::iter::once(&set.canonical).chain(set.aliases.iter().map(|a| &a.site)) {
            validate_site(&set.id, site)?;
            if let Some(other) = seen.insert(site, &set.id) {
                return Err(bad(
                    &set.id,
                    format!("site {} is already in mirror set {other}", site.display()),
                ));
            }
        }
        for f in &set.forbidden {
            validate_site(&set.id, f)?;
            if set.aliases.iter().any(|a| &a.site == f) || &set.canonical == f {
                return Err(bad(
                    &set.id,
                    format!("site {} is both a member and forbidden", f.display()),
                ));
            }
        }
    }
    Ok(())
}
