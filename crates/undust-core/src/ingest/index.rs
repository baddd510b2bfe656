//! Readers for crawl indexes: CDX, CDXJ and Heritrix `crawl.log`, as a stream of captures.
//!
//! Web archives already know which URLs share a payload: an index has one line per capture with
//! the payload digest, so DUST can be learned from it without any HTML. [`read_index`] opens a
//! file (plain or gzip), picks the layout from its name or its first lines, and yields one
//! [`Capture`] per line; a line that does not parse is an error naming its 1-based line number,
//! and reading goes on. Captures of non-HTTP URLs (`dns:`, `whois:`, `metadata:`) are skipped and
//! counted in [`IndexStats`].
//!
//! # Layouts
//!
//! - **CDX**: space-separated fields whose meaning a header line declares with one letter each,
//!   e.g. ` CDX N b a m s k r M S V g` (CDX11: SURT key, date, original URL, mime, status,
//!   digest, redirect, meta tags, record length, offset, file). The letters used: `a` original
//!   URL (required), `b` date, `m` mime, `s` status, `k` (or old-style `c`) digest, `r` redirect,
//!   `S` (else `n`) length. Files without a header line (NetarchiveSuite and early Wayback tools
//!   write them) are read as CDX11 when lines have 11 fields, as the 9-field
//!   ` CDX N b a m s k r V g` when they have 9, and as the Wayback CDX server's default answer
//!   (`urlkey timestamp original mimetype statuscode digest length`, ` CDX N b a m s k S`) when
//!   they have 7. `-` is "absent".
//! - **CDXJ** (pywb, OutbackCDX, Common Crawl): `SURT TIMESTAMP {json}` with JSON keys `url`,
//!   `status`, `mime`, `digest`, `length` and, when present, `redirect` / `location`. Lines
//!   starting with `!` (OutbackCDX metadata) are skipped.
//! - **A CDX server's JSON answer**, as a user saves it from an archive's query API:
//!   - the Wayback Machine's `output=json`: one JSON array per line, the first naming the
//!     fields (`["urlkey","timestamp","original","mimetype","statuscode","digest","length"]`,
//!     or those `fl=` asked for), the whole wrapped in `[` … `]`; an empty row and the
//!     resumption key after it (`showResumeKey=true`) are skipped. A whole answer on one line
//!     is read too, within the line bound.
//!   - pywb's and Common Crawl's index server `output=json`: one JSON object per line with
//!     the CDXJ keys above and the capture time as `timestamp`.
//! - **Heritrix `crawl.log`** (Heritrix 1 and 3 write the same leading columns): log time,
//!   status, size, URI, discovery path (hops), via (referrer), mime, worker thread, fetch
//!   time+duration, digest (`sha1:BASE32` in Heritrix 3 and late 1.x, bare base32 before; `-`
//!   when none), source tag, annotations, and in Heritrix 3 optionally a JSON column. Negative
//!   statuses are fetch failures (status absent). The size column is the payload size without
//!   HTTP headers. A capture reached by a redirect has `R` as the last hop and the redirecting
//!   URL as via: that pair is the index's redirect ([`Capture::redirected_from`]). A first line
//!   that is an ARC header (crawl logs stored in metadata ARCs keep it) is skipped.
//!
//! Digests are normalised to one spelling ([`normalize_digest`]): a SHA-1 digest is its bare
//! upper-case base32 whatever prefix the index wrote, so a CDX and a crawl.log of one crawl agree.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::bufread::MultiGzDecoder;
use thiserror::Error;

use super::pages::{read_line_bounded, trim_eol, LineStatus, RecordError};

/// The SHA-1 of an empty payload, base32: equal for every empty body, so never DUST evidence.
pub const EMPTY_SHA1: &str = "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";

/// Smallest payload whose digest is DUST evidence. Equal digests of tiny bodies (an empty page, a
/// "Moved" stub, a one-line error, a spacer image) say nothing about two URLs being the same
/// document; 256 bytes is below any real HTML page and above such stubs. The index's length is the payload size in
/// crawl.log but the whole stored record (WARC and HTTP headers included) in CDX/CDXJ, so there the
/// bound is looser; the empty-body digest is refused by value ([`EMPTY_SHA1`]) in any case.
pub const MIN_DIGEST_PAYLOAD_BYTES: u64 = 256;

/// Longest index line read (1 MiB: CDXJ JSON with long URLs stays far below).
const MAX_INDEX_LINE_BYTES: usize = 1 << 20;

