//! Static canonicalization against third-party expectations (WHATWG URL tests, IIPC urlcanon,
//! w3lib, Nutch, StormCrawler, courlan, url-normalize, ClearURLs) plus idempotence and explain.
//!
//! Every peer suite compares our output with the peer's expected value. A case passes when they
//! are equal; otherwise it must be listed, with the peer's value, ours and the reason, in
//! `tests/data/static_canon/deviations.tsv` — a deviation is explicit, never silent. Stale rows
//! (a listed case that now matches or gives another result) fail too. Two global adjustments are
//! applied to every peer's expected value, both documented: the fragment is dropped (we always
//! drop it), and so is the userinfo (`user:password@`: we strip credentials by default).
//! Third-party data lives in `../shared/testdata`; when absent the suites print a notice and pass,
//! except under `UNDUST_REQUIRE_TESTDATA` (CI), where they fail.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use undust::canon::normalize::{InvalidUrl, StaticConfig, StaticNormalizer};

use crate::support::testdata;

fn normalizer(config: StaticConfig) -> StaticNormalizer {
    match StaticNormalizer::new(config) {
        Ok(n) => n,
        Err(e) => panic!("test config refused: {e}"),
    }
}

fn default_normalizer() -> StaticNormalizer {
    normalizer(StaticConfig::default())
}

/// A config that also sorts the query, for peers that sort by default.
fn sorting_normalizer() -> StaticNormalizer {
    normalizer(StaticConfig {
        sort_query: true,
        ..StaticConfig::default()
    })
}

/// Everything on: the profile compared with urlcanon's aggressive canonicalizer.
fn aggressive_normalizer() -> StaticNormalizer {
    normalizer(StaticConfig {
        sort_query: true,
        strip_www: true,
        ..StaticConfig::default()
    })
}

/// Our result as text: the URL, or `ERR <reason>`. Every accepted URL is also checked to be a
/// fixpoint, so each peer suite doubles as an idempotence test.
fn ours(n: &StaticNormalizer, input: &str) -> String {
    match n.normalize(input) {
        Ok(url) => {
            let again = n.normalize(url.as_str());
            assert_eq!(
                again.as_ref().map(url::Url::as_str),
                Ok(url.as_str()),
                "not idempotent on {input:?}"
            );
            url.into()
        }
        Err(e) => format!("ERR {e}"),
    }
}

/// Drops the fragment of a peer's expected value: we always drop fragments.
fn without_fragment(expected: &str) -> &str {
    expected
        .split_once('#')
        .map_or(expected, |(before, _)| before)
}

/// Drops the userinfo (`user:password@`) of a peer's expected http(s) URL: we strip credentials
/// by default. Applied to every suite's expected values.
fn without_userinfo(expected: &str) -> String {
    if let Some((scheme, rest)) = expected.split_once("://") {
        if is_http(expected) {
            let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            if let Some(at) = rest[..authority_end].rfind('@') {
                return format!("{scheme}://{}", &rest[at + 1..]);
            }
        }
    }
    expected.to_owned()
}

/// A peer's expected value modulo presentation: fragment dropped (we always drop it) and an
/// empty path written `/` (RFC 3986 6.2.3: equivalent for http; WHATWG always serializes `/`).
fn peer_expected(expected: &str) -> String {
    let expected = without_fragment(expected);
    if let Some((scheme, rest)) = expected.split_once("://") {
        if is_http(expected) {
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            if !rest[end..].starts_with('/') {
                return format!("{scheme}://{}/{}", &rest[..end], &rest[end..]);
            }
        }
    }
    expected.to_owned()
}

fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn escape(field: &str) -> String {
    field
        .replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

/// A listed deviation: the peer's expected value, ours, and why.
struct Deviation {
    theirs: String,
    ours: String,
    reason: String,
}

/// `deviations.tsv`, keyed by (suite, input).
fn deviations() -> HashMap<(String, String), Deviation> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/static_canon/deviations.tsv");
    let text = fs::read_to_string(&path).unwrap_or_default();
    let mut out = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 5, "deviations.tsv line {}: 5 fields", n + 1);
        assert!(
            !fields[4].trim().is_empty(),
            "deviations.tsv line {}: reason missing",
            n + 1
        );
        let previous = out.insert(
            (fields[0].to_owned(), unescape(fields[1])),
            Deviation {
                theirs: unescape(fields[2]),
                ours: unescape(fields[3]),
                reason: fields[4].to_owned(),
            },
        );
        assert!(
            previous.is_none(),
            "deviations.tsv line {}: duplicate",
            n + 1
        );
    }
    out
}

/// Pass/deviation bookkeeping for one suite.
struct Suite {
    name: &'static str,
    deviations: HashMap<(String, String), Deviation>,
    /// Deviation rows that matched a case (the same input may occur with several configs).
    used: HashSet<(String, String)>,
    passed: usize,
    listed: usize,
    total: usize,
    problems: String,
}

