//! Readers for crawl dumps: JSON lines, WARC and ARC, plain or gzip-compressed, as a stream of
//! pages and of the records that are evidence about URLs without being pages.
//!
//! [`read_pages`] opens a file and picks the format from its name (`.jsonl`, `.json`, `.ndjson`,
//! `.warc`, `.arc`, each optionally followed by `.gz`, any case), or from its first bytes when the
//! name does not say ([`Format::sniff`]; a `.warc` holding ARC records is read as ARC). Compression
//! is detected from the gzip magic bytes, and multi-member gzip (one member per record, as
//! Heritrix, wget and Browsertrix write) is read to the end. The [`PageReader`] yields one `Result`
//! per page: a malformed line or record is an error naming its line number or byte offset, and
//! reading continues with the next one; a file that ends inside a record is an error at that
//! record's offset, and the end of the stream. [`PageReader::stats`] counts every record by type.
//! A WACZ (`.wacz`, or any zip file) is read as the WARCs it packages ([`super::wacz`]).
//!
//! # JSON lines
//!
//! One object per line: `{"url": …, "html": …}` with optional `final_url`, `status`,
//! `canonical`, `content_type` and `server_ip` (`body` is accepted for `html`; unknown fields are
//! ignored).
//! Blank lines are skipped. A file that starts with `[` (a JSON array) is refused up front.
//!
//! # WARC
//!
//! A streaming parser (WARC 1.0/1.1 record framing is simple, and the `warc` crate was not a fit:
//! it buffers whole records without a size bound, reports no byte offsets, stops at the first
//! malformed record and does not parse the stored HTTP response). Every record type is handled
//! deliberately ([`ReaderStats`] counts each):
//!
//! - `response` records carrying HTTP (`application/http` or no Content-Type) are parsed. A 3xx
//!   with `Location` is [`RecordKind::Redirect`] (`final_url` = the location resolved against the
//!   target URI: the body is the server's "moved" notice, not content); any other status is a
//!   [`RecordKind::Page`] (callers decide which statuses they keep). Non-HTTP responses (`dns:`)
//!   are skipped.
//! - `revisit` records are [`RecordKind::Revisit`]: "this URL's payload is the one captured
//!   earlier", in both profiles (identical payload digest, server not modified). The earlier
//!   capture is `WARC-Refers-To-Target-URI`, or the record `WARC-Refers-To` names when that was
//!   read earlier in the same input (wget writes only the record id). The block (the repeated
//!   HTTP headers, if any) gives the status; there is no body.
//! - `request`, `metadata`, `warcinfo`, `resource`, `conversion` and `continuation` records are
//!   skipped and counted: none is a server's answer for a URL.
//!
//! `WARC-IP-Address` becomes `server_ip` and `WARC-Payload-Digest` `payload_digest` (computed, as
//! for ARC, for a file that is digest evidence when the record has none). The stored
//! HTTP response is parsed with `httparse` (HTTP/2 and HTTP/3 status lines, as browser-based
//! crawlers record them, are accepted); `Transfer-Encoding: chunked` and
//! `Content-Encoding: gzip`/`deflate`/`br` are decoded when the stored body is still encoded
//! (writers that decode the body but keep the header are tolerated: a body that is not actually
//! chunked or gzip is used as stored). An HTTP `Link: <…>; rel="canonical"` header fills
//! `rel_canonical`. Byte offsets in errors are offsets into the *uncompressed* stream.
//!
//! # ARC
//!
//! The Internet Archive's format before WARC (still most of many archives): a `filedesc://`
//! version block, then records of one header line (version 1: `URL IP-address Archive-date
//! Content-type Archive-length`; version 2 adds result code, checksum, location, offset and file
//! name before the length) followed by that many bytes: the HTTP response as received for
//! `http(s)` URLs, which is parsed as in WARC. The IP field becomes `server_ip`; `dns:` and other
//! non-HTTP records are skipped and counted. ARC has no revisits and no payload digests: for a
//! file (not HTML) that is digest evidence the reader computes the one a WARC writer records
//! (SHA-1 of the payload, base32).
//!
//! # Bounds
//!
//! [`ReaderLimits`]: body size per page (default 8 MiB, also applied after decompression, so a
//! gzip bomb is an error, not an allocation), JSON line length (default 32 MiB: escaping can
//! double the HTML's size), WARC header block size (default 64 KiB). Oversized items are
//! reported and skipped without being held in memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::bufread::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};
use serde::Deserialize;
use thiserror::Error;

/// One fetched page, or one record that is evidence about a URL without being a page of its own
/// (see [`RecordKind`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageRecord {
    /// The URL that was fetched.
    pub url: String,
    /// Where the fetch ended up (a redirect target), when different from `url`. For a
    /// [`RecordKind::Redirect`] this is the `Location` header, resolved against `url`.
    pub final_url: Option<String>,
    /// HTTP status code, when known.
    pub status: Option<u16>,
    /// The `Content-Type` of the response, when known.
    pub content_type: Option<String>,
    /// The page body (HTML), decoded from any transfer and content encoding. Empty for a revisit.
    pub body: Vec<u8>,
    /// A canonical URL declared by the source (JSON `canonical`, or an HTTP `Link` header).
    pub rel_canonical: Option<String>,
    /// What the record is evidence of.
    pub kind: RecordKind,
    /// The server's IP address (`WARC-IP-Address`, or the ARC header's IP field).
    pub server_ip: Option<String>,
    /// The payload digest the archive recorded (`WARC-Payload-Digest`, e.g. `sha1:BASE32…`).
    pub payload_digest: Option<String>,
}

/// What a record is evidence of.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RecordKind {
    /// A response whose body is the URL's content (any status: callers decide what to keep).
    #[default]
    Page,
    /// A 3xx response with a `Location` header: `final_url` holds the target. The body is the
    /// server's "moved" notice, not the URL's content.
    Redirect,
    /// A WARC `revisit` record: this URL's payload is that of an earlier capture. There is no
    /// body; `payload_digest` is the shared digest.
    Revisit(Revisit),
}

/// The earlier capture a `revisit` record points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revisit {
    /// `WARC-Refers-To-Target-URI`, or, when absent, the target URI of the record named by
    /// `WARC-Refers-To` if that record was read earlier in the same input.
    pub refers_to_uri: Option<String>,
    /// `WARC-Refers-To-Date`, as written.
    pub refers_to_date: Option<String>,
    /// `WARC-Profile`.
    pub profile: RevisitProfile,
}

