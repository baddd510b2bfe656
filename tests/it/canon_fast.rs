//! The fast path of static normalization (`canon::fast`) against the parser's path: the fast
//! path may only take an input that is its own static normalization, and must then hand out
//! exactly the parts the parsed URL has.
//!
//! - Every string of the third-party URL suites (WHATWG urltestdata with its relative inputs
//!   joined, urlcanon, w3lib, Nutch, StormCrawler, courlan, url-normalize, RFC 3986 examples,
//!   ClearURLs rule examples), the real pages' links and real crawl log URLs, and the generated
//!   corpus's URLs, under every static profile the product offers.
//! - Whole `Canonical`s with learned rules and mirror sets loaded (the canonicalize bench's
//!   fixtures), against the parser's path and against the learned half as it was written before
//!   the fast path (parsed URLs, `MirrorTable::fold_url`, `HostRules::apply`).
//! - Generated adversarial URL-ish strings.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::Value;
use undust::canon::engine::HostRules;
use undust::canon::fast::{recognize, recognize_form, FastForm};
use undust::canon::mirror::MirrorTable;
use undust::canon::normalize::{StaticConfig, StaticNormalizer};
use undust::canon::rules::{
    HostRuleSet, Key, MirrorAlias, MirrorSet, MirrorSite, Operation, Rule, SiteAction, SiteRule,
};
use undust::canon::view::UrlView;
use undust::canon::{Canonical, Canonicalizer};
use undust::corpus::{generate, CorpusConfig};
use undust::learn::{learn_host, LabelledUrl, LearnConfig};

use crate::static_canon::{example_name, real_page_links};
use crate::support::testdata;

/// Every static profile: the default, everything on, everything off, each switch flipped alone,
/// user tracking parameters, and a short length limit.
fn profiles() -> Vec<StaticConfig> {
    let default = StaticConfig::default();
    let mut all = vec![
        default.clone(),
        StaticConfig {
            sort_query: true,
            strip_www: true,
            extra_tracking_params: vec!["ref".into(), "aff_*".into()],
            ..default.clone()
        },
        StaticConfig {
            remove_tracking_params: false,
            remove_session_ids: false,
            sort_query: false,
            strip_www: false,
            strip_trailing_dot: false,
            remove_empty_params: false,
            strip_userinfo: false,
            ..default.clone()
        },
        StaticConfig {
            max_url_bytes: 40,
            ..default.clone()
        },
    ];
    let flips: [fn(&mut StaticConfig); 7] = [
        |c| c.remove_tracking_params ^= true,
        |c| c.remove_session_ids ^= true,
        |c| c.sort_query ^= true,
        |c| c.strip_www ^= true,
        |c| c.strip_trailing_dot ^= true,
        |c| c.remove_empty_params ^= true,
        |c| c.strip_userinfo ^= true,
    ];
    for flip in flips {
        let mut config = default.clone();
        flip(&mut config);
        all.push(config);
    }
    all
}

fn normalizer(config: StaticConfig) -> StaticNormalizer {
    StaticNormalizer::new(config).unwrap_or_else(|e| panic!("profile refused: {e}"))
}

/// How the fast path took an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Taken {
    /// The parser's way.
    Parsed,
    /// As its own static normalization (`recognize`).
    AsIs,
    /// With its path or query edited by static steps (`recognize_form`'s `Edited`).
    Edited,
}

