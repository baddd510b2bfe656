//! The host's table of declared aliases ([`crate::canon::rules::aliases`]), learned from the
//! declarations its clustering accepted, after its rules.
//!
//! Patterns generalise: they relate spellings that share a shape. A site's per-entity aliases
//! share none (Drupal's `/node/123` beside `/articles/some-title`, WordPress's `/?p=123` beside
//! `/2019/05/some-title/`), and the learner rightly finds no rule for them; but the site declares
//! each pair itself (`rel=canonical`, `rel=shortlink`, a redirect). So, once the host's rules
//! are learned and checked, [`learn_aliases`] takes the declared pairs the cluster builder
//! *applied* (its guards against canonical fan-in, contradicted canonicals, catch-all redirects
//! and cross-host claims already ran: see [`crate::cluster::clusters`]), canonicalizes both
//! sides with the host's rules, and keeps `from → to` for the pairs the rules leave apart:
//!
//! - a pair whose two URLs differ only in the query, one's keys a subset of the other's
//!   (`/list?page=3 → /list`), or whose `from` path is the `to` path with segments after it
//!   ending in a number (`/name/2/ → /name/`), is skipped: that is the pattern learner's
//!   territory, and canonicalizing paginated pages to page 1 is a known misuse a table must
//!   not copy;
//! - a `from` declared towards two different targets is dropped entirely (the site disagrees
//!   with itself);
//! - chains (`a → b`, `b → c`) are resolved to their end, so no `to` is a `from`; a cycle is
//!   dropped;
//! - only pairs whose `to` is a fixed point of the host's rules are kept, so canonicalization
//!   stays idempotent;
//! - the table is cut at [`MAX_ALIASES_PER_HOST`] (in `from` order, so deterministically).
//!
//! Precision rests on the site's declarations: a canonical the guards could not check (neither
//! end fetched with Strong content) is taken at the site's word, as the clusters take it.

use std::collections::{BTreeMap, BTreeSet};

use url::Url;

use crate::canon::engine::HostRules;
use crate::canon::rules::{Alias, MAX_ALIASES_PER_HOST};
use crate::cluster::DeclaredPair;
use crate::content::pagelet::MAX_CANONICAL_BYTES;

/// The alias table of `host` under its compiled `rules`, from the declared pairs its clustering
/// applied (see the module documentation). Sorted by `from`; at most [`MAX_ALIASES_PER_HOST`].
pub fn learn_aliases(host: &str, rules: &HostRules, declared: &[DeclaredPair]) -> Vec<Alias> {
    // Every target each canonical `from` was declared towards.
    let mut targets: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for pair in declared {
        let (Some(from), Some(to)) = (of_host(host, &pair.from), of_host(host, &pair.to)) else {
            continue;
        };
        if query_subset_pair(&from, &to) || later_page_of(&from, &to) {
            continue;
        }
        let (Some(from), Some(to)) = (canonical(rules, &from), canonical(rules, &to)) else {
            continue;
        };
        if from == to || query_subset_pair(&from, &to) {
            continue;
        }
        targets
            .entry(String::from(from))
            .or_default()
            .insert(String::from(to));
    }
    // A `from` declared towards two targets is dropped whole.
    let single: BTreeMap<String, String> = targets
        .into_iter()
        .filter_map(|(from, tos)| {
            let mut tos = tos.into_iter();
            let to = tos.next()?;
            tos.next().is_none().then_some((from, to))
        })
        .collect();
    let ends = chain_ends(&single);
    let mut aliases = Vec::with_capacity(single.len());
    for from in single.keys() {
        let Some(Some(end)) = ends.get(from.as_str()) else {
            continue;
        };
        if is_fixed_point(rules, end) {
            aliases.push(Alias {
                from: from.clone(),
                to: (*end).to_owned(),
            });
        }
    }
    aliases.truncate(MAX_ALIASES_PER_HOST);
    aliases
}

/// `url` parsed when it is an http(s) URL of `host` short enough for a table.
fn of_host(host: &str, url: &str) -> Option<Url> {
    let parsed = Url::parse(url).ok()?;
    (matches!(parsed.scheme(), "http" | "https")
        && parsed.host_str() == Some(host)
        && parsed.as_str().len() <= MAX_CANONICAL_BYTES)
        .then_some(parsed)
}