/// The WARC revisit profiles (WARC 1.0 and 1.1 spell their URIs differently; both are known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevisitProfile {
    /// The payload digest equals the earlier capture's.
    IdenticalPayloadDigest,
    /// The server answered 304 Not Modified to a conditional request.
    ServerNotModified,
    /// Another profile, as written.
    Other(String),
}

impl RevisitProfile {
    fn parse(profile: &str) -> RevisitProfile {
        let lower = profile.to_ascii_lowercase();
        if lower.ends_with("/identical-payload-digest") {
            RevisitProfile::IdenticalPayloadDigest
        } else if lower.ends_with("/server-not-modified") {
            RevisitProfile::ServerNotModified
        } else {
            RevisitProfile::Other(profile.to_string())
        }
    }
}

/// What a record says about URLs apart from its page content: the evidence a redirect, a revisit
/// or an archive's payload digest carries. URLs are as the record gives them until
/// [`UrlEvidence::normalized`] maps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlEvidence {
    /// `from` answered with a redirect to `to`.
    Redirect {
        /// The URL that redirected.
        from: String,
        /// The `Location`, resolved against `from`.
        to: String,
    },
    /// `url`'s payload is the one of an earlier capture of `earlier` (a revisit naming it).
    SamePayload {
        /// The revisited URL.
        url: String,
        /// The earlier capture's URL.
        earlier: String,
    },
    /// The archive recorded `digest` for `url`'s payload: a revisit's, or an HTML 200 page's
    /// (so a revisit in a later file meets the page it repeats).
    PayloadDigest {
        /// The captured URL.
        url: String,
        /// The payload digest as recorded (`sha1:BASE32`).
        digest: String,
    },
}

impl UrlEvidence {
    /// The URL the evidence is about (the source of a redirect): its host owns the evidence.
    pub fn url(&self) -> &str {
        match self {
            UrlEvidence::Redirect { from, .. } => from,
            UrlEvidence::SamePayload { url, .. } | UrlEvidence::PayloadDigest { url, .. } => url,
        }
    }

    /// The same evidence with every URL passed through `normalize` (`None` when one fails).
    pub fn normalized(&self, normalize: impl Fn(&str) -> Option<String>) -> Option<UrlEvidence> {
        Some(match self {
            UrlEvidence::Redirect { from, to } => UrlEvidence::Redirect {
                from: normalize(from)?,
                to: normalize(to)?,
            },
            UrlEvidence::SamePayload { url, earlier } => UrlEvidence::SamePayload {
                url: normalize(url)?,
                earlier: normalize(earlier)?,
            },
            UrlEvidence::PayloadDigest { url, digest } => UrlEvidence::PayloadDigest {
                url: normalize(url)?,
                digest: digest.clone(),
            },
        })
    }
}

/// Smallest page body whose payload digest is kept as evidence (see
/// [`crate::ingest::index::MIN_DIGEST_PAYLOAD_BYTES`]: equal digests of tiny bodies are not DUST).
const MIN_DIGEST_BODY_BYTES: usize = 256;

impl PageRecord {
    /// Whether this record's payload digest is evidence that URLs sharing it are DUST: a page
    /// fetched with status 200, not redirected, not tiny or empty.
    fn payload_is_evidence(&self) -> bool {
        matches!(self.kind, RecordKind::Page)
            && self.status == Some(200)
            && self.body.len() >= MIN_DIGEST_BODY_BYTES
            && self.final_url.is_none()
    }

    /// Gives a record whose archive stored no payload digest (every ARC record, a WARC written
    /// without `WARC-Payload-Digest`) the one WARC writers record ([`payload_sha1`]), where it
    /// is evidence and nothing else stands for it: an HTML page is analysed for content (its
    /// exact hash already joins identical copies), so the SHA-1 is spent on files only.
    fn complete_payload_digest(&mut self) {
        if self.payload_digest.is_none()
            && self.payload_is_evidence()
            && !is_html(self.content_type.as_deref().unwrap_or(""), &self.body)
        {
            self.payload_digest = Some(payload_sha1(&self.body));
        }
    }

    /// The URL evidence of this record besides its content: a redirect record's redirect, a
    /// revisit's earlier capture and digest, a 200 response's payload digest, whatever its type
    /// (not for tiny or empty bodies).
    pub fn url_evidence(&self) -> Vec<UrlEvidence> {
        let mut out = Vec::new();
        match &self.kind {
            RecordKind::Redirect => {
                if let Some(to) = &self.final_url {
                    out.push(UrlEvidence::Redirect {
                        from: self.url.clone(),
                        to: to.clone(),
                    });
                }
            }
            RecordKind::Revisit(revisit) => {
                if let Some(earlier) = &revisit.refers_to_uri {
                    out.push(UrlEvidence::SamePayload {
                        url: self.url.clone(),
                        earlier: earlier.clone(),
                    });
                }
                if let Some(digest) = &self.payload_digest {
                    out.push(UrlEvidence::PayloadDigest {
                        url: self.url.clone(),
                        digest: digest.clone(),
                    });
                }
            }
            RecordKind::Page => {
                // Of any type, as in a crawl index (`Capture::is_payload_evidence`): a file's
                // copies are fetched like a page's, and a rule learned from pages alone would
                // rewrite the files beside them unseen. Only HTML is analysed for content.
                if let (Some(digest), true) = (&self.payload_digest, self.payload_is_evidence()) {
                    out.push(UrlEvidence::PayloadDigest {
                        url: self.url.clone(),
                        digest: digest.clone(),
                    });
                }
            }
        }
        out
    }
}

/// What a reader saw, record type by record type: every record is counted once, whether it was
/// yielded, skipped deliberately or malformed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReaderStats {
    /// Records (WARC/ARC) or non-blank lines (JSON lines) read.
    pub records: u64,
    /// HTTP responses yielded as pages (any status other than a redirect with `Location`).
    pub pages: u64,
    /// 3xx responses with `Location`, yielded as [`RecordKind::Redirect`].
    pub redirects: u64,
    /// `revisit` records, yielded as [`RecordKind::Revisit`].
    pub revisits: u64,
    /// `request` records (skipped: the crawler's side of the exchange).
    pub requests: u64,
    /// `metadata` records (skipped: crawler logs and outlinks).
    pub metadata: u64,
    /// `warcinfo` records (skipped: file descriptions).
    pub warcinfo: u64,
    /// `resource` records (skipped: content without an HTTP exchange, e.g. screenshots).
    pub resources: u64,
    /// `conversion` records (skipped: migrated content, not what the server sent).
    pub conversions: u64,
    /// `continuation` records (skipped: segments of a record split across files).
    pub continuations: u64,
    /// Responses that are not HTTP (`dns:` lookups, `whois:`, FTP listings), skipped.
    pub non_http: u64,
    /// ARC `filedesc://` version blocks (skipped).
    pub arc_file_headers: u64,
    /// WARC records of a type not listed above (skipped).
    pub other: u64,
    /// Records reported as errors.
    pub malformed: u64,
}