/// How the fast path took `input`; fails the test when it took it wrongly: the parser's path
/// must then give the input back unchanged with the same parts (`recognize`, or
/// `recognize_form`'s `Input`), or give the text `recognize_form` wrote with the same parts,
/// and the two must agree where both take it.
fn check_fast(n: &StaticNormalizer, input: &str) -> Result<Taken, String> {
    let as_is = recognize(n, input);
    let form = recognize_form(n, input);
    // `recognize_form` takes all `recognize` takes, the same way, and more.
    let (text, view, taken) = match (&as_is, &form) {
        (None, None) => return Ok(Taken::Parsed),
        (Some(view), Some(FastForm::Input(same))) if view == same => {
            (input, view.clone(), Taken::AsIs)
        }
        (None, Some(FastForm::Input(view))) => (input, view.clone(), Taken::AsIs),
        (None, Some(FastForm::Edited(text))) => (text.as_str(), text.view(), Taken::Edited),
        _ => {
            return Err(format!(
                "{input:?}: recognize gives {as_is:?}, recognize_form {form:?}"
            ))
        }
    };
    let url = match n.normalize(input) {
        Ok(url) => url,
        Err(e) => return Err(format!("{input:?}: fast path took it, parser refused: {e}")),
    };
    if url.as_str() != text {
        return Err(format!(
            "{input:?}: fast path made {text:?}, the parser's path gives {:?}",
            url.as_str()
        ));
    }
    if UrlView::of(&url).as_ref() != Some(&view) {
        return Err(format!(
            "{input:?}: fast view {view:?}, parsed view {:?}",
            UrlView::of(&url)
        ));
    }
    Ok(taken)
}

/// Every string value inside a JSON document.
fn strings_of(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                out.insert(key.clone());
                strings_of(v, out);
            }
        }
        _ => {}
    }
}

/// Every string of the third-party URL suites and real URL lists, plus WHATWG relative inputs
/// joined to their base and ClearURLs' rules as example URLs.
fn suite_strings(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for suite in [
        "wpt-url-testdata",
        "urlcanon-testdata",
        "url-vectors-extracted",
    ] {
        let mut files: Vec<_> = fs::read_dir(dir.join(suite))
            .unwrap_or_else(|e| panic!("{suite}: {e}"))
            .flatten()
            .map(|entry| entry.path())
            .collect();
        files.sort();
        for file in files {
            let Ok(text) = fs::read_to_string(&file) else {
                continue;
            };
            match file.extension().and_then(|e| e.to_str()) {
                Some("json") => {
                    let value: Value = serde_json::from_str(&text)
                        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                    strings_of(&value, &mut out);
                }
                Some("jsonl") => {
                    for line in text.lines().filter(|l| !l.trim().is_empty()) {
                        let value: Value = serde_json::from_str(line)
                            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                        strings_of(&value, &mut out);
                    }
                }
                _ => {}
            }
        }
    }
    let wpt: Value = serde_json::from_str(
        &fs::read_to_string(dir.join("wpt-url-testdata/urltestdata.json")).expect("urltestdata"),
    )
    .expect("urltestdata is JSON");
    for case in wpt.as_array().into_iter().flatten() {
        let (Some(input), Some(base)) = (
            case.get("input").and_then(Value::as_str),
            case.get("base").and_then(Value::as_str),
        ) else {
            continue;
        };
        if let Some(joined) = url::Url::parse(base).ok().and_then(|b| b.join(input).ok()) {
            out.insert(joined.into());
        }
    }
    let clear: Value = serde_json::from_str(
        &fs::read_to_string(dir.join("clearurls-rules/data.min.json")).expect("ClearURLs rules"),
    )
    .expect("ClearURLs rules are JSON");
    for provider in clear["providers"].as_object().into_iter().flatten() {
        for rule in provider.1["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let name = example_name(rule);
            out.insert(format!("https://news.example.org/story?id=7&{name}=abc123"));
            out.insert(format!("https://news.example.org/story?{name}=abc123"));
        }
    }
    // Paths written as the query string, with parameters after them (Piwigo, CodeIgniter).
    for query in [
        "/123-img_2041/category/5-name&metadata",
        "/category/5/start-15&utm_source=x",
        "/tags/7-x/posted-monthly-list",
        "/blog/view/5?x=1",
        "/a//b&PHPSESSID=abc",
        "/%2e%2e/x",
    ] {
        out.insert(format!("http://g.example/gallery/index.php?{query}"));
    }
    out.extend(real_page_links(dir, 20_000));
    let captures = fs::read_to_string(dir.join("real-crawls-netarchivesuite/captures.tsv"))
        .expect("real crawl captures");
    out.extend(
        captures
            .lines()
            .skip(1)
            .filter_map(|line| line.split('\t').nth(1))
            .map(str::to_owned),
    );
    out
}

