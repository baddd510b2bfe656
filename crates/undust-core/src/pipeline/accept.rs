//! Page acceptance: what of a fetched page is evidence, what is skipped and what is rejected, and
//! why. Both shells judge pages here and nowhere else.
//!
//! - **Rejected** (the input is wrong; the sidecar reports it per page, the CLI per record): an empty
//!   or invalid `url`, an invalid `final_url` or declared canonical (a field the crawler filled must
//!   be usable, or its evidence would silently vanish), a status outside 100–599, a body over the
//!   policy's limit.
//! - **Skipped** (valid, but not content evidence): a non-2xx status, a body that is not HTML, an
//!   archive's redirect or revisit record (it is evidence about URLs, taken by [`url_evidence`],
//!   not content).
//! - **Evidence**: everything else, with every URL statically normalized.
//!
//! A record without a status (JSON lines often have none) counts as a 200: the crawl kept its body.

use std::fmt;

use url::Url;

use crate::canon::normalize::StaticNormalizer;
use crate::ingest::pages::{PageRecord, RecordKind, UrlEvidence};

/// Largest page body accepted by default (the readers' own bound); larger pages are rejected.
pub use crate::ingest::pages::DEFAULT_MAX_BODY_BYTES;

/// What acceptance may be configured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptPolicy {
    /// Largest body accepted, in bytes.
    pub max_body_bytes: usize,
}

impl Default for AcceptPolicy {
    fn default() -> Self {
        AcceptPolicy {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// A page accepted as evidence, its URLs statically normalized.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// The host the page is evidence for (of the fetched URL).
    pub host: String,
    /// The URL fetched.
    pub url: Url,
    /// Where the fetch ended after redirects, when elsewhere.
    pub final_url: Option<Url>,
    /// The canonical the record declares (crawler field or HTTP `Link` header).
    pub rel_canonical: Option<Url>,
    /// The body, as received (decompressed).
    pub body: Vec<u8>,
}

/// Why a valid page is not evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// A status outside 2xx.
    Status(u16),
    /// The body is not HTML.
    NotHtml,
    /// A redirect or revisit record: what it says about URLs is in [`url_evidence`].
    NoContent,
}

impl SkipReason {
    /// A short, fixed name (for counters).
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Status(_) => "status",
            SkipReason::NotHtml => "content type",
            SkipReason::NoContent => "no content",
        }
    }
}

/// Why a page is invalid: the field at fault and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The field at fault (`url`, `final_url`, `rel_canonical`, `http_status`, `body`).
    pub field: &'static str,
    /// What is wrong, for the caller to fix.
    pub message: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// The judgement on one page.
#[derive(Debug)]
pub enum Verdict {
    /// Evidence for its host.
    Evidence(Box<Evidence>),
    /// Valid but not evidence.
    Skipped(SkipReason),
    /// Invalid.
    Rejected(Rejection),
}

fn reject(field: &'static str, message: impl Into<String>) -> Verdict {
    Verdict::Rejected(Rejection {
        field,
        message: message.into(),
    })
}

/// `url` without `user:password@`. Evidence is sampled, stored and learned from, and credentials
/// never say anything about content: they are dropped from evidence even when the normalizer is
/// configured to keep them in canonical forms.
fn without_userinfo(mut url: Url) -> Url {
    if !url.username().is_empty() || url.password().is_some() {
        // Only fails for URLs that cannot carry credentials, which have none to drop.
        let _ = url.set_password(None);
        let _ = url.set_username("");
    }
    url
}

/// Judges one fetched page (see the module documentation for the rules).
pub fn judge(page: PageRecord, normalizer: &StaticNormalizer, policy: &AcceptPolicy) -> Verdict {
    if page.url.is_empty() {
        return reject("url", "is required");
    }
    let url = match normalizer.normalize(&page.url) {
        Ok(url) => without_userinfo(url),
        Err(reason) => return reject("url", reason.to_string()),
    };
    let Some(host) = url.host_str().map(str::to_owned) else {
        return reject("url", "has no host");
    };
    let optional = |field: &'static str, value: Option<&str>| match value {
        None | Some("") => Ok(None),
        Some(text) => normalizer
            .normalize(text)
            .map(|url| Some(without_userinfo(url)))
            .map_err(|reason| reject(field, reason.to_string())),
    };
    let final_url = match optional("final_url", page.final_url.as_deref()) {
        Ok(url) => url,
        Err(verdict) => return verdict,
    };
    let rel_canonical = match optional("rel_canonical", page.rel_canonical.as_deref()) {
        Ok(url) => url,
        Err(verdict) => return verdict,
    };
    let status = page.status.unwrap_or(200);
    if !(100..=599).contains(&status) {
        return reject(
            "http_status",
            format!("{status} is not an HTTP status (100 to 599)"),
        );
    }
    if page.body.len() > policy.max_body_bytes {
        return reject(
            "body",
            format!(
                "{} bytes exceed the limit of {} bytes",
                page.body.len(),
                policy.max_body_bytes
            ),
        );
    }
    if page.kind != RecordKind::Page {
        return Verdict::Skipped(SkipReason::NoContent);
    }
    if !(200..=299).contains(&status) {
        return Verdict::Skipped(SkipReason::Status(status));
    }
    if !is_html(page.content_type.as_deref().unwrap_or(""), &page.body) {
        return Verdict::Skipped(SkipReason::NotHtml);
    }
    Verdict::Evidence(Box::new(Evidence {
        host,
        url,
        final_url,
        rel_canonical,
        body: page.body,
    }))
}