/// Size bounds for the readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderLimits {
    /// Largest page body kept (default 8 MiB); larger pages are reported and skipped.
    pub max_body_bytes: usize,
    /// Longest JSON line (default 32 MiB).
    pub max_line_bytes: usize,
    /// Largest WARC header block, and largest stored HTTP header block (default 64 KiB).
    pub max_header_bytes: usize,
}

/// Default body bound (8 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 << 20;

impl Default for ReaderLimits {
    fn default() -> Self {
        ReaderLimits {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_line_bytes: 32 << 20,
            max_header_bytes: 64 << 10,
        }
    }
}

/// The input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    JsonLines,
    /// WARC records.
    Warc,
    /// Internet Archive ARC records (version 1 or 2 header lines).
    Arc,
}

impl Format {
    /// The format named by a file's extension (`.gz` looked through), if any.
    pub fn from_path(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        let ext = name.rsplit_once('.')?.1;
        match ext {
            "jsonl" | "json" | "ndjson" => Some(Format::JsonLines),
            "warc" => Some(Format::Warc),
            "arc" => Some(Format::Arc),
            _ => None,
        }
    }

    /// The format the first bytes of an (uncompressed) stream show, if they are conclusive:
    /// `WARC/` starts a WARC file, `filedesc://` an ARC file, `{` a JSON line.
    pub fn sniff(start: &[u8]) -> Option<Format> {
        let start = &start[start
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .unwrap_or(start.len())..];
        if start.starts_with(b"WARC/") {
            Some(Format::Warc)
        } else if start.starts_with(b"filedesc://") {
            Some(Format::Arc)
        } else if start.starts_with(b"{") {
            Some(Format::JsonLines)
        } else {
            None
        }
    }
}

/// Errors opening an input.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The file could not be opened or its start could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Neither the file name nor the first bytes say which format it is.
    #[error(
        "{path}: unknown format (expected .jsonl, .json, .ndjson, .warc or .arc, optionally .gz, \
         or content starting with WARC/, filedesc:// or {{)"
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// A `.json` file holding a JSON array rather than one object per line.
    #[error("{path}: a JSON array; expected JSON lines (one object per line)")]
    JsonArray {
        /// The file.
        path: PathBuf,
    },
}

/// A malformed or unusable page in the input; reading continues after it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// A JSON line (1-based line number in the uncompressed stream).
    #[error("line {line}: {problem}")]
    Line {
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        problem: String,
    },
    /// A WARC or ARC record (offset of its first byte in the uncompressed stream).
    #[error("record at byte offset {offset}: {problem}")]
    Record {
        /// Byte offset of the record.
        offset: u64,
        /// What is wrong.
        problem: String,
    },
}

impl RecordError {
    /// The line number, for JSON lines errors.
    pub fn line(&self) -> Option<u64> {
        match self {
            RecordError::Line { line, .. } => Some(*line),
            RecordError::Record { .. } => None,
        }
    }

    /// The byte offset, for WARC and ARC errors.
    pub fn offset(&self) -> Option<u64> {
        match self {
            RecordError::Record { offset, .. } => Some(*offset),
            RecordError::Line { .. } => None,
        }
    }
}

/// Opens `path` with the default [`ReaderLimits`].
pub fn read_pages(path: &Path) -> Result<PageReader, ReadError> {
    read_pages_with(path, ReaderLimits::default())
}

/// Opens `path` with the given limits. The format comes from the file name; a name that does not
/// say is decided by the first bytes ([`Format::sniff`]), and a `.warc` that holds ARC records (or
/// the reverse) is read as what it holds. A WACZ is read as its WARCs one after the other
/// ([`super::wacz`]); a record's offset is then counted from the start of the first.
pub fn read_pages_with(path: &Path, limits: ReaderLimits) -> Result<PageReader, ReadError> {
    let wacz = super::wacz::is_wacz(path);
    let named = if wacz { None } else { Format::from_path(path) };
    let io_err = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let source: Box<dyn Read + Send> = if wacz {
        super::wacz::archives(path).map_err(io_err)?
    } else {
        Box::new(File::open(path).map_err(io_err)?)
    };
    let mut reader =
        PageReader::new(source, named.unwrap_or(Format::Warc), limits).map_err(io_err)?;
    if named.is_none() {
        match reader.input.fill_buf().ok().and_then(Format::sniff) {
            Some(format) => reader.format = format,
            None => {
                return Err(ReadError::UnknownFormat {
                    path: path.to_path_buf(),
                })
            }
        }
    }
    if reader.starts_with_json_array() {
        return Err(ReadError::JsonArray {
            path: path.to_path_buf(),
        });
    }
    Ok(reader)
}

/// Most WARC record ids remembered to resolve a revisit's `WARC-Refers-To` (about 100 bytes each):
/// beyond it, revisits without `WARC-Refers-To-Target-URI` keep only their payload digest.
const MAX_REMEMBERED_RECORD_IDS: usize = 1 << 20;

/// A stream of pages from one input; see the module docs.
pub struct PageReader {
    input: Counting<Box<dyn BufRead + Send>>,
    format: Format,
    limits: ReaderLimits,
    /// Lines read so far (JSON lines).
    line_no: u64,
    /// A line read ahead while resynchronising a WARC stream: (offset, bytes).
    pending: Option<(u64, Vec<u8>)>,
    buf: Vec<u8>,
    done: bool,
    stats: ReaderStats,
    /// `WARC-Record-ID` → target URI of the response records read so far (bounded).
    record_ids: std::collections::HashMap<String, String>,
}

impl std::fmt::Debug for PageReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageReader")
            .field("format", &self.format)
            .field("position", &self.input.pos)
            .field("done", &self.done)
            .finish()
    }
}

/// What to do with one WARC record, from its header.
enum WarcAction {
    /// An HTTP response: parse it.
    Response,
    /// A revisit: parse its (optional) HTTP headers.
    Revisit,
    /// Skip the block (already counted).
    Skip,
}