impl Suite {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            deviations: deviations(),
            used: HashSet::new(),
            passed: 0,
            listed: 0,
            total: 0,
            problems: String::new(),
        }
    }

    /// Records one case: `ours` against the peer's `theirs`.
    fn check(&mut self, input: &str, theirs: &str, ours: &str) {
        let theirs = without_userinfo(theirs);
        let theirs = theirs.as_str();
        self.total += 1;
        let key = (self.name.to_owned(), input.to_owned());
        let listed = self.deviations.get(&key);
        if theirs == ours {
            self.passed += 1;
            if listed.is_some() && !self.used.contains(&key) {
                let _ = writeln!(
                    self.problems,
                    "STALE (now matches)\t{}\t{}",
                    self.name,
                    escape(input)
                );
            }
            return;
        }
        match listed {
            Some(d) if d.theirs == theirs && d.ours == ours => {
                assert!(!d.reason.is_empty());
                self.listed += 1;
                self.used.insert(key);
            }
            _ => {
                let _ = writeln!(
                    self.problems,
                    "{}\t{}\t{}\t{}\t",
                    self.name,
                    escape(input),
                    escape(theirs),
                    escape(ours)
                );
            }
        }
    }

    /// Prints the counts and fails on unlisted mismatches or stale rows of this suite.
    fn finish(mut self) {
        for (suite, input) in self.deviations.keys() {
            if suite == self.name && !self.used.contains(&(suite.clone(), input.clone())) {
                let _ = writeln!(
                    self.problems,
                    "STALE (case gone)\t{suite}\t{}",
                    escape(input)
                );
            }
        }
        println!(
            "static_canon suite {}: passed {} / listed-deviation {} / total {}",
            self.name, self.passed, self.listed, self.total
        );
        eprintln!(
            "static_canon suite {}: passed {} / listed-deviation {} / total {}",
            self.name, self.passed, self.listed, self.total
        );
        assert!(self.total > 0, "suite {} had no cases", self.name);
        assert!(
            self.problems.is_empty(),
            "suite {}: unlisted deviations (suite, input, theirs, ours, reason?):\n{}",
            self.name,
            self.problems
        );
    }
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

fn is_http(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Our documented extra normalizations, re-implemented independently on a WHATWG href (which is
/// already parsed and serialized): fragment dropped, hex digits uppercased, unreserved escapes
/// decoded, stray `%` and the bytes RFC 3986 allows in neither path nor query encoded, host
/// trailing dots stripped, empty parameters and an empty `?` dropped.
fn whatwg_modulo_ours(href: &str) -> String {
    let href = without_fragment(href);
    let (scheme, rest) = href.split_once("://").unwrap_or(("", href));
    let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(auth_end);
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(at) => (&authority[..=at], &authority[at + 1..]),
        None => ("", authority),
    };
    let (host, port) = if hostport.starts_with('[') {
        let close = hostport.find(']').map_or(hostport.len(), |i| i + 1);
        hostport.split_at(close)
    } else {
        hostport.split_at(hostport.find(':').unwrap_or(hostport.len()))
    };
    let host = if host.starts_with('[') || host.trim_end_matches('.').is_empty() {
        host
    } else {
        host.trim_end_matches('.')
    };
    let fix = |s: &str| -> String {
        let b = s.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                let hex = |c: Option<&u8>| c.and_then(|c| (*c as char).to_digit(16));
                match (hex(b.get(i + 1)), hex(b.get(i + 2))) {
                    (Some(h), Some(l)) => {
                        let v = (h * 16 + l) as u8;
                        if v.is_ascii_alphanumeric() || b"-._~".contains(&v) {
                            out.push(v as char);
                        } else {
                            out.push_str(&format!("%{v:02X}"));
                        }
                        i += 3;
                    }
                    _ => {
                        out.push_str("%25");
                        i += 1;
                    }
                }
            } else if b"[]{}|^`\\".contains(&b[i]) {
                out.push_str(&format!("%{:02X}", b[i]));
                i += 1;
            } else {
                out.push(b[i] as char);
                i += 1;
            }
        }
        out
    };
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let mut out = format!("{scheme}://{userinfo}{host}{port}{}", fix(path));
    if let Some(q) = query {
        let kept: Vec<String> = q.split('&').filter(|p| !p.is_empty()).map(fix).collect();
        if !kept.is_empty() {
            out.push('?');
            out.push_str(&kept.join("&"));
        }
    }
    out
}

/// `<input>` or `<input> against <base>` lines of the url crate's expected_failures.txt.
fn url_crate_expected_failures(dir: &Path) -> HashSet<(String, Option<String>)> {
    let text =
        fs::read_to_string(dir.join("wpt-url-testdata/expected_failures.txt")).unwrap_or_default();
    let mut out = HashSet::new();
    for line in text.lines() {
        let line = line.trim_end();
        let Some(rest) = line.strip_prefix('<') else {
            continue;
        };
        let (input, base) = match rest.split_once("> against <") {
            Some((input, base)) => (input, base.strip_suffix('>').map(unescape)),
            None => (rest.strip_suffix('>').unwrap_or(rest), None),
        };
        out.insert((unescape(input), base));
    }
    out
}

