//! Learning a host's small vocabularies ([`SiteAction::Vocabulary`]): named things (menu items,
//! categories, tags, authors) addressed by an id in one shape and by an alias path in another.
//!
//! Joomla shows a menu item's category blog at `/index.php?Itemid=106` and at its route
//! `/index.php/central-respond`, Drupal a taxonomy term at `/taxonomy/term/5` and under its path
//! alias `/category/finish-increase`, WordPress a category at `/?cat=3` and `/category/news/`. No
//! rule computes the alias from the id, but a host has few such names, and each duplicate cluster
//! that holds both addresses of one of them shows an entry of the table, which then applies to
//! every URL carrying that id (the listing's later pages too).
//!
//! An id form is a query parameter's value on one script, or the last path segment under a
//! directory, and its ids are numbers ([`is_numeric_id`]): the software keys the names by a
//! database id (Joomla's `Itemid`, Drupal's term id, WordPress's `cat`). A name reachable under
//! two paths (Plone's acquisition, `/en/folder/x` ≡ `/x`) is no table of ids: the tree rules
//! learn such a scheme for every name, where a table would cover only the names the sample
//! shows and, taken first, would leave the rules without evidence. Two addresses of one cluster show an entry when one has the id and the other a
//! different path, and the rest of their queries agree, parameter by parameter, up to names
//! (the renamed keys travel with the table: Joomla's `limitstart` on the front controller is
//! `start` on the route). A table is proposed only when:
//!
//! - it is small: the id form carries at most [`MAX_VOCABULARY_ENTRIES`] distinct values over
//!   all of the host's samples, shown or not, and at most one per [`MIN_PAGES_PER_NAME`] pages
//!   of the sample (a page's own alias, Drupal's `/node/7607` ≡
//!   `/stories/harbor-special-history`, is one entry per page: no table learned from a sample
//!   covers the pages it did not fetch). Of a larger id form, only the ids that at least
//!   [`MIN_PAGES_PER_NAME`] distinct addresses carry are names: TYPO3 gives every page an id
//!   (`index.php?id=N`), and its news plugin's detail page holds every item
//!   (`index.php?id=3&tx_news_pi1[news]=N` ≡ `/news/detail?tx_news_pi1[news]=N`);
//! - it is never contradicted: one alias per id, one id per alias, one new name per renamed
//!   parameter, over every cluster;
//! - it is shown by at least [`MIN_VOCABULARY_ENTRIES`] entries, or one entry by
//!   [`MIN_ENTRY_CLUSTERS`] clusters, so one coincidence is not a scheme.
//!
//! The proposal is then measured like any site action, and one merge of different pages
//! refuses it (`learn::site`).

use rustc_hash::{FxHashMap, FxHashSet};

use super::{Evidence, Output, SmallClusters};
use crate::canon::rules::vocabulary::{vocabulary_error, MAX_VOCABULARY_ENTRIES};
use crate::canon::rules::SiteAction;

/// Entries a table must show before it is proposed: two names of the host written both ways
/// are a scheme, one is a coincidence.
pub(super) const MIN_VOCABULARY_ENTRIES: usize = 2;

/// Distinct pages (clusters) that must show one entry for it to be a scheme on its own: three
/// records under one name written both ways are no coincidence, where one page is (a TYPO3 site's
/// news detail page, `index.php?id=3&tx_news_pi1[news]=N` ≡ `/news/detail?tx_news_pi1[news]=N`
/// for every item N, shown by three items).
const MIN_ENTRY_CLUSTERS: usize = 3;

/// Vocabularies proposed at once (the most entries first), so learning stays linear.
const MAX_VOCABULARY_CANDIDATES: usize = 4;

/// Pages of the host's sample per distinct value of an id form, at least, for the form to be a
/// vocabulary: a menu item, a category or a tag groups pages (a listing and the items under
/// it), so a host has far fewer of them than pages; an id form with a value for every few
/// pages names the pages themselves (Drupal's `/node/N` under each node's own path alias,
/// WordPress's `?p=N` beside each post's permalink), and a table of those learned from a
/// sample covers only the pages the sample fetched.
const MIN_PAGES_PER_NAME: usize = 8;

