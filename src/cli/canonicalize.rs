//! `undust canonicalize`: URLs on stdin, canonical forms on stdout.
//!
//! Exactly one output line per input line, in order, so the output can be pasted next to the input.
//! A line that cannot be canonicalized (empty, unparseable, not http/https, too long) is echoed as
//! it is; the summary on stderr counts such lines and names the first few by line number. Lines are
//! canonicalized on every core and written in order ([`super::ordered`]).

use std::io::{BufRead, BufWriter, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::ordered::{map_in_order, Batching};
use super::{output_failed, EXIT_NO_INPUT, EXIT_SOFTWARE, EXIT_USAGE};
use crate::canon::engine::HostRules;
use crate::canon::normalize::{StaticConfig, StaticNormalizer};
use crate::canon::rules::RuleFile;
use crate::canon::Canonicalizer;

/// Invalid lines named in the summary.
const INVALID_LINES_REPORTED: usize = 10;

/// Lines are canonicalized on every core in batches of at most 4096 lines or 1 MiB
/// ([`super::ordered`]) and written in input order by one thread.
const STDIN_BATCHING: Batching = Batching {
    batch_items: 4096,
    batch_bytes: 1 << 20,
};

/// One input line once canonicalized (on any core).
enum Line {
    /// Its canonical form.
    Canonical {
        canonical: String,
        changed: bool,
        learned: bool,
    },
    /// Not canonicalizable: written back as it came, with the reason for the summary.
    Echoed { line: Vec<u8>, reason: String },
    /// Reading stdin failed here.
    Unreadable(std::io::Error),
}

/// Canonicalizes one line of stdin (without its `\n`; a trailing `\r` is dropped).
fn canonicalize_line(canonicalizer: &Canonicalizer, line: std::io::Result<Vec<u8>>) -> Line {
    let mut line = match line {
        Ok(line) => line,
        Err(err) => return Line::Unreadable(err),
    };
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    match std::str::from_utf8(&line) {
        // No trimming here: the normalizer strips what the URL standard strips (C0 controls and
        // spaces), exactly as the server does for the same text; `str::trim` would also drop
        // Unicode white space (U+00A0, U+3000) that the server percent-encodes.
        Ok(text) => match canonicalizer.canonicalize(text) {
            Ok(canonical) => Line::Canonical {
                changed: canonical.canonical != text,
                learned: canonical.learned,
                canonical: canonical.canonical,
            },
            Err(reason) => Line::Echoed {
                reason: reason.to_string(),
                line,
            },
        },
        Err(_) => Line::Echoed {
            line,
            reason: "not UTF-8".to_owned(),
        },
    }
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

/// Loads a rule file into a canonicalizer's rule book.
pub fn load_rules(canonicalizer: &Canonicalizer, path: &std::path::Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    let file = RuleFile::from_json(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    let mut rules = 0;
    for set in &file.hosts {
        let compiled = HostRules::compile(set)
            .map_err(|err| format!("{}: host {}: {err}", path.display(), set.host))?;
        rules += compiled.len();
        canonicalizer.rules().swap(&set.host, Arc::new(compiled));
    }
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
    let (mut lines, mut changed, mut learned) = (0u64, 0u64, 0u64);
    let mut invalid: Vec<(u64, String)> = Vec::new();
    let mut invalid_count = 0u64;
    let mut failure: Option<ExitCode> = None;
    let consume = |line: Line| {
        lines += 1;
        let written = match line {
            Line::Canonical {
                canonical,
                changed: was_changed,
                learned: by_rules,
            } => {
                changed += u64::from(was_changed);
                learned += u64::from(by_rules);
                out.write_all(canonical.as_bytes())
            }
            Line::Echoed { line, reason } => {
                invalid_count += 1;
                if invalid.len() < INVALID_LINES_REPORTED {
                    invalid.push((lines, reason));
                }
                out.write_all(&line)
            }
            Line::Unreadable(err) => {
                eprintln!("undust canonicalize: reading stdin: {err}");
                failure = Some(ExitCode::from(EXIT_SOFTWARE));
                return ControlFlow::Break(());
            }
        };
        if let Err(err) = written.and_then(|()| out.write_all(b"\n")) {
            failure = Some(output_failed("canonicalize", "stdout", &err));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    };
    let read: Result<(), std::convert::Infallible> = map_in_order(
        || {
            // Lines up to and including the first read error.
            let mut failed = false;
            Ok(std::io::stdin()
                .lock()
                .split(b'\n')
                .take_while(move |line| {
                    let more = !failed;
                    failed = line.is_err();
                    more
                }))
        },
        |line| line.as_ref().map_or(0, Vec::len),
        |line| canonicalize_line(&canonicalizer, line),
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
        "undust canonicalize: {lines} lines, {changed} changed ({learned} by learned rules), {invalid_count} echoed unchanged as invalid"
    );
    for (line, reason) in invalid {
        eprintln!("  line {line}: {reason}");
    }
    ExitCode::SUCCESS
}
