//! Page readers: JSON lines, WARC and ARC (plain, gzip, multi-member gzip), encodings inside stored
//! HTTP responses, bounds, and error reporting with line numbers and byte offsets.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;
use undust::ingest::pages::{
    read_pages, read_pages_with, Format, PageRecord, ReadError, ReaderLimits, RecordError,
    RecordKind, UndecodedRecord,
};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A valid brotli stream holding `data` in one uncompressed meta-block (RFC 7932 section 9.2):
/// enough to test decoding without a brotli encoder.
fn brotli_stored(data: &[u8]) -> Vec<u8> {
    assert!(!data.is_empty() && data.len() <= 1 << 16);
    // WBITS = 16 (bit 0 = 0), ISLAST = 0, MNIBBLES = 4, MLEN - 1 in 16 bits, ISUNCOMPRESSED = 1.
    let header: u32 = (((data.len() - 1) as u32) << 4) | (1 << 20);
    let mut out = header.to_le_bytes()[..3].to_vec();
    out.extend_from_slice(data);
    // Final meta-block: ISLAST = 1, ISLASTEMPTY = 1.
    out.push(0b11);
    out
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

fn read_all(path: &Path) -> Vec<Result<PageRecord, RecordError>> {
    read_pages(path).unwrap().collect()
}

const JSONL: &str = concat!(
    r#"{"url":"https://a.test/1","html":"<p>one</p>"}"#,
    "\n\n",
    r#"{"url":"https://a.test/2","html": oops}"#,
    "\n",
    r#"{"html":"<p>no url</p>"}"#,
    "\r\n",
    r#"{"url":"https://a.test/3","html":"<p>three</p>","final_url":"https://a.test/3/","status":301,"canonical":"https://a.test/c","content_type":"text/html","extra":1}"#,
    "\n",
    r#"{"url":"https://a.test/4","body":"<p>four</p>","status":70000}"#,
    "\n",
    r#"{"url":"https://a.test/5","body":"<p>five</p>"}"#,
);

#[test]
fn jsonl_records_and_errors_with_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "pages.jsonl", JSONL.as_bytes());
    let items = read_all(&path);
    assert_eq!(items.len(), 6);
    let ok: Vec<&PageRecord> = items.iter().filter_map(|r| r.as_ref().ok()).collect();
    let errs: Vec<&RecordError> = items.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(
        ok.iter().map(|p| p.url.as_str()).collect::<Vec<_>>(),
        ["https://a.test/1", "https://a.test/3", "https://a.test/5"]
    );
    assert_eq!(ok[0].body, b"<p>one</p>");
    assert_eq!(ok[1].final_url.as_deref(), Some("https://a.test/3/"));
    assert_eq!(ok[1].status, Some(301));
    assert_eq!(ok[1].rel_canonical.as_deref(), Some("https://a.test/c"));
    assert_eq!(ok[1].content_type.as_deref(), Some("text/html"));
    assert_eq!(ok[2].body, b"<p>five</p>");
    // Line 2 is blank; the errors name lines 3, 4 and 6 and say what is wrong.
    assert_eq!(
        errs.iter().map(|e| e.line()).collect::<Vec<_>>(),
        [Some(3), Some(4), Some(6)]
    );
    assert!(
        errs[0].to_string().starts_with("line 3: invalid JSON"),
        "{}",
        errs[0]
    );
    assert!(errs[1].to_string().contains("url"), "{}", errs[1]);
    assert!(errs[2].to_string().contains("70000"), "{}", errs[2]);
}