impl PageReader {
    /// Reads pages of `format` from any byte source; gzip (including multi-member, one member
    /// per record) is detected from the magic bytes. A WARC/ARC format is corrected from the
    /// first bytes when they show the other one.
    pub fn new(
        source: Box<dyn Read + Send>,
        format: Format,
        limits: ReaderLimits,
    ) -> io::Result<PageReader> {
        let mut raw = BufReader::with_capacity(64 << 10, source);
        let gzip = raw.fill_buf()?.starts_with(&[0x1f, 0x8b]);
        let input: Box<dyn BufRead + Send> = if gzip {
            Box::new(BufReader::with_capacity(64 << 10, MultiGzDecoder::new(raw)))
        } else {
            Box::new(raw)
        };
        let mut reader = PageReader {
            input: Counting {
                inner: input,
                pos: 0,
            },
            format,
            limits,
            line_no: 0,
            pending: None,
            buf: Vec::new(),
            done: false,
            stats: ReaderStats::default(),
            record_ids: std::collections::HashMap::new(),
        };
        if matches!(format, Format::Warc | Format::Arc) {
            // A broken gzip stream is reported by the first read, with its offset.
            if let Some(sniffed @ (Format::Warc | Format::Arc)) =
                reader.input.fill_buf().ok().and_then(Format::sniff)
            {
                reader.format = sniffed;
            }
        }
        Ok(reader)
    }

    /// The input's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// What was read so far, by record type.
    pub fn stats(&self) -> &ReaderStats {
        &self.stats
    }

    fn starts_with_json_array(&mut self) -> bool {
        self.format == Format::JsonLines
            && self.input.fill_buf().is_ok_and(|b| {
                b.iter()
                    .find(|c| !c.is_ascii_whitespace())
                    .is_some_and(|&c| c == b'[')
            })
    }

    fn next_json(&mut self) -> Option<Result<PageRecord, RecordError>> {
        let record = match self.next_json_line()? {
            Ok(record) => record,
            Err(err) => return Some(Err(err)),
        };
        Some(match record.0 {
            Undecoded::JsonLine {
                line,
                bytes,
                max_body_bytes,
            } => {
                let page = parse_json_page(&bytes, max_body_bytes)
                    .map_err(|problem| RecordError::Line { line, problem });
                // The line buffer is reused for the next line.
                self.buf = bytes;
                page
            }
            Undecoded::Decoded(page) => Ok(*page),
        })
    }

    /// The next record, with a JSON line's decoding left to [`UndecodedRecord::decode`] (WARC and
    /// ARC records are decoded here: their framing is sequential anyway). Callers that decode on
    /// other threads use this instead of [`Iterator::next`]: decoding a JSON line (unescaping the
    /// HTML) costs about as much as reading it, and it needs nothing of the records before it.
    pub fn next_undecoded(&mut self) -> Option<Result<UndecodedRecord, RecordError>> {
        if self.done {
            return None;
        }
        match self.format {
            Format::JsonLines => self.next_json_line(),
            Format::Warc | Format::Arc => self.next().map(|record| {
                record.map(|page| UndecodedRecord(Undecoded::Decoded(Box::new(page))))
            }),
        }
    }

    /// An iterator of [`PageReader::next_undecoded`].
    pub fn undecoded(self) -> impl Iterator<Item = Result<UndecodedRecord, RecordError>> + Send {
        let mut reader = self;
        std::iter::from_fn(move || reader.next_undecoded())
    }