/// The canonicalize bench's fixtures: rules learned on a generated crawl, its URLs, and a
/// canonicalizer with the same rules plus one mirror set per site (a bare-host alias and a
/// folder alias) with URLs on the aliases.
fn fixtures() -> (Canonicalizer, Canonicalizer, Vec<String>) {
    let corpus = generate(&CorpusConfig::new(3, 1).with_pages(200, 800));
    let n = normalizer(StaticConfig::default());
    let plain = Canonicalizer::new(n.clone());
    let mirrored = Canonicalizer::new(n.clone());
    let mut urls = Vec::new();
    let mut sets = Vec::new();
    for (i, site) in corpus.sites.iter().enumerate() {
        let labelled: Vec<LabelledUrl> = site
            .pages
            .iter()
            .filter_map(|p| {
                let url = n.normalize(&p.url).ok()?;
                Some(LabelledUrl {
                    url: url.into(),
                    cluster: p.content_id,
                })
            })
            .collect();
        if let Ok(outcome) = learn_host(&site.host, &labelled, &LearnConfig::default()) {
            if let Ok(compiled) = HostRules::compile(&outcome.rules) {
                let compiled = Arc::new(compiled);
                plain.rules().swap(&site.host, Arc::clone(&compiled));
                mirrored.rules().swap(&site.host, compiled);
            }
        }
        let Some(first) = site
            .pages
            .first()
            .and_then(|p| url::Url::parse(&p.url).ok())
        else {
            continue;
        };
        let origin = first.origin().ascii_serialization();
        let alias = |origin: String, path_prefix: String| MirrorAlias {
            site: MirrorSite {
                origin,
                path_prefix,
            },
            pinned: false,
            evidence: None,
        };
        sets.push(MirrorSet {
            id: format!("mirror:{origin}"),
            canonical: MirrorSite {
                origin: origin.clone(),
                path_prefix: String::new(),
            },
            aliases: vec![
                alias(format!("http://alias{i}.example"), String::new()),
                alias("http://mirror.example.edu".into(), format!("/pub/site{i}")),
            ],
            forbidden: vec![],
        });
        for (j, page) in site.pages.iter().enumerate() {
            urls.push(page.url.clone());
            if let Some(rest) = page.url.strip_prefix(&origin) {
                urls.push(if j % 2 == 0 {
                    format!("http://alias{i}.example{rest}")
                } else {
                    format!("http://mirror.example.edu/pub/site{i}{rest}")
                });
            }
            urls.extend(page.canonical.clone());
            urls.extend(page.final_url.clone());
        }
    }
    // A forge's rules: defaults dropped at their values (a profile's tab beside the user only),
    // case folded in the first two segments, a shop script's path pairs read as its query, and
    // commits' ids cut to their abbreviation.
    let forge = HostRuleSet {
        host: "forge.example".into(),
        version: 1,
        learned_at_unix_ms: 0,
        site_rules: [
            SiteAction::IgnoreParamValue {
                name: "state".into(),
                value: "open".into(),
                beside: None,
            },
            SiteAction::IgnoreParamValue {
                name: "page".into(),
                value: "1".into(),
                beside: None,
            },
            SiteAction::IgnoreParamValue {
                name: "tab".into(),
                value: "overview".into(),
                beside: Some("user".into()),
            },
            SiteAction::LowercaseSegments { segments: 2 },
            SiteAction::SortQuery,
            SiteAction::PathPairsToQuery {
                script: "/shop/product_info.php".into(),
            },
            SiteAction::AbbreviatedHash {
                after: "commit".into(),
                length: 10,
            },
        ]
        .into_iter()
        .enumerate()
        .map(|(i, action)| SiteRule {
            id: format!("forge.example#s{i}"),
            action,
            support: 3,
            support_clusters: 3,
            false_positive_rate: 0.0,
            pooled: None,
        })
        .collect(),
        rules: Vec::new(),
        aliases: Vec::new(),
    };
    let forge = Arc::new(HostRules::compile(&forge).expect("valid forge rules"));
    plain.rules().swap("forge.example", Arc::clone(&forge));
    mirrored.rules().swap("forge.example", forge);
    for path in [
        "/Owner/Repo/issues?state=open&page=1",
        "/owner/repo/issues?page=2&state=open",
        "/profile?user=ann&tab=overview",
        "/profile?tab=overview",
        "/Owner/Repo/issues?state=closed&utm_source=x",
        "/Owner/Repo/src/branch/main/xt_DSCP.h",
        "/OWNER/",
        "/Owner/Re%C3%A9po/src/Main?page=10",
        "/owner/repo",
        "/shop/product_info.php/cPath/3_10/products_id/5",
        "/shop/product_info.php/products_id/5/?osCsid=1&page=1",
        "/shop/product_info.php/products_id/5/extra",
        "/shop/product_info.php/products_id/5?products_id=6",
        "/Shop/product_info.php/products_id/caf%C3%A9",
        "/shop/product_info.php/products_id/a%20b/cPath/7",
        "/Owner/Repo/commit/f3e1a67f984c504e29c5293461d29721d5924f03",
        "/owner/repo/commit/f3e1a67f98?page=1",
        "/owner/repo/src/commit/f3e1a67f984c504e29c5293461d29721d5924f03/a.md",
        "/owner/repo/commit/F3E1A67F984C504E29C5293461D29721D5924F03",
        "/owner/repo/commit/",
    ] {
        urls.push(format!("http://forge.example{path}"));
        urls.push(format!("https://forge.example:8443{path}"));
    }
    // A content tree's rule learned on documents, its `*` fenced off files
    // (`Rule::not_files`): `/f/doc/view` ≡ `/f/doc`, while `/f/scan.pdf/view` stays.
    let key = |text: &str| -> Key { text.parse().expect("a key") };
    let tree = HostRuleSet {
        host: "tree.example".into(),
        version: 1,
        learned_at_unix_ms: 0,
        site_rules: Vec::new(),
        rules: vec![Rule {
            id: "tree.example#1".into(),
            source_pattern: "http://tree.example/f/*/view".into(),
            target_pattern: "http://tree.example/f/*".into(),
            operations: vec![
                Operation::Keep {
                    key: key("scheme"),
                    value: "http".into(),
                },
                Operation::Keep {
                    key: key("auth_0"),
                    value: "tree".into(),
                },
                Operation::Keep {
                    key: key("auth_1"),
                    value: "example".into(),
                },
                Operation::Keep {
                    key: key("path_0"),
                    value: "f".into(),
                },
                Operation::Replace {
                    key: key("path_1"),
                    from: key("path_1"),
                    lowercase: false,
                    extract: None,
                },
                Operation::Ignore {
                    key: key("path_2"),
                    fill: None,
                },
            ],
            support: 4,
            false_positive_rate: 0.0,
            support_clusters: 2,
            not_files: vec![key("path_1")],
        }],
        aliases: Vec::new(),
    };
    let tree = Arc::new(HostRules::compile(&tree).expect("valid tree rules"));
    plain.rules().swap("tree.example", Arc::clone(&tree));
    mirrored.rules().swap("tree.example", tree);
    for path in [
        "/f/report/view",
        "/f/scan.pdf/view",
        "/f/Photo.JPG/view",
        "/f/v1.2/view",
        "/f/a%2Epdf/view",
        "/f/report/view?utm_source=x",
        "/f/scan.pdf/view;jsessionid=0123456789abcdef",
        "/f/.htaccess/view",
    ] {
        urls.push(format!("http://tree.example{path}"));
    }
    mirrored.set_mirrors(Arc::new(
        MirrorTable::compile(&sets).expect("valid mirror sets"),
    ));
    (plain, mirrored, urls)
}