/// Pairs of names: a table's (id, alias path) entries, or its (id form's, alias form's) renamed
/// parameters.
type Entries = Vec<(String, String)>;

/// Where an id is written: (script or directory, parameter name or empty for a path segment).
type IdForm<'o> = (&'o str, &'o str);

/// What the clusters show of one id form.
#[derive(Default)]
struct Shown<'o> {
    /// Id to the aliases shown for it.
    aliases: FxHashMap<&'o str, FxHashSet<&'o str>>,
    /// Renamed parameters shown: id form's name to the alias form's names.
    renamed: FxHashMap<&'o str, FxHashSet<&'o str>>,
    /// Id to the clusters that showed an entry for it.
    clusters: FxHashMap<&'o str, FxHashSet<u64>>,
}

/// Vocabularies the clusters show under the accepted actions (`outputs`), each with the samples
/// it may change, at most [`MAX_VOCABULARY_CANDIDATES`], none already `accepted`.
pub(super) fn proposals(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
    pages: usize,
    accepted: &[(SiteAction, Evidence)],
) -> Vec<(SiteAction, Vec<u32>)> {
    let most_names = (pages / MIN_PAGES_PER_NAME).min(MAX_VOCABULARY_ENTRIES);
    if most_names < MIN_VOCABULARY_ENTRIES {
        return Vec::new();
    }
    let mut shown: FxHashMap<IdForm<'_>, Shown<'_>> = FxHashMap::default();
    for (&cluster, members) in clusters {
        for &a in members {
            for &b in members {
                if a == b || outputs[a as usize] == outputs[b as usize] {
                    continue;
                }
                show_pair(
                    &outputs[a as usize],
                    &outputs[b as usize],
                    cluster,
                    &mut shown,
                );
            }
        }
    }
    // Distinct values of every id form shown, over all samples: a table is small only if
    // the id form is.
    let mut values: FxHashMap<IdForm<'_>, FxHashSet<&str>> =
        shown.keys().map(|k| (*k, FxHashSet::default())).collect();
    // Distinct addresses that carry each shown id, up to [`MIN_PAGES_PER_NAME`]: an id that
    // many addresses carry names a group of pages (a plugin's page holding every record), where
    // a page's own id is carried by its few spellings.
    let mut carriers: FxHashMap<(IdForm<'_>, &str), FxHashSet<&Output<'_>>> = shown
        .iter()
        .flat_map(|(form, s)| {
            s.aliases
                .keys()
                .map(|id| ((*form, *id), FxHashSet::default()))
        })
        .collect();
    for output in outputs {
        for (form, id) in id_forms(output) {
            if let Some(set) = values.get_mut(&form) {
                if set.len() <= most_names {
                    set.insert(id);
                }
            }
            if let Some(set) = carriers.get_mut(&(form, id)) {
                if set.len() < MIN_PAGES_PER_NAME {
                    set.insert(output);
                }
            }
        }
    }
    // The aliases must be a few names too: the last segments of their directories (a page's
    // own alias is one of many under its directory, `/blog/2019/05/title`, even where the
    // directory that holds it is one of many small ones).
    let mut alias_dirs: FxHashMap<&str, FxHashSet<&str>> = FxHashMap::default();
    for s in shown.values() {
        for aliases in s.aliases.values() {
            for alias in aliases {
                alias_dirs.entry(alias_form(alias).0).or_default();
            }
        }
    }
    for (path, _) in outputs {
        let (dir, last) = alias_form(path);
        if let Some(set) = alias_dirs.get_mut(dir) {
            if set.len() <= most_names {
                set.insert(last);
            }
        }
    }
    let few = |set: Option<&FxHashSet<&str>>| set.is_some_and(|v| v.len() <= most_names);
    let mut tables: Vec<(IdForm<'_>, Entries, Entries)> = Vec::new();
    for (form, mut s) in shown {
        if !few(values.get(&form)) {
            // An id form with a value for every few pages: only the ids that group pages are
            // names of a vocabulary (the others are pages' own aliases, which cover only the
            // pages the sample fetched).
            s.aliases.retain(|id, _| {
                carriers
                    .get(&(form, *id))
                    .is_some_and(|c| c.len() >= MIN_PAGES_PER_NAME)
            });
            let kept = &s.aliases;
            s.clusters.retain(|id, _| kept.contains_key(id));
        }
        let few_aliases = s
            .aliases
            .values()
            .flatten()
            .all(|alias| few(alias_dirs.get(alias_form(alias).0)));
        if s.aliases.is_empty() || !few_aliases {
            continue;
        }
        if let Some((entries, renamed)) = table_of(&s) {
            tables.push((form, entries, renamed));
        }
    }
    tables.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let mut out = Vec::new();
    for ((path, name), entries, renamed) in tables {
        if vocabulary_error(path, name, &entries, &renamed).is_some() {
            continue;
        }
        let ids: FxHashSet<String> = entries.iter().map(|(id, _)| id.clone()).collect();
        let action = SiteAction::Vocabulary {
            path: path.to_owned(),
            name: name.to_owned(),
            entries,
            renamed,
        };
        if accepted.iter().any(|(a, _)| *a == action) {
            continue;
        }
        let may_change = outputs
            .iter()
            .enumerate()
            .filter(|(_, output)| {
                id_forms(output).any(|(f, id)| f == (path, name) && ids.contains(id))
            })
            .map(|(i, _)| i as u32)
            .collect();
        out.push((action, may_change));
        if out.len() == MAX_VOCABULARY_CANDIDATES {
            break;
        }
    }
    out
}

/// The table an id form's evidence shows: entries sorted by id and renamed parameters, or
/// `None` when it is contradicted (an id with two aliases, an alias of two ids, a parameter
/// renamed two ways) or shows fewer than [`MIN_VOCABULARY_ENTRIES`] entries and no entry shown by
/// [`MIN_ENTRY_CLUSTERS`].
#[allow(clippy::type_complexity)]
fn table_of(s: &Shown<'_>) -> Option<(Entries, Entries)> {
    let one_shown_enough = || {
        s.clusters
            .values()
            .any(|showing| showing.len() >= MIN_ENTRY_CLUSTERS)
    };
    if (s.aliases.len() < MIN_VOCABULARY_ENTRIES && !one_shown_enough())
        || s.aliases.len() > MAX_VOCABULARY_ENTRIES
    {
        return None;
    }
    let mut entries = Vec::with_capacity(s.aliases.len());
    let mut aliases = FxHashSet::default();
    for (id, shown) in &s.aliases {
        if shown.len() != 1 {
            return None;
        }
        let alias = *shown.iter().next()?;
        if !aliases.insert(alias) {
            return None;
        }
        entries.push((id.to_string(), alias.to_owned()));
    }
    entries.sort();
    let mut renamed = Vec::with_capacity(s.renamed.len());
    for (from, to) in &s.renamed {
        if to.len() != 1 {
            return None;
        }
        renamed.push((from.to_string(), to.iter().next()?.to_string()));
    }
    renamed.sort();
    Some((entries, renamed))
}

/// An alias path's directory and last segment, a trailing `/` left out of both
/// (`/category/news/` is `news` under `/category/`).
fn alias_form(path: &str) -> (&str, &str) {
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    match trimmed.rfind('/') {
        Some(slash) => (&trimmed[..=slash], &trimmed[slash + 1..]),
        None => ("", trimmed),
    }
}

/// Every id form `output` is an address of, with the id: its last path segment under its
/// directory, and each query parameter's value on its script.
fn id_forms<'o>(output: &'o Output<'_>) -> impl Iterator<Item = (IdForm<'o>, &'o str)> {
    let (path, query) = output;
    let path: &'o str = path;
    let segment = path.rfind('/').and_then(|slash| {
        let id = &path[slash + 1..];
        is_numeric_id(id).then(|| ((&path[..=slash], ""), id))
    });
    let parts = query.as_deref().into_iter().flat_map(move |q| {
        q.split('&').filter_map(move |part| {
            let (name, id) = part.split_once('=')?;
            (!name.is_empty() && is_numeric_id(id)).then_some(((path, name), id))
        })
    });
    segment.into_iter().chain(parts)
}

/// Whether `value` is a number, the shape of the database key a name is stored under.
fn is_numeric_id(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

/// Records the entries `a` and `b`, two addresses of one page of `cluster`, show with `a` as the
/// id form.
fn show_pair<'o>(
    a: &'o Output<'_>,
    b: &'o Output<'_>,
    cluster: u64,
    shown: &mut FxHashMap<IdForm<'o>, Shown<'o>>,
) {
    let (a_path, a_query) = a;
    let (b_path, b_query) = b;
    let b_path: &'o str = b_path;
    if a_path == b_path {
        return;
    }
    for ((dir_or_script, name), id) in id_forms(a) {
        // The alias must be another path, not an address of the id form itself.
        let alias_is_an_id = if name.is_empty() {
            b_path.starts_with(dir_or_script)
        } else {
            b_path == dir_or_script
        };
        if alias_is_an_id {
            continue;
        }
        let rest_a: Vec<&str> = a_query
            .as_deref()
            .map(|q| {
                q.split('&')
                    .filter(|p| !p.is_empty() && (name.is_empty() || *p != format!("{name}={id}")))
                    .collect()
            })
            .unwrap_or_default();
        let rest_b: Vec<&str> = b_query
            .as_deref()
            .map(|q| q.split('&').filter(|p| !p.is_empty()).collect())
            .unwrap_or_default();
        let Some(renames) = renames_between(&rest_a, &rest_b) else {
            continue;
        };
        let entry = shown.entry((dir_or_script, name)).or_default();
        entry.aliases.entry(id).or_default().insert(b_path);
        entry.clusters.entry(id).or_default().insert(cluster);
        for (from, to) in renames {
            entry.renamed.entry(from).or_default().insert(to);
        }
    }
}

/// The parameters renamed between two queries that hold the same values in the same order,
/// or `None` when they differ in anything but names (a missing, extra or different value).
fn renames_between<'q>(a: &[&'q str], b: &[&'q str]) -> Option<Vec<(&'q str, &'q str)>> {
    if a.len() != b.len() {
        return None;
    }
    let split = |p: &'q str| p.split_once('=').unwrap_or((p, ""));
    let mut b_sorted: Vec<(&str, &str)> = b.iter().map(|p| split(p)).collect();
    let mut a_sorted: Vec<(&str, &str)> = a.iter().map(|p| split(p)).collect();
    // By value, so a renamed parameter sorted elsewhere by name still pairs up.
    a_sorted.sort_by(|x, y| x.1.cmp(y.1).then(x.0.cmp(y.0)));
    b_sorted.sort_by(|x, y| x.1.cmp(y.1).then(x.0.cmp(y.0)));
    let mut renames = Vec::new();
    for ((an, av), (bn, bv)) in a_sorted.into_iter().zip(b_sorted) {
        if av != bv {
            return None;
        }
        if an != bn {
            renames.push((an, bn));
        }
    }
    Some(renames)
}