    fn next_json_line(&mut self) -> Option<Result<UndecodedRecord, RecordError>> {
        loop {
            self.line_no += 1;
            let line = self.line_no;
            let status =
                read_line_bounded(&mut self.input, &mut self.buf, self.limits.max_line_bytes);
            let fail = |problem: String| Some(Err(RecordError::Line { line, problem }));
            match status {
                Err(e) => {
                    self.done = true;
                    return fail(format!("read error: {e}"));
                }
                Ok(LineStatus::Eof) => {
                    self.done = true;
                    return None;
                }
                Ok(LineStatus::TooLong) => {
                    self.stats.records += 1;
                    return fail(format!(
                        "line longer than {} bytes, skipped",
                        self.limits.max_line_bytes
                    ));
                }
                Ok(LineStatus::Line) => {}
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            self.stats.records += 1;
            return Some(Ok(UndecodedRecord(Undecoded::JsonLine {
                line,
                bytes: std::mem::take(&mut self.buf),
                max_body_bytes: self.limits.max_body_bytes,
            })));
        }
    }

    /// Reads the next line, or the line held back by a resynchronisation.
    fn next_line(&mut self) -> io::Result<(u64, LineStatus)> {
        if let Some((offset, line)) = self.pending.take() {
            self.buf = line;
            return Ok((offset, LineStatus::Line));
        }
        let offset = self.input.pos;
        let status =
            read_line_bounded(&mut self.input, &mut self.buf, self.limits.max_header_bytes)?;
        Ok((offset, status))
    }

    /// After a record whose length is unknown: skips to the next line that can start a record.
    fn resync(&mut self) {
        loop {
            let offset = self.input.pos;
            match read_line_bounded(&mut self.input, &mut self.buf, self.limits.max_header_bytes) {
                Ok(LineStatus::Line) if self.starts_record() => {
                    self.pending = Some((offset, std::mem::take(&mut self.buf)));
                    return;
                }
                Ok(LineStatus::Line | LineStatus::TooLong) => {}
                Ok(LineStatus::Eof) | Err(_) => {
                    self.done = true;
                    return;
                }
            }
        }
    }

    /// True when the line in the buffer can start a record of the input's format.
    fn starts_record(&self) -> bool {
        match self.format {
            Format::Arc => parse_arc_header(trim_eol(&self.buf)).is_ok(),
            _ => self.buf.starts_with(b"WARC/1."),
        }
    }

    /// Reads the next record's first line (skipping the blank lines that end the previous one).
    /// `Err` is what to return: an error, or `None` at the end.
    fn first_line(&mut self) -> Result<u64, Option<RecordError>> {
        loop {
            let (offset, status) = match self.next_line() {
                Ok(x) => x,
                Err(e) => {
                    self.done = true;
                    self.stats.malformed += 1;
                    return Err(Some(RecordError::Record {
                        offset: self.input.pos,
                        problem: format!("read error: {e}"),
                    }));
                }
            };
            match status {
                LineStatus::Eof => {
                    self.done = true;
                    return Err(None);
                }
                LineStatus::TooLong => {
                    self.resync();
                    self.stats.records += 1;
                    self.stats.malformed += 1;
                    return Err(Some(RecordError::Record {
                        offset,
                        problem: "expected a record header line, found a very long line".into(),
                    }));
                }
                LineStatus::Line => {}
            }
            if !self.buf.iter().all(u8::is_ascii_whitespace) {
                return Ok(offset);
            }
        }
    }

    /// Reads exactly `length` bytes of a record block (`keep`: into a buffer, else discarded).
    /// A short read is a truncated file: an error, and the end of the stream.
    fn block(&mut self, length: u64, keep: bool) -> Result<Vec<u8>, String> {
        let mut block = Vec::new();
        let read = if keep {
            block.reserve(length as usize);
            (&mut self.input)
                .take(length)
                .read_to_end(&mut block)
                .map(|n| n as u64)
        } else {
            io::copy(&mut (&mut self.input).take(length), &mut io::sink())
        };
        match read {
            Ok(n) if n == length => Ok(block),
            Ok(n) => {
                self.done = true;
                Err(format!(
                    "truncated record block: {n} of {length} bytes before the end of the file"
                ))
            }
            Err(e) => {
                self.done = true;
                Err(format!("read error: {e}"))
            }
        }
    }

    fn next_warc(&mut self) -> Option<Result<PageRecord, RecordError>> {
        loop {
            let offset = match self.first_line() {
                Ok(offset) => offset,
                Err(end) => return end.map(Err),
            };
            self.stats.records += 1;
            let item = self.warc_record(offset);
            if let Some(Err(_)) = item {
                self.stats.malformed += 1;
            }
            if item.is_some() || self.done {
                return item;
            }
        }
    }

    /// One WARC record whose version line is in the buffer; `None`: skipped deliberately.
    fn warc_record(&mut self, offset: u64) -> Option<Result<PageRecord, RecordError>> {
        let fail = |problem: String| Some(Err(RecordError::Record { offset, problem }));
        if !self.buf.starts_with(b"WARC/") {
            self.resync();
            return fail("expected a WARC/1.x version line".into());
        }
        // Header block.
        let mut header = WarcHeader::default();
        let mut header_bytes = 0usize;
        let mut problem = None;
        loop {
            match read_line_bounded(&mut self.input, &mut self.buf, self.limits.max_header_bytes) {
                Ok(LineStatus::Line) => {}
                Ok(LineStatus::TooLong) => {
                    problem = Some("WARC header line too long".to_string());
                    break;
                }
                Ok(LineStatus::Eof) => {
                    self.done = true;
                    return fail("truncated WARC header: the file ends inside it".into());
                }
                Err(e) => {
                    self.done = true;
                    return fail(format!("read error: {e}"));
                }
            }
            header_bytes += self.buf.len();
            if header_bytes > self.limits.max_header_bytes {
                problem = Some(format!(
                    "WARC header block over {} bytes",
                    self.limits.max_header_bytes
                ));
                break;
            }
            let line = trim_eol(&self.buf);
            if line.is_empty() {
                break;
            }
            header.field(line);
        }
        let Some(length) = header.content_length else {
            self.resync();
            return fail(
                problem.unwrap_or_else(|| "missing or invalid Content-Length".to_string()),
            );
        };
        if let Some(problem) = problem {
            self.resync();
            return fail(problem);
        }
        let is_http = header
            .content_type
            .as_deref()
            .is_none_or(|t| t.to_ascii_lowercase().starts_with("application/http"));
        let action = match header.warc_type.as_deref().unwrap_or_default() {
            "response" if is_http => WarcAction::Response,
            "response" => {
                self.stats.non_http += 1;
                WarcAction::Skip
            }
            "revisit" => WarcAction::Revisit,
            "request" => {
                self.stats.requests += 1;
                WarcAction::Skip
            }
            "metadata" => {
                self.stats.metadata += 1;
                WarcAction::Skip
            }
            "warcinfo" => {
                self.stats.warcinfo += 1;
                WarcAction::Skip
            }
            "resource" => {
                self.stats.resources += 1;
                WarcAction::Skip
            }
            "conversion" => {
                self.stats.conversions += 1;
                WarcAction::Skip
            }
            "continuation" => {
                self.stats.continuations += 1;
                WarcAction::Skip
            }
            _ => {
                self.stats.other += 1;
                WarcAction::Skip
            }
        };
        let max_block = (self.limits.max_body_bytes + self.limits.max_header_bytes) as u64;
        let oversized = length > max_block;
        let keep = !matches!(action, WarcAction::Skip) && !oversized;
        let block = match self.block(length, keep) {
            Ok(block) => block,
            Err(problem) => return fail(problem),
        };
        if matches!(action, WarcAction::Skip) {
            return None;
        }
        if oversized {
            return fail(format!(
                "record block of {length} bytes exceeds the {max_block}-byte limit, skipped"
            ));
        }
        let Some(uri) = header.target_uri.take() else {
            return fail("response or revisit record without WARC-Target-URI".into());
        };
        let parsed = match action {
            WarcAction::Revisit => {
                let refers_to_uri = header.refers_to_target_uri.take().or_else(|| {
                    header
                        .refers_to
                        .as_ref()
                        .and_then(|id| self.record_ids.get(id).cloned())
                });
                let revisit = Revisit {
                    refers_to_uri,
                    refers_to_date: header.refers_to_date.take(),
                    profile: RevisitProfile::parse(header.profile.as_deref().unwrap_or_default()),
                };
                self.stats.revisits += 1;
                parse_revisit(uri, &block, revisit, &self.limits)
            }
            _ => {
                if let Some(id) = header.record_id.take() {
                    if self.record_ids.len() < MAX_REMEMBERED_RECORD_IDS {
                        self.record_ids.insert(id, uri.clone());
                    }
                }
                let page = parse_http_response(uri, &block, &self.limits);
                if let Ok(page) = &page {
                    self.count_response(page);
                }
                page
            }
        };
        Some(
            parsed
                .map(|mut page| {
                    page.server_ip = header.ip_address.take();
                    page.payload_digest = header.payload_digest.take();
                    page.complete_payload_digest();
                    page
                })
                .map_err(|problem| RecordError::Record { offset, problem }),
        )
    }

    fn count_response(&mut self, page: &PageRecord) {
        if page.kind == RecordKind::Redirect {
            self.stats.redirects += 1;
        } else {
            self.stats.pages += 1;
        }
    }

    fn next_arc(&mut self) -> Option<Result<PageRecord, RecordError>> {
        loop {
            let offset = match self.first_line() {
                Ok(offset) => offset,
                Err(end) => return end.map(Err),
            };
            self.stats.records += 1;
            let item = self.arc_record(offset);
            if let Some(Err(_)) = item {
                self.stats.malformed += 1;
            }
            if item.is_some() || self.done {
                return item;
            }
        }
    }

    /// One ARC record whose header line is in the buffer; `None`: skipped deliberately.
    fn arc_record(&mut self, offset: u64) -> Option<Result<PageRecord, RecordError>> {
        let fail = |problem: String| Some(Err(RecordError::Record { offset, problem }));
        let header = match parse_arc_header(trim_eol(&self.buf)) {
            Ok(header) => header,
            Err(problem) => {
                self.resync();
                return fail(problem);
            }
        };
        let lower = header.url.to_ascii_lowercase();
        let is_http = lower.starts_with("http://") || lower.starts_with("https://");
        let max_block = (self.limits.max_body_bytes + self.limits.max_header_bytes) as u64;
        let oversized = header.length > max_block;
        let block = match self.block(header.length, is_http && !oversized) {
            Ok(block) => block,
            Err(problem) => return fail(problem),
        };
        if lower.starts_with("filedesc://") {
            self.stats.arc_file_headers += 1;
            return None;
        }
        if !is_http {
            self.stats.non_http += 1;
            return None;
        }
        if oversized {
            return fail(format!(
                "record block of {} bytes exceeds the {max_block}-byte limit, skipped",
                header.length
            ));
        }
        let page = parse_http_response(header.url, &block, &self.limits);
        if let Ok(page) = &page {
            self.count_response(page);
        }
        Some(
            page.map(|mut page| {
                page.server_ip = header.ip;
                page.complete_payload_digest();
                page
            })
            .map_err(|problem| RecordError::Record { offset, problem }),
        )
    }
}

impl Iterator for PageReader {
    type Item = Result<PageRecord, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.format {
            Format::JsonLines => self.next_json(),
            Format::Warc => self.next_warc(),
            Format::Arc => self.next_arc(),
        }
    }
}

