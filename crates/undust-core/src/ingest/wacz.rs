//! WACZ files (Web Archive Collection Zipped: what Webrecorder's tools, Browsertrix and
//! ArchiveWeb.page write): the WARCs under `archive/` and the capture index under `indexes/` of
//! one zip file, read in place.
//!
//! A WACZ stores its WARCs uncompressed in the zip (they are gzip-compressed per record
//! already), so an entry is read straight from its byte range in the file: a crawl of any size
//! streams through with the memory of one record, as a loose WARC does. An entry the zip deflated
//! is inflated on the way, and an entry holding gzip (a `.warc.gz`, the ZipNum `index.cdx.gz`) is
//! decompressed, so a reader sees the plain bytes of every entry one after the other, in name
//! order. The secondary index of a ZipNum index (`index.idx`) and the other entries (pages lists,
//! `datapackage.json`) are not read.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::bufread::{DeflateDecoder, MultiGzDecoder};
use zip::CompressionMethod;

/// True when `path` names a WACZ (`.wacz`), or starts like a zip file whatever its name.
pub fn is_wacz(path: &Path) -> bool {
    let named = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("wacz"));
    named || starts_like_zip(path)
}

fn starts_like_zip(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == *b"PK\x03\x04")
}

/// The plain bytes of every WARC (or ARC) under `archive/`, one after the other in name order.
pub fn archives(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    let entries = entries(path, "archive/", &[".warc", ".warc.gz", ".arc", ".arc.gz"])?;
    if entries.is_empty() {
        return Err(invalid(path, "no WARC under archive/"));
    }
    Ok(Box::new(Entries::new(path, entries)))
}

/// The plain lines of every capture index under `indexes/` (CDXJ in the WACZ specification; CDX
/// read as well), one after the other in name order.
pub fn indexes(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    let entries = entries(path, "indexes/", &[".cdx", ".cdxj", ".cdx.gz", ".cdxj.gz"])?;
    if entries.is_empty() {
        return Err(invalid(
            path,
            "no capture index under indexes/ (read its WARCs with --pages instead)",
        ));
    }
    Ok(Box::new(Entries::new(path, entries)))
}

fn invalid(path: &Path, problem: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {problem}", path.display()),
    )
}

/// Where one entry's bytes are in the file.
#[derive(Debug)]
struct Entry {
    name: String,
    start: u64,
    length: u64,
    deflated: bool,
}

