//! A statically normalized URL's parts, borrowed: what mirror folding and the rule engine read,
//! and what the canonical text is written from.
//!
//! Static normalization leaves a parsed `url::Url`, and [`UrlView::of`] slices its parts out
//! once; or the fast path ([`crate::canon::fast::recognize`]) proves the input already normalized
//! and slices the same parts straight out of the input.
//! Folding onto a mirror set's canonical site swaps the origin (and, under a folder alias, the
//! path prefix) on the view ([`crate::canon::mirror::MirrorTable::fold_view`]) instead of
//! rewriting a cloned `Url` through `set_host` (which parses the host again) and `set_path`; the
//! rule engine decomposes the view, and the canonical text is written once
//! ([`UrlView::to_text`], [`UrlView::text_with`]).
//!
//! When the fast path's static steps edit the path or query of an input it sliced, it writes the
//! result as a [`UrlText`]: the text with where its parts are, whose view reads them without
//! parsing.
//!
//! A view of a parsed URL writes back the URL's own serialization: an http(s) URL with a host
//! serializes as `scheme://[userinfo@]host[:port]path[?query][#fragment]`, which is exactly the
//! parts below joined.

use std::borrow::Cow;
use std::ops::Range;

use url::{Host, Position, Url};

/// The parts of an http(s) URL with a host, as serialized text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlView<'a> {
    /// `http` or `https`.
    pub scheme: &'a str,
    /// User name and password with their `@` (`user:pw@`); empty without (static
    /// normalization strips them unless configured to keep them).
    pub userinfo: &'a str,
    /// The host as serialized (IPv6 addresses in brackets).
    pub host: &'a str,
    /// Whether the host is a domain name (the rule engine splits it into labels) rather than an
    /// IP address.
    pub host_is_domain: bool,
    /// The port's digits when the URL names a port that is not the scheme's default.
    pub port: Option<&'a str>,
    /// The path (owned only when a folder alias moved it under another prefix).
    pub path: Cow<'a, str>,
    /// The query without its `?`.
    pub query: Option<&'a str>,
    /// The fragment without its `#`.
    pub fragment: Option<&'a str>,
}

impl<'a> UrlView<'a> {
    /// The parts of `url`; `None` when it has no host (never after static normalization).
    pub fn of(url: &'a Url) -> Option<Self> {
        let host = url.host_str()?;
        Some(UrlView {
            scheme: url.scheme(),
            userinfo: &url[Position::BeforeUsername..Position::BeforeHost],
            host,
            host_is_domain: matches!(url.host(), Some(Host::Domain(_))),
            port: url
                .port()
                .map(|_| &url[Position::BeforePort..Position::AfterPort]),
            path: Cow::Borrowed(url.path()),
            query: url.query(),
            fragment: url.fragment(),
        })
    }

    /// The URL's text.
    pub fn to_text(&self) -> String {
        self.text_with(self.scheme, &self.path, self.query)
    }

    /// The URL's text with its scheme, path and query replaced (a site rewrite's output).
    pub fn text_with(&self, scheme: &str, path: &str, query: Option<&str>) -> String {
        let mut out = String::with_capacity(
            scheme.len()
                + 3
                + self.userinfo.len()
                + self.host.len()
                + self.port.map_or(0, |p| p.len() + 1)
                + path.len()
                + query.map_or(0, |q| q.len() + 1)
                + self.fragment.map_or(0, |f| f.len() + 1),
        );
        out.push_str(scheme);
        out.push_str("://");
        out.push_str(self.userinfo);
        out.push_str(self.host);
        if let Some(port) = self.port {
            out.push(':');
            out.push_str(port);
        }
        out.push_str(path);
        if let Some(q) = query {
            out.push('?');
            out.push_str(q);
        }
        if let Some(f) = self.fragment {
            out.push('#');
            out.push_str(f);
        }
        out
    }
}

