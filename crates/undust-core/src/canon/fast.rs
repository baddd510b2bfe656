//! The fast path of static normalization: a byte-level recognizer that proves an input URL is
//! already its own static normalization and hands out its parts without parsing it.
//!
//! Most URLs a frontier discovers are written the way the WHATWG parser would serialize them and
//! carry nothing a static step removes: ASCII, a lowercase domain name, no default port, no dot
//! segments, no byte the parser would percent-encode, no fragment, no tracking or session
//! parameter. For those, [`recognize`] returns the [`UrlView`] sliced straight from the input, so
//! neither `Url::parse` nor a second look at a parsed URL is paid; anything it cannot prove
//! returns `None` and goes through [`StaticNormalizer::normalize`] as before.
//!
//! Hand-rolled on purpose: canonicalization is the product's hot path, and the profile at stop 21
//! put `Url::parse` at 48% of `Canonicalizer::canonicalize` (BENCHMARKS.md, "Where the time goes
//! now"), on URLs that parsing leaves as they were. The recognizer is exactly as conservative as
//! it is fast: it accepts only a grammar on which the parser is the identity, and leaves to
//! [`StaticNormalizer`]'s own scan the decision whether a static step may act (one scan for both
//! paths). What it accepts:
//!
//! - `http://` or `https://` in lowercase, then at once the host (no userinfo, no extra slashes);
//! - a domain host of dot-separated labels of `a-z`, `0-9` and `-`, each 1 to 63 bytes, at most
//!   253 bytes in all, none starting with the IDNA prefix `xn--` (the parser validates and may
//!   rewrite those), the last label starting with a letter (so the parser never reads it as an
//!   IPv4 address), no trailing dot; IP hosts go the parser's way;
//! - optionally `:` and a port of 1 to 5 digits without leading zero, at most 65535, not the
//!   scheme's default;
//! - a path starting with `/`, of bytes the parser keeps as they are, with no `.` or `..`
//!   segment and only escapes `%XX` with uppercase hex digits of characters that are not
//!   unreserved (those the percent step leaves alone);
//! - optionally `?` and a query of the same kind (also without `'`, which the parser encodes in
//!   queries of special schemes);
//! - no fragment, nothing else, and no more than the configured maximum length.
//!
//! Inputs of that grammar that a static step does change are mostly a session id or a tracking
//! parameter away from it (`/topic/1;jsessionid=…`, `?utm_source=…`): steps that read and edit
//! only the path and the query. [`recognize_form`] runs those steps on the sliced parts
//! ([`StaticNormalizer::normalize_parts`], the same step functions, in the same order, on the
//! same scan) and writes the result with its parts ([`UrlText`]); an input on which another
//! step may act, or whose edited path the parser would not store as written, goes the parser's
//! way. The byte checks run once per byte, through a table ([`BYTE_CLASS`]).
//!
//! The differential tests (`tests/it/canon_fast.rs`) check `recognize(x) == UrlView::of(parse(x))`
//! with `parse(x) == x`, and that [`recognize_form`]'s text and parts are the parser's path's,
//! on every URL of the third-party suites and the generated corpus, under every static profile,
//! and on generated adversarial strings.

use std::borrow::Cow;

use super::normalize::StaticNormalizer;
use super::view::{UrlText, UrlView};

/// Longest DNS label.
const MAX_LABEL_BYTES: usize = 63;
/// Longest DNS name (without a trailing dot).
const MAX_HOST_BYTES: usize = 253;

/// The input's parts when the input is provably its own static normalization under
/// `normalizer`'s configuration; `None` when it may not be (then the parser decides).
pub fn recognize<'a>(normalizer: &StaticNormalizer, input: &'a str) -> Option<UrlView<'a>> {
    let sliced = slice(normalizer, input)?;
    normalizer
        .leaves_unchanged(&sliced.view, sliced.session_marker)
        .then_some(sliced.view)
}

/// The static normalization of an input the parser stores as written, without parsing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FastForm<'a> {
    /// The input is its own static normalization ([`recognize`]): its parts.
    Input(UrlView<'a>),
    /// Static steps on the path and query (session ids, tracking and empty parameters,
    /// sorting) change it: the result written out with its parts.
    Edited(UrlText),
}

