//! Readers for crawl dumps: JSON lines and WARC, plain or gzip-compressed, as a stream of pages.
//!
//! [`read_pages`] opens a file and picks the format from its name (`.jsonl`, `.json`, `.ndjson`,
//! `.warc`, each optionally followed by `.gz`); compression is detected from the gzip magic bytes,
//! and multi-member gzip (one member per record, as Heritrix, wget and Browsertrix write) is read
//! to the end. The [`PageReader`] yields one `Result` per page: a malformed line or record is an
//! error naming its line number or byte offset, and reading continues with the next one.
//!
//! # JSON lines
//!
//! One object per line: `{"url": …, "html": …}` with optional `final_url`, `status`,
//! `canonical` and `content_type` (`body` is accepted for `html`; unknown fields are ignored).
//! Blank lines are skipped. A file that starts with `[` (a JSON array) is refused up front.
//!
//! # WARC
//!
//! A streaming parser (WARC 1.0/1.1 record framing is simple, and the `warc` crate was not a fit:
//! it buffers whole records without a size bound, reports no byte offsets, stops at the first
//! malformed record and does not parse the stored HTTP response). Only `response` records carrying
//! HTTP (`application/http` or no Content-Type) become pages; `request`, `warcinfo`, `metadata`,
//! `revisit`, `resource`, `dns:` responses and the like are skipped. The stored HTTP response is
//! parsed with `httparse` (HTTP/2 and HTTP/3 status lines, as browser-based crawlers record them,
//! are accepted); `Transfer-Encoding: chunked` and `Content-Encoding: gzip`/`deflate`/`br` are decoded
//! when the stored body is still encoded (writers that decode the body but keep the header are
//! tolerated: a body that is not actually chunked or gzip is used as stored). A 3xx response
//! with `Location` becomes redirect evidence (`final_url`, resolved against the target URI), and
//! an HTTP `Link: <…>; rel="canonical"` header fills `rel_canonical`. Byte offsets in errors
//! are offsets into the *uncompressed* WARC stream.
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

/// One fetched page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageRecord {
    /// The URL that was fetched.
    pub url: String,
    /// Where the fetch ended up (a redirect target), when different from `url`.
    pub final_url: Option<String>,
    /// HTTP status code, when known.
    pub status: Option<u16>,
    /// The `Content-Type` of the response, when known.
    pub content_type: Option<String>,
    /// The page body (HTML), decoded from any transfer and content encoding.
    pub body: Vec<u8>,
    /// A canonical URL declared by the source (JSON `canonical`, or an HTTP `Link` header).
    pub rel_canonical: Option<String>,
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
            _ => None,
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
    /// The file name does not say which format it is.
    #[error("{path}: unknown format (expected .jsonl, .json, .ndjson or .warc, optionally .gz)")]
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
    /// A WARC record (offset of its first byte in the uncompressed stream).
    #[error("WARC record at byte offset {offset}: {problem}")]
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

    /// The byte offset, for WARC errors.
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

/// Opens `path` with the given limits.
pub fn read_pages_with(path: &Path, limits: ReaderLimits) -> Result<PageReader, ReadError> {
    let format = Format::from_path(path).ok_or_else(|| ReadError::UnknownFormat {
        path: path.to_path_buf(),
    })?;
    let io_err = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let mut reader = PageReader::new(Box::new(file), format, limits).map_err(io_err)?;
    if reader.starts_with_json_array() {
        return Err(ReadError::JsonArray {
            path: path.to_path_buf(),
        });
    }
    Ok(reader)
}

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