/// A URL's text, owned, with where its parts are: what the fast path writes when static steps
/// edited the path or query of an input it sliced ([`crate::canon::fast::recognize_form`]), so
/// the learned half reads the parts without parsing the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlText {
    text: String,
    scheme_len: usize,
    host: Range<usize>,
    host_is_domain: bool,
    port: Option<Range<usize>>,
    path: Range<usize>,
    query: Option<Range<usize>>,
}

impl UrlText {
    /// The text of `view` with its path and query replaced (without user info or fragment:
    /// those are for the parser's way).
    pub fn write(view: &UrlView<'_>, path: &str, query: Option<&str>) -> Option<Self> {
        if !view.userinfo.is_empty() || view.fragment.is_some() {
            return None;
        }
        let text = view.text_with(view.scheme, path, query);
        let host_start = view.scheme.len() + 3;
        let host = host_start..host_start + view.host.len();
        let port = view.port.map(|p| host.end + 1..host.end + 1 + p.len());
        let path_start = port.as_ref().map_or(host.end, |p| p.end);
        let path = path_start..path_start + path.len();
        let query = query.map(|q| path.end + 1..path.end + 1 + q.len());
        Some(UrlText {
            scheme_len: view.scheme.len(),
            host,
            host_is_domain: view.host_is_domain,
            port,
            path,
            query,
            text,
        })
    }

    /// The URL's text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The URL's text, owned.
    pub fn into_string(self) -> String {
        self.text
    }

    /// The URL's parts.
    pub fn view(&self) -> UrlView<'_> {
        let text = self.text.as_str();
        UrlView {
            scheme: &text[..self.scheme_len],
            userinfo: "",
            host: &text[self.host.clone()],
            host_is_domain: self.host_is_domain,
            port: self.port.clone().map(|p| &text[p]),
            path: Cow::Borrowed(&text[self.path.clone()]),
            query: self.query.clone().map(|q| &text[q]),
            fragment: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_writes_back_the_parsed_urls_own_text() {
        for text in [
            "http://example.com/",
            "https://user:pw@example.com:8443/a/b;p=1?q=1&r#frag",
            "http://user@10.0.0.7/x",
            "http://[::1]:8080/?",
            "https://ex.org/%C3%A9t%C3%A9/index.html?a=b%20c",
        ] {
            let url = Url::parse(text).unwrap();
            let view = UrlView::of(&url).unwrap();
            assert_eq!(view.to_text(), url.as_str(), "{text}");
        }
        let url = Url::parse("http://10.0.0.7:81/x").unwrap();
        let view = UrlView::of(&url).unwrap();
        assert!(!view.host_is_domain);
        assert_eq!(view.port, Some("81"));
        let url = Url::parse("https://example.com:443/x").unwrap();
        assert_eq!(UrlView::of(&url).unwrap().port, None, "default port");
    }

    #[test]
    fn a_written_text_has_the_parts_it_was_written_from() {
        for (text, path, query) in [
            ("http://example.com/a;jsessionid=1?b=2", "/a", Some("b=2")),
            ("https://example.com:8443/x?utm_source=y", "/x", None),
            ("http://10.0.0.7:81/x", "/", Some("")),
        ] {
            let url = Url::parse(text).unwrap();
            let view = UrlView::of(&url).unwrap();
            let written = UrlText::write(&view, path, query).unwrap();
            let expected = view.text_with(view.scheme, path, query);
            assert_eq!(written.as_str(), expected);
            let again = Url::parse(&expected).unwrap();
            assert_eq!(written.view(), UrlView::of(&again).unwrap(), "{text}");
        }
        let url = Url::parse("http://u@example.com/a").unwrap();
        assert_eq!(UrlText::write(&UrlView::of(&url).unwrap(), "/", None), None);
    }

    #[test]
    fn a_view_with_other_parts_writes_them() {
        let url = Url::parse("http://u@example.com:81/a?b#c").unwrap();
        let view = UrlView::of(&url).unwrap();
        assert_eq!(
            view.text_with("https", "/x/y", None),
            "https://u@example.com:81/x/y#c"
        );
    }
}