/// The payload digest WARC writers and Heritrix record, `sha1:` and the SHA-1 of the payload in
/// base32: copies of one file share it within an archive and with the same payload in a WARC
/// or a crawl.log (the body as decoded, which is the payload as sent unless the server
/// compressed it).
fn payload_sha1(body: &[u8]) -> String {
    let digest = sha1_smol::Sha1::from(body).digest().bytes();
    format!("sha1:{}", data_encoding::BASE32.encode(&digest))
}

/// Whether a page is HTML by its Content-Type, or, when there is none, by the look of its body.
pub fn is_html(content_type: &str, body: &[u8]) -> bool {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media.as_str() {
        "text/html" | "application/xhtml+xml" => true,
        "" => {
            let start = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
            start.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'<')
        }
        _ => false,
    }
}

/// A record read but, for a JSON line, not decoded yet ([`PageReader::next_undecoded`]).
#[derive(Debug)]
pub struct UndecodedRecord(Undecoded);

#[derive(Debug)]
enum Undecoded {
    /// A JSON line with its 1-based number and the body limit it is decoded under.
    JsonLine {
        line: u64,
        bytes: Vec<u8>,
        max_body_bytes: usize,
    },
    /// A WARC or ARC record, decoded while it was framed.
    Decoded(Box<PageRecord>),
}

impl UndecodedRecord {
    /// Bytes the record holds (the JSON line, or the decoded body).
    pub fn weight(&self) -> usize {
        match &self.0 {
            Undecoded::JsonLine { bytes, .. } => bytes.len(),
            Undecoded::Decoded(page) => page.body.len(),
        }
    }

    /// The record, decoded exactly as [`PageReader`]'s iterator decodes it.
    pub fn decode(self) -> Result<PageRecord, RecordError> {
        match self.0 {
            Undecoded::JsonLine {
                line,
                bytes,
                max_body_bytes,
            } => parse_json_page(&bytes, max_body_bytes)
                .map_err(|problem| RecordError::Line { line, problem }),
            Undecoded::Decoded(page) => Ok(*page),
        }
    }
}

/// The fields of an ARC record's header line that the reader uses.
struct ArcHeader {
    url: String,
    ip: Option<String>,
    length: u64,
}

/// Parses an ARC header line: version 1 `URL IP-address Archive-date Content-type
/// Archive-length` (5 fields) or version 2 `URL IP-address Archive-date Content-type Result-code
/// Checksum Location Offset Filename Archive-length` (10 fields). The date must be 12–14 digits
/// and the length a number, so a stray line is not taken for a header.
fn parse_arc_header(line: &[u8]) -> Result<ArcHeader, String> {
    let text = std::str::from_utf8(line).map_err(|_| "ARC header line is not UTF-8".to_string())?;
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    if fields.len() != 5 && fields.len() != 10 {
        return Err(format!(
            "expected an ARC header line (5 or 10 fields), found {} fields",
            fields.len()
        ));
    }
    let date = fields[2];
    if !(12..=14).contains(&date.len()) || !date.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("ARC header line with an invalid date {date:?}"));
    }
    let last = fields[fields.len() - 1];
    let length: u64 = last
        .parse()
        .map_err(|_| format!("ARC header line with an invalid length {last:?}"))?;
    let ip = Some(fields[1])
        .filter(|ip| *ip != "-" && *ip != "0.0.0.0")
        .map(str::to_string);
    Ok(ArcHeader {
        url: fields[0].to_string(),
        ip,
        length,
    })
}

/// A `BufRead` that counts consumed bytes (for record offsets).
struct Counting<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.pos += amt as u64;
        self.inner.consume(amt);
    }
}

pub(crate) enum LineStatus {
    /// A line (with its terminator, if any) is in the buffer.
    Line,
    /// The line exceeded the bound; it was consumed and discarded.
    TooLong,
    /// Nothing left.
    Eof,
}

/// Reads one `\n`-terminated line into `buf` (cleared first), holding at most `max` bytes.
pub(crate) fn read_line_bounded(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<LineStatus> {
    buf.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (take, end) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(take);
        if end {
            break;
        }
    }
    Ok(match (any, too_long) {
        (false, _) => LineStatus::Eof,
        (true, true) => LineStatus::TooLong,
        (true, false) => LineStatus::Line,
    })
}

pub(crate) fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[derive(Deserialize)]
struct JsonPage {
    url: String,
    #[serde(alias = "body")]
    html: Option<String>,
    final_url: Option<String>,
    status: Option<u16>,
    canonical: Option<String>,
    content_type: Option<String>,
    /// The server address the fetch connected to (mirror detection's IP evidence).
    server_ip: Option<String>,
}

