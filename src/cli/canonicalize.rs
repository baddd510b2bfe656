//! `undust canonicalize`: URLs on stdin, canonical forms on stdout.
//!
//! Exactly one output line per input line, in order, so the output can be pasted next to the input.
//! A line that cannot be canonicalized (empty, unparseable, not http/https, too long) is echoed as
//! it is; the summary on stderr counts such lines and names the first few by line number.

use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::{output_failed, EXIT_NO_INPUT, EXIT_SOFTWARE, EXIT_USAGE};
use crate::canon::engine::HostRules;
use crate::canon::normalize::{StaticConfig, StaticNormalizer};
use crate::canon::rules::RuleFile;
use crate::canon::Canonicalizer;

/// Invalid lines named in the summary.
const INVALID_LINES_REPORTED: usize = 10;

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
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut lines, mut changed, mut learned) = (0u64, 0u64, 0u64);
    let mut invalid: Vec<(u64, String)> = Vec::new();
    let mut invalid_count = 0u64;
    for line in stdin.split(b'\n') {
        let line = match line {
            Ok(line) => line,
            Err(err) => {
                eprintln!("undust canonicalize: reading stdin: {err}");
                return ExitCode::from(EXIT_SOFTWARE);
            }
        };
        lines += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let written = match std::str::from_utf8(line) {
            // No trimming here: the normalizer strips what the URL standard strips (C0 controls
            // and spaces), exactly as the server does for the same text; `str::trim` would also
            // drop Unicode white space (U+00A0, U+3000) that the server percent-encodes.
            Ok(text) => match canonicalizer.canonicalize(text) {
                Ok(canonical) => {
                    changed += u64::from(canonical.canonical != text);
                    learned += u64::from(canonical.learned);
                    out.write_all(canonical.canonical.as_bytes())
                }
                Err(reason) => {
                    invalid_count += 1;
                    if invalid.len() < INVALID_LINES_REPORTED {
                        invalid.push((lines, reason.to_string()));
                    }
                    out.write_all(line)
                }
            },
            Err(_) => {
                invalid_count += 1;
                if invalid.len() < INVALID_LINES_REPORTED {
                    invalid.push((lines, "not UTF-8".to_owned()));
                }
                out.write_all(line)
            }
        };
        if let Err(err) = written.and_then(|()| out.write_all(b"\n")) {
            return output_failed("canonicalize", "stdout", &err);
        }
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