/// The entries under `folder` whose names end with one of `extensions` (any case), in name
/// order.
fn entries(path: &Path, folder: &str, extensions: &[&str]) -> io::Result<Vec<Entry>> {
    let wanted = |name: &str| {
        let name = name.to_ascii_lowercase();
        name.starts_with(folder) && extensions.iter().any(|ext| name.ends_with(ext))
    };
    let file = File::open(path)?;
    let mut archive = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| invalid(path, format_args!("not a readable WACZ (zip): {e}")))?;
    let mut out = Vec::new();
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|e| invalid(path, format_args!("zip entry {index}: {e}")))?;
        let name = entry
            .name()
            .map_err(|e| invalid(path, format_args!("zip entry {index}: {e}")))?
            .into_owned();
        if entry.is_dir() || !wanted(&name) {
            continue;
        }
        let deflated = match entry.compression() {
            CompressionMethod::Stored => false,
            CompressionMethod::Deflated => true,
            other => {
                return Err(invalid(
                    path,
                    format_args!("{name}: compression {other} is not read (stored or deflated)"),
                ))
            }
        };
        let start = entry
            .data_start()
            .ok_or_else(|| invalid(path, format_args!("{name}: no data offset")))?;
        out.push(Entry {
            name,
            start,
            length: entry.compressed_size(),
            deflated,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Reads the entries' plain bytes in turn, opening each when the one before is done.
struct Entries {
    path: PathBuf,
    waiting: VecDeque<Entry>,
    current: Option<Box<dyn Read + Send>>,
}

impl Entries {
    fn new(path: &Path, entries: Vec<Entry>) -> Entries {
        Entries {
            path: path.to_path_buf(),
            waiting: entries.into(),
            current: None,
        }
    }

    fn open(&self, entry: &Entry) -> io::Result<Box<dyn Read + Send>> {
        let mut file = File::open(&self.path)?;
        file.seek(SeekFrom::Start(entry.start))?;
        let raw = BufReader::with_capacity(64 << 10, file.take(entry.length));
        let mut inflated: Box<dyn BufRead + Send> = if entry.deflated {
            Box::new(BufReader::with_capacity(64 << 10, DeflateDecoder::new(raw)))
        } else {
            Box::new(raw)
        };
        if inflated.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
            Ok(Box::new(MultiGzDecoder::new(inflated)))
        } else {
            Ok(Box::new(inflated))
        }
    }
}

impl Read for Entries {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(current) = &mut self.current {
                let n = current.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                self.current = None;
            }
            let Some(entry) = self.waiting.pop_front() else {
                return Ok(0);
            };
            let opened = self
                .open(&entry)
                .map_err(|e| invalid(&self.path, format_args!("{}: {e}", entry.name)))?;
            self.current = Some(opened);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn read_all(mut reader: Box<dyn Read + Send>) -> Vec<u8> {
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        out
    }

    /// A WACZ as the tools write it: WARCs stored, small files deflated.
    fn write_wacz(path: &Path) {
        let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
        let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::DEFLATE);
        let mut zip = zip::ZipWriter::new(File::create(path).unwrap());
        // Two gzip members, as a WARC compressed per record is.
        let mut per_record = gzip(b"WARC/1.0 first record\n");
        per_record.extend(gzip(b"WARC/1.0 second record\n"));
        zip.start_file("archive/b.warc.gz", stored).unwrap();
        zip.write_all(&per_record).unwrap();
        zip.start_file("archive/a.warc", stored).unwrap();
        zip.write_all(b"WARC/1.0 plain\n").unwrap();
        zip.start_file("indexes/index.cdxj", deflated).unwrap();
        zip.write_all(b"com,a)/ 2020 {\"url\": \"http://a.test/\"}\n")
            .unwrap();
        zip.start_file("indexes/index.idx", deflated).unwrap();
        zip.write_all(b"com,a)/ 2020\tindex.cdx.gz\t0\t10\n")
            .unwrap();
        zip.start_file("pages/pages.jsonl", deflated).unwrap();
        zip.write_all(b"{\"url\": \"http://a.test/\"}\n").unwrap();
        zip.start_file("datapackage.json", deflated).unwrap();
        zip.write_all(b"{}").unwrap();
        zip.finish().unwrap();
    }

    #[test]
    fn a_waczs_warcs_and_index_read_as_their_plain_bytes_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.wacz");
        write_wacz(&path);
        assert!(is_wacz(&path));
        assert_eq!(
            read_all(archives(&path).unwrap()),
            b"WARC/1.0 plain\nWARC/1.0 first record\nWARC/1.0 second record\n"
        );
        assert_eq!(
            read_all(indexes(&path).unwrap()),
            b"com,a)/ 2020 {\"url\": \"http://a.test/\"}\n"
        );
        // Known by its first bytes under another name.
        let renamed = dir.path().join("crawl.zip");
        std::fs::copy(&path, &renamed).unwrap();
        assert!(is_wacz(&renamed));
    }

    #[test]
    fn a_damaged_or_empty_wacz_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.wacz");
        write_wacz(&path);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(bytes.len() - 30);
        std::fs::write(&path, &bytes).unwrap();
        let err = archives(&path).err().unwrap();
        assert!(err.to_string().contains("crawl.wacz"), "{err}");
        assert!(err.to_string().contains("zip"), "{err}");
        let empty = dir.path().join("empty.wacz");
        let mut zip = zip::ZipWriter::new(File::create(&empty).unwrap());
        zip.start_file("datapackage.json", SimpleFileOptions::default())
            .unwrap();
        zip.finish().unwrap();
        let err = archives(&empty).err().unwrap();
        assert!(err.to_string().contains("no WARC under archive/"), "{err}");
        let err = indexes(&empty).err().unwrap();
        assert!(err.to_string().contains("--pages"), "{err}");
    }
}
