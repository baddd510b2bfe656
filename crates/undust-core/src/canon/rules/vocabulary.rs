//! A host's small vocabularies: named things addressed by an id in one shape and by an alias path
//! in another ([`SiteAction::Vocabulary`](super::SiteAction::Vocabulary)).
//!
//! Content management systems keep short tables of named things whose pages answer two
//! addresses: Joomla's menu items (`/index.php?Itemid=106` is the menu item's route
//! `/index.php/central-respond`), Drupal's taxonomy terms under their path aliases
//! (`/taxonomy/term/5` is `/category/finish-increase`), WordPress's categories and authors
//! (`/?cat=3` is `/category/news/`, `/?author=2` is `/author/jane/`), Magento's URL rewrites of
//! its categories. No rule computes one address from the other (the alias is a name somebody
//! typed), but the table is small and every entry applies to every URL that carries it: a
//! category's listing pages as well as its first page. The learner finds the table
//! (`learn::site::vocabulary`); this module applies it, with constant work per URL plus one hash
//! lookup.
//!
//! The id is either a query parameter's value on one script (`name` non-empty: `/index.php`,
//! `Itemid`) or the last path segment under a directory (`name` empty: `/taxonomy/term/`). A URL
//! whose id is in the table gets the alias as its path; the query's other parameters stay, those
//! the two shapes name differently renamed (Joomla pages a menu item's blog with `limitstart` on
//! the front controller and with `start` on its route).

use rustc_hash::FxHashMap;

use crate::canon::split::split_byte;

/// Most entries of one vocabulary: a host's menu, its categories or its tags are a few dozen to a
/// few hundred names; a table larger than this maps ids to per-page aliases (a CMS's path alias of
/// every node), which the sample cannot show for the pages it did not fetch.
pub const MAX_VOCABULARY_ENTRIES: usize = 256;

/// A compiled vocabulary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Vocabulary {
    /// The script (query form) or the directory ending with `/` (path form).
    path: String,
    /// The parameter holding the id; empty for the path form.
    name: String,
    /// Id to alias path.
    table: FxHashMap<String, String>,
    /// Parameters renamed in the alias form: (id form's name, alias form's name).
    renamed: Vec<(String, String)>,
}

impl Vocabulary {
    /// The compiled form of a vocabulary action's fields.
    pub(crate) fn new(
        path: &str,
        name: &str,
        entries: &[(String, String)],
        renamed: &[(String, String)],
    ) -> Self {
        Vocabulary {
            path: path.to_owned(),
            name: name.to_owned(),
            table: entries.iter().cloned().collect(),
            renamed: renamed.to_vec(),
        }
    }

    /// The alias path and the query left when this vocabulary names the URL, or `None`.
    pub(crate) fn apply(
        &self,
        path: &str,
        query: Option<&str>,
    ) -> Option<(String, Option<String>)> {
        if self.name.is_empty() {
            let id = path.strip_prefix(self.path.as_str())?;
            if id.is_empty() || id.contains('/') {
                return None;
            }
            let alias = self.table.get(id)?;
            let rest = query
                .map(|q| self.rename(q, None))
                .filter(|q| !q.is_empty());
            return Some((alias.clone(), rest));
        }
        if path != self.path {
            return None;
        }
        let query = query?;
        let mut found: Option<(usize, &str)> = None;
        for (i, part) in split_byte(query, b'&').enumerate() {
            if let Some((n, v)) = part.split_once('=') {
                if n == self.name {
                    if found.is_some() {
                        // Two ids: neither names the page alone.
                        return None;
                    }
                    found = Some((i, v));
                }
            }
        }
        let (at, id) = found?;
        let alias = self.table.get(id)?;
        let rest = self.rename(query, Some(at));
        Some((alias.clone(), (!rest.is_empty()).then_some(rest)))
    }

    /// `query` without its part `skip`, empty parts dropped, renamed parameters renamed.
    fn rename(&self, query: &str, skip: Option<usize>) -> String {
        let mut out = String::with_capacity(query.len());
        for (i, part) in split_byte(query, b'&').enumerate() {
            if Some(i) == skip || part.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push('&');
            }
            let (name, value) = match part.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (part, None),
            };
            let name = self
                .renamed
                .iter()
                .find(|(from, _)| from == name)
                .map_or(name, |(_, to)| to.as_str());
            out.push_str(name);
            if let Some(v) = value {
                out.push('=');
                out.push_str(v);
            }
        }
        out
    }
}

