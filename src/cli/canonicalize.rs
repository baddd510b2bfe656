//! `undust canonicalize`: URLs on stdin, canonical forms on stdout.
//!
//! Exactly one output line per input line, in order, so the output can be pasted next to the input.
//! A line that cannot be canonicalized (empty, unparseable, not http/https, too long) is echoed as
//! it is; the summary on stderr counts such lines and names the first few by line number.
//!
//! stdin is read in blocks of whole lines ([`LineBlocks`]), the blocks are canonicalized on every
//! core, each into one output buffer, and the buffers are written in input order
//! ([`super::ordered`]): a line costs no allocation of its own to read or to write, and the
//! hand-off between threads happens once per block, not once per line.

use std::io::{BufWriter, Read, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::ordered::{map_in_order, Batching};
use super::{output_failed, EXIT_NO_INPUT, EXIT_SOFTWARE, EXIT_USAGE};
use crate::canon::engine::HostRules;
use crate::canon::mirror::MirrorTable;
use crate::canon::normalize::{StaticConfig, StaticNormalizer};
use crate::canon::rules::RuleFile;
use crate::canon::Canonicalizer;

/// Invalid lines named in the summary.
const INVALID_LINES_REPORTED: usize = 10;

/// stdin is read in blocks of about this many bytes, cut after their last whole line (a longer
/// line makes a longer block): about 600 URLs, enough to make the per-block hand-off cheap,
/// small enough that every core gets blocks of a short input.
const BLOCK_BYTES: usize = 64 * 1024;

/// Blocks are canonicalized on every core 16 at a time (about 1 MiB) and written in input order
/// by one thread ([`super::ordered`]).
const STDIN_BATCHING: Batching = Batching {
    batch_items: 16,
    batch_bytes: 1 << 20,
};

/// stdin cut into blocks of whole lines: each block ends with a `\n`, except the last one when
/// the input does not. A read error ends the blocks: the whole lines read before it come first,
/// then the error.
struct LineBlocks<R> {
    reader: R,
    /// Bytes after the last line break of the previous block (the start of a line).
    carry: Vec<u8>,
    /// A read error to report once the lines read before it are out.
    error: Option<std::io::Error>,
    /// Whether the input ended (or failed) and every block is out.
    done: bool,
}

impl<R: Read> LineBlocks<R> {
    fn new(reader: R) -> Self {
        LineBlocks {
            reader,
            carry: Vec::new(),
            error: None,
            done: false,
        }
    }
}

impl<R: Read> Iterator for LineBlocks<R> {
    type Item = std::io::Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(err) = self.error.take() {
            self.done = true;
            return Some(Err(err));
        }
        if self.done {
            return None;
        }
        let mut block = std::mem::take(&mut self.carry);
        loop {
            let want = BLOCK_BYTES.saturating_sub(block.len()).max(BLOCK_BYTES / 4);
            let read = (&mut self.reader).take(want as u64).read_to_end(&mut block);
            let at_end = match read {
                Ok(n) => n == 0,
                Err(err) => {
                    self.error = Some(err);
                    true
                }
            };
            let last_break = block.iter().rposition(|&b| b == b'\n');
            if self.error.is_some() {
                // The bytes after the last line break belong to a line the error cut: dropped.
                block.truncate(last_break.map_or(0, |last| last + 1));
                if block.is_empty() {
                    return self.next();
                }
                return Some(Ok(block));
            }
            if at_end {
                self.done = true;
                return (!block.is_empty()).then_some(Ok(block));
            }
            if let Some(last) = last_break {
                self.carry = block.split_off(last + 1);
                return Some(Ok(block));
            }
            // A line longer than the block so far: read on until it ends.
        }
    }
}

/// One block of input lines once canonicalized (on any core).
#[derive(Default)]
struct CanonicalBlock {
    /// One output line per input line, each ending with `\n`.
    output: Vec<u8>,
    /// Input lines in the block.
    lines: u64,
    /// Lines whose canonical form differs from the line.
    changed: u64,
    /// Lines learned rules (or mirror sets) rewrote.
    learned: u64,
    /// Lines a mirror set folded onto its canonical site (counted in `learned` too).
    mirrored: u64,
    /// Lines echoed as not canonicalizable: their count, and the first few (line number within
    /// the block, from 1, and why).
    invalid_count: u64,
    invalid: Vec<(u64, String)>,
    /// Reading stdin failed after the lines above.
    unreadable: Option<std::io::Error>,
}