fn parse_json_page(line: &[u8], max_body_bytes: usize) -> Result<PageRecord, String> {
    let page: JsonPage = serde_json::from_slice(line).map_err(|e| format!("invalid JSON: {e}"))?;
    if page.url.trim().is_empty() {
        return Err("empty \"url\"".into());
    }
    let body = page.html.unwrap_or_default().into_bytes();
    if body.len() > max_body_bytes {
        return Err(format!(
            "html of {} bytes exceeds the {}-byte limit",
            body.len(),
            max_body_bytes
        ));
    }
    let non_empty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
    Ok(PageRecord {
        url: page.url,
        final_url: non_empty(page.final_url),
        status: page.status,
        content_type: non_empty(page.content_type),
        body,
        rel_canonical: non_empty(page.canonical),
        server_ip: non_empty(page.server_ip),
        ..PageRecord::default()
    })
}

/// The WARC header fields the reader needs.
#[derive(Default)]
struct WarcHeader {
    warc_type: Option<String>,
    target_uri: Option<String>,
    content_type: Option<String>,
    content_length: Option<u64>,
    record_id: Option<String>,
    ip_address: Option<String>,
    payload_digest: Option<String>,
    refers_to: Option<String>,
    refers_to_target_uri: Option<String>,
    refers_to_date: Option<String>,
    profile: Option<String>,
}

impl WarcHeader {
    fn field(&mut self, line: &[u8]) {
        let Some(colon) = memchr::memchr(b':', line) else {
            return;
        };
        let name = String::from_utf8_lossy(&line[..colon])
            .trim()
            .to_ascii_lowercase();
        let value = String::from_utf8_lossy(&line[colon + 1..])
            .trim()
            .to_string();
        // WARC 1.0's example wrapped URIs in angle brackets; some writers copied that.
        let unbracket = |v: &str| {
            v.trim_start_matches('<')
                .trim_end_matches('>')
                .trim()
                .to_string()
        };
        let non_empty = |v: String| Some(v).filter(|v| !v.is_empty());
        match name.as_str() {
            "warc-type" => self.warc_type = Some(value.to_ascii_lowercase()),
            "warc-target-uri" => self.target_uri = Some(unbracket(&value)),
            "content-type" => self.content_type = Some(value),
            "content-length" => self.content_length = value.parse().ok(),
            "warc-record-id" => self.record_id = non_empty(unbracket(&value)),
            "warc-ip-address" => self.ip_address = non_empty(value),
            "warc-payload-digest" => self.payload_digest = non_empty(value),
            "warc-refers-to" => self.refers_to = non_empty(unbracket(&value)),
            "warc-refers-to-target-uri" => self.refers_to_target_uri = non_empty(unbracket(&value)),
            "warc-refers-to-date" => self.refers_to_date = non_empty(value),
            "warc-profile" => self.profile = non_empty(value),
            _ => {}
        }
    }
}

/// A revisit record's block: the HTTP status line and headers of the repeated capture (the
/// payload is left out), or nothing. Headers that do not parse are not an error: the record's
/// evidence is in its WARC header.
fn parse_revisit(
    uri: String,
    block: &[u8],
    revisit: Revisit,
    limits: &ReaderLimits,
) -> Result<PageRecord, String> {
    let mut page = if block.starts_with(b"HTTP/") {
        let mut head = block.to_vec();
        if memchr::memmem::find(&head, b"\r\n\r\n").is_none()
            && memchr::memmem::find(&head, b"\n\n").is_none()
        {
            head.extend_from_slice(b"\r\n");
        }
        parse_http_response(uri.clone(), &head, limits).unwrap_or_default()
    } else {
        PageRecord::default()
    };
    page.url = uri;
    page.body = Vec::new();
    page.final_url = None;
    page.kind = RecordKind::Revisit(revisit);
    Ok(page)
}

fn parse_http_response(
    uri: String,
    block: &[u8],
    limits: &ReaderLimits,
) -> Result<PageRecord, String> {
    // httparse speaks HTTP/1.x; browser-based crawlers record HTTP/2 and /3 responses with their
    // own version in the status line, which is rewritten (same framing otherwise).
    let rewritten;
    let block = match [&b"HTTP/2.0 "[..], b"HTTP/2 ", b"HTTP/3.0 ", b"HTTP/3 "]
        .iter()
        .find(|p| block.starts_with(p))
    {
        Some(prefix) => {
            let mut v = b"HTTP/1.1 ".to_vec();
            v.extend_from_slice(&block[prefix.len()..]);
            rewritten = v;
            &rewritten[..]
        }
        None => block,
    };
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut response = httparse::Response::new(&mut headers);
    let mut config = httparse::ParserConfig::default();
    config
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_spaces_after_header_name_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true);
    let head_len = match config.parse_response(&mut response, block) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err("incomplete HTTP response headers".into()),
        Err(e) => return Err(format!("invalid HTTP response: {e}")),
    };
    if head_len > limits.max_header_bytes {
        return Err(format!(
            "HTTP headers over {} bytes",
            limits.max_header_bytes
        ));
    }
    let status = response.code;
    let header = |name: &str| -> Option<String> {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
    };
    let content_type = header("content-type").filter(|s| !s.is_empty());
    let transfer = header("transfer-encoding")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let encoding = header("content-encoding")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let location = header("location");
    let links: Vec<String> = response
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("link"))
        .map(|h| String::from_utf8_lossy(h.value).into_owned())
        .collect();

    let mut body = block[head_len..].to_vec();
    if transfer.contains("chunked") {
        // A writer may have de-chunked the body but kept the header: use it as stored then.
        if let Some(decoded) = dechunk(&body, limits.max_body_bytes)? {
            body = decoded;
        }
    }
    body = decode_content(body, &encoding, limits.max_body_bytes)?;
    if body.len() > limits.max_body_bytes {
        return Err(format!(
            "body of {} bytes exceeds the {}-byte limit",
            body.len(),
            limits.max_body_bytes
        ));
    }

    let base = url::Url::parse(&uri).ok();
    let resolve = |target: &str| -> String {
        base.as_ref()
            .and_then(|b| b.join(target).ok())
            .map_or_else(|| target.to_string(), String::from)
    };
    let final_url = match (status, location) {
        (Some(300..=399), Some(loc)) if !loc.is_empty() => Some(resolve(&loc)),
        _ => None,
    };
    let kind = if final_url.is_some() {
        RecordKind::Redirect
    } else {
        RecordKind::Page
    };
    let rel_canonical = links
        .iter()
        .find_map(|l| canonical_from_link(l))
        .map(|c| resolve(&c));
    Ok(PageRecord {
        url: uri,
        final_url,
        status,
        content_type,
        body,
        rel_canonical,
        kind,
        ..PageRecord::default()
    })
}

