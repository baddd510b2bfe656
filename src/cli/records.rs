//! What the offline commands take from every record besides page content: the URL evidence of
//! redirect and revisit records and of archives' payload digests
//! ([`PageRecord::url_evidence`]), per host, and for `undust clusters` one entry per input record
//! so that every record gets its answer.
//!
//! This is a pass over the inputs of its own, beside the content pass in [`super::pipeline`]: it
//! decodes records again but analyses no HTML, and holds only URLs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::canon::normalize::StaticNormalizer;
use crate::ingest::pages::{read_pages, PageRecord, RecordKind, UrlEvidence};

/// One input record, as `undust clusters` answers for it.
#[derive(Debug, Clone)]
pub struct RecordEntry {
    /// The URL as the record gives it (empty for a record that could not be read).
    pub url: String,
    /// The statically normalized URL, when it normalizes.
    pub canonical: Option<String>,
    /// The URL whose content the record carries (the normalized final URL of a redirected
    /// fetch), when it is a page.
    pub content_url: Option<String>,
    /// The record's HTTP status, when known.
    pub status: Option<u16>,
    /// `page`, `redirect`, `revisit`, or `error: …` for a record that could not be read.
    pub kind: String,
}

/// What the pass found.
#[derive(Debug, Default)]
pub struct RecordScan {
    /// Per host (of the URL the evidence is about), its URL evidence, normalized.
    pub url_evidence: BTreeMap<String, Vec<UrlEvidence>>,
    /// Every record in input order, when asked for.
    pub records: Vec<RecordEntry>,
}

/// Reads every record of `paths` once more; `entries`: keep one [`RecordEntry`] per record.
pub fn scan_records(
    paths: &[PathBuf],
    normalizer: &StaticNormalizer,
    entries: bool,
) -> Result<RecordScan, String> {
    let normalize = |url: &str| normalizer.normalize(url).ok().map(String::from);
    let mut scan = RecordScan::default();
    for path in paths {
        let reader = read_pages(path).map_err(|err| err.to_string())?;
        for record in reader {
            let page: PageRecord = match record {
                Ok(page) => page,
                Err(err) => {
                    if entries {
                        scan.records.push(RecordEntry {
                            url: String::new(),
                            canonical: None,
                            content_url: None,
                            status: None,
                            kind: format!("error: {}: {err}", path.display()),
                        });
                    }
                    continue;
                }
            };
            for evidence in page.url_evidence() {
                let Some(evidence) = evidence.normalized(normalize) else {
                    continue;
                };
                let Some(host) = url::Url::parse(evidence.url())
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
                else {
                    continue;
                };
                scan.url_evidence.entry(host).or_default().push(evidence);
            }
            if entries {
                let canonical = normalize(&page.url);
                let (kind, content_url) = match page.kind {
                    RecordKind::Page => (
                        "page",
                        page.final_url
                            .as_deref()
                            .and_then(normalize)
                            .or_else(|| canonical.clone()),
                    ),
                    RecordKind::Redirect => ("redirect", None),
                    RecordKind::Revisit(_) => ("revisit", None),
                };
                scan.records.push(RecordEntry {
                    url: page.url,
                    canonical,
                    content_url,
                    status: page.status,
                    kind: kind.to_owned(),
                });
            }
        }
    }
    Ok(scan)
}