/// The learned half as written before the fast path: parsed URLs, `fold_url`, `HostRules::apply`.
fn canonical_before(c: &Canonicalizer, input: &str) -> Option<Canonical> {
    let url = c.normalize(input).ok()?;
    let mirrors = c.mirrors();
    let normalized = url.to_string();
    let changed_static = normalized != input;
    if let Some(folded) = mirrors.fold_url(&url) {
        let rules = c.rules_for_folded(&url, &folded);
        let rewrite = rules.and_then(|rules| rules.apply(&folded));
        return Some(Canonical {
            canonical: rewrite
                .as_ref()
                .map_or_else(|| folded.to_string(), |r| r.canonical.clone()),
            normalized: Some(normalized),
            changed_static,
            learned: true,
            rule_index: rewrite.and_then(|r| r.rule_index),
            mirrored: true,
        });
    }
    let rules = url.host_str().and_then(|host| c.rules().get(host));
    Some(match rules.and_then(|rules| rules.apply(&url)) {
        Some(rewrite) => Canonical {
            canonical: rewrite.canonical,
            normalized: Some(normalized),
            changed_static,
            learned: true,
            rule_index: rewrite.rule_index,
            mirrored: false,
        },
        None => Canonical {
            canonical: normalized,
            normalized: None,
            changed_static,
            learned: false,
            rule_index: None,
            mirrored: false,
        },
    })
}

