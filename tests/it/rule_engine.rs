//! The compiled rule engine (`HostRules::apply`, reached through `Canonicalizer::canonicalize`)
//! gives exactly what its rules say, written here the slow, obvious way: site rules rewrite the
//! URL's text, which is parsed again; every pattern rule is tried in turn (`Pattern::matches`),
//! the one with most literals winning, ties by rule order; the winner's operations are written
//! entry by entry in URL order; a rewrite that a rule matches again is rewritten again.
//!
//! The engine does none of that the slow way (shape index, outputs laid out at compile time, no
//! second parse after the site rules, a per-thread key buffer), so this is the check that its
//! shortcuts change no output. Rules are learned from a generated multi-site crawl; URLs are
//! that crawl's, with case, parameter, order and slash variations added.
//!
//! Mirror folding is checked the same way: the reference folds a URL by replacing its alias
//! origin and path prefix in the text and parsing the result, and takes the canonical host's
//! rules (or, for a whole-origin alias of a canonical without rules, the alias host's), where
//! the engine swaps the parts of a borrowed view. A hand-written host with a lower-casing rule
//! and a case-keeping one, on mixed-case values, checks that only the rule that says so
//! lower-cases.

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use undust::canon::engine::HostRules;
use undust::canon::mirror::MirrorTable;
use undust::canon::normalize::{StaticConfig, StaticNormalizer};
use undust::canon::rules::key::escape_for;
use undust::canon::rules::{
    decompose, HostRuleSet, KeyRef, MirrorAlias, MirrorSet, MirrorSite, Operation, Pattern, Rule,
    SiteAction, SiteRewriter, SiteRule,
};
use undust::canon::Canonicalizer;
use undust::corpus::{generate, CorpusConfig};
use undust::learn::{learn_host, LabelledUrl, LearnConfig};
use url::Url;

/// Learned rule sets (with site rules and pattern rules) and the crawl's URLs; the same rules
/// with mirror sets loaded and URLs on their aliases.
struct Fixture {
    sets: Vec<HostRuleSet>,
    urls: Vec<String>,
    canonicalizer: Canonicalizer,
    mirror_sets: Vec<MirrorSet>,
    mirror_urls: Vec<String>,
    mirrored: Canonicalizer,
}

/// The host of the hand-written rules with mixed-case values.
const CASE_HOST: &str = "case.example";

fn op_keep(key: &str, value: &str) -> Operation {
    Operation::Keep {
        key: key.parse().expect("key"),
        value: value.into(),
    }
}

fn op_replace(key: &str, from: &str, lowercase: bool) -> Operation {
    Operation::Replace {
        key: key.parse().expect("key"),
        from: from.parse().expect("key"),
        lowercase,
        extract: None,
    }
}

/// `case.example`: `/item.php?id=V` is `/item/v` (the id lower-cased), `/show.php?name=V` is
/// `/show?name=V` (the name kept as it is), and `sid` is dropped everywhere.
fn case_rules() -> HostRuleSet {
    let host = [
        op_keep("scheme", "http"),
        op_keep("auth_0", "case"),
        op_keep("auth_1", "example"),
    ];
    let rule = |id: &str, source: &str, target: &str, ops: &[Operation]| Rule {
        id: id.into(),
        source_pattern: source.into(),
        target_pattern: target.into(),
        operations: host.iter().chain(ops).cloned().collect(),
        support: 2,
        false_positive_rate: 0.0,
        support_clusters: 1,
        not_files: Vec::new(),
    };
    HostRuleSet {
        host: CASE_HOST.into(),
        version: 1,
        learned_at_unix_ms: 0,
        site_rules: vec![SiteRule {
            id: "case.example#s1".into(),
            action: SiteAction::IgnoreParam {
                name: "sid".into(),
                beside: None,
            },
            support: 2,
            support_clusters: 1,
            false_positive_rate: 0.0,
            pooled: None,
        }],
        rules: vec![
            rule(
                "case.example#1",
                "http://case.example/item.php?id=*",
                "http://case.example/item/*",
                &[
                    op_keep("path_0", "item"),
                    op_replace("path_1", "query:id", true),
                ],
            ),
            rule(
                "case.example#2",
                "http://case.example/show.php?name=*",
                "http://case.example/show?name=*",
                &[
                    op_keep("path_0", "show"),
                    op_replace("query:name", "query:name", false),
                ],
            ),
        ],
        aliases: Vec::new(),
    }
}

