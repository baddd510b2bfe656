//! The key-value view of a URL (Lei et al., section 2, Figure 2) shared by the learner and the
//! rule engine.
//!
//! A URL is decomposed into `(key, value)` pairs:
//!
//! - `scheme`: the scheme;
//! - `auth_i`: the `i`-th host label from the left (`www.example.com` gives `auth_0=www`,
//!   `auth_1=example`, `auth_2=com`); an IP address is one label;
//! - `port`: only when the URL names a non-default port;
//! - `path_i`: the `i`-th path segment. A trailing slash yields a final empty segment, so
//!   `/dir/` is `path_0=dir, path_1=""` and `/dir/index.html` is `path_0=dir, path_1=index.html`:
//!   "directory versus default document" is then an ordinary difference of one value that a
//!   `keep` operation can learn;
//! - `path_i;name`: a path parameter (`/a;jsessionid=XYZ` gives `path_0=a`,
//!   `path_0;jsessionid=XYZ`). It is its own key, bound to its segment, so session ids hidden in
//!   path parameters can be ignored without touching the segment itself;
//! - `query:name`: a query parameter. A repeated name gets an occurrence suffix
//!   (`query:tag`, `query:tag#2`, ...), so repetition keeps its order and a rule can ignore the
//!   second occurrence only. A parameter without `=` has the empty value (rewritten as `name=`).
//!
//! The fragment and user info are not keys: static normalization strips fragments, and rules
//! never produce user info.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;
use url::Url;

use crate::canon::split::{split_byte, split_once_byte};
use crate::canon::view::UrlView;

/// Most keys one URL may have. URLs beyond this are neither learned from nor rewritten: the bound
/// keeps every per-URL step linear and small.
pub const MAX_KEYS_PER_URL: usize = 64;

/// One key of the key-value decomposition (owned form, used in patterns and operations).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// The URL scheme.
    Scheme,
    /// The `i`-th host label from the left.
    Auth(u16),
    /// The explicit port.
    Port,
    /// The `i`-th path segment.
    Path(u16),
    /// A path parameter `;name=value` of segment `segment` (1-based `occurrence` for repeats).
    PathParam {
        /// Index of the segment carrying the parameter.
        segment: u16,
        /// Parameter name.
        name: String,
        /// 1 for the first parameter of this name on the segment, 2 for the second, ...
        occurrence: u16,
    },
    /// A query parameter (1-based `occurrence` for repeated names).
    Query {
        /// Parameter name (raw, as serialized in the URL).
        name: String,
        /// 1 for the first occurrence, 2 for the second, ...
        occurrence: u16,
    },
}

/// A borrowed key, produced on the hot path without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyRef<'a> {
    /// The URL scheme.
    Scheme,
    /// A host label.
    Auth(u16),
    /// The explicit port.
    Port,
    /// A path segment.
    Path(u16),
    /// A path parameter.
    PathParam {
        /// Segment index.
        segment: u16,
        /// Parameter name.
        name: &'a str,
        /// Occurrence (1-based).
        occurrence: u16,
    },
    /// A query parameter.
    Query {
        /// Parameter name.
        name: &'a str,
        /// Occurrence (1-based).
        occurrence: u16,
    },
}

/// Which URL component a key lives in; decides how values are escaped and whether a key can be
/// dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    /// Scheme.
    Scheme,
    /// Host label.
    Host,
    /// Port.
    Port,
    /// Path segment.
    Segment,
    /// Path parameter value.
    PathParam,
    /// Query value.
    Query,
}

impl Key {
    /// The borrowed form.
    pub fn as_ref(&self) -> KeyRef<'_> {
        match self {
            Key::Scheme => KeyRef::Scheme,
            Key::Auth(i) => KeyRef::Auth(*i),
            Key::Port => KeyRef::Port,
            Key::Path(i) => KeyRef::Path(*i),
            Key::PathParam {
                segment,
                name,
                occurrence,
            } => KeyRef::PathParam {
                segment: *segment,
                name,
                occurrence: *occurrence,
            },
            Key::Query { name, occurrence } => KeyRef::Query {
                name,
                occurrence: *occurrence,
            },
        }
    }

    /// The component this key belongs to.
    pub fn component(&self) -> Component {
        self.as_ref().component()
    }
}