/// [`recognize`], and beyond it the inputs the parser stores as written on which only the
/// static steps that read and edit the path and the query act
/// ([`StaticNormalizer::normalize_parts`], the steps themselves run on the sliced parts): their
/// static normalization written from the parts. `None` when the parser's way is needed.
pub fn recognize_form<'a>(normalizer: &StaticNormalizer, input: &'a str) -> Option<FastForm<'a>> {
    let Sliced {
        view,
        path,
        session_marker,
    } = slice(normalizer, input)?;
    if normalizer.leaves_unchanged(&view, session_marker) {
        return Some(FastForm::Input(view));
    }
    let (path, query) = normalizer.normalize_parts(view.host, path, view.query, session_marker)?;
    let query_kept = match &query {
        Some(query) => matches!(query, Cow::Borrowed(_)),
        None => view.query.is_none(),
    };
    if matches!(path, Cow::Borrowed(_)) && query_kept {
        // A step was asked and changed nothing (a path parameter that is no session id): the
        // input is its own static normalization after all.
        return Some(FastForm::Input(view));
    }
    UrlText::write(&view, &path, query.as_deref()).map(FastForm::Edited)
}

/// An input the parser stores as written, sliced.
struct Sliced<'a> {
    /// Its parts.
    view: UrlView<'a>,
    /// Its path (also in `view`).
    path: &'a str,
    /// Whether the path holds `;` or `(`.
    session_marker: bool,
}

/// The input sliced when the parser stores it as written (the grammar of the module doc);
/// `None` when it may not.
fn slice<'a>(normalizer: &StaticNormalizer, input: &'a str) -> Option<Sliced<'a>> {
    let bytes = input.as_bytes();
    if bytes.len() > normalizer.config().max_url_bytes {
        return None;
    }
    let (scheme, default_port, host_start) = scheme_of(bytes)?;
    let host_end = domain_end(bytes, host_start)?;
    let mut at = host_end;
    let mut port = None;
    if bytes.get(at) == Some(&b':') {
        let digits_start = at + 1;
        let digits_end = digits_start
            + bytes[digits_start..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        let digits = &bytes[digits_start..digits_end];
        if digits.is_empty()
            || digits.len() > 5
            || digits[0] == b'0'
            || digits == default_port
            || port_value(digits) > 65535
        {
            return None;
        }
        port = Some(&input[digits_start..digits_end]);
        at = digits_end;
    }
    if bytes.get(at) != Some(&b'/') {
        return None;
    }
    let path_start = at;
    let PathEnd {
        end: path_end,
        session_marker,
    } = path_end(bytes, path_start)?;
    let query = match bytes.get(path_end) {
        None => None,
        Some(b'?') => {
            let query_start = path_end + 1;
            if !query_is_kept(&bytes[query_start..]) {
                return None;
            }
            Some(&input[query_start..])
        }
        Some(_) => return None,
    };
    let view = UrlView {
        scheme,
        userinfo: "",
        host: &input[host_start..host_end],
        host_is_domain: true,
        port,
        path: Cow::Borrowed(&input[path_start..path_end]),
        query,
        fragment: None,
    };
    Some(Sliced {
        view,
        path: &input[path_start..path_end],
        session_marker,
    })
}

/// The scheme an input starts with in lowercase followed by `//`, its default port's digits and
/// where the host starts.
fn scheme_of(bytes: &[u8]) -> Option<(&'static str, &'static [u8], usize)> {
    if bytes.starts_with(b"https://") {
        Some(("https", b"443", 8))
    } else if bytes.starts_with(b"http://") {
        Some(("http", b"80", 7))
    } else {
        None
    }
}

/// End of a domain host starting at `start` that the parser stores as written (see the module
/// doc); `None` when the host is not provably one.
fn domain_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut label_start = start;
    let mut at = start;
    loop {
        match bytes.get(at) {
            Some(b'a'..=b'z' | b'0'..=b'9' | b'-') => at += 1,
            Some(b'.') => {
                check_label(&bytes[label_start..at])?;
                at += 1;
                label_start = at;
            }
            _ => break,
        }
    }
    let last = &bytes[label_start..at];
    check_label(last)?;
    if !last[0].is_ascii_lowercase() || at - start > MAX_HOST_BYTES {
        return None;
    }
    Some(at)
}