impl PageReader {
    /// Reads pages of `format` from any byte source; gzip (including multi-member) is detected
    /// from the magic bytes.
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
        Ok(PageReader {
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
        })
    }

    /// The input's format.
    pub fn format(&self) -> Format {
        self.format
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
                    return fail(format!(
                        "line longer than {} bytes, skipped",
                        self.limits.max_line_bytes
                    ))
                }
                Ok(LineStatus::Line) => {}
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Some(
                parse_json_page(&self.buf, &self.limits)
                    .map_err(|problem| RecordError::Line { line, problem }),
            );
        }
    }

    /// Reads the next line, or the line held back by a resynchronisation.
    fn warc_line(&mut self) -> io::Result<(u64, LineStatus)> {
        if let Some((offset, line)) = self.pending.take() {
            self.buf = line;
            return Ok((offset, LineStatus::Line));
        }
        let offset = self.input.pos;
        let status =
            read_line_bounded(&mut self.input, &mut self.buf, self.limits.max_header_bytes)?;
        Ok((offset, status))
    }

    /// After a record whose length is unknown: skips to the next line starting a WARC record.
    fn resync(&mut self) {
        loop {
            let offset = self.input.pos;
            match read_line_bounded(&mut self.input, &mut self.buf, self.limits.max_header_bytes) {
                Ok(LineStatus::Line) if self.buf.starts_with(b"WARC/1.") => {
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

    fn next_warc(&mut self) -> Option<Result<PageRecord, RecordError>> {
        loop {
            // Version line, skipping the blank lines that end the previous record.
            let (offset, status) = match self.warc_line() {
                Ok(x) => x,
                Err(e) => {
                    self.done = true;
                    return Some(Err(RecordError::Record {
                        offset: self.input.pos,
                        problem: format!("read error: {e}"),
                    }));
                }
            };
            let fail = |problem: String| Some(Err(RecordError::Record { offset, problem }));
            match status {
                LineStatus::Eof => {
                    self.done = true;
                    return None;
                }
                LineStatus::TooLong => {
                    self.resync();
                    return fail("expected a WARC/1.x version line, found a very long line".into());
                }
                LineStatus::Line => {}
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if !self.buf.starts_with(b"WARC/") {
                self.resync();
                return fail("expected a WARC/1.x version line".into());
            }
            // Header block.
            let mut header = WarcHeader::default();
            let mut header_bytes = 0usize;
            let mut problem = None;
            loop {
                match read_line_bounded(
                    &mut self.input,
                    &mut self.buf,
                    self.limits.max_header_bytes,
                ) {
                    Ok(LineStatus::Line) => {}
                    Ok(LineStatus::TooLong) => {
                        problem = Some("WARC header line too long".to_string());
                        break;
                    }
                    Ok(LineStatus::Eof) => {
                        self.done = true;
                        return fail("truncated WARC header".into());
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
            let is_http_response = header.warc_type.as_deref() == Some("response")
                && header
                    .content_type
                    .as_deref()
                    .is_none_or(|t| t.to_ascii_lowercase().starts_with("application/http"));
            let max_block = (self.limits.max_body_bytes + self.limits.max_header_bytes) as u64;
            if !is_http_response || length > max_block {
                match io::copy(&mut (&mut self.input).take(length), &mut io::sink()) {
                    Ok(n) if n == length => {}
                    Ok(_) => {
                        self.done = true;
                        return fail("truncated record block".into());
                    }
                    Err(e) => {
                        self.done = true;
                        return fail(format!("read error: {e}"));
                    }
                }
                if is_http_response {
                    return fail(format!(
                        "record block of {length} bytes exceeds the {max_block}-byte limit, skipped"
                    ));
                }
                continue;
            }
            let mut block = Vec::with_capacity(length as usize);
            match (&mut self.input).take(length).read_to_end(&mut block) {
                Ok(n) if n as u64 == length => {}
                Ok(_) => {
                    self.done = true;
                    return fail("truncated record block".into());
                }
                Err(e) => {
                    self.done = true;
                    return fail(format!("read error: {e}"));
                }
            }
            let Some(uri) = header.target_uri else {
                return fail("response record without WARC-Target-URI".into());
            };
            return Some(
                parse_http_response(uri, &block, &self.limits)
                    .map_err(|problem| RecordError::Record { offset, problem }),
            );
        }
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
        }
    }
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

enum LineStatus {
    /// A line (with its terminator, if any) is in the buffer.
    Line,
    /// The line exceeded the bound; it was consumed and discarded.
    TooLong,
    /// Nothing left.
    Eof,
}

/// Reads one `\n`-terminated line into `buf` (cleared first), holding at most `max` bytes.
fn read_line_bounded(
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

fn trim_eol(line: &[u8]) -> &[u8] {
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
}

fn parse_json_page(line: &[u8], limits: &ReaderLimits) -> Result<PageRecord, String> {
    let page: JsonPage = serde_json::from_slice(line).map_err(|e| format!("invalid JSON: {e}"))?;
    if page.url.trim().is_empty() {
        return Err("empty \"url\"".into());
    }
    let body = page.html.unwrap_or_default().into_bytes();
    if body.len() > limits.max_body_bytes {
        return Err(format!(
            "html of {} bytes exceeds the {}-byte limit",
            body.len(),
            limits.max_body_bytes
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
    })
}

/// The WARC header fields the reader needs.
#[derive(Default)]
struct WarcHeader {
    warc_type: Option<String>,
    target_uri: Option<String>,
    content_type: Option<String>,
    content_length: Option<u64>,
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
        match name.as_str() {
            "warc-type" => self.warc_type = Some(value.to_ascii_lowercase()),
            "warc-target-uri" => {
                // WARC 1.0's example wrapped the URI in angle brackets; some writers copied that.
                let v = value.trim_start_matches('<').trim_end_matches('>').trim();
                self.target_uri = Some(v.to_string());
            }
            "content-type" => self.content_type = Some(value),
            "content-length" => self.content_length = value.parse().ok(),
            _ => {}
        }
    }
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
        if let Ok(decoded) = dechunk(&body, limits.max_body_bytes)? {
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
    })
}

/// Decodes a chunked body. `Err` is a hard error (too large); `Ok(Err(()))` means "not chunked".
#[allow(clippy::result_unit_err)]
fn dechunk(body: &[u8], max: usize) -> Result<Result<Vec<u8>, ()>, String> {
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let Some(eol) = memchr::memchr(b'\n', rest) else {
            // A stream cut off after complete chunks still yields what arrived.
            return Ok(if out.is_empty() { Err(()) } else { Ok(out) });
        };
        let line = trim_eol(&rest[..=eol]);
        let size_text = line.split(|&c| c == b';').next().unwrap_or_default();
        let size_text = std::str::from_utf8(size_text)
            .map_err(|_| ())
            .map(str::trim);
        let Ok(Ok(size)) = size_text.map(|s| usize::from_str_radix(s, 16)) else {
            return Ok(Err(()));
        };
        rest = &rest[eol + 1..];
        if size == 0 {
            return Ok(Ok(out));
        }
        if size > rest.len() {
            // Chunk sizes that overrun the stored body: not chunked after all.
            return Ok(Err(()));
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
            Ok(Ok(b"hello world".to_vec()))
        );
        assert_eq!(dechunk(b"<html>not chunked</html>", 100), Ok(Err(())));
        assert_eq!(dechunk(b"ff\r\nshort", 10), Ok(Err(())));
        assert!(dechunk(b"b\r\nhello world\r\n0\r\n", 10).is_err());
    }
}