/// Decodes a chunked body: `Ok(None)` when the stored body is not chunked after all (servers and
/// archivers disagree on whether the stored body keeps its transfer coding), `Err` when the decoded
/// body is over `max`.
fn dechunk(body: &[u8], max: usize) -> Result<Option<Vec<u8>>, String> {
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let Some(eol) = memchr::memchr(b'\n', rest) else {
            // A stream cut off after complete chunks still yields what arrived.
            return Ok((!out.is_empty()).then_some(out));
        };
        let line = trim_eol(&rest[..=eol]);
        let size_text = line.split(|&c| c == b';').next().unwrap_or_default();
        let size = std::str::from_utf8(size_text)
            .ok()
            .and_then(|text| usize::from_str_radix(text.trim(), 16).ok());
        let Some(size) = size else {
            return Ok(None);
        };
        rest = &rest[eol + 1..];
        if size == 0 {
            return Ok(Some(out));
        }
        if size > rest.len() {
            // Chunk sizes that overrun the stored body: not chunked after all.
            return Ok(None);
        }
        if out.len().saturating_add(size) > max {
            return Err(format!("chunked body exceeds the {max}-byte limit"));
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size..];
        rest = rest
            .strip_prefix(b"\r\n")
            .or_else(|| rest.strip_prefix(b"\n"))
            .unwrap_or(rest);
    }
}

/// Undoes `Content-Encoding` when the stored body is still encoded, bounded by `max` bytes.
fn decode_content(body: Vec<u8>, encoding: &str, max: usize) -> Result<Vec<u8>, String> {
    let last = encoding.rsplit(',').next().unwrap_or_default().trim();
    let read_bounded = |mut r: Box<dyn Read + '_>| -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        r.by_ref()
            .take(max as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("{last} body does not decode: {e}"))?;
        if out.len() > max {
            return Err(format!("decoded body exceeds the {max}-byte limit"));
        }
        Ok(out)
    };
    match last {
        "" | "identity" | "none" => Ok(body),
        "gzip" | "x-gzip" => {
            if body.starts_with(&[0x1f, 0x8b]) {
                read_bounded(Box::new(MultiGzDecoder::new(&body[..])))
            } else {
                Ok(body)
            }
        }
        "deflate" => {
            // "deflate" is zlib-wrapped per the RFC, raw deflate in practice as often.
            if body.first().is_some_and(|&b| b & 0x0f == 8) {
                if let Ok(out) = read_bounded(Box::new(ZlibDecoder::new(&body[..]))) {
                    return Ok(out);
                }
            }
            match read_bounded(Box::new(DeflateDecoder::new(&body[..]))) {
                Ok(out) => Ok(out),
                // Stored already decoded despite the header.
                Err(_) if looks_like_text(&body) => Ok(body),
                Err(e) => Err(e),
            }
        }
        "br" => match read_bounded(Box::new(brotli_decompressor::Decompressor::new(
            &body[..],
            16 << 10,
        ))) {
            Ok(out) => Ok(out),
            // Stored already decoded despite the header.
            Err(_) if looks_like_text(&body) => Ok(body),
            Err(e) => Err(e),
        },
        other => {
            if looks_like_text(&body) {
                // Recorded decoded, header kept.
                Ok(body)
            } else {
                Err(format!("unsupported content-encoding {other:?}"))
            }
        }
    }
}

/// True when the start of `body` is plausibly text (HTML), i.e. not compressed bytes.
fn looks_like_text(body: &[u8]) -> bool {
    let head = &body[..body.len().min(512)];
    head.is_empty()
        || std::str::from_utf8(head).is_ok_and(|s| !s.contains('\0'))
        || head.iter().all(|&b| b >= 0x09)
            && head
                .iter()
                .filter(|&&b| b < 0x20 && !b"\t\r\n".contains(&b))
                .count()
                == 0
}

/// The target of a `rel="canonical"` entry in an HTTP `Link` header value.
fn canonical_from_link(value: &str) -> Option<String> {
    let mut rest = value;
    while let Some(open) = rest.find('<') {
        let close = open + rest[open..].find('>')?;
        let target = &rest[open + 1..close];
        let after = &rest[close + 1..];
        let params_end = after.find('<').unwrap_or(after.len());
        let params = &after[..params_end];
        let is_canonical = params.split(';').any(|p| {
            let p = p.trim().trim_end_matches(',').trim();
            p.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("rel")
                    && v.trim()
                        .trim_matches('"')
                        .split_ascii_whitespace()
                        .any(|r| r.eq_ignore_ascii_case("canonical"))
            })
        });
        if is_canonical && !target.trim().is_empty() {
            return Some(target.trim().to_string());
        }
        rest = &after[params_end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arc_payload_digest_is_the_one_warc_writers_record() {
        // The SHA-1 of the empty payload, as every WARC writer and crawl.log spells it.
        assert_eq!(
            payload_sha1(b""),
            format!("sha1:{}", crate::ingest::index::EMPTY_SHA1)
        );
        // `printf 'hello\n' | sha1sum`: f572d396fae9206628714fb2ce00f72e94f2258f.
        assert_eq!(
            payload_sha1(b"hello\n"),
            "sha1:6VZNHFX25EQGMKDRJ6ZM4AHXF2KPEJMP"
        );
    }

    #[test]
    fn link_header_canonical() {
        assert_eq!(
            canonical_from_link(r#"<https://a.test/x?p=1>; rel="prev", </x>; rel="canonical""#),
            Some("/x".to_string())
        );
        assert_eq!(
            canonical_from_link("<https://a.test/>; rel=alternate"),
            None
        );
        assert_eq!(canonical_from_link("garbage <unclosed"), None);
    }

    #[test]
    fn dechunk_cases() {
        assert_eq!(
            dechunk(b"5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n", 100),
            Ok(Some(b"hello world".to_vec()))
        );
        assert_eq!(dechunk(b"<html>not chunked</html>", 100), Ok(None));
        assert_eq!(dechunk(b"ff\r\nshort", 10), Ok(None));
        assert!(dechunk(b"b\r\nhello world\r\n0\r\n", 10).is_err());
    }
}