#[test]
fn wpt_urltestdata() {
    let Some(dir) = testdata() else { return };
    let data = read_json(&dir.join("wpt-url-testdata/urltestdata.json"));
    let known = url_crate_expected_failures(&dir);
    let n = default_normalizer();
    let mut suite = Suite::new("wpt");
    let mut known_failures = 0;
    for case in data.as_array().into_iter().flatten() {
        let Some(input) = case.get("input").and_then(Value::as_str) else {
            continue;
        };
        let base = case.get("base").and_then(Value::as_str);
        if base.is_some_and(|b| !is_http(b)) {
            continue;
        }
        let failure = case.get("failure").and_then(Value::as_bool) == Some(true);
        // Absolute form of the input, as the WHATWG parser resolves it against its base: the
        // frontier hands us absolute URLs.
        let absolute = match base {
            None => Some(input.to_owned()),
            Some(b) => url::Url::parse(b)
                .ok()
                .and_then(|b| b.join(input).ok())
                .map(String::from),
        };
        if known.contains(&(input.to_owned(), base.map(str::to_owned))) {
            // rust-url's own documented WPT deviations: not ours to fix; must not panic.
            if let Some(abs) = &absolute {
                let _ = n.normalize(abs);
            }
            let _ = n.normalize(input);
            known_failures += 1;
            suite.listed += 1;
            suite.total += 1;
            continue;
        }
        if failure {
            let got = ours(&n, input);
            let theirs = "ERR (failure)";
            let shown = if got.starts_with("ERR ") {
                theirs
            } else {
                got.as_str()
            };
            suite.check(input, theirs, shown);
            continue;
        }
        let Some(href) = case.get("href").and_then(Value::as_str) else {
            continue;
        };
        if !is_http(href) {
            continue;
        }
        let Some(absolute) = absolute else {
            suite.check(input, href, "ERR (join failed)");
            continue;
        };
        let key = match base {
            None => input.to_owned(),
            Some(b) => format!("{input} against {b}"),
        };
        suite.check(&key, &whatwg_modulo_ours(href), &ours(&n, &absolute));
    }
    eprintln!("wpt: {known_failures} cases are rust-url's expected_failures.txt");
    suite.finish();
}

fn json_pairs(path: &Path) -> Vec<(String, String)> {
    let data = read_json(path);
    data.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect()
}

#[test]
fn urlcanon_semantic_precise() {
    let Some(dir) = testdata() else { return };
    let n = default_normalizer();
    let mut suite = Suite::new("urlcanon-semantic-precise");
    for (input, expected) in json_pairs(&dir.join("urlcanon-testdata/semantic_precise.json")) {
        if !is_http(&expected) {
            continue;
        }
        suite.check(&input, &peer_expected(&expected), &ours(&n, &input));
    }
    suite.finish();
}

#[test]
fn urlcanon_aggressive() {
    let Some(dir) = testdata() else { return };
    let n = aggressive_normalizer();
    let mut suite = Suite::new("urlcanon-aggressive");
    for (input, expected) in json_pairs(&dir.join("urlcanon-testdata/aggressive.json")) {
        suite.check(&input, &peer_expected(&expected), &ours(&n, &input));
    }
    suite.finish();
}

#[test]
fn urlcanon_idempotence_inputs() {
    let Some(dir) = testdata() else { return };
    let data = read_json(&dir.join("urlcanon-testdata/idempotence.json"));
    let mut checked = 0;
    for n in [default_normalizer(), aggressive_normalizer()] {
        for input in data
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if let Ok(once) = n.normalize(input) {
                let twice = n.normalize(once.as_str());
                assert_eq!(
                    twice.as_ref().map(url::Url::as_str),
                    Ok(once.as_str()),
                    "{input:?}"
                );
                checked += 1;
            }
        }
    }
    eprintln!("urlcanon idempotence: {checked} normalizable inputs are fixpoints");
    assert!(checked > 10);
}

/// The w3lib `canonicalize_url` input: a string or `{"bytes": ...}`.
fn first_arg(row: &Value) -> Option<&str> {
    let arg = row.get("args")?.get(0)?;
    arg.as_str()
        .or_else(|| arg.get("bytes").and_then(Value::as_str))
}

fn no_kwargs(row: &Value, allowed: &[(&str, Value)]) -> bool {
    row.get("kwargs")
        .and_then(Value::as_object)
        .is_none_or(|kw| {
            kw.iter()
                .all(|(k, v)| allowed.iter().any(|(ak, av)| ak == k && av == v))
        })
}

