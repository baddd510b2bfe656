//! URL patterns: a closed set of keys, each with a literal value or the wildcard `*`.
//!
//! The text form reads like a URL: `http://example.com/item.php?id=*&sid=*`. A pattern matches a
//! URL when the URL has exactly the pattern's keys (no more, no fewer: a rule learned on URLs
//! with `id` and `sid` never touches a URL that also carries `page`) and every literal value is
//! equal. A literal value that is exactly `*` is written `%2A`.

use std::fmt;

use thiserror::Error;

use super::key::{valid_literal, Component, Key, KeyRef};

/// The value side of one pattern entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValuePattern {
    /// Any value (the key must be present).
    Any,
    /// Exactly this value (raw serialized text).
    Literal(String),
}

/// A URL pattern (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Pattern {
    /// Entries in URL order (scheme, host labels, port, segments each followed by their
    /// parameters, query parameters in order).
    pub entries: Vec<(Key, ValuePattern)>,
}

/// Why a pattern string is not a pattern.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PatternError {
    /// Missing `scheme://`.
    #[error("missing \"scheme://\"")]
    NoScheme,
    /// Missing host.
    #[error("missing host")]
    NoHost,
    /// A value that cannot appear literally in its component.
    #[error("invalid literal {value:?} for {key}")]
    BadLiteral {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// The same key twice.
    #[error("duplicate key {0}")]
    DuplicateKey(String),
    /// More keys than a URL may have.
    #[error("too many keys")]
    TooManyKeys,
}

fn value_text(v: &ValuePattern) -> &str {
    match v {
        ValuePattern::Any => "*",
        ValuePattern::Literal(s) if s == "*" => "%2A",
        ValuePattern::Literal(s) => s,
    }
}

fn parse_value(s: &str) -> ValuePattern {
    match s {
        "*" => ValuePattern::Any,
        "%2A" => ValuePattern::Literal("*".to_owned()),
        _ => ValuePattern::Literal(s.to_owned()),
    }
}

impl Pattern {
    /// The entry for `key`, if any.
    pub fn get(&self, key: &Key) -> Option<&ValuePattern> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `kv` (a decomposed URL) matches: same key set, equal literals.
    pub fn matches(&self, kv: &[(KeyRef<'_>, &str)]) -> bool {
        kv.len() == self.entries.len()
            && self.entries.iter().all(|(k, v)| {
                let kr = k.as_ref();
                kv.iter().any(|(uk, uv)| {
                    *uk == kr
                        && match v {
                            ValuePattern::Any => true,
                            ValuePattern::Literal(l) => l == uv,
                        }
                })
            })
    }

    /// Number of literal entries (more literals = more specific).
    pub fn literal_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|(_, v)| matches!(v, ValuePattern::Literal(_)))
            .count()
    }