impl KeyRef<'_> {
    /// The owned form.
    pub fn to_key(&self) -> Key {
        match *self {
            KeyRef::Scheme => Key::Scheme,
            KeyRef::Auth(i) => Key::Auth(i),
            KeyRef::Port => Key::Port,
            KeyRef::Path(i) => Key::Path(i),
            KeyRef::PathParam {
                segment,
                name,
                occurrence,
            } => Key::PathParam {
                segment,
                name: name.to_owned(),
                occurrence,
            },
            KeyRef::Query { name, occurrence } => Key::Query {
                name: name.to_owned(),
                occurrence,
            },
        }
    }

    /// The component this key belongs to.
    pub fn component(&self) -> Component {
        match self {
            KeyRef::Scheme => Component::Scheme,
            KeyRef::Auth(_) => Component::Host,
            KeyRef::Port => Component::Port,
            KeyRef::Path(_) => Component::Segment,
            KeyRef::PathParam { .. } => Component::PathParam,
            KeyRef::Query { .. } => Component::Query,
        }
    }

    /// A stable 64-bit hash of the key (engine index and shape hashing).
    pub fn hash64(&self) -> u64 {
        use xxhash_rust::xxh3::xxh3_64_with_seed;
        match *self {
            KeyRef::Scheme => 0x5c4e_3e11_0000_0001,
            KeyRef::Auth(i) => 0x5c4e_3e11_0001_0000 ^ u64::from(i).wrapping_mul(0x9e37_79b9),
            KeyRef::Port => 0x5c4e_3e11_0000_0003,
            KeyRef::Path(i) => 0x5c4e_3e11_0002_0000 ^ u64::from(i).wrapping_mul(0x85eb_ca6b),
            KeyRef::PathParam {
                segment,
                name,
                occurrence,
            } => xxh3_64_with_seed(
                name.as_bytes(),
                0x7061_7261_0000_0000 | u64::from(segment) << 16 | u64::from(occurrence),
            ),
            KeyRef::Query { name, occurrence } => xxh3_64_with_seed(
                name.as_bytes(),
                0x7175_6572_0000_0000 | u64::from(occurrence),
            ),
        }
    }
}

impl fmt::Display for KeyRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let occ = |f: &mut fmt::Formatter<'_>, o: u16| {
            if o > 1 {
                write!(f, "#{o}")
            } else {
                Ok(())
            }
        };
        match *self {
            KeyRef::Scheme => f.write_str("scheme"),
            KeyRef::Auth(i) => write!(f, "auth_{i}"),
            KeyRef::Port => f.write_str("port"),
            KeyRef::Path(i) => write!(f, "path_{i}"),
            KeyRef::PathParam {
                segment,
                name,
                occurrence,
            } => {
                write!(f, "path_{segment};{name}")?;
                occ(f, occurrence)
            }
            KeyRef::Query { name, occurrence } => {
                write!(f, "query:{name}")?;
                occ(f, occurrence)
            }
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}

/// A key string that does not name a key (`path_x`, `query:` ...).
#[derive(Debug, Error, PartialEq, Eq)]
#[error("not a URL key: {0:?}")]
pub struct BadKey(pub String);

fn split_occurrence(s: &str) -> Result<(&str, u16), ()> {
    match s.rsplit_once('#') {
        Some((name, occ)) => {
            let n: u16 = occ.parse().map_err(|_| ())?;
            if n < 2 {
                return Err(());
            }
            Ok((name, n))
        }
        None => Ok((s, 1)),
    }
}

impl FromStr for Key {
    type Err = BadKey;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadKey(s.to_owned());
        if s == "scheme" {
            return Ok(Key::Scheme);
        }
        if s == "port" {
            return Ok(Key::Port);
        }
        if let Some(rest) = s.strip_prefix("auth_") {
            return rest.parse().map(Key::Auth).map_err(|_| bad());
        }
        if let Some(rest) = s.strip_prefix("query:") {
            let (name, occurrence) = split_occurrence(rest).map_err(|_| bad())?;
            if name.is_empty() || name.contains(['&', '=', '#', ' ']) {
                return Err(bad());
            }
            return Ok(Key::Query {
                name: name.to_owned(),
                occurrence,
            });
        }
        if let Some(rest) = s.strip_prefix("path_") {
            return match rest.split_once(';') {
                None => rest.parse().map(Key::Path).map_err(|_| bad()),
                Some((seg, param)) => {
                    let segment = seg.parse().map_err(|_| bad())?;
                    let (name, occurrence) = split_occurrence(param).map_err(|_| bad())?;
                    if name.is_empty() || name.contains(['/', ';', '=', '?', ' ']) {
                        return Err(bad());
                    }
                    Ok(Key::PathParam {
                        segment,
                        name: name.to_owned(),
                        occurrence,
                    })
                }
            };
        }
        Err(bad())
    }
}