/// Runs one suite extracted from a Python project's tests: rows calling `func` with no keyword
/// arguments other than the `allowed` ones, first argument in, `expected` out.
fn python_suite(
    name: &'static str,
    file: &str,
    func: &str,
    allowed: &[(&str, Value)],
    n: &StaticNormalizer,
    http_only: bool,
) {
    let Some(dir) = testdata() else { return };
    let mut suite = Suite::new(name);
    for row in read_jsonl(&dir.join("url-vectors-extracted").join(file)) {
        if row.get("func").and_then(Value::as_str) != Some(func) || !no_kwargs(&row, allowed) {
            continue;
        }
        let (Some(input), Some(expected)) =
            (first_arg(&row), row.get("expected").and_then(Value::as_str))
        else {
            continue;
        };
        if http_only && (!is_http(expected) || !is_http(input)) {
            continue;
        }
        suite.check(input, &peer_expected(expected), &ours(n, input));
    }
    suite.finish();
}

#[test]
fn w3lib_canonicalize_url() {
    let allowed = [("keep_fragments", Value::Bool(false))];
    let n = sorting_normalizer();
    python_suite(
        "w3lib",
        "w3lib_test_url.jsonl",
        "canonicalize_url",
        &allowed,
        &n,
        false,
    );
}

#[test]
fn nutch_regex_default() {
    let Some(dir) = testdata() else { return };
    let n = default_normalizer();
    let mut suite = Suite::new("nutch-regex");
    for row in read_jsonl(&dir.join("url-vectors-extracted/nutch_regex_default.jsonl")) {
        let (Some(input), Some(expected)) = (
            row.get("input").and_then(Value::as_str),
            row.get("expected").and_then(Value::as_str),
        ) else {
            continue;
        };
        if !is_http(input) {
            continue;
        }
        suite.check(input, &peer_expected(expected), &ours(&n, input));
    }
    suite.finish();
}

#[test]
fn nutch_basic() {
    let Some(dir) = testdata() else { return };
    let data = read_json(&dir.join("url-vectors-extracted/crawler_normalizers.json"));
    let mut nutch = Suite::new("nutch-basic");
    let n = default_normalizer();
    for case in data["nutch_basic_normalizer"]["cases"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let (Some(input), Some(expected)) = (case["input"].as_str(), case["expected"].as_str())
        else {
            continue;
        };
        nutch.check(input, &peer_expected(expected), &ours(&n, input));
    }
    nutch.finish();
}

#[test]
fn stormcrawler_basic() {
    let Some(dir) = testdata() else { return };
    let data = read_json(&dir.join("url-vectors-extracted/crawler_normalizers.json"));
    // StormCrawler sorts the query and removes its configured `queryElementsToRemove`, which
    // map onto our sort flag and extra tracking parameters.
    let mut storm = Suite::new("stormcrawler-basic");
    for case in data["stormcrawler_basic_normalizer"]["cases"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let (Some(input), Some(expected)) = (case["input"].as_str(), case["expected"].as_str())
        else {
            continue;
        };
        let extra: Vec<String> = case["config"]["queryElementsToRemove"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        // Its tests sort the query exactly when elements to remove are configured.
        let n = normalizer(StaticConfig {
            sort_query: !extra.is_empty(),
            extra_tracking_params: extra,
            ..StaticConfig::default()
        });
        storm.check(input, &peer_expected(expected), &ours(&n, input));
    }
    storm.finish();
}

#[test]
fn courlan_normalize_url() {
    let allowed = [("strict", Value::Bool(false))];
    let n = sorting_normalizer();
    python_suite(
        "courlan",
        "courlan_tests.jsonl",
        "normalize_url",
        &allowed,
        &n,
        false,
    );
}

/// Only absolute http(s) cases: relative references and other schemes are outside the contract
/// (the frontier sends absolute web URLs).
#[test]
fn url_normalize_suite() {
    let n = default_normalizer();
    python_suite(
        "url-normalize",
        "url_normalize_tests.jsonl",
        "url_normalize",
        &[],
        &n,
        true,
    );
}

/// Expands a ClearURLs parameter-name regex into one concrete name it matches.
pub(crate) fn example_name(rule: &str) -> String {
    rule.replace("(?:%3F)?", "")
        .replace("(?:_[a-z_]*)?", "_source")
        .replace("(?:_[a-z]*)+", "_source")
        .replace("[a-z_]+", "source")
        .replace("[a-z_]*", "source")
        .replace("[a-z]?", "")
        .replace("(?:types|ids)", "ids")
        .replace("(?:source|ref)", "source")
        .replace("(?:object|type|ref)", "object")
        .replace("(?:campaign|medium|source)", "campaign")
        .replace("(?:eid|cid|tc)", "eid")
        .replace("_?z?", "_z")
}

#[test]
fn clearurls_global_rules_and_exceptions() {
    let Some(dir) = testdata() else { return };
    let data = read_json(&dir.join("clearurls-rules/data.min.json"));
    let n = default_normalizer();
    let mut suite = Suite::new("clearurls-global");
    let global = &data["providers"]["globalRules"];
    for rule in global["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let name = example_name(rule);
        let re = regex::Regex::new(&format!("(?i)^(?:{rule})$"))
            .unwrap_or_else(|e| panic!("rule {rule}: {e}"));
        assert!(
            re.is_match(&name),
            "example {name:?} does not match {rule:?}"
        );
        let input = format!("https://news.example.org/story?id=7&{name}=abc123");
        let out = ours(&n, &input);
        let verdict = if out == "https://news.example.org/story?id=7" {
            "stripped"
        } else {
            "kept"
        };
        // Rows are keyed by our example name: the rule text itself (LGPL) stays out of the repo.
        suite.check(&name, "stripped", verdict);
    }
    suite.finish();

    // Names that appear only in exceptions (never in any provider's removal rules) must be kept.
    let mut rules = Vec::new();
    let mut exception_names = HashSet::new();
    let name_in_exception =
        regex::Regex::new(r"([A-Za-z][A-Za-z_]*?)(?:_\?)?=").expect("static regex");
    for provider in data["providers"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, p)| p)
    {
        for rule in provider["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if let Ok(re) = regex::Regex::new(&format!("(?i)^(?:{rule})$")) {
                rules.push(re);
            }
        }
        for exception in provider["exceptions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            for cap in name_in_exception.captures_iter(exception) {
                exception_names.insert(cap[1].to_owned());
            }
        }
    }
    let only_in_exceptions: Vec<&String> = exception_names
        .iter()
        .filter(|name| !rules.iter().any(|re| re.is_match(name)))
        .collect();
    assert!(!only_in_exceptions.is_empty());
    for name in only_in_exceptions {
        let input = format!("https://shop.example.com/item?{name}=abc123");
        assert_eq!(
            ours(&n, &input),
            input,
            "exception-only parameter {name} was removed"
        );
    }
}