/// URLs of `case.example` with mixed-case values.
fn case_urls() -> Vec<String> {
    [
        "http://case.example/item.php?id=AbC",
        "http://case.example/item.php?id=abc",
        "http://case.example/item.php?id=A%2FbC&sid=9F",
        "http://case.example/show.php?name=MiXeD",
        "http://case.example/show.php?sid=1&name=Q%C3%A9Z",
        "http://case.example/Show.php?name=MiXeD",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The host of the hand-written rules on addresses spelled in several shapes.
const SHAPES_HOST: &str = "shapes.example";

/// `shapes.example`: SMF's links written as templated segments
/// (`/index.php/topic,V.html` is `/index.php?topic=V`), bare topic ids completed with the
/// offset `.0`, Discourse's default category view `/l/latest` dropped, `sid` dropped, the
/// script's path pairs read as its query (`/index.php/topic/5` is `/index.php?topic=5`); and a
/// pattern rule moving the topic into the path (`/index.php?topic=*` is `/t/*`), so the site
/// actions' output is what the pattern rule reads and the path actions run again after it.
fn shapes_rules() -> HostRuleSet {
    let site = |n: usize, action: SiteAction| SiteRule {
        id: format!("{SHAPES_HOST}#s{n}"),
        action,
        support: 2,
        support_clusters: 1,
        false_positive_rate: 0.0,
        pooled: None,
    };
    HostRuleSet {
        host: SHAPES_HOST.into(),
        version: 1,
        learned_at_unix_ms: 0,
        site_rules: vec![
            site(
                1,
                SiteAction::TemplatedSegmentToQuery {
                    dir: "/index.php/".into(),
                    before: "topic,".into(),
                    after: ".html".into(),
                    script: "/index.php".into(),
                    name: "topic".into(),
                    numbers: false,
                    fixed: String::new(),
                    titled: false,
                },
            ),
            site(
                2,
                SiteAction::DefaultValueSuffix {
                    name: "topic".into(),
                    suffix: ".0".into(),
                },
            ),
            site(
                3,
                SiteAction::DefaultViewTail {
                    tail: "/l/latest".into(),
                },
            ),
            site(
                4,
                SiteAction::IgnoreParam {
                    name: "sid".into(),
                    beside: None,
                },
            ),
            site(
                5,
                SiteAction::PathPairsToQuery {
                    script: "/index.php".into(),
                },
            ),
            site(
                6,
                SiteAction::AbbreviatedHash {
                    after: "commit".into(),
                    length: 7,
                },
            ),
        ],
        rules: vec![Rule {
            id: format!("{SHAPES_HOST}#1"),
            source_pattern: "http://shapes.example/index.php?topic=*".into(),
            target_pattern: "http://shapes.example/t/*".into(),
            operations: vec![
                op_keep("scheme", "http"),
                op_keep("auth_0", "shapes"),
                op_keep("auth_1", "example"),
                op_keep("path_0", "t"),
                op_replace("path_1", "query:topic", false),
            ],
            support: 2,
            false_positive_rate: 0.0,
            support_clusters: 1,
            not_files: Vec::new(),
        }],
        aliases: Vec::new(),
    }
}

/// URLs of `shapes.example`: every spelling the rules join, and their neighbours they must not.
fn shapes_urls() -> Vec<String> {
    [
        "http://shapes.example/index.php/topic,5.0.html",
        "http://shapes.example/index.php/topic,5.15.html?sid=1",
        "http://shapes.example/index.php?topic=5",
        "http://shapes.example/index.php?sid=2&topic=5",
        "http://shapes.example/index.php?topic=5.15",
        "http://shapes.example/index.php/board,3.0.html",
        "http://shapes.example/index.php/topic,it's.html",
        "http://shapes.example/index.php/topic,5.0.html/l/latest",
        "http://shapes.example/Index.php/topic,5.0.html",
        "http://shapes.example/c/news/5/l/latest",
        "http://shapes.example/c/news/5/l/latest?page=2",
        "http://shapes.example/c/news/5/l/top",
        "http://shapes.example/c/news/5",
        "http://shapes.example/l/latest",
        "http://shapes.example/t/5.0/l/latest",
        "http://shapes.example/index.php/topic/5",
        "http://shapes.example/index.php/topic/5/sid/9",
        "http://shapes.example/index.php/topic/5?topic=6",
        "http://shapes.example/index.php/topic/5/l/latest",
        "http://shapes.example/index.php/board/3?sid=1",
        "http://shapes.example/r/commit/f3e1a67f984c504e29c5293461d29721d5924f03",
        "http://shapes.example/r/commit/f3e1a67/l/latest",
        "http://shapes.example/index.php/commit/f3e1a67f98?sid=3",
        "http://shapes.example/r/commit/f3e1a6",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// One mirror set per site, three kinds in turn: the site canonical with a whole-origin alias
/// and a folder alias; a rule-less canonical the site is a whole-origin alias of (so the site's
/// own rules answer) beside a folder alias; a canonical under a folder that the site and another
/// origin are aliases of. Returns the sets and URLs on every alias.
fn mirror_fixture(origins: &[(String, Vec<String>)]) -> (Vec<MirrorSet>, Vec<String>) {
    let site = |origin: &str, path_prefix: &str| MirrorSite {
        origin: origin.into(),
        path_prefix: path_prefix.into(),
    };
    let mut sets = Vec::new();
    let mut urls = Vec::new();
    for (i, (origin, site_urls)) in origins.iter().enumerate() {
        let alias = format!("http://alias{i}.example");
        let folder = format!("/pub/site{i}");
        let (canonical, aliases) = match i % 3 {
            0 => (
                site(origin, ""),
                vec![site(&alias, ""), site("http://mirror.example.edu", &folder)],
            ),
            1 => (
                site(&format!("https://canonical{i}.example"), ""),
                vec![site(origin, ""), site("http://mirror.example.edu", &folder)],
            ),
            _ => (
                site("http://archive.example.net", &format!("/sites/site{i}")),
                vec![site(origin, ""), site(&alias, "")],
            ),
        };
        for url in site_urls {
            let Some(rest) = url.strip_prefix(origin.as_str()) else {
                continue;
            };
            for a in &aliases {
                urls.push(format!("{}{}{rest}", a.origin, a.path_prefix));
            }
        }
        sets.push(MirrorSet {
            id: format!("mirror:{i}"),
            canonical,
            aliases: aliases
                .into_iter()
                .map(|site| MirrorAlias {
                    site,
                    pinned: false,
                    evidence: None,
                })
                .collect(),
            forbidden: vec![],
        });
    }
    (sets, urls)
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let corpus = generate(&CorpusConfig::new(11, 1).with_pages(300, 600));
        let normalizer = StaticNormalizer::new(StaticConfig::default()).expect("default config");
        let canonicalizer = Canonicalizer::new(normalizer.clone());
        let mut sets = Vec::new();
        let mut urls = Vec::new();
        let mut origins = Vec::new();
        for site in &corpus.sites {
            let labelled: Vec<LabelledUrl> = site
                .pages
                .iter()
                .filter_map(|p| {
                    let url = normalizer.normalize(&p.url).ok()?;
                    Some(LabelledUrl {
                        url: url.into(),
                        cluster: p.content_id,
                    })
                })
                .collect();
            let set = learn_host(&site.host, &labelled, &LearnConfig::default())
                .expect("learn")
                .rules;
            let compiled = HostRules::compile(&set).expect("learned rules compile");
            canonicalizer.rules().swap(&set.host, Arc::new(compiled));
            sets.push(set);
            urls.extend(site.pages.iter().map(|p| p.url.clone()));
            let origin = Url::parse(&site.pages[0].url).expect("a crawl URL parses");
            origins.push((
                origin.origin().ascii_serialization(),
                site.pages.iter().map(|p| p.url.clone()).collect(),
            ));
        }
        let case = case_rules();
        let compiled = HostRules::compile(&case).expect("the case rules compile");
        canonicalizer.rules().swap(&case.host, Arc::new(compiled));
        sets.push(case);
        urls.extend(case_urls());
        let shapes = shapes_rules();
        let compiled = HostRules::compile(&shapes).expect("the shapes rules compile");
        canonicalizer.rules().swap(&shapes.host, Arc::new(compiled));
        sets.push(shapes);
        urls.extend(shapes_urls());
        let (mirror_sets, mirror_urls) = mirror_fixture(&origins);
        let mirrored = Canonicalizer::new(normalizer);
        for set in &sets {
            let compiled = HostRules::compile(set).expect("rules compile");
            mirrored.rules().swap(&set.host, Arc::new(compiled));
        }
        mirrored.set_mirrors(Arc::new(
            MirrorTable::compile(&mirror_sets).expect("valid mirror sets"),
        ));
        Fixture {
            sets,
            urls,
            canonicalizer,
            mirror_sets,
            mirror_urls,
            mirrored,
        }
    })
}

/// Most literals first, then rule order: the rule the engine must pick among those matching.
fn best_rule<'a>(
    set: &'a HostRuleSet,
    kv: &[(KeyRef<'_>, &str)],
) -> Option<&'a undust::canon::rules::Rule> {
    set.rules
        .iter()
        .filter_map(|rule| {
            let source = Pattern::parse(&rule.source_pattern).ok()?;
            source
                .matches(kv)
                .then(|| (std::cmp::Reverse(source.literal_count()), rule))
        })
        .min_by_key(|(literals, _)| *literals)
        .map(|(_, rule)| rule)
}

/// The rule's output for a decomposed URL, entries written in URL order; `None` when a value
/// lacks the number the rule extracts.
fn write_rule(rule: &undust::canon::rules::Rule, kv: &[(KeyRef<'_>, &str)]) -> Option<String> {
    let mut entries: Vec<(KeyRef<'_>, String)> = Vec::new();
    for op in &rule.operations {
        match op {
            Operation::Keep { key, value }
            | Operation::Ignore {
                key,
                fill: Some(value),
            } => entries.push((key.as_ref(), value.clone())),
            Operation::Replace {
                key,
                from,
                lowercase,
                extract,
            } => {
                let (_, value) = kv.iter().find(|(k, _)| *k == from.as_ref())?;
                let mut value = match extract {
                    Some(e) => e.apply(value)?.to_owned(),
                    None => (*value).to_owned(),
                };
                if *lowercase {
                    value = value.to_ascii_lowercase();
                }
                if from.component() != key.component() {
                    if let Some(escaped) = escape_for(key.component(), &value) {
                        value = escaped;
                    }
                }
                entries.push((key.as_ref(), value));
            }
            Operation::Ignore { fill: None, .. } => {}
        }
    }
    let value_of = |wanted: KeyRef<'_>| {
        entries
            .iter()
            .find(|(k, _)| *k == wanted)
            .map(|(_, v)| v.as_str())
    };
    let mut out = String::new();
    out.push_str(value_of(KeyRef::Scheme).unwrap_or("http"));
    out.push_str("://");
    let mut labels: Vec<(u16, &str)> = entries
        .iter()
        .filter_map(|(k, v)| match k {
            KeyRef::Auth(i) => Some((*i, v.as_str())),
            _ => None,
        })
        .collect();
    labels.sort_by_key(|(i, _)| *i);
    let host: Vec<&str> = labels.iter().map(|(_, l)| *l).collect();
    out.push_str(&host.join("."));
    if let Some(port) = value_of(KeyRef::Port) {
        out.push(':');
        out.push_str(port);
    }
    let mut segments: Vec<(u16, &str)> = entries
        .iter()
        .filter_map(|(k, v)| match k {
            KeyRef::Path(i) => Some((*i, v.as_str())),
            _ => None,
        })
        .collect();
    segments.sort_by_key(|(i, _)| *i);
    if segments.is_empty() {
        out.push('/');
    }
    for (i, segment) in segments {
        out.push('/');
        out.push_str(segment);
        for (k, v) in &entries {
            if let KeyRef::PathParam { segment, name, .. } = k {
                if *segment == i {
                    out.push_str(&format!(";{name}={v}"));
                }
            }
        }
    }
    let query: Vec<String> = entries
        .iter()
        .filter_map(|(k, v)| match k {
            KeyRef::Query { name, .. } => Some(format!("{name}={v}")),
            _ => None,
        })
        .collect();
    if !query.is_empty() {
        out.push('?');
        out.push_str(&query.join("&"));
    }
    Some(out)
}

/// What the rules of `set` make of a statically normalized URL, the slow way; `None` when
/// they leave it as it is.
fn reference(set: &HostRuleSet, url: &Url) -> Option<String> {
    let site = SiteRewriter::new(set.site_rules.iter().map(|r| &r.action));
    let site_text = site.rewrite(url);
    let mut current = match &site_text {
        Some(text) => Url::parse(text).expect("a site rewrite parses"),
        None => url.clone(),
    };
    let mut first_rule = None;
    let mut text: Option<String> = None;
    // Compiled rule sets have no cycles, so a chain ends within as many steps as there are rules.
    for _ in 0..=set.rules.len() {
        let mut kv = Vec::new();
        if decompose(&current, &mut kv).is_err() {
            break;
        }
        let Some(rule) = best_rule(set, &kv) else {
            break;
        };
        let Some(out) = write_rule(rule, &kv) else {
            break;
        };
        if text.as_deref() == Some(out.as_str()) {
            break;
        }
        first_rule.get_or_insert(rule);
        text = Some(out);
        match Url::parse(text.as_deref().unwrap_or_default()) {
            Ok(next) => current = next,
            Err(_) => break,
        }
    }
    let Some(rewritten) = text else {
        return site_text;
    };
    // A value moved from the query into the path may need the site's path actions again.
    let moves_values = first_rule.is_some_and(|rule| {
        rule.operations.iter().any(|op| {
            matches!(op, Operation::Replace { key, from, .. }
                if key.component() != from.component()
                    && matches!(key, undust::canon::rules::Key::Path(_)))
        })
    });
    if moves_values && site.changes_paths() {
        if let Some(again) = Url::parse(&rewritten).ok().and_then(|u| site.rewrite(&u)) {
            return Some(again);
        }
    }
    Some(rewritten)
}

/// A crawl URL with variations a crawler meets: upper-case letters in the path, an extra or
/// repeated parameter, the query reversed, a trailing slash, a tracking parameter.
fn variant(url: &str, changes: u8, salt: u32) -> String {
    let Ok(mut parsed) = Url::parse(url) else {
        return url.to_owned();
    };
    if changes & 1 != 0 {
        let path: String = parsed
            .path()
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if (i as u32).wrapping_add(salt).is_multiple_of(3) {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        parsed.set_path(&path);
    }
    if changes & 2 != 0 {
        let reversed: Vec<&str> = parsed.query().unwrap_or("").split('&').rev().collect();
        let reversed = reversed.join("&");
        parsed.set_query((!reversed.is_empty()).then_some(reversed.as_str()));
    }
    if changes & 4 != 0 {
        let extra = format!("p{}={}", salt % 4, salt % 7);
        let query = match parsed.query() {
            Some(q) if !q.is_empty() => format!("{q}&{extra}"),
            _ => extra,
        };
        parsed.set_query(Some(&query));
    }
    if changes & 8 != 0 && !parsed.path().ends_with('/') {
        let path = format!("{}/", parsed.path());
        parsed.set_path(&path);
    }
    if changes & 16 != 0 {
        let query = match parsed.query() {
            Some(q) if !q.is_empty() => format!("utm_source=x&{q}"),
            _ => "utm_source=x".to_owned(),
        };
        parsed.set_query(Some(&query));
    }
    parsed.into()
}

#[test]
fn the_fixture_has_site_rules_pattern_rules_and_rewrites() {
    let f = fixture();
    assert!(f.sets.iter().any(|s| !s.site_rules.is_empty()));
    assert!(f.sets.iter().any(|s| !s.rules.is_empty()));
    let rewritten = f
        .urls
        .iter()
        .filter(|u| f.canonicalizer.canonicalize(u).is_ok_and(|c| c.learned))
        .count();
    assert!(rewritten > f.urls.len() / 10, "{rewritten} rewritten");
}

#[test]
fn every_crawl_url_gets_the_reference_canonical_form() {
    let f = fixture();
    for url in &f.urls {
        check(f, url).unwrap_or_else(|message| panic!("{message}"));
    }
}

#[test]
fn only_the_rule_that_lower_cases_lower_cases_mixed_case_values() {
    let f = fixture();
    let canonical = |u: &str| f.canonicalizer.canonicalize(u).expect(u).canonical;
    assert_eq!(
        canonical("http://case.example/item.php?id=AbC"),
        "http://case.example/item/abc"
    );
    assert_eq!(
        canonical("http://case.example/show.php?name=MiXeD"),
        "http://case.example/show?name=MiXeD"
    );
    for url in case_urls() {
        check(f, &url).unwrap_or_else(|message| panic!("{message}"));
    }
}

#[test]
fn addresses_spelled_in_several_shapes_reach_one_form_and_their_neighbours_stay() {
    let f = fixture();
    let canonical = |u: &str| f.canonicalizer.canonicalize(u).expect(u).canonical;
    let topic = canonical("http://shapes.example/index.php/topic,5.0.html");
    assert_eq!(topic, "http://shapes.example/t/5.0");
    assert_eq!(canonical("http://shapes.example/index.php?topic=5"), topic);
    assert_eq!(
        canonical("http://shapes.example/index.php?sid=2&topic=5"),
        topic
    );
    assert_eq!(
        canonical("http://shapes.example/index.php/topic,5.15.html?sid=1"),
        canonical("http://shapes.example/index.php?topic=5.15")
    );
    assert_ne!(
        canonical("http://shapes.example/index.php?topic=5.15"),
        topic
    );
    // The script's path pairs are its query: the pattern rule reads what they wrote, and a
    // pair the query names too is left as it is.
    assert_eq!(canonical("http://shapes.example/index.php/topic/5"), topic);
    assert_eq!(
        canonical("http://shapes.example/index.php/topic/5/sid/9"),
        topic
    );
    assert_ne!(
        canonical("http://shapes.example/index.php/topic/5?topic=6"),
        topic
    );
    // No template for boards; a value the query would read otherwise stays in the path.
    assert_eq!(
        canonical("http://shapes.example/index.php/board,3.0.html"),
        "http://shapes.example/index.php/board,3.0.html"
    );
    assert_eq!(
        canonical("http://shapes.example/index.php/topic,it's.html"),
        "http://shapes.example/index.php/topic,it's.html"
    );
    assert_eq!(
        canonical("http://shapes.example/c/news/5/l/latest?page=2"),
        "http://shapes.example/c/news/5?page=2"
    );
    assert_eq!(
        canonical("http://shapes.example/c/news/5/l/latest"),
        canonical("http://shapes.example/c/news/5")
    );
    assert_ne!(
        canonical("http://shapes.example/c/news/5/l/top"),
        canonical("http://shapes.example/c/news/5")
    );
    assert_eq!(
        canonical("http://shapes.example/l/latest"),
        "http://shapes.example/l/latest"
    );
    // A commit under its full id, under its abbreviation with a default view's tail after it;
    // a prefix shorter than the abbreviation names no one commit.
    assert_eq!(
        canonical("http://shapes.example/r/commit/f3e1a67f984c504e29c5293461d29721d5924f03"),
        canonical("http://shapes.example/r/commit/f3e1a67/l/latest")
    );
    assert_eq!(
        canonical("http://shapes.example/r/commit/f3e1a6"),
        "http://shapes.example/r/commit/f3e1a6"
    );
    for url in shapes_urls() {
        check(f, &url).unwrap_or_else(|message| panic!("{message}"));
        // A canonical form is its own canonical form.
        let once = canonical(&url);
        assert_eq!(canonical(&once), once, "{url}");
    }
}

#[test]
fn every_url_on_a_mirror_alias_gets_the_reference_canonical_form() {
    let f = fixture();
    let mut folded = 0;
    let mut by_alias_rules = 0;
    for url in f.mirror_urls.iter().chain(&f.urls) {
        match check_mirrored(f, url) {
            Ok(Some(alias_rules)) => {
                folded += 1;
                by_alias_rules += usize::from(alias_rules);
            }
            Ok(None) => {}
            Err(message) => panic!("{message}"),
        }
    }
    assert!(folded >= f.mirror_urls.len() / 2, "{folded} folded");
    assert!(by_alias_rules > 0, "no alias answered with its own rules");
}

/// The reference fold of a statically normalized URL: its origin and alias prefix replaced by
/// the canonical site's in the text (the longest alias prefix winning), parsed again; and
/// whether the path stayed the same (then an alias's own rules may answer).
fn reference_fold(sets: &[MirrorSet], url: &Url) -> Option<(Url, bool)> {
    let text = url.as_str();
    let mut best: Option<(&MirrorSet, &MirrorSite)> = None;
    for set in sets {
        for alias in &set.aliases {
            let site = &alias.site;
            let Some(rest) = text
                .strip_prefix(site.origin.as_str())
                .and_then(|r| r.strip_prefix(site.path_prefix.as_str()))
            else {
                continue;
            };
            // With no prefix the path follows the origin, so it starts with a slash; a prefix
            // ends where the path does or at a slash.
            let at_boundary = if site.path_prefix.is_empty() {
                rest.starts_with('/')
            } else {
                rest.is_empty() || rest.starts_with(['/', '?', '#'])
            };
            if at_boundary && best.is_none_or(|(_, b)| b.path_prefix.len() < site.path_prefix.len())
            {
                best = Some((set, site));
            }
        }
    }
    let (set, site) = best?;
    let rest = &text[site.origin.len() + site.path_prefix.len()..];
    let slash = if set.canonical.path_prefix.is_empty() && !rest.starts_with('/') {
        "/"
    } else {
        ""
    };
    let folded = format!(
        "{}{}{slash}{rest}",
        set.canonical.origin, set.canonical.path_prefix
    );
    let folded = Url::parse(&folded).expect("a folded URL parses");
    let same_path = folded.path() == url.path();
    Some((folded, same_path))
}

/// Compares the canonicalizer with mirror sets loaded with the reference for one input URL:
/// `Some(whether the alias host's own rules answered)` when it folded.
fn check_mirrored(f: &Fixture, input: &str) -> Result<Option<bool>, String> {
    let Ok(normalized) = f.mirrored.normalize(input) else {
        return Ok(None);
    };
    let set_of = |host: &str| f.sets.iter().find(|s| s.host == host);
    let (expected, folded) = match reference_fold(&f.mirror_sets, &normalized) {
        Some((folded, same_path)) => {
            let canonical = set_of(folded.host_str().unwrap_or_default());
            let alias = set_of(normalized.host_str().unwrap_or_default());
            let (rules, alias_rules) = match (canonical, alias) {
                (Some(set), _) => (Some(set), false),
                (None, Some(set)) if same_path => (Some(set), true),
                _ => (None, false),
            };
            let expected = rules
                .and_then(|set| reference(set, &folded))
                .unwrap_or_else(|| folded.to_string());
            (expected, Some(alias_rules))
        }
        None => {
            let expected = set_of(normalized.host_str().unwrap_or_default())
                .and_then(|set| reference(set, &normalized))
                .unwrap_or_else(|| normalized.to_string());
            (expected, None)
        }
    };
    let got = f
        .mirrored
        .canonicalize(input)
        .map_err(|e| format!("{input}: {e}"))?;
    if got.mirrored != folded.is_some() {
        return Err(format!(
            "{input}: engine folded {}, reference {}",
            got.mirrored,
            folded.is_some()
        ));
    }
    if got.normalized() != normalized.as_str() {
        return Err(format!(
            "{input}: engine's normalized URL {:?}, expected {:?}",
            got.normalized(),
            normalized.as_str()
        ));
    }
    if got.canonical == expected {
        Ok(folded)
    } else {
        Err(format!(
            "{input}: engine {:?}, reference {expected:?}",
            got.canonical
        ))
    }
}

/// Compares the engine with the reference for one input URL.
fn check(f: &Fixture, input: &str) -> Result<(), String> {
    let Ok(normalized) = f.canonicalizer.normalize(input) else {
        return Ok(());
    };
    let host = normalized.host_str().unwrap_or_default();
    let expected = match f.sets.iter().find(|s| s.host == host) {
        Some(set) => reference(set, &normalized).unwrap_or_else(|| normalized.to_string()),
        None => normalized.to_string(),
    };
    let got = f
        .canonicalizer
        .canonicalize(input)
        .map_err(|e| format!("{input}: {e}"))?;
    if got.canonical == expected {
        Ok(())
    } else {
        Err(format!(
            "{input}: engine {:?}, reference {expected:?}",
            got.canonical
        ))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::support::proptest_cases(512)))]

    #[test]
    fn proptest_engine_matches_the_reference_on_url_variants(
        pick in any::<prop::sample::Index>(),
        changes in 0u8..32,
        salt in any::<u32>(),
    ) {
        let f = fixture();
        let url = variant(&f.urls[pick.index(f.urls.len())], changes, salt);
        if let Err(message) = check(f, &url) {
            prop_assert!(false, "{}", message);
        }
        let url = variant(&f.mirror_urls[pick.index(f.mirror_urls.len())], changes, salt);
        if let Err(message) = check_mirrored(f, &url) {
            prop_assert!(false, "{}", message);
        }
    }
}