/// The CDX layout assumed for 11-field lines without a header.
const CDX11: &str = "N b a m s k r M S V g";
/// The CDX layout assumed for 9-field lines without a header.
const CDX9: &str = "N b a m s k r V g";
/// The CDX layout assumed for 7-field lines without a header: the Wayback CDX server's default
/// answer (`urlkey timestamp original mimetype statuscode digest length`).
const CDX7: &str = "N b a m s k S";

/// The index layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexFormat {
    /// CDX: space-separated fields declared by a ` CDX …` header line.
    Cdx,
    /// CDXJ: `SURT TIMESTAMP {json}`.
    Cdxj,
    /// Heritrix `crawl.log`.
    CrawlLog,
    /// A CDX server's JSON answer: the Wayback Machine's rows (`[…]` lines, the first naming the
    /// fields) or pywb's and Common Crawl's objects (`{…}` lines).
    CdxJson,
}

impl IndexFormat {
    /// The layout a file name says (`.cdx`, `.cdxj`, `crawl*.log`; `.gz` looked through).
    pub fn from_path(path: &Path) -> Option<IndexFormat> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".cdxj") {
            Some(IndexFormat::Cdxj)
        } else if name.ends_with(".cdx") {
            Some(IndexFormat::Cdx)
        } else if name.ends_with(".log") && name.contains("crawl") {
            Some(IndexFormat::CrawlLog)
        } else {
            None
        }
    }

    /// The layout one line shows, if it is conclusive.
    pub fn sniff_line(line: &str) -> Option<IndexFormat> {
        let line = line.trim_end();
        if line.trim_start().starts_with("CDX ") {
            return Some(IndexFormat::Cdx);
        }
        if line.trim_start().starts_with(['[', '{']) {
            return Some(IndexFormat::CdxJson);
        }
        let mut fields = line.split_ascii_whitespace();
        let first = fields.next()?;
        let second = fields.next().unwrap_or_default();
        let third = fields.next().unwrap_or_default();
        if is_iso_time(first) {
            Some(IndexFormat::CrawlLog)
        } else if is_digits(second, 4..=14) && third.starts_with('{') {
            Some(IndexFormat::Cdxj)
        } else if is_digits(second, 4..=14) && line.split_ascii_whitespace().count() >= 7 {
            Some(IndexFormat::Cdx)
        } else {
            None
        }
    }
}

fn is_digits(text: &str, lengths: std::ops::RangeInclusive<usize>) -> bool {
    lengths.contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())
}

/// `2006-08-15T09:53:58.470Z`: Heritrix's log time.
fn is_iso_time(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 19 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':'
}

/// One capture in an index.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Capture {
    /// The URL captured, as the index gives it.
    pub url: String,
    /// The capture time as written (14 digits in CDX/CDXJ, Heritrix's fetch time in crawl.log).
    pub timestamp: Option<String>,
    /// HTTP status (absent for failed fetches and revisits that do not repeat it).
    pub status: Option<u16>,
    /// The payload's mime type.
    pub mime: Option<String>,
    /// The payload digest, normalised ([`normalize_digest`]).
    pub digest: Option<String>,
    /// The length the index records: payload bytes (crawl.log) or compressed record bytes
    /// (CDX `S`, CDXJ `length`).
    pub length: Option<u64>,
    /// Where this capture redirects to (CDX `r`, CDXJ `redirect`), resolved against `url`.
    pub redirect: Option<String>,
    /// The capture this one was redirected from (crawl.log: via, when the last hop is `R`).
    pub redirected_from: Option<String>,
    /// True when the index marks the capture as a revisit or duplicate of an earlier one (CDX
    /// mime `warc/revisit`, crawl.log annotation `duplicate:…`/`warcRevisit:…`).
    pub revisit: bool,
}

impl Capture {
    /// True when this capture's digest is evidence that URLs sharing it are DUST: a payload of
    /// any type fetched with status 200 (or a revisit, which may not repeat the status), not the
    /// empty body's digest, and not smaller than [`MIN_DIGEST_PAYLOAD_BYTES`] when the length is
    /// known.
    ///
    /// Any type, not pages only: a crawler fetches every copy of an image, a stylesheet or a PDF
    /// as it fetches every copy of a page, and most of a real crawl's captures are such files.
    /// A rule learned from pages alone rewrites the files beside them without having seen one:
    /// a folder shown interchangeable by a few untranslated pages (`/dutch/about.html` ≡
    /// `/about.html`) would be dropped from the translated images under it too, which only the
    /// images' own digests can refuse. One file copied into every folder (a logo, a stylesheet)
    /// is a digest shared by many paths of one file name, which the cluster builder tells from
    /// a catch-all's (`cluster::clusters`).
    pub fn is_payload_evidence(&self) -> bool {
        let status_ok = self.status == Some(200) || (self.revisit && self.status.is_none());
        let digest_ok = self.digest.as_deref().is_some_and(|d| d != EMPTY_SHA1);
        let size_ok = self.length.is_none_or(|l| l >= MIN_DIGEST_PAYLOAD_BYTES);
        status_ok && digest_ok && size_ok
    }