#[test]
fn explain_names_each_changing_step() {
    let n = normalizer(StaticConfig {
        sort_query: true,
        strip_www: true,
        ..StaticConfig::default()
    });
    let input = "HTTP://WWW.Example.COM:80/a/./b/%7euser;jsessionid=0123456789ABCDEF0123?z=1&utm_source=x&a=%41&&#top";
    let (url, steps) = n.explain(input).expect("valid URL");
    let names: Vec<&str> = steps.iter().map(|s| s.step).collect();
    assert_eq!(
        names,
        [
            "lowercase-scheme",
            "lowercase-host",
            "remove-default-port",
            "resolve-dot-segments",
            "remove-fragment",
            "strip-www",
            "normalize-percent-encoding",
            "remove-session-ids",
            "remove-tracking-params",
            "remove-empty-params",
            "sort-query",
        ]
    );
    assert_eq!(url.as_str(), "http://example.com/a/b/~user?a=A&z=1");
    assert_eq!(steps.last().map(|s| s.result.as_str()), Some(url.as_str()));
    assert_eq!(steps[0].result, "http://WWW.Example.COM:80/a/./b/%7euser;jsessionid=0123456789ABCDEF0123?z=1&utm_source=x&a=%41&&#top");
    assert_eq!(steps[2].result, "http://www.example.com/a/./b/%7euser;jsessionid=0123456789ABCDEF0123?z=1&utm_source=x&a=%41&&#top");
    assert_eq!(steps[3].result, "http://www.example.com/a/b/%7euser;jsessionid=0123456789ABCDEF0123?z=1&utm_source=x&a=%41&&#top");
    assert_eq!(n.normalize(input).as_ref(), Ok(&url));
    // Parser work that no named edit reproduces (IDNA here) is reported as `parse`.
    let (_, steps) = n
        .explain("http://bücher.example/x/../y")
        .expect("valid URL");
    let names: Vec<&str> = steps.iter().map(|s| s.step).collect();
    assert_eq!(names, ["resolve-dot-segments", "parse"]);
    assert_eq!(steps[0].result, "http://bücher.example/y");
    assert_eq!(steps[1].result, "http://xn--bcher-kva.example/y");

    // A URL that is already canonical has nothing to explain.
    let (_, steps) = n.explain("http://example.com/a?b=1").expect("valid URL");
    assert!(steps.is_empty(), "{steps:?}");
    // Removing the only parameter leaves `?`, which is then dropped.
    let (_, steps) = default_normalizer()
        .explain("http://example.com/?gclid=1")
        .expect("valid");
    let names: Vec<&str> = steps.iter().map(|s| s.step).collect();
    assert_eq!(names, ["remove-tracking-params", "drop-empty-query"]);
    assert_eq!(steps[0].result, "http://example.com/?");
}