/// `url`'s canonical form under `rules`, parsed.
fn canonical(rules: &HostRules, url: &Url) -> Option<Url> {
    match rules.apply(url) {
        Some(rewrite) => Url::parse(&rewrite.canonical)
            .ok()
            .filter(|u| u.as_str().len() <= MAX_CANONICAL_BYTES),
        None => Some(url.clone()),
    }
}

/// Whether two URLs differ only in their query, the keys of one a subset of the other's.
fn query_subset_pair(a: &Url, b: &Url) -> bool {
    let same_resource = a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port() == b.port()
        && a.path() == b.path();
    if !same_resource {
        return false;
    }
    let keys = |u: &Url| -> BTreeSet<String> {
        u.query_pairs().map(|(key, _)| key.into_owned()).collect()
    };
    let (ka, kb) = (keys(a), keys(b));
    ka.is_subset(&kb) || kb.is_subset(&ka)
}

/// Whether `from`'s path is `to`'s with more segments after it, the last ending in a number
/// (`/name/2/ → /name/`, `/t/slug/12/3 → /t/slug/12`): a later page declaring the first as
/// its canonical, the path-shaped form of [`query_subset_pair`]'s misuse.
fn later_page_of(from: &Url, to: &Url) -> bool {
    let (from_path, to_path) = (
        from.path().trim_end_matches('/'),
        to.path().trim_end_matches('/'),
    );
    from.host_str() == to.host_str()
        && from_path
            .strip_prefix(to_path)
            .is_some_and(|rest| rest.starts_with('/'))
        && from_path.bytes().last().is_some_and(|b| b.is_ascii_digit())
}

/// Where each `from` of `single` ends once every `to` that is itself a `from` is followed (a URL
/// that is no `from`), or `None` when its walk runs into a cycle. Each URL is walked once and its
/// end remembered, so a site chaining its pages' declarations one to the next (20,000 of them)
/// costs a walk of the chain, not one per page.
fn chain_ends(single: &BTreeMap<String, String>) -> BTreeMap<&str, Option<&str>> {
    let mut ends: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    for start in single.keys() {
        let mut walked: Vec<&str> = Vec::new();
        let mut on_walk: BTreeSet<&str> = BTreeSet::new();
        let mut at: &str = start;
        let end = loop {
            if let Some(&known) = ends.get(at) {
                break known;
            }
            let Some(next) = single.get(at) else {
                break Some(at);
            };
            if !on_walk.insert(at) {
                break None;
            }
            walked.push(at);
            at = next;
        };
        for url in walked {
            ends.insert(url, end);
        }
    }
    ends
}