    /// The redirect this capture records, as (from, to): its own redirect target, or the URL
    /// that redirected to it.
    pub fn redirect_pair(&self) -> Option<(&str, &str)> {
        if let Some(to) = &self.redirect {
            if self.status.is_none_or(|s| (300..=399).contains(&s)) {
                return Some((&self.url, to));
            }
        }
        self.redirected_from
            .as_deref()
            .map(|from| (from, self.url.as_str()))
    }
}

/// What an index reader saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexStats {
    /// Non-blank lines read.
    pub lines: u64,
    /// Captures yielded.
    pub captures: u64,
    /// Header or metadata lines skipped (CDX header, CDXJ `!` lines, an ARC header line).
    pub headers: u64,
    /// Captures of non-HTTP URLs skipped (`dns:`, `whois:`, …).
    pub non_http: u64,
    /// Lines reported as errors.
    pub malformed: u64,
}

/// Errors opening an index.
#[derive(Debug, Error)]
pub enum IndexError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Neither the name nor the first lines say which index layout the file has.
    #[error(
        "{path}: unknown index format (expected .cdx, .cdxj or crawl*.log, optionally .gz, or \
         content that looks like one of those or like a CDX server's JSON answer)"
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
}

/// Opens an index file; see the module documentation.
pub fn read_index(path: &Path) -> Result<IndexReader, IndexError> {
    let io_err = |source| IndexError::Io {
        path: path.to_path_buf(),
        source,
    };
    // A WACZ's index is read as the layout its lines show (CDXJ by its specification).
    let (source, named): (Box<dyn Read + Send>, _) = if super::wacz::is_wacz(path) {
        (super::wacz::indexes(path).map_err(io_err)?, None)
    } else {
        (
            Box::new(File::open(path).map_err(io_err)?),
            IndexFormat::from_path(path),
        )
    };
    let mut reader = IndexReader::new(source, named).map_err(io_err)?;
    if reader.format.is_none() {
        return Err(IndexError::UnknownFormat {
            path: path.to_path_buf(),
        });
    }
    reader.path = Some(path.to_path_buf());
    Ok(reader)
}

/// A stream of captures from one index.
pub struct IndexReader {
    input: Box<dyn BufRead + Send>,
    format: Option<IndexFormat>,
    /// The CDX field letters in force (from the header line, else by field count; for a
    /// Wayback JSON answer, from its first row).
    cdx_fields: Option<Vec<char>>,
    /// The last JSON row was empty: what follows is a resumption key, not a capture.
    after_empty_row: bool,
    /// Captures read from a line that held several (a JSON answer on one line).
    pending: std::collections::VecDeque<Capture>,
    line_no: u64,
    buf: Vec<u8>,
    done: bool,
    stats: IndexStats,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for IndexReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexReader")
            .field("format", &self.format)
            .field("path", &self.path)
            .field("line", &self.line_no)
            .finish()
    }
}

impl IndexReader {
    /// Reads captures from any byte source (gzip detected from the magic bytes). `format`
    /// `None`: decided from the first lines that say (see [`IndexFormat::sniff_line`]); when none
    /// does, [`IndexReader::format`] stays `None` and the reader yields nothing.
    pub fn new(
        source: Box<dyn Read + Send>,
        format: Option<IndexFormat>,
    ) -> io::Result<IndexReader> {
        let mut raw = BufReader::with_capacity(64 << 10, source);
        let gzip = raw.fill_buf()?.starts_with(&[0x1f, 0x8b]);
        let input: Box<dyn BufRead + Send> = if gzip {
            Box::new(BufReader::with_capacity(64 << 10, MultiGzDecoder::new(raw)))
        } else {
            Box::new(raw)
        };
        let mut reader = IndexReader {
            input,
            format,
            cdx_fields: None,
            after_empty_row: false,
            pending: Default::default(),
            line_no: 0,
            buf: Vec::new(),
            done: false,
            stats: IndexStats::default(),
            path: None,
        };
        if reader.format.is_none() {
            reader.format = reader.sniff();
        }
        if reader.format.is_none() {
            reader.done = true;
        }
        Ok(reader)
    }