#[test]
fn invalid_urls_name_their_reason() {
    let n = default_normalizer();
    assert_eq!(n.normalize(""), Err(InvalidUrl::Empty));
    assert_eq!(n.normalize(" \n"), Err(InvalidUrl::Empty));
    let long = format!("http://example.com/{}", "x".repeat(9000));
    let err = n.normalize(&long).expect_err("too long");
    assert_eq!(
        err,
        InvalidUrl::TooLong {
            len: long.len(),
            max: 8192
        }
    );
    assert!(err.to_string().contains("8192"), "{err}");
    let err = n.normalize("mailto:a@example.com").expect_err("scheme");
    assert_eq!(err, InvalidUrl::UnsupportedScheme("mailto".into()));
    let err = n.normalize("http://exa mple.com/").expect_err("bad host");
    assert!(
        matches!(err, InvalidUrl::Unparseable(ref r) if r.contains("invalid")),
        "{err}"
    );
    let err = n.normalize("/just/a/path").expect_err("relative");
    assert!(
        err.to_string().contains("relative URL without a base"),
        "{err}"
    );
    // Percent-encoding that grows the URL past the limit is caught on the output too.
    let small = normalizer(StaticConfig {
        max_url_bytes: 40,
        ..StaticConfig::default()
    });
    let err = small
        .normalize("http://example.com/ééééééé")
        .expect_err("grows");
    assert!(matches!(err, InvalidUrl::TooLong { max: 40, .. }), "{err}");
}

#[test]
fn session_ids_only_when_they_look_like_one() {
    let n = default_normalizer();
    let cases = [
        (
            "http://a.example/news.aspx?NewsID=1567539",
            "http://a.example/news.aspx?NewsID=1567539",
        ),
        ("http://a.example/p?sid=3", "http://a.example/p?sid=3"),
        (
            "http://a.example/p?session=spring",
            "http://a.example/p?session=spring",
        ),
        (
            "http://a.example/p?sid=9682993c8daa2c5497996114facdc805&x=1",
            "http://a.example/p?x=1",
        ),
        (
            "http://a.example/p?SessionID=123e4567-e89b-12d3-a456-426614174000",
            "http://a.example/p",
        ),
        (
            "http://a.example/p?PHPSESSID=x&ASPSESSIONIDQQ=ABC&CFID=1&CFTOKEN=2&k=v",
            "http://a.example/p?k=v",
        ),
        (
            "http://a.example/p;jsessionid=1E6FEC0D14D044541DD84D2D013D29ED",
            "http://a.example/p",
        ),
        (
            "http://a.example/p;JSessionId=abc?q=1",
            "http://a.example/p?q=1",
        ),
        ("http://a.example/p;type=a", "http://a.example/p;type=a"),
        (
            "http://a.example/(S(4hqa0555fwsecu455xqckv45))/x.aspx",
            "http://a.example/x.aspx",
        ),
        (
            "http://a.example/wiki/Foo_(band)",
            "http://a.example/wiki/Foo_(band)",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(ours(&n, input), expected, "{input}");
    }
    let off = normalizer(StaticConfig {
        remove_session_ids: false,
        remove_tracking_params: false,
        ..StaticConfig::default()
    });
    let input = "http://a.example/p;jsessionid=abc?PHPSESSID=x&utm_source=y";
    assert_eq!(ours(&off, input), input);
}

#[test]
fn percent_encoding_never_decodes_reserved_characters() {
    let n = default_normalizer();
    let cases = [
        (
            "http://a.example/a%2fb%3Fc%23d%26e%3d",
            "http://a.example/a%2Fb%3Fc%23d%26e%3D",
        ),
        (
            "http://a.example/?q=a%26b%3Dc&r=%2B",
            "http://a.example/?q=a%26b%3Dc&r=%2B",
        ),
        (
            "http://a.example/%7e%2D%2e%5F%30%61",
            "http://a.example/~-._0a",
        ),
        (
            "http://a.example/%c3%a9?x=%e2%82%ac",
            "http://a.example/%C3%A9?x=%E2%82%AC",
        ),
        ("http://a.example/100%/%4", "http://a.example/100%25/%254"),
        (
            "http://a.example/?utm%5Fsource=x&k=1",
            "http://a.example/?k=1",
        ),
        // Bytes the WHATWG parser leaves raw but RFC 3986 allows in neither path nor query are
        // written escaped, as form decoders read them: `f[0]` and `f%5B0%5D` are one key.
        (
            "http://a.example/p[1]/?f[0]=a&g={b}|c^d`e",
            "http://a.example/p%5B1%5D/?f%5B0%5D=a&g=%7Bb%7D%7Cc%5Ed%60e",
        ),
        (
            "http://a.example/p%5b1%5d/?f%5b0%5d=a",
            "http://a.example/p%5B1%5D/?f%5B0%5D=a",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(ours(&n, input), expected, "{input}");
    }
}

#[test]
fn normalizer_is_shareable() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<StaticNormalizer>();
    let shared = std::sync::Arc::new(default_normalizer());
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let n = std::sync::Arc::clone(&shared);
            std::thread::spawn(move || ours(&n, &format!("http://a.example/{i}?utm_source=x")))
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        assert_eq!(h.join().ok(), Some(format!("http://a.example/{i}")));
    }
}