/// Why a vocabulary action is refused, or `None` when it is well formed: a path starting with
/// `/` (ending with `/` in the path form), a parameter name without `& = #`, between one and
/// [`MAX_VOCABULARY_ENTRIES`] entries of non-empty ids (without `/` in the path form, without
/// `& #` in the query form) and alias paths starting with `/` without `? #`, one alias per id
/// and one id per alias, no alias that is itself an id's address (so the result is a
/// fixpoint), and renamed parameters with names.
pub fn vocabulary_error(
    path: &str,
    name: &str,
    entries: &[(String, String)],
    renamed: &[(String, String)],
) -> Option<&'static str> {
    let bad_name = |n: &str| n.is_empty() || n.contains(['&', '=', '#']);
    if !path.starts_with('/') || path.contains(['?', '#']) {
        return Some("a vocabulary's id form needs a path starting with /");
    }
    if name.is_empty() && !path.ends_with('/') {
        return Some("a vocabulary of path segments needs a directory ending with /");
    }
    if !name.is_empty() && bad_name(name) {
        return Some("a vocabulary's parameter name must not hold & = #");
    }
    if entries.is_empty() || entries.len() > MAX_VOCABULARY_ENTRIES {
        return Some("a vocabulary holds between 1 and 256 entries");
    }
    let mut ids = rustc_hash::FxHashSet::default();
    let mut aliases = rustc_hash::FxHashSet::default();
    for (id, alias) in entries {
        let bad_id = id.is_empty()
            || if name.is_empty() {
                id.contains(['/', '?', '#'])
            } else {
                id.contains(['&', '#'])
            };
        if bad_id || !alias.starts_with('/') || alias.contains(['?', '#']) {
            return Some(
                "a vocabulary entry needs a non-empty id and an alias path starting with /",
            );
        }
        let alias_is_an_id = if name.is_empty() {
            alias.starts_with(path)
        } else {
            alias == path
        };
        if alias_is_an_id {
            return Some("a vocabulary's alias must not be an address of its id form");
        }
        if !ids.insert(id.as_str()) || !aliases.insert(alias.as_str()) {
            return Some("a vocabulary maps each id to one alias and each alias from one id");
        }
    }
    if renamed
        .iter()
        .any(|(from, to)| bad_name(from) || bad_name(to) || from == to || *from == name)
    {
        return Some("a renamed parameter needs two different names without & = #");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn a_query_id_becomes_its_alias_with_renamed_parameters() {
        let v = Vocabulary::new(
            "/index.php",
            "Itemid",
            &entries(&[("106", "/central-respond"), ("107", "/news")]),
            &entries(&[("limitstart", "start")]),
        );
        assert_eq!(
            v.apply("/index.php", Some("Itemid=106")),
            Some(("/central-respond".to_owned(), None))
        );
        assert_eq!(
            v.apply("/index.php", Some("Itemid=107&limitstart=10")),
            Some(("/news".to_owned(), Some("start=10".to_owned())))
        );
        // Not in the table, another script, or two ids: left alone.
        assert_eq!(v.apply("/index.php", Some("Itemid=108")), None);
        assert_eq!(v.apply("/other.php", Some("Itemid=106")), None);
        assert_eq!(v.apply("/index.php", Some("Itemid=106&Itemid=107")), None);
        assert_eq!(v.apply("/index.php", None), None);
    }

    #[test]
    fn a_path_id_becomes_its_alias_with_the_query_kept() {
        let v = Vocabulary::new(
            "/taxonomy/term/",
            "",
            &entries(&[("5", "/category/finish-increase")]),
            &[],
        );
        assert_eq!(
            v.apply("/taxonomy/term/5", Some("page=2")),
            Some((
                "/category/finish-increase".to_owned(),
                Some("page=2".to_owned())
            ))
        );
        assert_eq!(v.apply("/taxonomy/term/5/feed", None), None);
        assert_eq!(v.apply("/taxonomy/term/6", None), None);
        assert_eq!(v.apply("/taxonomy/term/", None), None);
    }

    #[test]
    fn the_site_action_round_trips_and_the_rewriter_applies_it_once() {
        use crate::canon::rules::{HostRuleSet, SiteAction, SiteRewriter, SiteRule};
        let action = SiteAction::Vocabulary {
            path: "/index.php".into(),
            name: "Itemid".into(),
            entries: entries(&[("106", "/central-respond/"), ("107", "/news/")]),
            renamed: entries(&[("limitstart", "start")]),
        };
        let rule = SiteRule {
            id: "j.example#s1".into(),
            action: action.clone(),
            support: 4,
            support_clusters: 2,
            false_positive_rate: 0.0,
            pooled: None,
        };
        let text = serde_json::to_string(&rule).unwrap();
        assert!(text.contains("\"op\":\"vocabulary\""), "{text}");
        assert_eq!(serde_json::from_str::<SiteRule>(&text).unwrap(), rule);
        // The path form, written without `name` and `renamed`, reads back.
        let path_form: SiteRule = serde_json::from_str(
            r#"{"id":"d#s1","op":"vocabulary","path":"/taxonomy/term/","entries":[["5","/category/a"]],"support":2,"support_clusters":2,"false_positive_rate":0.0}"#,
        )
        .unwrap();
        let host = |rule: SiteRule| HostRuleSet {
            host: "j.example".into(),
            version: 1,
            learned_at_unix_ms: 0,
            site_rules: vec![rule],
            rules: Vec::new(),
            aliases: Vec::new(),
        };
        host(rule.clone()).validate().unwrap();
        host(path_form).validate().unwrap();
        let mut conflicting = rule;
        conflicting.action = SiteAction::Vocabulary {
            path: "/index.php".into(),
            name: "Itemid".into(),
            entries: entries(&[("106", "/a/"), ("107", "/a/")]),
            renamed: Vec::new(),
        };
        assert!(host(conflicting).validate().is_err());
        // Applied after the other actions (the trailing slash stripped from the alias too),
        // and the result is a fixpoint.
        let rewriter = SiteRewriter::new(&[action, SiteAction::StripTrailingSlash]);
        let url = url::Url::parse("http://j.example/index.php?Itemid=107&limitstart=20").unwrap();
        let once = rewriter.rewrite(&url).unwrap();
        assert_eq!(once, "http://j.example/news?start=20");
        assert_eq!(rewriter.rewrite(&url::Url::parse(&once).unwrap()), None);
        let other = url::Url::parse("http://j.example/index.php?Itemid=108").unwrap();
        assert_eq!(rewriter.rewrite(&other), None);
    }

    #[test]
    fn malformed_vocabularies_are_refused() {
        let ok = entries(&[("5", "/a"), ("6", "/b")]);
        assert_eq!(vocabulary_error("/index.php", "Itemid", &ok, &[]), None);
        assert_eq!(vocabulary_error("/taxonomy/term/", "", &ok, &[]), None);
        // Conflicting entries: one id two aliases, one alias two ids.
        let two_aliases = entries(&[("5", "/a"), ("5", "/b")]);
        let two_ids = entries(&[("5", "/a"), ("6", "/a")]);
        assert!(vocabulary_error("/index.php", "Itemid", &two_aliases, &[]).is_some());
        assert!(vocabulary_error("/index.php", "Itemid", &two_ids, &[]).is_some());
        // Too large: per-URL aliases, not a vocabulary.
        let many: Vec<(String, String)> = (0..=MAX_VOCABULARY_ENTRIES)
            .map(|i| (i.to_string(), format!("/p{i}")))
            .collect();
        assert!(vocabulary_error("/index.php", "Itemid", &many, &[]).is_some());
        assert!(vocabulary_error("/index.php", "Itemid", &[], &[]).is_some());
        // An alias that is an id's address would not be a fixpoint.
        let looping = entries(&[("5", "/taxonomy/term/6")]);
        assert!(vocabulary_error("/taxonomy/term/", "", &looping, &[]).is_some());
        assert!(vocabulary_error("/taxonomy/term", "", &ok, &[]).is_some());
        assert!(vocabulary_error("/index.php", "Itemid", &ok, &entries(&[("a", "a")])).is_some());
    }
}