/// Whether the host's rules leave `url` as it is (and it is written as parsed).
fn is_fixed_point(rules: &HostRules, url: &str) -> bool {
    Url::parse(url).is_ok_and(|parsed| parsed.as_str() == url && rules.apply(&parsed).is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::rules::site::{SiteAction, SiteRule};
    use crate::canon::rules::HostRuleSet;
    use crate::cluster::{ClusterBuilder, ClusterConfig, Declaration, DeclaredPair, PageEvidence};

    const HOST: &str = "site.test";

    fn url(path: &str) -> String {
        format!("http://{HOST}{path}")
    }

    fn pair(from: &str, to: &str) -> DeclaredPair {
        DeclaredPair {
            from: url(from),
            to: url(to),
            declaration: Declaration::Canonical,
        }
    }

    /// Rules that only drop the `sid` parameter everywhere.
    fn rules() -> HostRules {
        let set = HostRuleSet {
            host: HOST.into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: vec![SiteRule {
                id: format!("{HOST}#s1"),
                action: SiteAction::IgnoreParam {
                    name: "sid".into(),
                    beside: None,
                },
                support: 10,
                support_clusters: 3,
                false_positive_rate: 0.0,
                pooled: None,
            }],
            rules: Vec::new(),
            aliases: Vec::new(),
        };
        HostRules::compile(&set).expect("compiles")
    }

    fn table(declared: &[DeclaredPair]) -> Vec<(String, String)> {
        learn_aliases(HOST, &rules(), declared)
            .into_iter()
            .map(|a| (a.from, a.to))
            .collect()
    }

    fn expect(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(f, t)| (url(f), url(t))).collect()
    }

    #[test]
    fn both_sides_are_canonicalized_and_pairs_the_rules_relate_are_left_out() {
        let got = table(&[
            pair("/node/5?sid=abc", "/about-us"),
            pair("/node/6", "/team?sid=x"),
            // The rules already make these one.
            pair("/a?sid=1", "/a"),
        ]);
        assert_eq!(
            got,
            expect(&[("/node/5", "/about-us"), ("/node/6", "/team")])
        );
    }

    #[test]
    fn conflicting_froms_are_dropped_and_agreeing_ones_kept() {
        let got = table(&[
            pair("/node/5", "/about-us"),
            pair("/node/5", "/contact"),
            pair("/node/6", "/team"),
            pair("/node/6?sid=2", "/team"),
        ]);
        assert_eq!(got, expect(&[("/node/6", "/team")]));
    }

    #[test]
    fn chains_are_resolved_and_cycles_dropped() {
        let got = table(&[
            pair("/node/5", "/old-title"),
            pair("/old-title", "/new-title"),
            pair("/x", "/y"),
            pair("/y", "/x"),
        ]);
        assert_eq!(
            got,
            expect(&[("/node/5", "/new-title"), ("/old-title", "/new-title")])
        );
        let froms: BTreeSet<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert!(got.iter().all(|(_, to)| !froms.contains(to.as_str())));
    }

    #[test]
    fn query_subset_pairs_later_pages_and_other_hosts_are_skipped() {
        let got = table(&[
            // Pagination canonicalised to page 1: the pattern learner's territory.
            pair("/list?page=3", "/list"),
            pair("/list?page=3&sort=a", "/list?sort=a"),
            // A later page declaring the first as its canonical, path-shaped.
            pair("/hello/2/", "/hello/"),
            pair("/t/slug/12/3", "/t/slug/12"),
            // Different keys on both sides: not a subset, kept.
            pair("/?p=7", "/?page_id=7"),
            // Different paths: kept.
            pair("/?p=8", "/2019/05/hello/"),
            DeclaredPair {
                from: "http://other.test/node/1".into(),
                to: url("/a"),
                declaration: Declaration::Redirect,
            },
        ]);
        assert_eq!(
            got,
            expect(&[("/?p=7", "/?page_id=7"), ("/?p=8", "/2019/05/hello/")])
        );
    }

    /// Only the pairs the clustering's guards let through reach the table.
    #[test]
    fn guarded_declarations_are_not_used() {
        let strong = |simhash: u64| PageEvidence {
            simhash,
            exact: simhash ^ 1,
            strong: true,
        };
        let mut b = ClusterBuilder::new(ClusterConfig::default());
        // Accepted: the alias page declares its node URL.
        b.add_page(&url("/about-us"), strong(0x0f0f));
        b.add_shortlink(&url("/about-us"), "/node/5");
        // Contradicted: both fetched, contents disagree.
        b.add_page(&url("/news"), strong(0x1234_5678));
        b.add_page(&url("/node/7"), strong(!0x1234_5678));
        b.add_canonical(&url("/node/7"), "/news");
        // Fan-in: pages of different content all declare the home page canonical.
        b.add_page(&url("/story-a"), strong(0xaaaa_0000));
        b.add_page(&url("/story-b"), strong(0x5555_0000_0000));
        b.add_canonical(&url("/story-a"), "/");
        b.add_canonical(&url("/story-b"), "/");
        // A catch-all: many removed pages redirect to the login page.
        for i in 0..12 {
            b.add_redirect(&url(&format!("/item/{i}")), "/login");
        }
        let clustering = b.finish();
        let got = learn_aliases(HOST, &rules(), clustering.declared());
        let got: Vec<(String, String)> = got.into_iter().map(|a| (a.from, a.to)).collect();
        assert_eq!(got, expect(&[("/node/5", "/about-us")]));
    }

    /// A chain as long as a host's sample ends where its last declaration points, for every
    /// link of it.
    #[test]
    fn a_long_chain_ends_at_its_last_target() {
        let declared: Vec<DeclaredPair> = (0..20_000)
            .map(|i| pair(&format!("/p{i}"), &format!("/p{}", i + 1)))
            .collect();
        let got = table(&declared);
        assert_eq!(got.len(), 20_000);
        assert!(
            got.iter().all(|(_, to)| *to == url("/p20000")),
            "{:?}",
            &got[..3]
        );
    }

    #[test]
    fn the_table_is_capped() {
        let declared: Vec<DeclaredPair> = (0..MAX_ALIASES_PER_HOST + 10)
            .map(|i| pair(&format!("/node/{i}"), &format!("/title-{i}")))
            .collect();
        let got = learn_aliases(HOST, &rules(), &declared);
        assert_eq!(got.len(), MAX_ALIASES_PER_HOST);
        assert!(got.windows(2).all(|w| w[0].from < w[1].from));
    }
}