/// The fields of a `Canonical`, comparable.
fn fields(c: &Canonical) -> (&str, Option<&str>, bool, bool, Option<usize>, bool) {
    (
        &c.canonical,
        c.normalized.as_deref(),
        c.changed_static,
        c.learned,
        c.rule_index,
        c.mirrored,
    )
}

#[test]
fn fast_path_equals_the_parser_on_every_suite_url_under_every_profile() {
    let Some(dir) = testdata() else { return };
    let mut inputs = suite_strings(&dir);
    let (_, _, corpus_urls) = fixtures();
    inputs.extend(corpus_urls);
    assert!(inputs.len() > 20_000, "only {} inputs", inputs.len());
    let mut failures = Vec::new();
    let mut taken = Vec::new();
    for config in profiles() {
        let n = normalizer(config.clone());
        let (mut fast, mut edited) = (0usize, 0usize);
        for input in &inputs {
            match check_fast(&n, input) {
                Ok(how) => {
                    fast += usize::from(how == Taken::AsIs);
                    edited += usize::from(how == Taken::Edited);
                }
                Err(failure) => failures.push(failure),
            }
        }
        eprintln!(
            "fast path: {fast} of {} inputs as they are, {edited} edited, under {config:?}",
            inputs.len()
        );
        taken.push((config, fast, edited));
    }
    assert!(
        failures.is_empty(),
        "{} failures, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(10)]
    );
    for (config, fast, edited) in taken {
        // The suites are mostly URLs a step changes; the corpus and real links give the fast
        // path real work, so a recognizer that refused everything would be caught here.
        assert!(fast > 1_000, "fast path took only {fast} inputs");
        // The corpus's session ids and tracking parameters, under the profiles that remove
        // them, give the edited form real work too.
        if config.remove_session_ids
            && config.remove_tracking_params
            && config.max_url_bytes == StaticConfig::default().max_url_bytes
        {
            assert!(edited > 300, "fast path edited only {edited} inputs");
        }
    }
}