/// The offline commands decode JSON lines on worker threads ([`PageReader::undecoded`]): the
/// records, the errors and their line numbers, and the body bound must be those of the iterator.
#[test]
fn undecoded_records_decode_like_the_iterator() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write(dir.path(), "pages.jsonl", JSONL.as_bytes());
    let gzipped = write(dir.path(), "pages.jsonl.gz", &gzip(JSONL.as_bytes()));
    let limits = || ReaderLimits {
        max_body_bytes: 10,
        ..ReaderLimits::default()
    };
    for path in [&plain, &gzipped] {
        let decoded: Vec<_> = read_pages(path)
            .unwrap()
            .undecoded()
            .map(|record| record.and_then(UndecodedRecord::decode))
            .collect();
        assert_eq!(decoded, read_all(path));
        assert_eq!(decoded.len(), 6);
        let bounded: Vec<_> = read_pages_with(path, limits())
            .unwrap()
            .undecoded()
            .map(|record| record.and_then(UndecodedRecord::decode))
            .collect();
        let iterated: Vec<_> = read_pages_with(path, limits()).unwrap().collect();
        assert_eq!(bounded, iterated);
        // "<p>three</p>" and "<p>five</p>" are over 10 bytes: refused, with their line numbers.
        assert!(bounded[3].as_ref().is_err_and(|e| e.line() == Some(5)));
    }
}

#[test]
fn jsonl_gzip_multi_member_and_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = JSONL.split_at(JSONL.find("{\"html\"").unwrap());
    let mut data = gzip(first.as_bytes());
    data.extend(gzip(second.as_bytes()));
    let path = write(dir.path(), "pages.ndjson.gz", &data);
    let items = read_all(&path);
    assert_eq!(items.iter().filter(|r| r.is_ok()).count(), 3);
    assert_eq!(
        items
            .iter()
            .filter_map(|r| r.as_ref().err()?.line())
            .collect::<Vec<_>>(),
        [3, 4, 6]
    );

    // A line over the limit is reported and skipped; the next line is read.
    let long = format!(
        "{{\"url\":\"https://a.test/big\",\"html\":\"{}\"}}\n{{\"url\":\"https://a.test/ok\",\"html\":\"x\"}}\n",
        "x".repeat(5000)
    );
    let path = write(dir.path(), "long.jsonl", long.as_bytes());
    let limits = ReaderLimits {
        max_line_bytes: 1000,
        ..ReaderLimits::default()
    };
    let items: Vec<_> = read_pages_with(&path, limits).unwrap().collect();
    assert_eq!(items.len(), 2);
    assert!(
        matches!(&items[0], Err(RecordError::Line { line: 1, problem }) if problem.contains("longer"))
    );
    assert_eq!(items[1].as_ref().unwrap().url, "https://a.test/ok");
    // Body bound separate from line bound.
    let limits = ReaderLimits {
        max_body_bytes: 100,
        ..ReaderLimits::default()
    };
    let items: Vec<_> = read_pages_with(&path, limits).unwrap().collect();
    assert!(
        matches!(&items[0], Err(RecordError::Line { line: 1, problem }) if problem.contains("limit"))
    );
    assert!(items[1].is_ok());
}

#[test]
fn unknown_format_and_json_array_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "pages.txt", b"hello");
    assert!(matches!(
        read_pages(&path),
        Err(ReadError::UnknownFormat { .. })
    ));
    // A name that does not say is decided by the content.
    let path = write(dir.path(), "pages.txt", b"{\"url\": \"https://a.test/\"}\n");
    assert_eq!(read_pages(&path).unwrap().format(), Format::JsonLines);
    let path = write(dir.path(), "dump", b"WARC/1.0\r\n");
    assert_eq!(read_pages(&path).unwrap().format(), Format::Warc);
    // A .warc holding ARC records is read as ARC.
    let path = write(
        dir.path(),
        "old.warc",
        b"filedesc://x.arc 0.0.0.0 20040511211249 text/plain 0\n",
    );
    assert_eq!(read_pages(&path).unwrap().format(), Format::Arc);
    let path = write(
        dir.path(),
        "pages.json",
        b"  [{\"url\":\"https://a.test/\"}]",
    );
    assert!(matches!(
        read_pages(&path),
        Err(ReadError::JsonArray { .. })
    ));
    assert!(matches!(
        read_pages(&dir.path().join("missing.warc")),
        Err(ReadError::Io { .. })
    ));
}