    /// Looks at the first lines without consuming them.
    fn sniff(&mut self) -> Option<IndexFormat> {
        let start = self.input.fill_buf().ok()?;
        let text = String::from_utf8_lossy(&start[..start.len().min(16 << 10)]);
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        lines.by_ref().take(3).find_map(IndexFormat::sniff_line)
    }

    /// The layout being read (`None` when it could not be told).
    pub fn format(&self) -> Option<IndexFormat> {
        self.format
    }

    /// What was read so far.
    pub fn stats(&self) -> &IndexStats {
        &self.stats
    }

    /// The capture if its URL is HTTP(S), counted; else `None`, counted as skipped.
    fn http_only(&mut self, capture: Capture) -> Option<Capture> {
        let scheme = capture.url.split(':').next().unwrap_or_default();
        if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https") {
            self.stats.captures += 1;
            return Some(capture);
        }
        self.stats.non_http += 1;
        None
    }

    fn parse(&mut self, line: &str) -> Result<Option<Capture>, String> {
        match self.format {
            Some(IndexFormat::Cdx) => self.parse_cdx(line),
            Some(IndexFormat::Cdxj) => self.parse_cdxj(line),
            Some(IndexFormat::CrawlLog) => self.parse_crawl_log(line),
            Some(IndexFormat::CdxJson) => self.parse_cdx_json(line),
            None => Ok(None),
        }
    }

    fn parse_cdx(&mut self, line: &str) -> Result<Option<Capture>, String> {
        let trimmed = line.trim_start();
        if let Some(letters) = trimmed.strip_prefix("CDX ") {
            let fields: Vec<char> = letters
                .split_ascii_whitespace()
                .map(|f| f.chars().next().unwrap_or(' '))
                .collect();
            if !fields.contains(&'a') {
                return Err("CDX header without the original URL field `a`".into());
            }
            self.cdx_fields = Some(fields);
            self.stats.headers += 1;
            return Ok(None);
        }
        let values: Vec<&str> = line.split_ascii_whitespace().collect();
        let fields: Vec<char> = match &self.cdx_fields {
            Some(fields) => fields.clone(),
            None => match values.len() {
                11 => letters(CDX11),
                9 => letters(CDX9),
                7 => letters(CDX7),
                n => {
                    return Err(format!(
                        "{n} fields and no ` CDX …` header line declaring them (7, 9 or 11 \
                         fields are read as `{CDX7}` / `{CDX9}` / `{CDX11}`; a CDX server's \
                         `output=json` answer names its fields)"
                    ))
                }
            },
        };
        if values.len() != fields.len() {
            return Err(format!(
                "{} fields where the CDX header declares {}",
                values.len(),
                fields.len()
            ));
        }
        capture_from_fields(&fields, &values).map(Some)
    }

    fn parse_cdxj(&mut self, line: &str) -> Result<Option<Capture>, String> {
        if line.starts_with('!') {
            self.stats.headers += 1;
            return Ok(None);
        }
        let mut parts = line.splitn(3, ' ');
        let (_key, timestamp, json) = match (parts.next(), parts.next(), parts.next()) {
            (Some(k), Some(t), Some(j)) => (k, t, j),
            _ => return Err("expected `SURT TIMESTAMP {json}`".into()),
        };
        let value: serde_json::Value =
            serde_json::from_str(json.trim()).map_err(|e| format!("invalid JSON: {e}"))?;
        capture_from_object(&value, Some(timestamp.to_string())).map(Some)
    }

    /// One line of a CDX server's JSON answer (see the module documentation).
    fn parse_cdx_json(&mut self, line: &str) -> Result<Option<Capture>, String> {
        let line = line.trim();
        if line.starts_with('{') {
            let value: serde_json::Value =
                serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
            let timestamp = json_text(&value, "timestamp");
            return capture_from_object(&value, timestamp).map(Some);
        }
        let mut captures = Vec::new();
        for row in json_rows(line)? {
            captures.extend(self.cdx_json_row(&row)?);
        }
        // A whole answer on one line holds many captures: the first is returned, the others
        // wait for the next calls.
        let mut captures = captures.into_iter();
        let first = captures.next();
        self.pending.extend(captures);
        Ok(first)
    }

    /// One row of the Wayback Machine's `output=json` answer: the field names, a capture, the
    /// empty row before a resumption key, or that key.
    fn cdx_json_row(&mut self, row: &[serde_json::Value]) -> Result<Option<Capture>, String> {
        let after_empty_row = std::mem::replace(&mut self.after_empty_row, row.is_empty());
        if row.is_empty() || (after_empty_row && row.len() == 1) {
            self.stats.headers += 1;
            return Ok(None);
        }
        let values: Vec<&str> = row
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| format!("a field that is not a string: {v}"))
            })
            .collect::<Result<_, _>>()?;
        let Some(fields) = &self.cdx_fields else {
            // The first row names the fields.
            let fields: Vec<char> = values.iter().map(|name| field_letter(name)).collect();
            if !fields.contains(&'a') {
                return Err(format!(
                    "the first row names no original URL field (`original` or `url`): {values:?}"
                ));
            }
            self.cdx_fields = Some(fields);
            self.stats.headers += 1;
            return Ok(None);
        };
        if values.len() != fields.len() {
            return Err(format!(
                "{} fields where the first row names {}",
                values.len(),
                fields.len()
            ));
        }
        capture_from_fields(fields, &values).map(Some)
    }

    fn parse_crawl_log(&mut self, line: &str) -> Result<Option<Capture>, String> {
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        if fields.first().is_some_and(|f| !is_iso_time(f)) {
            // Crawl logs stored in a metadata ARC keep its header line
            // (`metadata://… IP DATE text/plain LENGTH`).
            if self.line_no == 1 && fields.len() == 5 && is_digits(fields[4], 1..=20) {
                self.stats.headers += 1;
                return Ok(None);
            }
            return Err(format!(
                "expected a crawl.log line starting with a log time, found {:?}",
                fields[0].chars().take(40).collect::<String>()
            ));
        }
        if fields.len() < 10 {
            return Err(format!(
                "{} columns; a crawl.log line has at least 10 (time status size URI hops via mime \
                 thread fetch-time digest …)",
                fields.len()
            ));
        }
        let absent = |v: &str| v == "-" || v.is_empty();
        let status: i64 = fields[1]
            .parse()
            .map_err(|_| format!("invalid status {:?}", fields[1]))?;
        let length = if absent(fields[2]) {
            None
        } else {
            Some(
                fields[2]
                    .parse::<u64>()
                    .map_err(|_| format!("invalid size {:?}", fields[2]))?,
            )
        };
        let url = fields[3].to_string();
        let hops = fields[4];
        let via = Some(fields[5]).filter(|v| !absent(v));
        let mime = Some(fields[6])
            .filter(|v| !absent(v) && *v != "no-type")
            .map(str::to_string);
        let fetch_time = fields[8].split('+').next().filter(|t| !absent(t));
        let digest = Some(fields[9])
            .filter(|v| !absent(v))
            .and_then(normalize_digest);
        let annotations = fields.get(11).copied().unwrap_or_default();
        let revisit = annotations
            .split(',')
            .any(|a| a.starts_with("duplicate") || a.starts_with("warcRevisit"));
        let redirected_from = match (hops.ends_with('R'), via) {
            (true, Some(via)) => Some(via.to_string()),
            _ => None,
        };
        Ok(Some(Capture {
            url,
            timestamp: fetch_time.map(str::to_string),
            status: u16::try_from(status)
                .ok()
                .filter(|s| (100..=999).contains(s)),
            mime,
            digest,
            length,
            redirect: None,
            redirected_from,
            revisit,
        }))
    }
}

