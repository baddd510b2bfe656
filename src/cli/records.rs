//! `undust clusters` answers for every input record: this pass reads the inputs a second time,
//! after the clusters are known, and hands each record to the caller as a [`RecordEntry`] (URLs
//! and what acceptance made of the record; bodies are dropped at once), so the answer is written
//! in input order without holding the records.

use std::ops::ControlFlow;
use std::path::PathBuf;

use super::ordered::{map_in_order, Batching};
use crate::canon::normalize::StaticNormalizer;
use crate::ingest::pages::{read_pages, PageReader, PageRecord, RecordKind, UndecodedRecord};
use crate::pipeline::{judge, AcceptPolicy, SkipReason, Verdict};

/// One input record, as `undust clusters` answers for it.
#[derive(Debug, Clone)]
pub struct RecordEntry {
    /// The URL as the record gives it.
    pub url: String,
    /// The statically normalized URL, when it normalizes.
    pub canonical: Option<String>,
    /// The URL whose content the record carries (the normalized final URL of a redirected
    /// fetch), when it is content evidence.
    pub content_url: Option<String>,
    /// The record's HTTP status, when known.
    pub status: Option<u16>,
    /// `page`, `redirect` or `revisit`.
    pub kind: &'static str,
    /// Why the record is not content evidence (`status`, `content type`, `no content`, or
    /// `rejected: FIELD`), `None` when it is.
    pub not_evidence: Option<String>,
}

/// Records are decoded and judged on every core, in batches like the first pass's
/// ([`super::ordered`]), and handed to the caller in input order.
const RECORD_BATCHING: Batching = Batching {
    batch_items: 1024,
    batch_bytes: 8 << 20,
};

/// Reads every record of `paths` again and calls `each` with it in input order, until `each`
/// returns `false`. Records that cannot be read were reported by the first pass and are passed
/// over here.
pub fn for_each_record(
    paths: &[PathBuf],
    normalizer: &StaticNormalizer,
    mut each: impl FnMut(RecordEntry) -> bool,
) -> Result<(), String> {
    let policy = AcceptPolicy::default();
    for path in paths {
        let mut stopped = false;
        map_in_order(
            || read_pages(path).map(PageReader::undecoded),
            |record| record.as_ref().map_or(0, UndecodedRecord::weight),
            |record| {
                let page = record.and_then(UndecodedRecord::decode).ok()?;
                Some(entry(page, normalizer, &policy))
            },
            |entry| {
                if let Some(entry) = entry {
                    if !each(entry) {
                        stopped = true;
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            },
            RECORD_BATCHING,
        )
        .map_err(|err| err.to_string())?;
        if stopped {
            return Ok(());
        }
    }
    Ok(())
}

/// What `undust clusters` says about one record (pure: runs on any core).
fn entry(page: PageRecord, normalizer: &StaticNormalizer, policy: &AcceptPolicy) -> RecordEntry {
    let url = page.url.clone();
    let status = page.status;
    let canonical = normalizer.normalize(&url).ok().map(String::from);
    let kind = match page.kind {
        RecordKind::Page => "page",
        RecordKind::Redirect => "redirect",
        RecordKind::Revisit(_) => "revisit",
    };
    let (content_url, not_evidence) = match judge(page, normalizer, policy) {
        Verdict::Evidence(evidence) => (
            Some(String::from(evidence.final_url.unwrap_or(evidence.url))),
            None,
        ),
        Verdict::Skipped(SkipReason::Status(_)) => (None, Some("status".to_owned())),
        Verdict::Skipped(reason) => (None, Some(reason.as_str().to_owned())),
        Verdict::Rejected(rejection) => (None, Some(format!("rejected: {}", rejection.field))),
    };
    RecordEntry {
        url,
        canonical,
        content_url,
        status,
        kind,
        not_evidence,
    }
}
