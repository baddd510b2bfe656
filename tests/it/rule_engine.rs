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

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use undust::canon::engine::HostRules;
use undust::canon::normalize::{StaticConfig, StaticNormalizer};
use undust::canon::rules::key::escape_for;
use undust::canon::rules::{decompose, HostRuleSet, KeyRef, Operation, Pattern, SiteRewriter};
use undust::canon::Canonicalizer;
use undust::corpus::{generate, CorpusConfig};
use undust::learn::{learn_host, LabelledUrl, LearnConfig};
use url::Url;

/// Learned rule sets (with site rules and pattern rules) and the crawl's URLs.
struct Fixture {
    sets: Vec<HostRuleSet>,
    urls: Vec<String>,
    canonicalizer: Canonicalizer,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let corpus = generate(&CorpusConfig::new(11, 1).with_pages(300, 600));
        let normalizer = StaticNormalizer::new(StaticConfig::default()).expect("default config");
        let canonicalizer = Canonicalizer::new(normalizer.clone());
        let mut sets = Vec::new();
        let mut urls = Vec::new();
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
        }
        Fixture {
            sets,
            urls,
            canonicalizer,
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
    }
}