#[test]
fn whole_canonicals_are_unchanged_with_rules_and_mirror_sets_loaded() {
    let (plain, mirrored, mut inputs) = fixtures();
    if let Some(dir) = testdata() {
        inputs.extend(suite_strings(&dir));
    }
    let (mut fast, mut learned, mut folded) = (0usize, 0usize, 0usize);
    for c in [&plain, &mirrored] {
        for input in &inputs {
            let now = c.canonicalize(input).ok();
            let parsed = c.canonicalize_parsed(input).ok();
            let before = canonical_before(c, input);
            assert_eq!(
                now.as_ref().map(fields),
                parsed.as_ref().map(fields),
                "{input:?}: fast path against the parser's path"
            );
            assert_eq!(
                now.as_ref().map(fields),
                before.as_ref().map(fields),
                "{input:?}: against the learned half before the fast path"
            );
            fast += usize::from(recognize(c.normalizer(), input).is_some());
            learned += usize::from(now.as_ref().is_some_and(|c| c.learned));
            folded += usize::from(now.as_ref().is_some_and(|c| c.mirrored));
        }
    }
    eprintln!(
        "canonicals: {} inputs twice, {fast} on the fast path, {learned} learned, {folded} folded",
        inputs.len()
    );
    assert!(fast > 1_000 && learned > 100 && folded > 100);
}

/// URL-ish strings near the fast path's boundary: every part drawn from canonical and
/// non-canonical spellings.
fn adversarial_url() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec![
        "http://",
        "https://",
        "HTTP://",
        "htTps://",
        "http:/",
        "http:",
        "http:///",
        "http:\\\\",
        "https:\\/",
        " http://",
        "\thttp://",
        "ftp://",
        "http://u@",
        "https://u:p@",
        "http://:@",
    ]);
    let label = prop::sample::select(vec![
        "example",
        "Example",
        "www",
        "a-b",
        "-a",
        "a-",
        "a--b",
        "xn--r8jz45g",
        "XN--r8jz45g",
        "xn--",
        "xn--a",
        "bücher",
        "例え",
        "0",
        "09",
        "0x1f",
        "1e",
        "com",
        "c0m",
        "3com",
        "a_b",
        "",
        "%41",
        "a%2eb",
        "ｅｘａｍｐｌｅ",
        "l23456789012345678901234567890123456789012345678901234567890123",
        "l234567890123456789012345678901234567890123456789012345678901234",
    ]);
    let host = prop_oneof![
        4 => prop::collection::vec(label, 1..5).prop_map(|labels| labels.join(".")),
        1 => prop::sample::select(vec![
            "127.0.0.1", "1.2.3", "0x7f.1", "[::1]", "[::FFFF:1.2.3.4]", "[1::", "010.0.0.1",
            "1.2.3.4.", "example.com.", "example..com", ".example.com", "www.com", "www.x.org",
        ])
        .prop_map(str::to_owned),
    ];
    let port = prop::sample::select(vec![
        "", "", "", ":", ":0", ":00", ":80", ":443", ":080", ":8080", ":65535", ":65536", ":99999",
        ":123456", ":1a", ":+1",
    ]);
    let segment = prop::sample::select(vec![
        "a",
        "B",
        "",
        ".",
        "..",
        ".a",
        "a.",
        "...",
        "%2e",
        "%2E",
        ".%2e",
        "%2e%2E",
        "%",
        "%4",
        "%zz",
        "%41",
        "%7e",
        "%7E",
        "%2F",
        "%2f",
        "%20",
        "%C3%A9",
        "%c3%A9",
        "%25",
        "%252e",
        "é",
        "a b",
        "a\tb",
        "a\nb",
        "a\\b",
        "^",
        "|",
        "[x]",
        "{x}",
        "`",
        "\"",
        "<",
        ">",
        "'",
        "~",
        "!$&'()*+,;=:@",
        "x;jsessionid=0123456789abcdef0123",
        "..;jsessionid=0123456789abcdef0123",
        ".;jsessionid=0123456789abcdef0123",
        "a;b=1;jsessionid=0123456789abcdef0123;c",
        "a;",
        "(S(4hqa0555fwsecu455xqckv45));jsessionid=0123456789abcdef0123",
        "(S(4hqa0555fwsecu455xqckv45))",
        "foo(bar)",
        "index.html",
        "\u{7f}",
        "\u{0}",
        "\u{a0}",
        "%00",
    ]);
    let param = prop::sample::select(vec![
        "",
        "id=3",
        "q=a+b",
        "a",
        "=",
        "b=",
        "utm_source=x",
        "UTM_Medium=y",
        "gclid=1",
        "sid=3",
        "sid=9682993c8daa2c5497996114facdc805",
        "PHPSESSID=abc",
        "ref=1",
        "aff_id=2",
        "x=1;jsessionid=abcdef0123456789",
        "sid=9682993c8daa2c5497996114facdc805;jsessionid=abcdef0123456789",
        "x=1;sid=9682993c8daa2c5497996114facdc805",
        "utm_source=x;topic=5.0",
        "topic=5.0;gclid=1",
        "utm_source=x;utm_medium=y",
        "fbclid=2&",
        "k=%7e",
        "k=%7E",
        "k=%2F",
        "k=%2f",
        "k=%",
        "k='v'",
        "k=?",
        "k=/",
        "k=é",
        "k=a b",
        "k=\\",
        "k=^",
        "z=1",
        "a=2",
        "%61=1",
        "k=%C3%A9",
        // Paths written as the query string (Piwigo, CodeIgniter).
        "/123-img_2041/category/5-name",
        "/category/5/start-15",
        "/a//b",
        "/../x",
        "/a/",
        "/",
    ]);
    let query = prop::option::of(prop::collection::vec(param, 0..5));
    let fragment = prop::sample::select(vec!["", "", "", "#", "#top", "#a b", "#?q"]);
    let tail = prop::sample::select(vec!["", "", "", " ", "\t", "\n", "\r\n", "\u{0}"]);
    (
        scheme,
        host,
        port,
        prop::option::of(prop::collection::vec(segment, 0..5)),
        query,
        fragment,
        tail,
    )
        .prop_map(|(scheme, host, port, segments, query, fragment, tail)| {
            let mut url = format!("{scheme}{host}{port}");
            if let Some(segments) = segments {
                for s in segments {
                    url.push('/');
                    url.push_str(s);
                }
            }
            if let Some(params) = query {
                url.push('?');
                url.push_str(&params.join("&"));
            }
            url.push_str(fragment);
            url.push_str(tail);
            url
        })
}