/// The value of at most five ASCII digits.
fn port_value(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |n, &d| n * 10 + u32::from(d - b'0'))
}

/// `Some` when `label` is a plain ASCII DNS label the IDNA mapping leaves as it is.
fn check_label(label: &[u8]) -> Option<()> {
    (!label.is_empty() && label.len() <= MAX_LABEL_BYTES && !label.starts_with(b"xn--"))
        .then_some(())
}

/// What a path scan found besides the path's end: whether a byte that starts a session id
/// (`;` of a path parameter, `(` of an ASP.NET cookieless segment) occurs, which the static
/// scan asks about every path.
struct PathEnd {
    /// Where the path ends: at the `?` or the end of the input.
    end: usize,
    /// Whether the path holds `;` or `(`.
    session_marker: bool,
}

/// End of a path starting at `start` (its `/`) that the parser stores as written: at the `?` or
/// the end of the input. `None` when a byte, an escape or a dot segment may be rewritten.
///
/// The inner loop skips the common bytes with one table lookup each ([`BYTE_CLASS`]); only
/// `/`, `?`, `%`, `;`, `(` and refused bytes stop it.
fn path_end(bytes: &[u8], start: usize) -> Option<PathEnd> {
    let mut segment_start = start + 1;
    let mut at = start + 1;
    let mut session_marker = false;
    loop {
        while bytes
            .get(at)
            .is_some_and(|&b| BYTE_CLASS[usize::from(b)] & PATH_PLAIN != 0)
        {
            at += 1;
        }
        match bytes.get(at) {
            None | Some(b'?') => {
                check_segment(&bytes[segment_start..at])?;
                return Some(PathEnd {
                    end: at,
                    session_marker,
                });
            }
            Some(b'/') => {
                check_segment(&bytes[segment_start..at])?;
                at += 1;
                segment_start = at;
            }
            Some(b';' | b'(') => {
                session_marker = true;
                at += 1;
            }
            Some(b'%') if is_normal_escape(bytes, at) => at += 1,
            Some(_) => return None,
        }
    }
}

/// Whether a query (the bytes after `?`) holds only bytes the parser keeps in a query and
/// normal escapes.
fn query_is_kept(query: &[u8]) -> bool {
    let mut at = 0;
    loop {
        while query
            .get(at)
            .is_some_and(|&b| BYTE_CLASS[usize::from(b)] & QUERY_PLAIN != 0)
        {
            at += 1;
        }
        match query.get(at) {
            None => return true,
            Some(b'%') if is_normal_escape(query, at) => at += 1,
            Some(_) => return false,
        }
    }
}

/// `Some` unless the segment is `.` or `..` (which the parser resolves; their escaped spellings
/// are refused as escapes of unreserved characters).
fn check_segment(segment: &[u8]) -> Option<()> {
    (segment != b"." && segment != b"..").then_some(())
}

/// [`BYTE_CLASS`] bit: a path byte [`path_end`] passes without a second look ([`keeps_in_path`]
/// but `;` and `(`, which it notes for the session scan).
const PATH_PLAIN: u8 = 1;
/// [`BYTE_CLASS`] bit: a byte [`keeps_in_query`] accepts (`%` is never one: escapes are judged
/// by [`is_normal_escape`]).
const QUERY_PLAIN: u8 = 2;

/// Per byte, its [`PATH_PLAIN`] and [`QUERY_PLAIN`] bits, computed from [`keeps_in_path`] and
/// [`keeps_in_query`] at compile time, so the two definitions stay the only ones.
static BYTE_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        if keeps_in_path(byte) && byte != b';' && byte != b'(' {
            table[b] |= PATH_PLAIN;
        }
        if keeps_in_query(byte) {
            table[b] |= QUERY_PLAIN;
        }
        b += 1;
    }
    table
};