impl Iterator for IndexReader {
    type Item = Result<Capture, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        while let Some(capture) = self.pending.pop_front() {
            if let Some(capture) = self.http_only(capture) {
                return Some(Ok(capture));
            }
        }
        while !self.done {
            self.line_no += 1;
            let line = self.line_no;
            let fail = |problem: String| Some(Err(RecordError::Line { line, problem }));
            match read_line_bounded(&mut self.input, &mut self.buf, MAX_INDEX_LINE_BYTES) {
                Err(e) => {
                    self.done = true;
                    self.stats.malformed += 1;
                    return fail(format!("read error: {e}"));
                }
                Ok(LineStatus::Eof) => {
                    self.done = true;
                    return None;
                }
                Ok(LineStatus::TooLong) => {
                    self.stats.lines += 1;
                    self.stats.malformed += 1;
                    return fail(format!("line longer than {MAX_INDEX_LINE_BYTES} bytes"));
                }
                Ok(LineStatus::Line) => {}
            }
            let text = String::from_utf8_lossy(trim_eol(&self.buf)).into_owned();
            if text.trim().is_empty() {
                continue;
            }
            self.stats.lines += 1;
            match self.parse(&text) {
                Err(problem) => {
                    self.stats.malformed += 1;
                    return fail(problem);
                }
                Ok(None) => {}
                Ok(Some(capture)) => {
                    if let Some(capture) = self.http_only(capture) {
                        return Some(Ok(capture));
                    }
                }
            }
            // Captures of a line that held several, after its first.
            while let Some(capture) = self.pending.pop_front() {
                if let Some(capture) = self.http_only(capture) {
                    return Some(Ok(capture));
                }
            }
        }
        None
    }
}