    /// Checks literals and key uniqueness.
    pub fn validate(&self) -> Result<(), PatternError> {
        if self.entries.len() > super::key::MAX_KEYS_PER_URL {
            return Err(PatternError::TooManyKeys);
        }
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if self.entries[..i].iter().any(|(o, _)| o == k) {
                return Err(PatternError::DuplicateKey(k.to_string()));
            }
            if let ValuePattern::Literal(l) = v {
                let ok = match k.component() {
                    // Segments and parameter values may be empty (trailing slash, `a=`).
                    Component::Segment | Component::PathParam | Component::Query => {
                        l.is_empty() || valid_literal(k.component(), l)
                    }
                    c => valid_literal(c, l),
                };
                if !ok {
                    return Err(PatternError::BadLiteral {
                        key: k.to_string(),
                        value: l.clone(),
                    });
                }
            }
        }
        if !self.entries.iter().any(|(k, _)| *k == Key::Scheme) {
            return Err(PatternError::NoScheme);
        }
        if !self.entries.iter().any(|(k, _)| matches!(k, Key::Auth(_))) {
            return Err(PatternError::NoHost);
        }
        Ok(())
    }

    /// Parses the text form.
    pub fn parse(s: &str) -> Result<Pattern, PatternError> {
        let (scheme, rest) = s.split_once("://").ok_or(PatternError::NoScheme)?;
        if scheme.is_empty() {
            return Err(PatternError::NoScheme);
        }
        let mut entries = vec![(Key::Scheme, parse_value(scheme))];
        let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, rest) = rest.split_at(auth_end);
        let (host, port) = if authority.starts_with('[') {
            match authority.find(']') {
                Some(e) => {
                    let (h, p) = authority.split_at(e + 1);
                    (h, p.strip_prefix(':'))
                }
                None => return Err(PatternError::NoHost),
            }
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(PatternError::NoHost);
        }
        if host.starts_with('[') || host.parse::<std::net::Ipv4Addr>().is_ok() {
            entries.push((Key::Auth(0), parse_value(host)));
        } else {
            for (i, label) in host.split('.').enumerate() {
                let i = u16::try_from(i).map_err(|_| PatternError::TooManyKeys)?;
                entries.push((Key::Auth(i), parse_value(label)));
            }
        }
        if let Some(p) = port {
            entries.push((Key::Port, parse_value(p)));
        }
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (rest, None),
        };
        let path = path.strip_prefix('/').unwrap_or(path);
        for (i, seg) in path.split('/').enumerate() {
            let i = u16::try_from(i).map_err(|_| PatternError::TooManyKeys)?;
            let mut parts = seg.split(';');
            entries.push((Key::Path(i), parse_value(parts.next().unwrap_or(""))));
            let mut seen: Vec<&str> = Vec::new();
            for p in parts.filter(|p| !p.is_empty()) {
                let (name, val) = p.split_once('=').unwrap_or((p, ""));
                seen.push(name);
                let occurrence = seen.iter().filter(|n| **n == name).count();
                entries.push((
                    Key::PathParam {
                        segment: i,
                        name: name.to_owned(),
                        occurrence: u16::try_from(occurrence).unwrap_or(u16::MAX),
                    },
                    parse_value(val),
                ));
            }
        }
        if let Some(q) = query {
            let mut seen: Vec<&str> = Vec::new();
            for p in q.split('&').filter(|p| !p.is_empty()) {
                let (name, val) = p.split_once('=').unwrap_or((p, ""));
                seen.push(name);
                let occurrence = seen.iter().filter(|n| **n == name).count();
                entries.push((
                    Key::Query {
                        name: name.to_owned(),
                        occurrence: u16::try_from(occurrence).unwrap_or(u16::MAX),
                    },
                    parse_value(val),
                ));
            }
        }
        let pattern = Pattern { entries };
        pattern.validate()?;
        Ok(pattern)
    }
}

/// One piece of the URL text [`write_url`] makes of `(key, value)` entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Fixed text (`://`, `/`, `?`, ...).
    Text(&'static str),
    /// The name of entry `i`'s key (a query or path parameter).
    Name(usize),
    /// Entry `i`'s value.
    Value(usize),
}

/// The name a key writes before its value: a query or path parameter's.
pub(crate) fn key_name<'a>(key: &KeyRef<'a>) -> &'a str {
    match *key {
        KeyRef::Query { name, .. } | KeyRef::PathParam { name, .. } => name,
        _ => "",
    }
}