/// Bytes the parser keeps as they are in a path of a special URL, among those that also need no
/// percent-encoding step: RFC 3986 unreserved characters, sub-delimiters, `:` and `@`. Bytes the
/// parser encodes or rewrites (controls, space, `"`, `<`, `>`, `` ` ``, `{`, `}`, `\`, non-ASCII)
/// and those whose treatment differs between parser versions (`^`, `|`, `[`, `]`) are refused;
/// `%` is judged by [`is_normal_escape`].
const fn keeps_in_path(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
        )
}

/// Bytes the parser keeps in a query of a special URL: those of a path segment but `'` (encoded
/// in special queries), plus `/` and `?`.
const fn keeps_in_query(b: u8) -> bool {
    (keeps_in_path(b) && b != b'\'') || b == b'/' || b == b'?'
}

/// Whether `bytes[at]` starts an escape the percent step leaves alone: `%` and two uppercase hex
/// digits of a byte that is not an unreserved character. (The two digits then pass as plain
/// bytes.)
fn is_normal_escape(bytes: &[u8], at: usize) -> bool {
    if bytes[at] != b'%' {
        return false;
    }
    let hex = |i: usize| match bytes.get(i) {
        Some(&b @ b'0'..=b'9') => Some(b - b'0'),
        Some(&b @ b'A'..=b'F') => Some(b - b'A' + 10),
        _ => None,
    };
    match (hex(at + 1), hex(at + 2)) {
        (Some(hi), Some(lo)) => {
            let value = hi * 16 + lo;
            !(value.is_ascii_alphanumeric() || matches!(value, b'-' | b'.' | b'_' | b'~'))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::normalize::StaticConfig;

    fn normalizer(config: StaticConfig) -> StaticNormalizer {
        StaticNormalizer::new(config).expect("valid config")
    }

    /// The fast path's answer checked against the parser's.
    fn fast(n: &StaticNormalizer, input: &str) -> bool {
        let Some(view) = recognize(n, input) else {
            return false;
        };
        let url = n.normalize(input).expect("recognized URLs normalize");
        assert_eq!(url.as_str(), input, "recognized but normalized otherwise");
        assert_eq!(UrlView::of(&url), Some(view), "{input}");
        true
    }

    #[test]
    fn canonical_urls_are_recognized() {
        let n = normalizer(StaticConfig::default());
        for input in [
            "http://example.com/",
            "https://www.example.com/a/b.html",
            "http://shop.example:8080/p/12?id=3&page=2",
            "https://a-b.c0.example/x%20y/%C3%A9?q=a+b&r=%2F",
            "http://example.com//double/slash/",
            "http://example.com/a/b?x=?y/z",
            "http://example.com/wiki/It's:a@b$c!d*e,f+g=h~i",
            "http://localhost:1/",
        ] {
            assert!(fast(&n, input), "{input}");
        }
    }

    #[test]
    fn anything_a_step_or_the_parser_may_change_goes_the_slow_way() {
        let n = normalizer(StaticConfig::default());
        for input in [
            "HTTP://example.com/",
            "http://Example.com/",
            "http://example.com",
            "http://example.com:80/",
            "https://example.com:443/",
            "http://example.com:080/",
            "http://example.com:/",
            "http://example.com:65536/",
            "http://user@example.com/",
            "http://example.com./",
            "http://example..com/",
            "http://.example.com/",
            "http://10.0.0.1/",
            "http://1.2.3.4e/",
            "http://example.0x1/",
            "http://[::1]/",
            "http://xn--r8jz45g.jp/",
            "http://bücher.de/",
            "http:///example.com/",
            "http:\\\\example.com/",
            "http://example.com\\a/",
            "http://example.com/a/./b",
            "http://example.com/a/../b",
            "http://example.com/a/..",
            "http://example.com/a/%2e/b",
            "http://example.com/%7e",
            "http://example.com/%c3%a9",
            "http://example.com/%",
            "http://example.com/%4",
            "http://example.com/a b",
            "http://example.com/a\tb",
            "http://example.com/é",
            "http://example.com/a^b",
            "http://example.com/a|b",
            "http://example.com/{x}",
            "http://example.com/#top",
            "http://example.com/?",
            "http://example.com/?a=1&&b=2",
            "http://example.com/?q='x'",
            "http://example.com/?utm_source=x",
            "http://example.com/?PHPSESSID=abc",
            "http://example.com/x;jsessionid=AB12",
            "http://example.com/(S(4hqa0555fwsecu455xqckv45))/a",
            " http://example.com/",
            "http://example.com/\n",
        ] {
            assert!(!fast(&n, input), "{input}");
        }
    }

    /// What [`recognize_form`] makes of `input`, checked against the parser's path: `Some`
    /// with the text when it took the input (as it is or edited), `None` when it left it to the
    /// parser.
    fn form(n: &StaticNormalizer, input: &str) -> Option<String> {
        let form = recognize_form(n, input)?;
        let (text, view) = match &form {
            FastForm::Input(view) => (input, view.clone()),
            FastForm::Edited(text) => (text.as_str(), text.view()),
        };
        let url = n.normalize(input).expect("taken URLs normalize");
        assert_eq!(url.as_str(), text, "{input}");
        assert_eq!(UrlView::of(&url).as_ref(), Some(&view), "{input}");
        Some(text.to_owned())
    }

    #[test]
    fn session_ids_and_tracking_parameters_are_removed_on_the_fast_path() {
        let n = normalizer(StaticConfig::default());
        for (input, expected) in [
            (
                "http://example.com/topic/1;jsessionid=0123456789ABCDEF0123",
                "http://example.com/topic/1",
            ),
            (
                "https://example.com/p?utm_source=x&id=3",
                "https://example.com/p?id=3",
            ),
            ("http://example.com/p?utm_source=x", "http://example.com/p"),
            (
                "http://example.com/a;x=1;jsessionid=0123456789ABCDEF0123/b?x=1;jsessionid=AB12",
                "http://example.com/a;x=1/b?x=1",
            ),
            (
                "http://example.com/(S(4hqa0555fwsecu455xqckv45))/a?gclid=1&&b=2",
                "http://example.com/a?b=2",
            ),
            ("http://example.com/a;type=b", "http://example.com/a;type=b"),
        ] {
            assert_eq!(form(&n, input).as_deref(), Some(expected), "{input}");
        }
        let sorting = normalizer(StaticConfig {
            sort_query: true,
            ..StaticConfig::default()
        });
        assert_eq!(
            form(&sorting, "http://example.com/?b=1&utm_medium=2&a=2").as_deref(),
            Some("http://example.com/?a=2&b=1")
        );
    }

    #[test]
    fn edits_the_parser_would_store_otherwise_go_the_parsers_way() {
        let n = normalizer(StaticConfig::default());
        for input in [
            // Removing the session id leaves a dot segment, which the parser resolves.
            "http://example.com/a/..;jsessionid=0123456789ABCDEF0123/b",
            "http://example.com/a/.;jsessionid=0123456789ABCDEF0123",
            // Steps beyond the path and query.
            "http://Example.com/p?utm_source=x",
            "http://example.com/p?utm_source=x#top",
        ] {
            assert_eq!(form(&n, input), None, "{input}");
        }
        let www = normalizer(StaticConfig {
            strip_www: true,
            ..StaticConfig::default()
        });
        assert_eq!(form(&www, "http://www.example.com/p?utm_source=x"), None);
    }

    #[test]
    fn the_configuration_decides_with_the_same_scan() {
        let sorting = normalizer(StaticConfig {
            sort_query: true,
            strip_www: true,
            ..StaticConfig::default()
        });
        assert!(!fast(&sorting, "http://example.com/?b=1&a=2"));
        assert!(fast(&sorting, "http://example.com/?a=2&b=1"));
        assert!(!fast(&sorting, "http://www.example.com/"));
        let plain = normalizer(StaticConfig::default());
        assert!(fast(&plain, "http://example.com/?b=1&a=2"));
        assert!(fast(&plain, "http://www.example.com/"));
        let short = normalizer(StaticConfig {
            max_url_bytes: 20,
            ..StaticConfig::default()
        });
        assert!(!fast(&short, "http://example.com/abc"));
        assert!(fast(&short, "http://example.com/"));
    }
}