fn letters(layout: &str) -> Vec<char> {
    layout.split(' ').filter_map(|f| f.chars().next()).collect()
}

/// The CDX letter of a field the Wayback CDX server names in its JSON answer (pywb's names too);
/// `_` for a field not read.
fn field_letter(name: &str) -> char {
    match name {
        "urlkey" => 'N',
        "timestamp" => 'b',
        "original" | "url" => 'a',
        "mimetype" | "mime" => 'm',
        "statuscode" | "status" => 's',
        "digest" => 'k',
        "redirect" => 'r',
        "robotflags" => 'M',
        "length" => 'S',
        "offset" => 'V',
        "filename" => 'g',
        _ => '_',
    }
}

/// A capture from CDX fields (`fields[i]` is the letter of `values[i]`; `-` is absent).
fn capture_from_fields(fields: &[char], values: &[&str]) -> Result<Capture, String> {
    let get = |letter: char| -> Option<&str> {
        fields
            .iter()
            .position(|&f| f == letter)
            .and_then(|i| values.get(i).copied())
            .filter(|v| *v != "-" && !v.is_empty())
    };
    let Some(url) = get('a') else {
        return Err("no original URL (field `a`)".into());
    };
    let mime = get('m').map(str::to_string);
    let revisit = mime.as_deref() == Some("warc/revisit");
    Ok(Capture {
        url: url.to_string(),
        timestamp: get('b').map(str::to_string),
        status: parse_status(get('s'))?,
        mime: mime.filter(|_| !revisit),
        digest: get('k').or_else(|| get('c')).and_then(normalize_digest),
        length: parse_length(get('S').or_else(|| get('n')))?,
        redirect: get('r').map(|r| resolve(url, r)),
        redirected_from: None,
        revisit,
    })
}

