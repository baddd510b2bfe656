//! A host's table of declared aliases: exact URL → URL replacements applied after its rules.
//!
//! The pattern rules relate URLs that share a shape (`/item.php?id=5` ≡ `/item/5`). Some
//! spellings of one page share nothing a pattern can read: Drupal's `/node/123` and its path
//! alias `/articles/some-title`, WordPress's `/?p=123` and `/2019/05/some-title/`, a CMS's
//! numeric id beside its speaking path. The site itself declares these pairs (`rel=canonical`,
//! `rel=shortlink`, redirects), one entity at a time, so they are kept as what they are: a
//! table of exact pairs, learned by [`crate::learn::aliases`] from the declarations the
//! clustering accepted, looked up by the engine after the host's site and pattern rules.
//!
//! Both sides are canonical forms under the host's rules: `from` is what the rules make of one
//! spelling, `to` what they make of the declared canonical one. Loading checks what keeps the
//! lookup exact and canonicalization idempotent: both sides are absolute http(s) URLs of the
//! host written as the URL parser writes them, `from` differs from `to`, each `from` appears
//! once, no `to` is also a `from` (chains are resolved when learning), and the table holds at
//! most [`MAX_ALIASES_PER_HOST`] pairs. That each `to` is a fixed point of the host's rules is
//! checked when the set is compiled ([`crate::canon::engine::HostRules::compile`]).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::RuleError;
use crate::content::pagelet::MAX_CANONICAL_BYTES;

/// Most aliases one host's table may hold.
///
/// Why 20,000: a table is learned from one host's reservoir, which keeps at most 20,000 pages
/// (`ingest::sample`), and a page declares at most one alias of its own in practice (its id URL
/// beside its speaking path: a shortlink, or the canonical of the id URL it was fetched at), so
/// a real table from one learn stays under one alias per sampled page and is never cut. The
/// bound is what keeps a host's table, and a hand-written rule file, bounded in memory: at most
/// 20,000 pairs of URLs of at most [`MAX_CANONICAL_BYTES`] each.
pub const MAX_ALIASES_PER_HOST: usize = 20_000;

/// One declared alias: `from` canonicalizes to `to`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Alias {
    /// A canonical form under the host's rules that the site declared another spelling of.
    pub from: String,
    /// The canonical form under the host's rules of the spelling the site declared canonical.
    pub to: String,
}

/// Checks `host`'s alias table (see the module documentation); the first problem as an error
/// naming the host and the alias.
pub fn validate(host: &str, aliases: &[Alias]) -> Result<(), RuleError> {
    if aliases.len() > MAX_ALIASES_PER_HOST {
        return Err(RuleError::TooManyAliases {
            host: host.to_owned(),
            count: aliases.len(),
        });
    }
    let mut froms: HashSet<&str> = HashSet::with_capacity(aliases.len());
    for alias in aliases {
        let bad = |reason: String| RuleError::BadAlias {
            host: host.to_owned(),
            from: alias.from.clone(),
            to: alias.to.clone(),
            reason,
        };
        for (side, url) in [("from", &alias.from), ("to", &alias.to)] {
            check_url(host, url).map_err(|reason| bad(format!("`{side}` {reason}")))?;
        }
        if alias.from == alias.to {
            return Err(bad("`from` and `to` are the same URL".to_owned()));
        }
        if !froms.insert(&alias.from) {
            return Err(bad("`from` appears in more than one alias".to_owned()));
        }
    }
    for alias in aliases {
        if froms.contains(alias.to.as_str()) {
            return Err(RuleError::BadAlias {
                host: host.to_owned(),
                from: alias.from.clone(),
                to: alias.to.clone(),
                reason: "`to` is itself the `from` of another alias (write the chain's end)"
                    .to_owned(),
            });
        }
    }
    Ok(())
}

/// Why `url` cannot be one side of an alias of `host`, if it cannot.
fn check_url(host: &str, url: &str) -> Result<(), String> {
    if url.len() > MAX_CANONICAL_BYTES {
        return Err(format!("is longer than {MAX_CANONICAL_BYTES} bytes"));
    }
    let parsed = url::Url::parse(url).map_err(|err| format!("is not an absolute URL: {err}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("is not an http(s) URL".to_owned());
    }
    if parsed.host_str() != Some(host) {
        return Err(format!("is not a URL of host {host}"));
    }
    if parsed.as_str() != url {
        return Err(format!(
            "is not written as the URL parser writes it ({})",
            parsed.as_str()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alias(from: &str, to: &str) -> Alias {
        Alias {
            from: from.to_owned(),
            to: to.to_owned(),
        }
    }

    fn reason(aliases: &[Alias]) -> String {
        validate("site.test", aliases)
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn a_good_table_passes() {
        let table = [
            alias("http://site.test/node/5", "http://site.test/about-us"),
            alias("http://site.test/?p=7", "http://site.test/2019/05/hello/"),
            alias("http://site.test/node/6", "http://site.test/about-us"),
        ];
        validate("site.test", &table).expect("valid");
        validate("site.test", &[]).expect("an empty table is valid");
    }

    #[test]
    fn each_bad_alias_is_named_with_its_host() {
        let cases: [(Vec<Alias>, &str); 9] = [
            (
                vec![alias("/node/5", "http://site.test/a")],
                "`from` is not an absolute URL",
            ),
            (
                vec![alias("http://site.test/node/5", "ftp://site.test/a")],
                "`to` is not an http(s) URL",
            ),
            (
                vec![alias("http://other.test/node/5", "http://site.test/a")],
                "`from` is not a URL of host site.test",
            ),
            (
                vec![alias("http://site.test/node/5", "http://SITE.test/a")],
                "`to` is not written as the URL parser writes it",
            ),
            (
                vec![alias("http://site.test/a", "http://site.test/a")],
                "`from` and `to` are the same URL",
            ),
            (
                vec![
                    alias("http://site.test/node/5", "http://site.test/a"),
                    alias("http://site.test/node/5", "http://site.test/b"),
                ],
                "`from` appears in more than one alias",
            ),
            (
                vec![
                    alias("http://site.test/node/5", "http://site.test/a"),
                    alias("http://site.test/a", "http://site.test/b"),
                ],
                "`to` is itself the `from` of another alias",
            ),
            (
                vec![alias(
                    &format!("http://site.test/{}", "x".repeat(MAX_CANONICAL_BYTES)),
                    "http://site.test/a",
                )],
                "`from` is longer than",
            ),
            (
                vec![alias("http://site.test/node/5", "not a url")],
                "`to` is not an absolute URL",
            ),
        ];
        for (table, want) in cases {
            let got = reason(&table);
            assert!(got.contains(want), "{got:?} does not say {want:?}");
            assert!(got.starts_with("host site.test: alias "), "{got}");
        }
    }

    #[test]
    fn a_table_over_the_cap_is_refused() {
        let table: Vec<Alias> = (0..=MAX_ALIASES_PER_HOST)
            .map(|i| alias(&format!("http://site.test/node/{i}"), "http://site.test/a"))
            .collect();
        let got = reason(&table);
        assert!(
            got.contains(&format!("{} aliases", MAX_ALIASES_PER_HOST + 1)),
            "{got}"
        );
        validate("site.test", &table[..MAX_ALIASES_PER_HOST]).expect("at the cap is valid");
    }
}