impl TryFrom<String> for Key {
    type Error = BadKey;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Key> for String {
    fn from(k: Key) -> String {
        k.to_string()
    }
}

impl serde::Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Why a URL has no key-value decomposition.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DecomposeError {
    /// The URL cannot be a base (e.g. `mailto:`) or has no host.
    #[error("URL has no host")]
    NoHost,
    /// More than [`MAX_KEYS_PER_URL`] keys.
    #[error("URL has more than {MAX_KEYS_PER_URL} keys")]
    TooManyKeys,
}

/// Decomposes `url` into `(key, value)` pairs in URL order (scheme, host labels, port, path
/// segments each followed by its parameters, query parameters), appending to `out` (cleared
/// first). Values are the raw serialized text of the URL.
pub fn decompose<'a>(
    url: &'a Url,
    out: &mut Vec<(KeyRef<'a>, &'a str)>,
) -> Result<(), DecomposeError> {
    let view = UrlView::of(url).ok_or(DecomposeError::NoHost)?;
    decompose_view(&view, url.scheme(), url.path(), url.query(), out)
}

/// [`decompose`] of a URL's parts with its scheme, path and query replaced by `scheme`, `path`
/// and `query` (serialized text, as a rewrite of the URL's own parts produced them).
pub fn decompose_view<'a>(
    url: &UrlView<'a>,
    scheme: &'a str,
    path: &'a str,
    query: Option<&'a str>,
    out: &mut Vec<(KeyRef<'a>, &'a str)>,
) -> Result<(), DecomposeError> {
    out.clear();
    let host = url.host;
    let push = |out: &mut Vec<(KeyRef<'a>, &'a str)>, k: KeyRef<'a>, v: &'a str| {
        if out.len() >= MAX_KEYS_PER_URL {
            return Err(DecomposeError::TooManyKeys);
        }
        out.push((k, v));
        Ok(())
    };
    push(out, KeyRef::Scheme, scheme)?;
    if url.host_is_domain {
        for (i, label) in split_byte(host, b'.').enumerate() {
            let i = u16::try_from(i).map_err(|_| DecomposeError::TooManyKeys)?;
            push(out, KeyRef::Auth(i), label)?;
        }
    } else {
        push(out, KeyRef::Auth(0), host)?;
    }
    if let Some(port) = url.port {
        push(out, KeyRef::Port, port)?;
    }
    let path = path.strip_prefix('/').unwrap_or(path);
    for (i, seg) in split_byte(path, b'/').enumerate() {
        let i = u16::try_from(i).map_err(|_| DecomposeError::TooManyKeys)?;
        let mut parts = split_byte(seg, b';');
        let name = parts.next().unwrap_or("");
        push(out, KeyRef::Path(i), name)?;
        let first_param = out.len();
        for p in parts {
            if p.is_empty() {
                continue;
            }
            let (pname, pval) = split_once_byte(p, b'=').unwrap_or((p, ""));
            let occurrence = occurrence_of(
                &out[first_param..],
                |k| matches!(k, KeyRef::PathParam { name, .. } if *name == pname),
            );
            push(
                out,
                KeyRef::PathParam {
                    segment: i,
                    name: pname,
                    occurrence,
                },
                pval,
            )?;
        }
    }
    if let Some(q) = query {
        let first_query = out.len();
        for p in split_byte(q, b'&') {
            if p.is_empty() {
                continue;
            }
            let (qname, qval) = split_once_byte(p, b'=').unwrap_or((p, ""));
            let occurrence = occurrence_of(
                &out[first_query..],
                |k| matches!(k, KeyRef::Query { name, .. } if *name == qname),
            );
            push(
                out,
                KeyRef::Query {
                    name: qname,
                    occurrence,
                },
                qval,
            )?;
        }
    }
    Ok(())
}