/// A JSON value as text: a non-empty string other than `-`, or a number.
fn json_text(value: &serde_json::Value, key: &str) -> Option<String> {
    match value.get(key)? {
        serde_json::Value::String(s) if !s.is_empty() && s != "-" => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A capture from a JSON object with CDXJ's keys.
fn capture_from_object(
    value: &serde_json::Value,
    timestamp: Option<String>,
) -> Result<Capture, String> {
    let text = |key: &str| json_text(value, key);
    let Some(url) = text("url") else {
        return Err("no \"url\" in the JSON".into());
    };
    let mime = text("mime");
    let revisit = mime.as_deref() == Some("warc/revisit");
    let redirect = text("redirect")
        .or_else(|| text("location"))
        .map(|r| resolve(&url, &r));
    Ok(Capture {
        timestamp,
        status: parse_status(text("status").as_deref())?,
        mime: mime.filter(|_| !revisit),
        digest: text("digest").as_deref().and_then(normalize_digest),
        length: parse_length(text("length").as_deref())?,
        redirect,
        redirected_from: None,
        revisit,
        url,
    })
}

/// The rows on one line of the Wayback Machine's JSON answer. The server writes one row a line,
/// the first line opening the outer array (`[[…],`) and the last closing it (`[…]]`); a whole
/// answer on one line is an array of rows.
fn json_rows(line: &str) -> Result<Vec<Vec<serde_json::Value>>, String> {
    use serde_json::Value;
    let line = line.trim().trim_end_matches(',').trim_end();
    if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(line) {
        if !items.is_empty() && items.iter().all(Value::is_array) {
            return Ok(items
                .into_iter()
                .map(|row| match row {
                    Value::Array(values) => values,
                    _ => Vec::new(),
                })
                .collect());
        }
        return Ok(vec![items]);
    }
    let mut row = line;
    if let Some(inner) = row
        .strip_prefix('[')
        .filter(|r| r.trim_start().starts_with('['))
    {
        row = inner;
    }
    if let Some(inner) = row
        .strip_suffix(']')
        .filter(|r| r.trim_end().ends_with(']'))
    {
        row = inner;
    }
    match serde_json::from_str::<Value>(row) {
        Ok(Value::Array(values)) => Ok(vec![values]),
        Ok(other) => Err(format!("expected a JSON array of fields, found {other}")),
        Err(e) => Err(format!("invalid JSON: {e}")),
    }
}

fn parse_status(value: Option<&str>) -> Result<Option<u16>, String> {
    match value {
        None => Ok(None),
        Some(v) => v
            .parse::<u16>()
            .map(Some)
            .map_err(|_| format!("invalid status {v:?}")),
    }
}

fn parse_length(value: Option<&str>) -> Result<Option<u64>, String> {
    match value {
        None => Ok(None),
        Some(v) => v
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("invalid length {v:?}")),
    }
}

/// Resolves a redirect target against the capture's URL (kept as written when either fails).
fn resolve(base: &str, target: &str) -> String {
    url::Url::parse(base)
        .and_then(|b| b.join(target))
        .map_or_else(|_| target.to_string(), String::from)
}

/// One spelling per digest: `sha1:ABC`, `SHA1:abc` and `ABC` are all `ABC` (SHA-1 in base32 is
/// what WARC, CDX and Heritrix write); other algorithms keep their lower-case prefix. `None` for
/// an empty value.
pub fn normalize_digest(digest: &str) -> Option<String> {
    let digest = digest.trim();
    let (algorithm, value) = match digest.split_once(':') {
        Some((a, v)) => (a.to_ascii_lowercase(), v),
        None => ("sha1".to_string(), digest),
    };
    if value.is_empty() {
        return None;
    }
    if algorithm == "sha1" || algorithm == "sha-1" {
        Some(value.to_ascii_uppercase())
    } else {
        Some(format!("{algorithm}:{value}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, format: Option<IndexFormat>) -> Vec<Result<Capture, RecordError>> {
        IndexReader::new(Box::new(io::Cursor::new(text.as_bytes().to_vec())), format)
            .unwrap()
            .collect()
    }

    #[test]
    fn cdx_header_declares_the_layout() {
        let text = " CDX a b s k m\nhttp://a.test/x 20200101000000 200 sha1:abc text/html\n\
                    http://a.test/y 20200101000000 x - -\n";
        let items = read(text, None);
        assert_eq!(items.len(), 2);
        let first = items[0].as_ref().unwrap();
        assert_eq!(first.url, "http://a.test/x");
        assert_eq!(first.status, Some(200));
        assert_eq!(first.digest.as_deref(), Some("ABC"));
        assert_eq!(first.mime.as_deref(), Some("text/html"));
        assert_eq!(items[1].as_ref().unwrap_err().line(), Some(3));
    }

    #[test]
    fn the_wayback_cdx_servers_default_text_answer_has_seven_fields() {
        let text = "org,example)/ 20200101000000 http://example.org/ text/html 200 \
                    sha1:AAAA 1415\n\
                    org,example)/a 20200102000000 http://example.org/a warc/revisit - AAAA 700\n";
        let items = read(text, None);
        let first = items[0].as_ref().unwrap();
        assert_eq!(first.url, "http://example.org/");
        assert_eq!(first.timestamp.as_deref(), Some("20200101000000"));
        assert_eq!(first.status, Some(200));
        assert_eq!(first.digest.as_deref(), Some("AAAA"));
        assert_eq!(first.length, Some(1415));
        let revisit = items[1].as_ref().unwrap();
        assert!(revisit.revisit);
        assert_eq!(revisit.status, None);
        // Eight fields without a header is no layout anyone writes: an error naming the line.
        let items = read("org,a)/ 2020 http://a.test/ text/html 200 AAAA 1 x\n", None);
        assert_eq!(items[0].as_ref().unwrap_err().line(), Some(1));
    }

    #[test]
    fn the_wayback_machines_json_answer_reads_by_its_first_row() {
        // As the server writes it: one row a line, the outer array around them, and after an
        // empty row the resumption key of `showResumeKey=true`.
        let text = "[[\"urlkey\",\"timestamp\",\"original\",\"mimetype\",\"statuscode\",\"digest\",\"length\"],\n\
                    [\"org,example)/\", \"20200101000000\", \"http://example.org:80/\", \"text/html\", \"200\", \"QQQQ\", \"1415\"],\n\
                    [\"org,example)/b\", \"20200101000001\", \"http://example.org/b\", \"text/html\", \"301\", \"-\", \"400\"],\n\
                    [],\n\
                    [\"org%2Cexample%29%2F+20200101000001%21\"]]\n";
        let items = read(text, None);
        assert_eq!(items.len(), 2, "{items:?}");
        let first = items[0].as_ref().unwrap();
        assert_eq!(first.url, "http://example.org:80/");
        assert_eq!(first.digest.as_deref(), Some("QQQQ"));
        assert_eq!(first.length, Some(1415));
        let second = items[1].as_ref().unwrap();
        assert_eq!(second.status, Some(301));
        assert_eq!(second.digest, None);
        // Fields chosen with `fl=`, in another order, and the whole answer on one line.
        let text =
            "[[\"original\",\"digest\",\"statuscode\"],[\"http://a.test/x\",\"D1\",\"200\"],\
                    [\"http://a.test/y\",\"D1\",\"200\"],[\"http://a.test/z\",\"D2\",\"200\"]]";
        let items = read(text, None);
        let urls: Vec<&str> = items
            .iter()
            .map(|c| c.as_ref().unwrap().url.as_str())
            .collect();
        assert_eq!(
            urls,
            ["http://a.test/x", "http://a.test/y", "http://a.test/z"]
        );
        assert_eq!(items[1].as_ref().unwrap().digest.as_deref(), Some("D1"));
        // A first row without the URL field, and a row of the wrong width, are errors naming
        // their lines.
        let items = read("[[\"timestamp\",\"digest\"],\n[\"2020\",\"D\"]]\n", None);
        assert_eq!(items[0].as_ref().unwrap_err().line(), Some(1));
        let text =
            "[[\"original\",\"digest\"],\n[\"http://a.test/\"],\n[\"http://a.test/b\",\"D\"]]\n";
        let items = read(text, None);
        assert_eq!(items[0].as_ref().unwrap_err().line(), Some(2));
        assert_eq!(items[1].as_ref().unwrap().url, "http://a.test/b");
    }

    #[test]
    fn pywb_and_common_crawl_json_lines_read_as_cdxj() {
        let text = "{\"urlkey\": \"org,example)/\", \"timestamp\": \"20240101000000\", \"url\": \"https://example.org/\", \"mime\": \"text/html\", \"mime-detected\": \"text/html\", \"status\": \"200\", \"digest\": \"ZZZZ\", \"length\": \"12345\", \"offset\": \"678\", \"filename\": \"crawl-data/x.warc.gz\", \"languages\": \"eng\"}\n\
                    {\"urlkey\": \"org,example)/old\", \"timestamp\": \"20240101000001\", \"url\": \"https://example.org/old\", \"status\": \"301\", \"redirect\": \"/\", \"digest\": \"YYYY\", \"length\": \"500\"}\n\
                    {\"timestamp\": \"2024\"}\n";
        let items = read(text, None);
        let first = items[0].as_ref().unwrap();
        assert_eq!(first.url, "https://example.org/");
        assert_eq!(first.timestamp.as_deref(), Some("20240101000000"));
        assert_eq!(first.digest.as_deref(), Some("ZZZZ"));
        assert!(first.is_payload_evidence());
        let redirect = items[1].as_ref().unwrap();
        assert_eq!(
            redirect.redirect_pair(),
            Some(("https://example.org/old", "https://example.org/"))
        );
        assert_eq!(items[2].as_ref().unwrap_err().line(), Some(3));
    }

    #[test]
    fn cdxj_and_crawl_log_lines() {
        let cdxj = "!meta x\ncom,a)/ 20200101000000 {\"url\": \"http://a.test/\", \"status\": \"301\", \"redirect\": \"/b\", \"digest\": \"sha1:XYZ\", \"length\": 512}\n";
        let items = read(cdxj, None);
        let c = items[0].as_ref().unwrap();
        assert_eq!(c.redirect.as_deref(), Some("http://a.test/b"));
        assert_eq!(c.status, Some(301));
        assert_eq!(c.length, Some(512));
        let log = "2015-05-22T15:01:09.465Z   200  900 http://a.test/x LR http://a.test/ text/html #002 20150522150108890+70 sha1:QQ - duplicate:digest\n";
        let items = read(log, None);
        let c = items[0].as_ref().unwrap();
        assert_eq!(c.redirected_from.as_deref(), Some("http://a.test/"));
        assert!(c.revisit);
        assert_eq!(c.digest.as_deref(), Some("QQ"));
        assert_eq!(c.length, Some(900));
    }
}