#[cfg(test)]
mod tests {
    use crate::learn::test_support::host;

    use super::*;

    #[test]
    fn a_menu_is_learned_with_its_renamed_page_key() {
        let (outputs, clusters) = host(&[
            &["/index.php?Itemid=106", "/central-respond"],
            &[
                "/index.php?Itemid=106&limitstart=10",
                "/central-respond?start=10",
            ],
            &["/index.php?Itemid=107", "/news"],
            &["/other-page"],
        ]);
        let got = proposals(&outputs, &clusters, 1000, &[]);
        let want = SiteAction::Vocabulary {
            path: "/index.php".into(),
            name: "Itemid".into(),
            entries: vec![
                ("106".into(), "/central-respond".into()),
                ("107".into(), "/news".into()),
            ],
            renamed: vec![("limitstart".into(), "start".into())],
        };
        assert!(got.iter().any(|(a, _)| *a == want), "{got:?}");
        let (_, may_change) = got.iter().find(|(a, _)| *a == want).unwrap();
        assert_eq!(may_change, &vec![0, 2, 4]);
    }

    #[test]
    fn a_contradicted_table_is_refused() {
        // Term 5 shown under two aliases: not one name per id.
        let (outputs, clusters) = host(&[
            &["/taxonomy/term/5", "/category/a"],
            &["/taxonomy/term/5?page=1", "/category/b?page=1"],
            &["/taxonomy/term/6", "/category/c"],
        ]);
        let got = proposals(&outputs, &clusters, 1000, &[]);
        assert!(got.is_empty(), "{got:?}");
        // One alias for two ids.
        let (outputs, clusters) = host(&[
            &["/taxonomy/term/5", "/category/a"],
            &["/taxonomy/term/6", "/category/a?x"],
            &["/taxonomy/term/6", "/category/a"],
        ]);
        let got = proposals(&outputs, &clusters, 1000, &[]);
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn a_table_of_per_page_aliases_is_too_large() {
        let urls: Vec<(String, String)> = (0..=MAX_VOCABULARY_ENTRIES)
            .map(|i| (format!("/node/{i}"), format!("/stories/title-{i}")))
            .collect();
        let groups: Vec<[&str; 2]> = urls.iter().map(|(a, b)| [a.as_str(), b.as_str()]).collect();
        let groups: Vec<&[&str]> = groups.iter().map(|g| &g[..]).collect();
        let (outputs, clusters) = host(&groups);
        assert!(proposals(&outputs, &clusters, 100_000, &[]).is_empty());
        // Nor is a table with a name for every few pages of the host.
        let (outputs, clusters) = host(&groups[..8]);
        assert!(proposals(&outputs, &clusters, 8 * MIN_PAGES_PER_NAME - 1, &[]).is_empty());
        // The same scheme on a small host is a vocabulary, keyed by the numbers.
        let (outputs, clusters) = host(&groups[..8]);
        let got = proposals(&outputs, &clusters, 8 * MIN_PAGES_PER_NAME, &[]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got.iter().all(
            |(a, _)| matches!(a, SiteAction::Vocabulary { entries, .. } if entries.len() == 8)
        ));
    }

    /// TYPO3 gives every page an id (`index.php?id=N` beside its path), so the id form is no
    /// small vocabulary; its news plugin's detail page (`id=3`) holds every item, and three
    /// items written both ways make that one page a name of the table, without the pages'
    /// own ids the sample showed once each.
    #[test]
    fn a_page_holding_many_records_is_a_name_of_a_large_id_form() {
        let item = |n: u32| format!("tx_news_pi1%5Bnews%5D={n}&cHash=h{n}");
        let mut urls: Vec<Vec<String>> = Vec::new();
        for n in 0..12 {
            urls.push(vec![
                format!("/index.php?id={}", 100 + n),
                format!("/page-{n}"),
            ]);
        }
        let with_items_shown = |shown: u32| {
            let mut urls = urls.clone();
            for n in 0..20 {
                let mut group = vec![format!("/index.php?id=3&{}", item(n))];
                if n < shown {
                    group.push(format!("/news/detail?{}", item(n)));
                }
                urls.push(group);
            }
            urls
        };
        let propose = |urls: &[Vec<String>]| {
            let groups: Vec<Vec<&str>> = urls
                .iter()
                .map(|g| g.iter().map(String::as_str).collect())
                .collect();
            let groups: Vec<&[&str]> = groups.iter().map(|g| &g[..]).collect();
            let (outputs, clusters) = host(&groups);
            proposals(&outputs, &clusters, 100, &[])
                .into_iter()
                .map(|(a, _)| a)
                .collect::<Vec<_>>()
        };
        let want = SiteAction::Vocabulary {
            path: "/index.php".into(),
            name: "id".into(),
            entries: vec![("3".into(), "/news/detail".into())],
            renamed: Vec::new(),
        };
        assert_eq!(propose(&with_items_shown(3)), vec![want]);
        // Two items are two clusters: one name shown twice may be a coincidence.
        assert_eq!(propose(&with_items_shown(2)), Vec::new());
        // The pages' own ids alone are aliases of single pages, too many for a table.
        assert_eq!(propose(&urls), Vec::new());
    }

    #[test]
    fn a_name_under_two_paths_is_no_table_of_ids() {
        // Plone's acquisition: an item reachable under another folder. The tree rules learn
        // that for every name; a table would cover the two the sample shows.
        let (outputs, clusters) = host(&[
            &["/en/farmer-famous/report", "/report"],
            &["/en/farmer-famous/minutes", "/minutes"],
            &["/en/farmer-famous/agenda", "/agenda"],
            &["/other-page"],
        ]);
        assert_eq!(proposals(&outputs, &clusters, 1000, &[]), Vec::new());
    }
}