#[test]
fn host_options() {
    let www = normalizer(StaticConfig {
        strip_www: true,
        ..StaticConfig::default()
    });
    assert_eq!(
        ours(&www, "http://www.Example.com./x"),
        "http://example.com/x"
    );
    assert_eq!(ours(&www, "http://www.com/x"), "http://www.com/x");
    assert_eq!(
        ours(&www, "http://www.www.www.www.www.www.example.com/"),
        "http://example.com/"
    );
    assert_eq!(ours(&www, "http://www.www.com/"), "http://www.com/");
    assert_eq!(
        ours(&www, "http://www.localhost/x"),
        "http://www.localhost/x"
    );
    assert_eq!(
        ours(&default_normalizer(), "http://www.example.com/"),
        "http://www.example.com/"
    );
    assert_eq!(
        ours(&default_normalizer(), "http://[::1]:80/"),
        "http://[::1]/"
    );
    assert_eq!(
        ours(&default_normalizer(), "https://例え.jp:443/"),
        "https://xn--r8jz45g.jp/"
    );
}

fn url_strategy() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec!["http", "https", "HTTP", "HtTpS"]);
    let host = prop::sample::select(vec![
        "example.com",
        "WWW.Example.COM",
        "www.shop.example",
        "bücher.de",
        "例え.jp",
        "xn--r8jz45g.jp",
        "news.example.org.",
        "127.0.0.1",
        "[::1]",
        "www.com",
        "www.www.www.www.www.example.net",
        "a_b.example",
    ]);
    let port = prop::sample::select(vec!["", ":80", ":443", ":8080", ":0080", ":"]);
    let segment = prop::sample::select(vec![
        "a",
        "B",
        ".",
        "..",
        "%2e",
        "%2E%2e",
        ".%2E",
        "%",
        "%4",
        "%zz",
        "%41",
        "%7e",
        "%7E",
        "%2F",
        "%2f",
        "%3b",
        "é",
        "%C3%A9",
        "%c3%a9",
        "x;jsessionid=0123456789abcdef0123",
        "y;JSESSIONID=AB",
        "(S(4hqa0555fwsecu455xqckv45))",
        "(4hqa0555fwsecu455xqckv45)",
        "index.html",
        "a b",
        "%00",
        "~",
        "%25",
        "%252e",
        "",
        "foo(bar)",
        "(S(4hqa0555fwsecu455xqckv45));jsessionid=x1",
        "..;jsessionid=AB12",
        "%2e;sid=x",
        "www.example.com",
    ]);
    let param = prop::sample::select(vec![
        "",
        "id=3",
        "q=a+b",
        "utm_source=x",
        "UTM_Campaign=y",
        "gclid=123",
        "fbclid=abc",
        "sid=3",
        "sid=9682993c8daa2c5497996114facdc805",
        "PHPSESSID=abc",
        "ASPSESSIONIDQA=ZZ",
        "page=%32",
        "k=%7e%2e",
        "k=%",
        "x=1;jsessionid=abcdef0123456789",
        "a",
        "=",
        "b=",
        "%61=1",
        "utm%5Fmedium=z",
        "z=%C3%A9",
        "sessionid=ABCDEF0123456789ABCD",
        "c=%26",
        "d=é",
        "sid=9682993c8daa2c5497996114facdc805;jsessionid=x",
        "utm_source;jsessionid=1=2",
        ";jsessionid=abc",
        "q=%25%34%31",
    ]);
    let fragment = prop::sample::select(vec!["", "#", "#top", "#a%20b", "#?q=1"]);
    (
        scheme,
        prop::sample::select(vec!["://", ":/", ":", ":///", ":\\\\"]),
        host,
        port,
        prop::collection::vec(segment, 0..6),
        prop::option::of(prop::collection::vec(param, 0..6)),
        fragment,
    )
        .prop_map(|(scheme, sep, host, port, segments, query, fragment)| {
            let mut url = format!("{scheme}{sep}{host}{port}");
            for s in segments {
                url.push('/');
                url.push_str(s);
            }
            if let Some(params) = query {
                url.push('?');
                url.push_str(&params.join("&"));
            }
            url.push_str(fragment);
            url
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::support::proptest_cases(512),
        ..ProptestConfig::default()
    })]

    /// `c(c(x)) == c(x)` in every profile, and explain agrees with normalize.
    #[test]
    fn idempotent_on_generated_urls(input in url_strategy()) {
        for n in [default_normalizer(), aggressive_normalizer()] {
            let once = n.normalize(&input);
            prop_assert!(!matches!(once, Err(InvalidUrl::Unstable)), "{input}");
            if let Ok(once) = once {
                let twice = n.normalize(once.as_str());
                prop_assert_eq!(twice.as_ref().map(url::Url::as_str), Ok(once.as_str()), "{}", input);
                let explained = n.explain(&input).map(|(u, _)| u);
                prop_assert_eq!(explained.as_ref(), Ok(&once));
                prop_assert!(once.fragment().is_none());
            }
        }
    }

    /// Arbitrary text after an http prefix never panics and is idempotent when accepted.
    #[test]
    fn arbitrary_text_never_panics(tail in "\\PC{0,40}", raw in ".{0,40}") {
        let n = aggressive_normalizer();
        for input in [format!("http://{tail}"), format!("https://h.example/{tail}?{raw}"), raw.clone()] {
            if let Ok(once) = n.normalize(&input) {
                let twice = n.normalize(once.as_str());
                prop_assert_eq!(twice.as_ref().map(url::Url::as_str), Ok(once.as_str()), "{}", input);
            }
        }
    }
}