/// Canonicalizes a block of lines (each without its `\n`; a trailing `\r` is dropped).
fn canonicalize_block(
    canonicalizer: &Canonicalizer,
    block: std::io::Result<Vec<u8>>,
) -> CanonicalBlock {
    let block = match block {
        Ok(block) => block,
        Err(err) => {
            return CanonicalBlock {
                unreadable: Some(err),
                ..CanonicalBlock::default()
            }
        }
    };
    let mut done = CanonicalBlock {
        output: Vec::with_capacity(block.len() + block.len() / 4),
        ..CanonicalBlock::default()
    };
    let body = block.strip_suffix(b"\n").unwrap_or(&block);
    for line in body.split(|&b| b == b'\n') {
        done.lines += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // No trimming here: the normalizer strips what the URL standard strips (C0 controls and
        // spaces), exactly as the server does for the same text; `str::trim` would also drop
        // Unicode white space (U+00A0, U+3000) that the server percent-encodes.
        let failure = match std::str::from_utf8(line) {
            Ok(text) => match canonicalizer.canonicalize(text) {
                Ok(canonical) => {
                    done.changed += u64::from(canonical.canonical != text);
                    done.learned += u64::from(canonical.learned);
                    done.mirrored += u64::from(canonical.mirrored);
                    done.output
                        .extend_from_slice(canonical.canonical.as_bytes());
                    None
                }
                Err(reason) => Some(reason.to_string()),
            },
            Err(_) => Some("not UTF-8".to_owned()),
        };
        if let Some(reason) = failure {
            done.invalid_count += 1;
            if done.invalid.len() < INVALID_LINES_REPORTED {
                done.invalid.push((done.lines, reason));
            }
            done.output.extend_from_slice(line);
        }
        done.output.push(b'\n');
    }
    done
}

/// Static normalization options shared by the offline commands.
#[derive(Debug, Clone, clap::Args)]
pub struct StaticArgs {
    /// Keep well-known tracking parameters (removed by default).
    #[arg(long)]
    keep_tracking_params: bool,
    /// Keep well-known session ids (removed by default).
    #[arg(long)]
    keep_session_ids: bool,
    /// Sort query parameters.
    #[arg(long)]
    sort_query: bool,
    /// Strip a leading `www.`.
    #[arg(long)]
    strip_www: bool,
    /// Keep `user:password@` in canonical forms (stripped by default: credentials must not be
    /// written out or stored).
    #[arg(long)]
    keep_userinfo: bool,
    /// More tracking parameters to remove (`name*` is a prefix); comma-separated.
    #[arg(long, value_delimiter = ',')]
    extra_tracking_params: Vec<String>,
}

impl StaticArgs {
    /// The static normalizer these options describe.
    pub fn normalizer(&self) -> Result<StaticNormalizer, String> {
        StaticNormalizer::new(StaticConfig {
            remove_tracking_params: !self.keep_tracking_params,
            remove_session_ids: !self.keep_session_ids,
            sort_query: self.sort_query,
            strip_www: self.strip_www,
            strip_userinfo: !self.keep_userinfo,
            extra_tracking_params: self.extra_tracking_params.clone(),
            ..StaticConfig::default()
        })
        .map_err(|err| err.to_string())
    }
}

/// Flags of `undust canonicalize`.
#[derive(Debug, clap::Args)]
pub struct CanonicalizeArgs {
    /// A rule file written by `undust learn`; without it only static normalization applies.
    #[arg(long)]
    rules: Option<PathBuf>,
    #[command(flatten)]
    normalization: StaticArgs,
}