/// What a record says about URLs besides its content (an archive's redirect, revisit and payload
/// digest: [`PageRecord::url_evidence`]), statically normalized; evidence naming a URL that does
/// not normalize is dropped. Each item goes to the host of [`UrlEvidence::url`].
pub fn url_evidence(page: &PageRecord, normalizer: &StaticNormalizer) -> Vec<UrlEvidence> {
    page.url_evidence()
        .into_iter()
        .filter_map(|evidence| {
            evidence.normalized(|url| {
                let url = normalizer.normalize(url).ok()?;
                Some(String::from(without_userinfo(url)))
            })
        })
        .collect()
}

/// Whether a page is HTML (one notion for the reader and this stage: [`crate::ingest::pages::is_html`]).
pub use crate::ingest::pages::is_html;

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str) -> PageRecord {
        PageRecord {
            url: url.to_owned(),
            status: Some(200),
            content_type: Some("text/html".to_owned()),
            body: b"<p>hello</p>".to_vec(),
            ..PageRecord::default()
        }
    }

    fn judged(record: PageRecord) -> Verdict {
        let normalizer = StaticNormalizer::new(crate::canon::normalize::StaticConfig::default())
            .expect("defaults");
        judge(record, &normalizer, &AcceptPolicy::default())
    }

    #[test]
    fn html_is_recognised_by_type_or_by_body() {
        assert!(is_html("text/html; charset=utf-8", b""));
        assert!(is_html("application/xhtml+xml", b""));
        assert!(is_html("", b"  \n<!doctype html><p>x"));
        assert!(is_html("", b"\xEF\xBB\xBF<html>"));
        assert!(!is_html("", b"{\"json\": true}"));
        assert!(!is_html("application/pdf", b"<html>"));
    }

    #[test]
    fn evidence_has_normalized_urls_and_its_host() {
        let mut record = page("HTTP://Example.com:80/a/../b?utm_source=x");
        record.final_url = Some("http://example.com/c".into());
        let Verdict::Evidence(evidence) = judged(record) else {
            panic!("a valid HTML page is evidence");
        };
        assert_eq!(evidence.host, "example.com");
        assert_eq!(evidence.url.as_str(), "http://example.com/b");
        assert_eq!(
            evidence.final_url.as_ref().map(Url::as_str),
            Some("http://example.com/c")
        );
    }

    #[test]
    fn invalid_fields_are_rejected_naming_the_field() {
        for (field, record) in [
            ("url", page("")),
            ("url", page("not a url")),
            ("final_url", {
                let mut r = page("http://example.com/");
                r.final_url = Some("http://[bad".into());
                r
            }),
            ("rel_canonical", {
                let mut r = page("http://example.com/");
                r.rel_canonical = Some("mailto:x@example.com".into());
                r
            }),
            ("http_status", {
                let mut r = page("http://example.com/");
                r.status = Some(0);
                r
            }),
        ] {
            match judged(record) {
                Verdict::Rejected(rejection) => assert_eq!(rejection.field, field),
                other => panic!("{field}: expected a rejection, got {other:?}"),
            }
        }
        let mut big = page("http://example.com/");
        big.body = vec![b'<'; DEFAULT_MAX_BODY_BYTES + 1];
        assert!(matches!(
            judged(big),
            Verdict::Rejected(Rejection { field: "body", .. })
        ));
    }

    #[test]
    fn non_2xx_and_non_html_are_skipped_and_a_missing_status_is_a_200() {
        let mut moved = page("http://example.com/");
        moved.status = Some(404);
        assert!(matches!(
            judged(moved),
            Verdict::Skipped(SkipReason::Status(404))
        ));
        let mut pdf = page("http://example.com/a.pdf");
        pdf.content_type = Some("application/pdf".into());
        assert!(matches!(judged(pdf), Verdict::Skipped(SkipReason::NotHtml)));
        let mut unknown = page("http://example.com/");
        unknown.status = None;
        assert!(matches!(judged(unknown), Verdict::Evidence(_)));
    }
}