/// Absolute http(s) links in the real pages of the test data (`href`/`src` values), capped.
pub(crate) fn real_page_links(dir: &Path, cap: usize) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack = vec![dir.join("readability-test-pages")];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut seen = HashSet::new();
    let mut links = Vec::new();
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for quoted in text.split(['"', '\'']) {
            if (quoted.starts_with("http://") || quoted.starts_with("https://"))
                && !quoted.contains(['<', '>', '\n', ' '])
                && seen.insert(quoted.replace("&amp;", "&"))
            {
                links.push(quoted.replace("&amp;", "&"));
                if links.len() >= cap {
                    return links;
                }
            }
        }
    }
    links
}

#[test]
fn real_links_are_fixpoints_and_explained_consistently() {
    let Some(dir) = testdata() else { return };
    let links = real_page_links(&dir, 20_000);
    assert!(links.len() > 1000, "only {} links found", links.len());
    let mut accepted = 0;
    let mut changed = 0;
    for n in [default_normalizer(), aggressive_normalizer()] {
        for (i, link) in links.iter().enumerate() {
            let Ok(once) = n.normalize(link) else {
                continue;
            };
            accepted += 1;
            changed += usize::from(url::Url::parse(link).is_ok_and(|p| p != once));
            let twice = n.normalize(once.as_str());
            assert_eq!(
                twice.as_ref().map(url::Url::as_str),
                Ok(once.as_str()),
                "{link}"
            );
            if i % 10 == 0 {
                let (explained, steps) = n.explain(link).expect("accepted above");
                assert_eq!(explained, once, "{link}");
                if let Some(last) = steps.last() {
                    assert_eq!(last.result, once.as_str(), "{link}");
                }
            }
        }
    }
    eprintln!(
        "real links: {} links, {accepted} accepted over two profiles, {changed} changed beyond parsing",
        links.len()
    );
    assert!(changed > 0);
}

/// The CLI (`undust canonicalize`) and the server (Canonicalize) agree on every generated input:
/// the same canonical form, or both refuse it (the CLI then echoes the line, the server answers
/// INVALID). Inputs are generated URLs and arbitrary text, with white space around them.
#[tokio::test]
async fn proptest_cli_and_server_agree_on_static_normalization() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    let cases = crate::support::proptest_cases(512) as usize;
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let padding = prop_oneof![
        Just(String::new()),
        Just(" ".to_owned()),
        Just("\t".to_owned()),
        Just("\u{a0}".to_owned()),
        Just("\u{3000}".to_owned()),
        Just("\u{85}".to_owned()),
        Just("\u{1}".to_owned()),
    ];
    let strategy = (
        prop_oneof![
            url_strategy(),
            "\\PC{0,40}",
            "https?://[a-zA-Z0-9.:@%\\[\\]-]{0,30}/\\PC{0,20}"
        ],
        padding.clone(),
        padding,
    )
        .prop_map(|(url, before, after)| format!("{before}{url}{after}"));
    let inputs: Vec<String> = (0..cases)
        .map(|_| strategy.new_tree(&mut runner).expect("generate").current())
        // One URL per line for the CLI.
        .filter(|input| !input.contains(['\n', '\r']))
        .collect();

    let server = crate::support::TestServer::start().await;
    let mut client = server.canonicalizer().await;
    let answers = crate::support::canonicalize_all(&mut client, &inputs, true).await;
    server.stop().await;

    let stdin: String = inputs.iter().map(|input| format!("{input}\n")).collect();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .arg("canonicalize")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run undust");
    {
        use std::io::Write as _;
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(stdin.as_bytes()).expect("write stdin");
    }
    let output = child.wait_with_output().expect("undust output");
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    let lines: Vec<&str> = stdout.split_terminator('\n').collect();
    assert_eq!(lines.len(), inputs.len());
    let mut disagreements = Vec::new();
    for ((input, answer), cli) in inputs.iter().zip(&answers).zip(&lines) {
        let server_form = if answer.decision == undust::pb::Decision::Invalid as i32 {
            input.as_str()
        } else {
            answer.canonical.as_str()
        };
        if server_form != *cli {
            disagreements.push(format!("{input:?}: server {server_form:?}, cli {cli:?}"));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} inputs disagree:\n{}",
        disagreements.len(),
        inputs.len(),
        disagreements.join("\n")
    );
}