/// A URL the fast path takes, with one byte of an interesting kind put in at one place.
fn one_byte_off() -> impl Strategy<Value = String> {
    let base = prop::sample::select(vec![
        "http://example.com/a/b.html?x=1&y=2",
        "https://shop.example:8080/p/12?id=3",
        "http://a.b.c/%C3%A9/x?q=%2F",
        "http://example.com/a;jsessionid=0123456789ABCDEF0123/b?utm_source=x&y=2",
        "http://g.example/picture.php?/123-img_2041/category/5-name&metadata",
    ]);
    let byte = prop::sample::select(vec![
        'A', '.', '/', '%', '?', '#', '@', ':', '\\', ' ', '\t', '\n', '\'', '^', '|', '[', '&',
        '=', ';', '(', '0', 'é', '\u{0}', '~', '-', '_',
    ]);
    (base, 0usize..40, byte).prop_map(|(base, at, byte)| {
        let mut s = base.to_owned();
        let at = at.min(s.len());
        s.insert(at, byte);
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::support::proptest_cases(2048),
        ..ProptestConfig::default()
    })]

    /// Whatever the fast path takes, the parser's path gives back unchanged with the same parts,
    /// in the default, everything-on and everything-off profiles.
    #[test]
    fn fast_path_equals_the_parser_on_adversarial_strings(
        input in prop_oneof![3 => adversarial_url(), 1 => one_byte_off()]
    ) {
        for config in profiles().into_iter().take(3) {
            let n = normalizer(config);
            if let Err(failure) = check_fast(&n, &input) {
                prop_assert!(false, "{}", failure);
            }
        }
    }
}