/// One WARC record with correct Content-Length.
fn record(kind: &str, uri: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Record-ID: <urn:uuid:{}>\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        uri.len(),
        block.len()
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn http(head: &str, body: &[u8]) -> Vec<u8> {
    let mut out = head.replace('\n', "\r\n").into_bytes();
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

const HTTP_TYPE: &str = "application/http; msgtype=response";

/// Records of a realistic crawl with two malformed ones; returns (records, offset of each
/// malformed record in the uncompressed stream).
fn crawl() -> (Vec<Vec<u8>>, Vec<u64>) {
    let gz_body = gzip(b"<html>gzipped</html>");
    let mut chunked_gz = format!("{:x}\r\n", gz_body.len()).into_bytes();
    chunked_gz.extend_from_slice(&gz_body);
    chunked_gz.extend_from_slice(b"\r\n0\r\n\r\n");
    let records =
        vec![
        record(
            "warcinfo",
            "",
            "application/warc-fields",
            b"software: test\r\n",
        ),
        record(
            "request",
            "https://a.test/",
            "application/http; msgtype=request",
            b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
        ),
        record(
            "response",
            "https://a.test/",
            HTTP_TYPE,
            &http(
                "HTTP/1.1 200 OK\nContent-Type: text/html\n",
                b"<html>home</html>",
            ),
        ),
        record(
            "response",
            "<https://a.test/chunked>",
            HTTP_TYPE,
            &http(
                "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nLink: </canon>; rel=\"canonical\"\n",
                b"6\r\n<html>\r\nb;ext=1\r\nchunked ok.\r\n7\r\n</html>\r\n0\r\n\r\n",
            ),
        ),
        // Malformed: garbage where a record should start.
        b"this is not a WARC record\r\n\r\n".to_vec(),
        record(
            "response",
            "https://a.test/old",
            HTTP_TYPE,
            &http("HTTP/1.1 301 Moved Permanently\nLocation: /new\n", b""),
        ),
        record(
            "response",
            "https://a.test/gz",
            HTTP_TYPE,
            &http(
                "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nContent-Encoding: gzip\n",
                &chunked_gz,
            ),
        ),
        // Malformed: a response whose stored HTTP is not HTTP (block length is right, so the
        // reader continues with the next record without resynchronising).
        record(
            "response",
            "https://a.test/bad-http",
            HTTP_TYPE,
            b"\x00\x01 not http at all",
        ),
        record(
            "response",
            "dns:a.test",
            "text/dns",
            b"20240101 a.test. 300 IN A 192.0.2.1\r\n",
        ),
        record(
            "revisit",
            "https://a.test/",
            HTTP_TYPE,
            &http("HTTP/1.1 200 OK\n", b""),
        ),
        record(
            "response",
            "https://a.test/h2",
            HTTP_TYPE,
            &http(
                "HTTP/2 200\ncontent-type: text/html\ncontent-encoding: gzip\n",
                &gzip(b"<html>h2</html>"),
            ),
        ),
        record("response", "https://a.test/br", HTTP_TYPE, &http(
            "HTTP/1.1 200 OK\nContent-Encoding: br\n",
            &brotli_stored(b"<html>brotli</html>"),
        )),
        // Decoded by the writer but header kept: used as stored.
        record(
            "response",
            "https://a.test/predecoded",
            HTTP_TYPE,
            &http(
                "HTTP/1.1 200 OK\nContent-Encoding: gzip\nTransfer-Encoding: chunked\n",
                b"<html>plain</html>",
            ),
        ),
    ];
    let mut offsets = Vec::new();
    let mut pos = 0u64;
    for (i, r) in records.iter().enumerate() {
        if i == 4 || i == 7 {
            offsets.push(pos);
        }
        pos += r.len() as u64;
    }
    (records, offsets)
}

fn check_crawl(items: &[Result<PageRecord, RecordError>], bad_offsets: &[u64]) {
    let ok: Vec<&PageRecord> = items.iter().filter_map(|r| r.as_ref().ok()).collect();
    let urls: Vec<&str> = ok.iter().map(|p| p.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "https://a.test/",
            "https://a.test/chunked",
            "https://a.test/old",
            "https://a.test/gz",
            "https://a.test/",
            "https://a.test/h2",
            "https://a.test/br",
            "https://a.test/predecoded"
        ]
    );
    assert_eq!(ok[0].body, b"<html>home</html>");
    assert_eq!(ok[0].status, Some(200));
    assert_eq!(ok[0].content_type.as_deref(), Some("text/html"));
    assert_eq!(ok[1].body, b"<html>chunked ok.</html>");
    assert_eq!(ok[1].rel_canonical.as_deref(), Some("https://a.test/canon"));
    assert_eq!(ok[2].status, Some(301));
    assert_eq!(ok[2].final_url.as_deref(), Some("https://a.test/new"));
    assert_eq!(ok[2].kind, RecordKind::Redirect);
    assert_eq!(ok[3].body, b"<html>gzipped</html>");
    assert_eq!(ok[0].kind, RecordKind::Page);
    // The revisit: evidence without a body, its status from the repeated headers.
    assert!(matches!(ok[4].kind, RecordKind::Revisit(_)));
    assert_eq!(ok[4].status, Some(200));
    assert!(ok[4].body.is_empty());
    assert_eq!(ok[5].body, b"<html>h2</html>");
    assert_eq!(ok[5].status, Some(200));
    assert_eq!(ok[6].body, b"<html>brotli</html>");
    assert_eq!(ok[7].body, b"<html>plain</html>");
    let errs: Vec<u64> = items
        .iter()
        .filter_map(|r| r.as_ref().err()?.offset())
        .collect();
    assert_eq!(errs, bad_offsets);
    assert_eq!(items.len(), ok.len() + 2);
}

#[test]
fn warc_plain_gzip_and_multi_member() {
    let dir = tempfile::tempdir().unwrap();
    let (records, bad) = crawl();
    let plain = records.concat();
    check_crawl(&read_all(&write(dir.path(), "crawl.warc", &plain)), &bad);
    // Whole file one gzip member.
    check_crawl(
        &read_all(&write(dir.path(), "crawl.warc.gz", &gzip(&plain))),
        &bad,
    );
    // One member per record, as Heritrix / wget / Browsertrix write.
    let members: Vec<u8> = records.iter().flat_map(|r| gzip(r)).collect();
    check_crawl(
        &read_all(&write(dir.path(), "members.warc.gz", &members)),
        &bad,
    );
}

#[test]
fn warc_missing_length_resyncs_and_bounds_hold() {
    let dir = tempfile::tempdir().unwrap();
    let good = record(
        "response",
        "https://a.test/a",
        HTTP_TYPE,
        &http("HTTP/1.1 200 OK\n", b"<html>a</html>"),
    );
    let no_length = b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://a.test/x\r\n\r\nHTTP/1.1 200 OK\r\n\r\nbody\r\n\r\n";
    let big = record(
        "response",
        "https://a.test/big",
        HTTP_TYPE,
        &http("HTTP/1.1 200 OK\n", &vec![b'x'; 5000]),
    );
    let bomb = record(
        "response",
        "https://a.test/bomb",
        HTTP_TYPE,
        &http(
            "HTTP/1.1 200 OK\nContent-Encoding: gzip\n",
            &gzip(&vec![b'y'; 50_000]),
        ),
    );
    let brotli = record(
        "response",
        "https://a.test/br",
        HTTP_TYPE,
        &http(
            "HTTP/1.1 200 OK\nContent-Encoding: br\n",
            &[0x8b, 0x00, 0x80, 0x00, 0x01, 0xff, 0xfe],
        ),
    );
    let mut data = good.clone();
    let no_length_at = data.len() as u64;
    data.extend_from_slice(no_length);
    data.extend_from_slice(&good);
    let big_at = data.len() as u64;
    data.extend_from_slice(&big);
    let bomb_at = data.len() as u64;
    data.extend_from_slice(&bomb);
    let br_at = data.len() as u64;
    data.extend_from_slice(&brotli);
    data.extend_from_slice(&good);
    // Truncated last record: Content-Length promises more than the file has.
    let truncated_at = data.len() as u64;
    let truncated = record(
        "response",
        "https://a.test/t",
        HTTP_TYPE,
        &http("HTTP/1.1 200 OK\n", b"<html>cut"),
    );
    data.extend_from_slice(&truncated[..truncated.len() - 8]);
    let limits = ReaderLimits {
        max_body_bytes: 4096,
        ..ReaderLimits::default()
    };
    let path = write(dir.path(), "bad.warc", &data);
    let items: Vec<_> = read_pages_with(&path, limits).unwrap().collect();
    let summary: Vec<Result<&str, u64>> = items
        .iter()
        .map(|r| match r {
            Ok(p) => Ok(p.url.as_str()),
            Err(e) => Err(e.offset().unwrap()),
        })
        .collect();
    assert_eq!(
        summary,
        [
            Ok("https://a.test/a"),
            Err(no_length_at),
            Ok("https://a.test/a"),
            Err(big_at),
            Err(bomb_at),
            Err(br_at),
            Ok("https://a.test/a"),
            Err(truncated_at),
        ]
    );
    let messages: Vec<String> = items
        .iter()
        .filter_map(|r| r.as_ref().err().map(ToString::to_string))
        .collect();
    assert!(messages[0].contains("Content-Length"), "{}", messages[0]);
    assert!(messages[1].contains("limit"), "{}", messages[1]);
    assert!(messages[2].contains("limit"), "{}", messages[2]);
    assert!(
        messages[3].contains("br body does not decode"),
        "{}",
        messages[3]
    );
    assert!(messages[4].contains("truncated"), "{}", messages[4]);
}

#[test]
fn committed_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cluster");
    let items = read_all(&dir.join("pages.jsonl"));
    assert_eq!(items.iter().filter(|r| r.is_ok()).count(), 4);
    assert_eq!(
        items
            .iter()
            .filter_map(|r| r.as_ref().err()?.line())
            .collect::<Vec<_>>(),
        [3]
    );
    let items = read_all(&dir.join("crawl.warc.gz"));
    let ok: Vec<_> = items.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(ok.len(), 3);
    assert_eq!(ok[1].body, b"<html><p>chunked</p></html>");
    assert_eq!(ok[2].final_url.as_deref(), Some("https://fixture.test/b"));
    assert_eq!(items.iter().filter(|r| r.is_err()).count(), 1);
}