/// Loads a rule file into a canonicalizer: every host's rules into its rule book and the
/// file's mirror sets into its mirror table, so a URL on an alias host is folded onto the
/// canonical site before that site's rules apply, exactly as the sidecar does once it has
/// learned them. Either half is refused whole when it does not compile: a file whose mirror
/// sets are damaged is an error, not a canonicalizer that silently keeps hosts apart.
///
/// Returns how many rules (site and pattern rules of every host) were loaded.
pub fn load_rules(canonicalizer: &Canonicalizer, path: &std::path::Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    let file = RuleFile::from_json(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    let mirrors = MirrorTable::compile(&file.mirrors)
        .map_err(|err| format!("{}: mirror sets: {err}", path.display()))?;
    let mut rules = 0;
    for set in &file.hosts {
        let compiled = HostRules::compile(set)
            .map_err(|err| format!("{}: host {}: {err}", path.display(), set.host))?;
        canonicalizer.rules().swap(&set.host, Arc::new(compiled));
        rules += set.site_rules.len() + set.rules.len();
    }
    canonicalizer.set_mirrors(Arc::new(mirrors));
    Ok(rules)
}

/// Runs `undust canonicalize`.
pub fn run(args: CanonicalizeArgs) -> ExitCode {
    let normalizer = match args.normalization.normalizer() {
        Ok(normalizer) => normalizer,
        Err(err) => {
            eprintln!("undust canonicalize: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let canonicalizer = Canonicalizer::new(normalizer);
    if let Some(path) = &args.rules {
        if let Err(err) = load_rules(&canonicalizer, path) {
            eprintln!("undust canonicalize: cannot load rules: {err}");
            return ExitCode::from(EXIT_NO_INPUT);
        }
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut lines, mut changed, mut learned, mut mirrored) = (0u64, 0u64, 0u64, 0u64);
    let mut invalid: Vec<(u64, String)> = Vec::new();
    let mut invalid_count = 0u64;
    let mut failure: Option<ExitCode> = None;
    let consume = |block: CanonicalBlock| {
        for (line, reason) in block.invalid {
            if invalid.len() < INVALID_LINES_REPORTED {
                invalid.push((lines + line, reason));
            }
        }
        lines += block.lines;
        changed += block.changed;
        learned += block.learned;
        mirrored += block.mirrored;
        invalid_count += block.invalid_count;
        if let Err(err) = out.write_all(&block.output) {
            failure = Some(output_failed("canonicalize", "stdout", &err));
            return ControlFlow::Break(());
        }
        if let Some(err) = block.unreadable {
            eprintln!("undust canonicalize: reading stdin: {err}");
            failure = Some(ExitCode::from(EXIT_SOFTWARE));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    };
    let read: Result<(), std::convert::Infallible> = map_in_order(
        || Ok(LineBlocks::new(std::io::stdin().lock())),
        |block| block.as_ref().map_or(0, Vec::len),
        |block| canonicalize_block(&canonicalizer, block),
        consume,
        STDIN_BATCHING,
    );
    if let Err(never) = read {
        match never {}
    }
    if let Some(code) = failure {
        return code;
    }
    if let Err(err) = out.flush() {
        return output_failed("canonicalize", "stdout", &err);
    }
    eprintln!(
        "undust canonicalize: {lines} lines, {changed} changed ({learned} by learned rules, \
         {mirrored} of them folded onto a mirror's canonical site), {invalid_count} echoed \
         unchanged as invalid"
    );
    for (line, reason) in invalid {
        eprintln!("  line {line}: {reason}");
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `data` a few bytes at a time, then fails if told to.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        fail_at_end: bool,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.data.len() {
                return if self.fail_at_end {
                    Err(std::io::Error::other("disk on fire"))
                } else {
                    Ok(0)
                };
            }
            let n = buf.len().min(7).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn blocks(data: &[u8], fail_at_end: bool) -> Vec<std::io::Result<Vec<u8>>> {
        LineBlocks::new(Trickle {
            data: data.to_vec(),
            at: 0,
            fail_at_end,
        })
        .collect()
    }

    #[test]
    fn blocks_hold_whole_lines_and_put_every_byte_back_in_order() {
        let mut input = Vec::new();
        for i in 0..20_000 {
            input.extend_from_slice(format!("http://example.com/{i}\n").as_bytes());
        }
        // A line far longer than a block, and a last line without a line break.
        input.extend_from_slice(&vec![b'x'; 3 * BLOCK_BYTES]);
        input.extend_from_slice(b"\nhttp://example.com/last");
        let got = blocks(&input, false);
        assert!(got.len() > 5, "{} blocks", got.len());
        let mut joined = Vec::new();
        for (i, block) in got.iter().enumerate() {
            let block = block.as_ref().expect("no read error");
            if i + 1 < got.len() {
                assert_eq!(block.last(), Some(&b'\n'), "block {i} ends a line");
            }
            joined.extend_from_slice(block);
        }
        assert_eq!(joined, input);
        assert!(blocks(b"", false).is_empty());
        let one: Vec<Vec<u8>> = blocks(b"\n", false)
            .into_iter()
            .map(|b| b.expect("read"))
            .collect();
        assert_eq!(one, vec![b"\n".to_vec()]);
    }

    #[test]
    fn a_read_error_comes_after_the_whole_lines_read_before_it() {
        let got = blocks(b"http://a.com/1\nhttp://a.com/2\nhttp://a.com/cut", true);
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0].as_ref().expect("lines before the error"),
            b"http://a.com/1\nhttp://a.com/2\n"
        );
        assert!(got[1].is_err());
        let only_error = blocks(b"cut", true);
        assert_eq!(only_error.len(), 1);
        assert!(only_error[0].is_err());
    }

    #[test]
    fn a_block_gives_one_line_per_input_line_with_invalid_ones_echoed() {
        let canonicalizer =
            Canonicalizer::new(StaticNormalizer::new(StaticConfig::default()).expect("config"));
        let block =
            b"HTTP://Example.com:80/a/../b?utm_source=x#f\n\nnot a url\r\nhttp://example.com/b\n";
        let done = canonicalize_block(&canonicalizer, Ok(block.to_vec()));
        assert_eq!(
            String::from_utf8(done.output).expect("utf-8"),
            "http://example.com/b\n\nnot a url\nhttp://example.com/b\n"
        );
        assert_eq!((done.lines, done.changed, done.invalid_count), (4, 1, 2));
        let numbers: Vec<u64> = done.invalid.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, vec![2, 3]);
    }
}