/// The order in which [`write_url`] writes entries with these keys, and the text between them.
/// It depends on the keys only, so the rule engine lays a rule's output out once, when it
/// compiles the rule, and then writes each rewrite straight into its string.
pub(crate) fn url_layout(keys: &[KeyRef<'_>]) -> Vec<Piece> {
    let mut pieces = Vec::new();
    match keys.iter().position(|k| *k == KeyRef::Scheme) {
        Some(i) => pieces.push(Piece::Value(i)),
        None => pieces.push(Piece::Text("http")),
    }
    pieces.push(Piece::Text("://"));
    let sorted = |index: fn(&KeyRef<'_>) -> Option<u16>| {
        let mut found: Vec<(u16, usize)> = keys
            .iter()
            .enumerate()
            .filter_map(|(i, k)| index(k).map(|n| (n, i)))
            .collect();
        // Stable: entries with the same index keep their order.
        found.sort_by_key(|(n, _)| *n);
        found
    };
    let labels = sorted(|k| match k {
        KeyRef::Auth(n) => Some(*n),
        _ => None,
    });
    for (n, (_, i)) in labels.iter().enumerate() {
        if n > 0 {
            pieces.push(Piece::Text("."));
        }
        pieces.push(Piece::Value(*i));
    }
    if let Some(i) = keys.iter().position(|k| *k == KeyRef::Port) {
        pieces.push(Piece::Text(":"));
        pieces.push(Piece::Value(i));
    }
    let segments = sorted(|k| match k {
        KeyRef::Path(n) => Some(*n),
        _ => None,
    });
    if segments.is_empty() {
        pieces.push(Piece::Text("/"));
    }
    for (n, i) in &segments {
        pieces.push(Piece::Text("/"));
        pieces.push(Piece::Value(*i));
        for (j, k) in keys.iter().enumerate() {
            if matches!(k, KeyRef::PathParam { segment, .. } if segment == n) {
                pieces.extend([
                    Piece::Text(";"),
                    Piece::Name(j),
                    Piece::Text("="),
                    Piece::Value(j),
                ]);
            }
        }
    }
    let mut first = true;
    for (j, k) in keys.iter().enumerate() {
        if matches!(k, KeyRef::Query { .. }) {
            pieces.push(Piece::Text(if first { "?" } else { "&" }));
            first = false;
            pieces.extend([Piece::Name(j), Piece::Text("="), Piece::Value(j)]);
        }
    }
    pieces
}

/// Writes `(key, value)` pairs as URL text in URL order ([`url_layout`]); shared by pattern
/// display and the engine's output so both read the same way. Query and path-parameter entries
/// keep their relative order in `entries`.
pub(crate) fn write_url<W: fmt::Write>(out: &mut W, entries: &[(KeyRef<'_>, &str)]) -> fmt::Result {
    let keys: Vec<KeyRef<'_>> = entries.iter().map(|(k, _)| *k).collect();
    for piece in url_layout(&keys) {
        match piece {
            Piece::Text(text) => out.write_str(text)?,
            Piece::Name(i) => out.write_str(key_name(&entries[i].0))?,
            Piece::Value(i) => out.write_str(entries[i].1)?,
        }
    }
    Ok(())
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries: Vec<(KeyRef<'_>, &str)> = self
            .entries
            .iter()
            .map(|(k, v)| (k.as_ref(), value_text(v)))
            .collect();
        write_url(f, &entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::rules::key::decompose;
    use url::Url;

    #[test]
    fn round_trips_and_matches_closed_world() {
        let text = "http://example.com/item.php;sid=*?id=*&sid=*&tag=a&tag=*";
        let p = Pattern::parse(text).unwrap();
        assert_eq!(p.to_string(), text);
        let mut kv = Vec::new();
        let u = Url::parse("http://example.com/item.php;sid=9?id=3&sid=x&tag=a&tag=b").unwrap();
        decompose(&u, &mut kv).unwrap();
        assert!(p.matches(&kv));
        let u = Url::parse("http://example.com/item.php;sid=9?id=3&sid=x&tag=z&tag=b").unwrap();
        decompose(&u, &mut kv).unwrap();
        assert!(!p.matches(&kv), "literal differs");
        let u = Url::parse("http://example.com/item.php;sid=9?id=3&sid=x&tag=a&tag=b&p=2").unwrap();
        decompose(&u, &mut kv).unwrap();
        assert!(!p.matches(&kv), "extra key");
    }

    #[test]
    fn trailing_slash_star_literal_and_port() {
        for text in [
            "https://*.example.com:8080/dir/",
            "http://h.org/%2A/*",
            "http://h.org/",
        ] {
            assert_eq!(Pattern::parse(text).unwrap().to_string(), text);
        }
        let p = Pattern::parse("http://h.org/%2A").unwrap();
        assert_eq!(
            p.get(&Key::Path(0)),
            Some(&ValuePattern::Literal("*".into()))
        );
    }

    #[test]
    fn rejects_bad_patterns() {
        assert_eq!(Pattern::parse("example.com/a"), Err(PatternError::NoScheme));
        assert_eq!(Pattern::parse("http:///a"), Err(PatternError::NoHost));
        assert!(matches!(
            Pattern::parse("http://h.org/a b"),
            Err(PatternError::BadLiteral { .. })
        ));
        assert!(matches!(
            Pattern::parse("http://h.org:99999/"),
            Err(PatternError::BadLiteral { .. })
        ));
    }
}