#[test]
fn corrupted_inputs_never_panic_and_always_end() {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let (records, _) = crawl();
    let warc = records.concat();
    let mut rng = SmallRng::seed_from_u64(17);
    for round in 0..150 {
        let (name, base) = if round % 2 == 0 {
            ("f.warc", warc.as_slice())
        } else {
            ("f.jsonl", JSONL.as_bytes())
        };
        let mut data = base.to_vec();
        // Flip, delete or duplicate a few random spans; sometimes truncate or gzip.
        for _ in 0..rng.random_range(1..6) {
            let at = rng.random_range(0..data.len());
            match rng.random_range(0..3) {
                0 => data[at] = rng.random(),
                1 => {
                    let end = (at + rng.random_range(1..40)).min(data.len());
                    data.drain(at..end);
                }
                _ => {
                    let end = (at + rng.random_range(1..40)).min(data.len());
                    let copy = data[at..end].to_vec();
                    data.splice(at..at, copy);
                }
            }
            if data.is_empty() {
                data.push(b'x');
            }
        }
        if round % 5 == 0 {
            data.truncate(rng.random_range(0..data.len()));
        }
        if round % 7 == 0 {
            let mut gz = gzip(&data);
            let len = gz.len();
            // A corrupt gzip tail.
            gz.truncate(len - rng.random_range(0..len.min(10)));
            data = gz;
        }
        let path = write(dir.path(), name, &data);
        let limits = ReaderLimits {
            max_body_bytes: 2048,
            max_line_bytes: 4096,
            max_header_bytes: 1024,
        };
        let count = read_pages_with(&path, limits).unwrap().take(10_000).count();
        assert!(count < 10_000, "round {round}: reader did not end");
    }
}