fn occurrence_of(prev: &[(KeyRef<'_>, &str)], same: impl Fn(&KeyRef<'_>) -> bool) -> u16 {
    let n = prev.iter().filter(|(k, _)| same(k)).count();
    u16::try_from(n + 1).unwrap_or(u16::MAX)
}

/// Percent-encodes the characters of `value` that would change the URL's structure if written
/// into `component` (a value moved from the query into a path segment must not add a `/`).
/// Already-encoded text is left as is. Returns `None` when nothing needs escaping.
pub fn escape_for(component: Component, value: &str) -> Option<String> {
    let special: &[char] = match component {
        Component::Segment => &['/', '?', '#', ';', '\\'],
        Component::PathParam => &['/', '?', '#', ';', '\\'],
        Component::Query => &['&', '#', '+'],
        Component::Scheme | Component::Host | Component::Port => &[],
    };
    let needs = |c: char| special.contains(&c) || c == ' ' || c.is_control();
    if !value.chars().any(needs) {
        return None;
    }
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        if needs(c) {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Whether `value` can be written literally into `component` without changing the URL's
/// structure (used to validate rule files).
pub fn valid_literal(component: Component, value: &str) -> bool {
    let graphic = value
        .chars()
        .all(|c| c.is_ascii_graphic() && !matches!(c, '#' | '\\' | '"' | '<' | '>' | '`'));
    if !graphic {
        return false;
    }
    match component {
        Component::Scheme => {
            !value.is_empty()
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        Component::Host => !value.is_empty() && !value.contains(['/', '?', '@', ':', '.']),
        Component::Port => !value.is_empty() && value.parse::<u16>().is_ok(),
        Component::Segment | Component::PathParam => !value.contains(['/', '?', ';']),
        Component::Query => !value.contains('&'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(u: &str) -> Vec<(String, String)> {
        let url = Url::parse(u).unwrap();
        let mut out = Vec::new();
        decompose(&url, &mut out).unwrap();
        out.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn figure_2_style_decomposition() {
        let got = kv("http://www.example.com:8080/images/a;jsessionid=X1/?q=hp&tag=a&tag=b&flag");
        let want: Vec<(String, String)> = [
            ("scheme", "http"),
            ("auth_0", "www"),
            ("auth_1", "example"),
            ("auth_2", "com"),
            ("port", "8080"),
            ("path_0", "images"),
            ("path_1", "a"),
            ("path_1;jsessionid", "X1"),
            ("path_2", ""),
            ("query:q", "hp"),
            ("query:tag", "a"),
            ("query:tag#2", "b"),
            ("query:flag", ""),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn trailing_slash_and_default_document_differ_in_one_value() {
        let a = kv("http://h.org/dir/");
        let b = kv("http://h.org/dir/index.html");
        assert_eq!(a.len(), b.len());
        assert_eq!(a.last().unwrap(), &("path_1".to_string(), String::new()));
        assert_eq!(
            b.last().unwrap(),
            &("path_1".to_string(), "index.html".to_string())
        );
        assert_eq!(
            kv("http://h.org")[3..],
            [("path_0".to_string(), String::new())]
        );
    }

    #[test]
    fn keys_round_trip_through_text() {
        for s in [
            "scheme",
            "auth_3",
            "port",
            "path_0",
            "path_2;jsessionid",
            "path_2;v#2",
            "query:sid",
            "query:tag#3",
        ] {
            let k: Key = s.parse().unwrap();
            assert_eq!(k.to_string(), s);
        }
        for bad in ["path_x", "query:", "auth_", "query:a#1", "path_1;", "nope"] {
            assert!(bad.parse::<Key>().is_err(), "{bad}");
        }
    }

    #[test]
    fn escaping_protects_structure() {
        assert_eq!(
            escape_for(Component::Segment, "a/b?c").as_deref(),
            Some("a%2Fb%3Fc")
        );
        assert_eq!(
            escape_for(Component::Query, "a&b+c").as_deref(),
            Some("a%26b%2Bc")
        );
        assert_eq!(escape_for(Component::Query, "plain"), None);
    }
}
