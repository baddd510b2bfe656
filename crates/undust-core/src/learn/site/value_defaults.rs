//! Parameters irrelevant at one value, their default, and relevant at the others.
//!
//! Real software writes a page's defaults out in its own links: `?page=1` on the first page of
//! a list, `state=open` on an issue list whose default state is open, a profile's
//! `tab=repositories`, MediaWiki's `action=view`, a pager spelling every filter at its default
//! (Gitea's `type=all&state=open&milestone=0&project=0&assignee=0&poster=0`). The other values
//! of such a parameter name other pages (`page=2`, `state=closed`), and a training sample of a
//! fifth of the pages rarely shows them, so dropping the parameter at every value would rest on
//! evidence for one value only. Two forms follow:
//!
//! - **thin evidence narrows a dropped parameter to its value**: a parameter whose merged
//!   duplicates all hold one value is dropped at that value only
//!   ([`SiteAction::IgnoreParamValue`]); dropping it at every value needs duplicates shown at
//!   [`MIN_IGNORED_VALUES`] values (a session id, a tracking tag: a new value on every link).
//!   The same holds when dropping it everywhere is refused because other values name other
//!   pages: the value the duplicates showed is tested alone ([`at_default_value`]). A record's
//!   id shown irrelevant beside other ids is context, not a default: an id is tried alone only
//!   when most of the merged samples hold it, or when it is a pager's first page;
//! - **defaults written together are one bundle**: two addresses of one page whose queries
//!   differ by several parts present in one only, every one `name=value`, propose dropping
//!   those parts at those values, tested together ([`default_bundles`]): none of them merges
//!   anything alone (the pager's link lacks every filter of the plain list at once).
//!
//! Both use the guards of every site action ([`Evidence::accepts`]); a bundle is refused by a
//! single merge of different pages, as every bundle is.
//!
//! A pager's first page is the one default whose shape the sample shows apart from its
//! duplicates: the parameter takes only numbers, several of them above the value, so the value
//! is where the pager starts ([`is_first_page`]). A fifth of a site's pages holds a list's page
//! 1 and its bare address together in one cluster or two, seldom three, so for such a value one
//! cluster suffices, with no merge of different pages at all, on a front controller's routes or
//! off them ([`Evidence::accepts_as_first_page`]). Drupal's and Discourse's pagers
//! count from 0: their `page=1` is the second page, and any sample pair of it with the bare list
//! refuses the drop.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::learn::starts_a_pager;

use super::{
    holds_beside, measure, names_a_record, param_name, Evidence, LearnConfig, Parsed, Round,
    SiteAction, SiteRewriter, SmallClusters, Tested, MAX_BUNDLE_CANDIDATES, MIN_MOVED_ID_VALUES,
};

/// Distinct values at which a parameter must be shown irrelevant (duplicates merged by dropping
/// it) before it is dropped at every value: one value shown is the evidence of a default.
pub(super) const MIN_IGNORED_VALUES: usize = 2;
/// Values of one parameter tested as defaults, the most shown first.
const MAX_VALUES_TESTED: usize = 2;
/// Values of a parameter refused as a whole measured one by one to tell the other hosts which of
/// them name pages here ([`contradicted_values`]): a sort or a view takes a handful of values,
/// and each is one measure over the samples carrying it.
const MAX_VALUES_TOLD: usize = 8;
/// Duplicate clusters that must show a pager's first page redundant, none contradicting it
/// ([`is_first_page`]).
pub(super) const FIRST_PAGE_MIN_CLUSTERS: u32 = 1;
/// Most parts of one bundle of defaults ([`default_bundles`]): a pager writes a handful of
/// filters; two queries that differ in more are not one page's defaults.
const MAX_DEFAULT_PARTS: usize = 8;

/// Values shown too thinly for a rule of their own, when learning beside other hosts
/// ([`at_default_value`]).
pub(super) struct ThinValues<'a> {
    /// Whether what the other hosts showed of an action makes up the clusters this host showed.
    pub lifts: &'a dyn Fn(&SiteAction, u32) -> bool,
    /// The thin values measured, with the clusters each merged: findings to tell the others.
    pub found: Vec<(SiteAction, u32)>,
}

/// What [`at_default_value`] makes of a parameter candidate.
pub(super) enum AtDefault {
    /// Not a question of values: the candidate is judged as it is.
    Keep,
    /// The evidence showed one value, and no value on its own passes: the candidate is not
    /// accepted (dropping every value of a default would merge the other values' pages).
    Refuse,
    /// The parameter dropped at the value the evidence showed, tested (boxed: the evidence is
    /// large beside the other answers).
    Value(Box<Tested>),
}

/// The value of query part `part` of parameter `name`: `Some(Some(v))` for `name=v`,
/// `Some(None)` for a bare `name` (a flag), `None` for another parameter.
fn value_of<'p>(part: &'p str, name: &str) -> Option<Option<&'p str>> {
    match part.split_once('=') {
        Some((n, v)) => (n == name).then_some(Some(v)),
        None => (part == name).then_some(None),
    }
}

/// The value-level form of a candidate dropping parameter `name` for every URL, once it was
/// measured (`wide`, on `may_change`): kept when its merged duplicates showed it at
/// [`MIN_IGNORED_VALUES`] values or more (or as a flag without a value, which has no other
/// value), and otherwise narrowed to the value they showed, the most shown first, the first that
/// passes the guards alone. A candidate scoped beside another parameter (its evidence on a front
/// controller's routes only) gets the same treatment: the scope says where the duplicates were
/// shown, not at which value, and a parameter shown irrelevant at its default only is no
/// decoration at its other values (Discuz!'s `ordertype=2`, the default order, beside
/// `ordertype=1`, the reversed one). The value form is tried on every route first: the default a
/// value names is the software's. Where that fails, it is tried held to the candidate's scope:
/// other page types may carry the value without the sample showing it redundant there
/// (PrestaShop's manufacturer and CMS pages, always written with `id_lang=1`).
///
/// Learning beside other hosts (`super::super::shared_evidence`), a value that passes every
/// guard but the support count, merging no different pages, is told to them (`thin`), and given
/// when no value passes on its own and what they showed makes up the count.
pub(super) fn at_default_value(
    candidate: &SiteAction,
    wide: &Evidence,
    config: &LearnConfig,
    (parsed, rewriter, round): (&[Parsed], &SiteRewriter, &Round<'_>),
    may_change: &[u32],
    mut thin: Option<&mut ThinValues<'_>>,
) -> AtDefault {
    let SiteAction::IgnoreParam { name, beside } = candidate else {
        return AtDefault::Keep;
    };
    if wide.positive_samples.is_empty() {
        return AtDefault::Keep;
    }
    let wide_accepted = wide.accepts(config);
    // Values the merged duplicates held, with how many samples held each.
    let mut shown: FxHashMap<&str, usize> = FxHashMap::default();
    for &u in &wide.positive_samples {
        // Every answer from here on is `Keep`: a wide drop shown at enough values stands (a
        // session id's samples need not all be read to tell).
        if wide_accepted && shown.len() >= MIN_IGNORED_VALUES {
            return AtDefault::Keep;
        }
        let query = round.outputs[u as usize].1.as_deref().unwrap_or("");
        let mut values = query.split('&').filter_map(|p| value_of(p, name));
        match (values.next(), values.next()) {
            // A flag has no other value; a repeated parameter is not one value.
            (Some(None), _) | (Some(_), Some(_)) => return AtDefault::Keep,
            (Some(Some(v)), None) => *shown.entry(v).or_default() += 1,
            (None, _) => {}
        }
    }
    if shown.is_empty() || (shown.len() >= MIN_IGNORED_VALUES && wide_accepted) {
        return AtDefault::Keep;
    }
    // A number shown irrelevant beside other numbers, and at no more than half of the merges,
    // is an id among ids: the parameter is context where it was shown, at any id, and no id is
    // its default (osCommerce's `cPath` beside products of several categories: `cPath=22` is
    // no default on `index.php`, where it is that category's listing). A default holds most of
    // the evidence (PrestaShop's `id_lang=1`, seldom beside another language's id on paths
    // that name the language), and a pager's first page is a default wherever it is written.
    let numbers = shown.keys().filter(|v| names_a_record(v)).count();
    let merges: usize = shown.values().sum();
    // At most one value holds more than half of the merges.
    let held_by_most = shown
        .iter()
        .find(|&(_, &n)| 2 * n > merges)
        .map(|(&v, _)| v);
    let mut values = most_shown_values(shown, MAX_VALUES_TESTED);
    if numbers >= MIN_IGNORED_VALUES {
        values.retain(|&v| {
            !names_a_record(v) || held_by_most == Some(v) || is_first_page(&round.outputs, name, v)
        });
    }
    // The value on every route first; then, for a candidate scoped beside another parameter,
    // the value in that scope (a default that other page types carry without the sample showing
    // it redundant there).
    let scopes = std::iter::once(None).chain(beside.is_some().then(|| beside.clone()));
    let mut lifted: Option<Box<Tested>> = None;
    for scope in scopes {
        for &value in &values {
            let action = SiteAction::IgnoreParamValue {
                name: name.clone(),
                value: value.to_owned(),
                beside: scope.clone(),
            };
            let mut part_holders = holders_of_part(&round.outputs, may_change, name, value);
            part_holders.retain(|&u| {
                let query = round.outputs[u as usize].1.as_deref().unwrap_or("");
                holds_beside(query, scope.as_deref())
            });
            let mut with = rewriter.clone();
            with.add(&action);
            let (evidence, moved) = measure(parsed, &with, round, &part_holders, None, true);
            if evidence.accepts(config)
                || (evidence.accepts_as_first_page(config)
                    && is_first_page(&round.outputs, name, value))
            {
                return AtDefault::Value(Box::new((action, with, evidence, moved)));
            }
            if let Some(thin) = thin.as_deref_mut() {
                if evidence.accepts_uncontradicted(config, 1) {
                    let clusters = evidence.clusters.len() as u32;
                    thin.found.push((action.clone(), clusters));
                    if lifted.is_none() && (thin.lifts)(&action, clusters) {
                        lifted = Some(Box::new((action, with, evidence, moved)));
                    }
                }
            }
        }
    }
    if let Some(lifted) = lifted {
        return AtDefault::Value(lifted);
    }
    if wide_accepted {
        AtDefault::Refuse
    } else {
        AtDefault::Keep
    }
}

/// Values a parameter carries most often ([`MAX_VALUES_TOLD`] of them, records left out)
/// whose drop merges different pages on this host: told to the other hosts of the crawl
/// ([`super::super::shared_evidence`]) with a parameter refused as a whole, so that a value this
/// sample shows naming its own pages (`sort=oldest_to_newest` where it is not the default) is
/// not dropped on another host on that host's thin evidence.
pub(super) fn contradicted_values(
    name: &str,
    (parsed, rewriter, round): (&[Parsed], &SiteRewriter, &Round<'_>),
    may_change: &[u32],
) -> Vec<SiteAction> {
    let mut carried: FxHashMap<&str, usize> = FxHashMap::default();
    for &u in may_change {
        let query = round.outputs[u as usize].1.as_deref().unwrap_or("");
        for part in query.split('&') {
            if let Some(Some(v)) = value_of(part, name) {
                if !names_a_record(v) {
                    *carried.entry(v).or_default() += 1;
                }
            }
        }
    }
    most_shown_values(carried, MAX_VALUES_TOLD)
        .into_iter()
        .map(|value| SiteAction::IgnoreParamValue {
            name: name.to_owned(),
            value: value.to_owned(),
            beside: None,
        })
        .filter(|action| {
            let SiteAction::IgnoreParamValue { value, .. } = action else {
                return false;
            };
            let holders = holders_of_part(&round.outputs, may_change, name, value);
            let mut with = rewriter.clone();
            with.add(action);
            measure(parsed, &with, round, &holders, None, true)
                .0
                .negative_groups
                > 0
        })
        .collect()
}

/// Whether `value` of parameter `name` is a pager's first page ([`starts_a_pager`] over every
/// value the samples hold for `name`). Called for candidates at value `0` or `1` only, so the
/// pass over the samples is rare.
pub(super) fn is_first_page(
    outputs: &[(Cow<'_, str>, Option<Cow<'_, str>>)],
    name: &str,
    value: &str,
) -> bool {
    if !matches!(value, "0" | "1") {
        return false;
    }
    let held = outputs
        .iter()
        .filter_map(|(_, query)| query.as_deref())
        .flat_map(|query| query.split('&'))
        // A part without a value is no number.
        .filter_map(|part| value_of(part, name).map(|held| held.unwrap_or("")));
    starts_a_pager(value, held)
}

/// The `most` values shown the most, by count and then by text (the order a full sort of
/// `shown` would give, without sorting values beyond the first `most`: a session id's
/// duplicates show thousands).
fn most_shown_values(shown: FxHashMap<&str, usize>, most: usize) -> Vec<&str> {
    let mut values: Vec<(&str, usize)> = shown.into_iter().collect();
    let order = |a: &(&str, usize), b: &(&str, usize)| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0));
    if values.len() > most && most > 0 {
        values.select_nth_unstable_by(most - 1, order);
        values.truncate(most);
    }
    values.sort_by(order);
    values.truncate(most);
    values.into_iter().map(|(v, _)| v).collect()
}

/// The samples of `samples` whose query holds the part `name=value` ([`value_of`] gives
/// `value` for it), compared whole: a name holding `=` names no part.
fn holders_of_part(
    outputs: &[(Cow<'_, str>, Option<Cow<'_, str>>)],
    samples: &[u32],
    name: &str,
    value: &str,
) -> Vec<u32> {
    if name.contains('=') {
        return Vec::new();
    }
    let part = format!("{name}={value}");
    samples
        .iter()
        .copied()
        .filter(|&u| {
            outputs[u as usize]
                .1
                .as_deref()
                .is_some_and(|q| q.contains(part.as_str()) && q.split('&').any(|p| p == part))
        })
        .collect()
}

/// How many parts [`sorted_parts`] lists.
fn count_parts(query: Option<&str>) -> usize {
    query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .count()
}

/// The non-empty parts of a query, sorted.
fn sorted_parts(query: Option<&str>) -> Vec<&str> {
    let mut parts: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .collect();
    parts.sort_unstable();
    parts
}

/// Bundles of defaults: inside one duplicate cluster, two samples of one path whose queries
/// differ only by parts one of them lacks (the other's parts all in it), at least two and at
/// most [`MAX_DEFAULT_PARTS`], each `name=value` of a name the shorter query lacks, propose
/// dropping those parts at those values ([`SiteAction::IgnoreParamValue`] each). A proposal
/// made by at least [`MIN_MOVED_ID_VALUES`] clusters is a candidate, the most shown first, at
/// most [`MAX_BUNDLE_CANDIDATES`], each with every sample holding one of its parts. Proposals
/// every part of which an accepted action drops are left out. (One part alone is the single
/// parameter search's, narrowed by [`at_default_value`].)
pub(super) fn default_bundles(
    outputs: &[(Cow<'_, str>, Option<Cow<'_, str>>)],
    clusters: &SmallClusters,
    accepted: &[(SiteAction, Evidence)],
) -> Vec<(Vec<SiteAction>, Vec<u32>)> {
    let mut proposals: FxHashMap<Vec<&str>, FxHashSet<u64>> = FxHashMap::default();
    for (&cluster, members) in clusters {
        for (i, &a) in members.iter().enumerate() {
            let (path_a, qa) = &outputs[a as usize];
            for &b in &members[i + 1..] {
                let (path_b, qb) = &outputs[b as usize];
                if path_a != path_b || qa == qb {
                    continue;
                }
                // The longer query holds the shorter one's parts and at least two more: told
                // by counting parts before any are listed (most pairs differ by one).
                if count_parts(qa.as_deref()).abs_diff(count_parts(qb.as_deref())) < 2 {
                    continue;
                }
                let (pa, pb) = (sorted_parts(qa.as_deref()), sorted_parts(qb.as_deref()));
                let (long, short) = if pa.len() >= pb.len() {
                    (pa, pb)
                } else {
                    (pb, pa)
                };
                let extra: Vec<&str> = long
                    .iter()
                    .copied()
                    .filter(|p| !short.contains(p))
                    .collect();
                let is_default = |p: &&str| {
                    p.contains('=') && !short.iter().any(|s| param_name(s) == param_name(p))
                };
                if extra.len() < 2
                    || extra.len() > MAX_DEFAULT_PARTS
                    || long.len() - extra.len() != short.len()
                    || !extra.iter().all(is_default)
                {
                    continue;
                }
                proposals.entry(extra).or_default().insert(cluster);
            }
        }
    }
    let mut shown: Vec<(usize, Vec<&str>)> = proposals
        .into_iter()
        .filter(|(_, c)| c.len() >= MIN_MOVED_ID_VALUES)
        .map(|(parts, c)| (c.len(), parts))
        .collect();
    shown.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let taken = |a: &SiteAction| accepted.iter().any(|(b, _)| b == a);
    let mut out = Vec::new();
    for (_, parts) in shown {
        let actions: Vec<SiteAction> = parts
            .iter()
            .map(|p| {
                let (name, value) = p.split_once('=').unwrap_or((p, ""));
                SiteAction::IgnoreParamValue {
                    name: name.to_owned(),
                    value: value.to_owned(),
                    beside: None,
                }
            })
            .collect();
        if actions.iter().all(taken) {
            continue;
        }
        let samples = outputs
            .iter()
            .enumerate()
            .filter(|(_, (_, q))| {
                q.as_deref()
                    .is_some_and(|q| q.split('&').any(|part| parts.contains(&part)))
            })
            .map(|(i, _)| i as u32)
            .collect();
        out.push((actions, samples));
        if out.len() == MAX_BUNDLE_CANDIDATES {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use rustc_hash::FxHashMap;

    use super::super::{learn, SiteOutcome};
    use super::{
        count_parts, holders_of_part, is_first_page, most_shown_values, sorted_parts, value_of,
    };
    use crate::canon::rules::{SiteAction, SiteRewriter};
    use crate::learn::{LabelledUrl, LearnConfig};
    use url::Url;

    fn lu(url: String, cluster: u64) -> LabelledUrl {
        LabelledUrl { url, cluster }
    }

    fn actions(out: &SiteOutcome) -> Vec<&SiteAction> {
        out.rules.iter().map(|r| &r.action).collect()
    }

    fn ignores_every_value(out: &SiteOutcome, name: &str) -> bool {
        actions(out)
            .iter()
            .any(|a| matches!(a, SiteAction::IgnoreParam { name: n, .. } if n == name))
    }

    fn ignores_value(out: &SiteOutcome, name: &str, value: &str) -> bool {
        actions(out).contains(&&SiteAction::IgnoreParamValue {
            name: name.into(),
            value: value.into(),
            beside: None,
        })
    }

    /// Issue lists of `repos` repositories, each also written with its default state spelled
    /// out (`?state=open`), the closed list of the first `closed` of them shown as a page of
    /// its own, and one issue page per repository.
    fn issue_lists(repos: u64, closed: u64) -> Vec<LabelledUrl> {
        let mut s = Vec::new();
        for r in 0..repos {
            s.push(lu(format!("https://f.example/o/r{r}/issues"), r));
            s.push(lu(format!("https://f.example/o/r{r}/issues?state=open"), r));
            s.push(lu(format!("https://f.example/o/r{r}/issues/1"), 1000 + r));
            if r < closed {
                s.push(lu(
                    format!("https://f.example/o/r{r}/issues?state=closed"),
                    2000 + r,
                ));
            }
        }
        s
    }

    #[test]
    fn the_most_shown_values_come_in_the_order_of_a_full_sort() {
        let counts = [("b", 3), ("a", 3), ("c", 7), ("d", 1), ("e", 3), ("f", 7)];
        let shown: FxHashMap<&str, usize> = counts.into_iter().collect();
        let mut sorted: Vec<(&str, usize)> = counts.to_vec();
        sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        for most in 0..=counts.len() + 1 {
            let want: Vec<&str> = sorted.iter().take(most).map(|(v, _)| *v).collect();
            assert_eq!(most_shown_values(shown.clone(), most), want, "{most}");
        }
    }

    #[test]
    fn holders_of_a_part_are_the_samples_whose_query_has_it_whole() {
        let queries = [
            Some("state=open"),
            Some("a=1&state=open&b=2"),
            Some("state=opened"),
            Some("xstate=open"),
            Some("state=open&state=closed"),
            Some("state"),
            Some("state=closed&x=state=open"),
            None,
            Some("state=open=1"),
        ];
        let outputs: Vec<(Cow<'_, str>, Option<Cow<'_, str>>)> = queries
            .iter()
            .map(|q| (Cow::Borrowed("/p"), q.map(Cow::Borrowed)))
            .collect();
        let all: Vec<u32> = (0..outputs.len() as u32).collect();
        for (name, value) in [("state", "open"), ("state", "open=1"), ("x", "state=open")] {
            let want: Vec<u32> = all
                .iter()
                .copied()
                .filter(|&u| {
                    queries[u as usize].is_some_and(|q| {
                        q.split('&').any(|p| value_of(p, name) == Some(Some(value)))
                    })
                })
                .collect();
            assert!(!want.is_empty(), "{name}={value}");
            assert_eq!(holders_of_part(&outputs, &all, name, value), want);
        }
        // A name holding `=` names no part: `value_of` splits at the first `=`.
        assert!(holders_of_part(&outputs, &all, "state=open", "1").is_empty());
        assert!(holders_of_part(&outputs, &[2, 3, 7], "state", "open").is_empty());
    }

    #[test]
    fn parts_are_counted_as_they_are_listed() {
        for q in [
            None,
            Some(""),
            Some("a=1"),
            Some("a=1&&b"),
            Some("&c=3&a=1&"),
        ] {
            assert_eq!(count_parts(q), sorted_parts(q).len(), "{q:?}");
        }
    }

    #[test]
    fn a_parameter_at_its_default_value_is_dropped_there_only() {
        let out = learn(&issue_lists(20, 4), &LearnConfig::default());
        assert!(ignores_value(&out, "state", "open"), "{:?}", actions(&out));
        assert!(!ignores_every_value(&out, "state"), "{:?}", actions(&out));
        let rewriter = SiteRewriter::new(actions(&out));
        let closed = Url::parse("https://f.example/o/r30/issues?state=closed").unwrap();
        assert_eq!(rewriter.rewrite(&closed), None);
        let open = Url::parse("https://f.example/o/r30/issues?state=open").unwrap();
        assert_eq!(
            rewriter.rewrite(&open).as_deref(),
            Some("https://f.example/o/r30/issues")
        );
    }

    /// A shop's category listings, each paged (`p=2`, `p=3`: other pages), and a sample that
    /// holds a listing both bare and with its first page spelled out (`p=1`) in `shown`
    /// clusters only: a fifth of the pages seldom shows more. `first_page_is_bare` says whether
    /// those pairs are one page (PrestaShop) or two (a pager counting from 0, where `p=1` is
    /// the second page).
    fn paged_listings(shown: u64, first_page_is_bare: bool) -> Vec<LabelledUrl> {
        let b = "https://shop.example/index.php?controller=category";
        let mut s = Vec::new();
        for c in 1..40u64 {
            let page = c * 10;
            s.push(lu(format!("{b}&id_category={c}"), page));
            s.push(lu(format!("{b}&id_category={c}&p=2"), page + 1));
            if c % 3 == 0 {
                s.push(lu(format!("{b}&id_category={c}&p=3"), page + 2));
            }
            if c <= shown {
                let first = if first_page_is_bare { page } else { page + 5 };
                s.push(lu(format!("{b}&id_category={c}&p=1"), first));
            }
        }
        s
    }

    #[test]
    fn a_pagers_first_page_is_dropped_on_thin_evidence() {
        let out = learn(&paged_listings(1, true), &LearnConfig::default());
        assert!(ignores_value(&out, "p", "1"), "{:?}", actions(&out));
        assert!(!ignores_every_value(&out, "p"), "{:?}", actions(&out));
        let rewriter = SiteRewriter::new(actions(&out));
        let b = "https://shop.example/index.php?controller=category";
        let first = Url::parse(&format!("{b}&id_category=77&p=1")).unwrap();
        assert_eq!(
            rewriter.rewrite(&first).as_deref(),
            Some(format!("{b}&id_category=77").as_str())
        );
        let second = Url::parse(&format!("{b}&id_category=77&p=2")).unwrap();
        assert_eq!(rewriter.rewrite(&second), None);
    }

    /// TYPO3: pages by id, a few written with the default page type `type=0`, others in the
    /// print and feed types (`type=98`, `type=9818`, pages of their own), and a news plugin
    /// whose detail URLs are a front controller's routes (`action=detail`) written also as
    /// friendly paths. `type` changes no routed page, yet its `0` starts the type's numbers
    /// as a pager's first page does: a default on any route, dropped on thin evidence.
    #[test]
    fn a_first_value_is_a_default_beside_a_controllers_routes() {
        let mut samples = Vec::new();
        for n in 0..12u64 {
            samples.push(lu(
                format!(
                    "https://t.example/news/detail?action=detail&controller=News&news={n}&cHash=c{n}"
                ),
                1000 + n,
            ));
            samples.push(lu(
                format!("https://t.example/news/detail/story-{n}"),
                1000 + n,
            ));
        }
        for n in 0..40u64 {
            samples.push(lu(format!("https://t.example/index.php?id={n}"), n));
            if n < 3 {
                samples.push(lu(format!("https://t.example/index.php?id={n}&type=0"), n));
            }
        }
        for (n, page_type) in [(10u64, 98), (11, 98), (12, 9818), (13, 9818)] {
            samples.push(lu(
                format!("https://t.example/index.php?id={n}&type={page_type}"),
                2000 + n,
            ));
        }
        let out = learn(&samples, &LearnConfig::default());
        assert!(ignores_value(&out, "type", "0"), "{:?}", actions(&out));
        assert!(!ignores_every_value(&out, "type"), "{:?}", actions(&out));
    }

    #[test]
    fn a_first_page_shown_as_another_page_is_kept() {
        // A pager counting from 0: its one pair shows `p=1` to be another page.
        let out = learn(&paged_listings(1, false), &LearnConfig::default());
        assert!(!ignores_value(&out, "p", "1"), "{:?}", actions(&out));
        // Two pairs, one of them different pages: no drop either.
        let mut s = paged_listings(1, true);
        let b = "https://shop.example/index.php?controller=category";
        s.push(lu(format!("{b}&id_category=2&p=1"), 9_999));
        let out = learn(&s, &LearnConfig::default());
        assert!(!ignores_value(&out, "p", "1"), "{:?}", actions(&out));
    }

    #[test]
    fn a_first_page_is_the_start_of_a_numbered_pager() {
        let outputs = |queries: &[&str]| -> Vec<(Cow<'static, str>, Option<Cow<'static, str>>)> {
            queries
                .iter()
                .map(|q| (Cow::Borrowed("/list"), Some(Cow::Owned((*q).to_owned()))))
                .collect()
        };
        let pager = outputs(&["p=1", "p=2&x=a", "p=3"]);
        assert!(is_first_page(&pager, "p", "1"));
        assert!(!is_first_page(&pager, "p", "2"));
        assert!(!is_first_page(&pager, "x", "a"));
        // Counting from 0.
        assert!(is_first_page(&outputs(&["page=1", "page=2"]), "page", "0"));
        // One later page is no sequence; a word among the values is no pager.
        assert!(!is_first_page(&outputs(&["p=1", "p=2"]), "p", "1"));
        assert!(!is_first_page(
            &outputs(&["p=1", "p=2", "p=3", "p=all"]),
            "p",
            "1"
        ));
        assert!(!is_first_page(&outputs(&["p=1", "p=02", "p=3"]), "p", "1"));
    }

    /// Discuz!'s threads, routed by `mod`, with the default order spelled out
    /// (`ordertype=2`) beside the thread, and a forum listing per forum. The evidence lies on
    /// routed pages only, so the drop is narrowed beside the thread's id; it is still shown at
    /// one value only, and the reversed order (`ordertype=1`) stays another page.
    #[test]
    fn a_routed_parameter_shown_at_its_default_only_is_dropped_at_that_value() {
        let b = "https://dz.example/forum.php";
        let mut s = Vec::new();
        for t in 100..130u64 {
            s.push(lu(format!("{b}?mod=viewthread&tid={t}"), t));
            s.push(lu(format!("{b}?mod=viewthread&tid={t}&ordertype=2"), t));
        }
        for f in 1..6u64 {
            s.push(lu(format!("{b}?mod=forumdisplay&fid={f}"), 1000 + f));
        }
        let out = learn(&s, &LearnConfig::default());
        assert!(ignores_value(&out, "ordertype", "2"), "{:?}", actions(&out));
        assert!(
            !ignores_every_value(&out, "ordertype"),
            "{:?}",
            actions(&out)
        );
        let rewriter = SiteRewriter::new(actions(&out));
        let reversed = Url::parse(&format!("{b}?mod=viewthread&tid=7&ordertype=1")).unwrap();
        assert_eq!(rewriter.rewrite(&reversed), None);
    }

    /// PrestaShop without friendly URLs (held-out family, seed 51): a product's links carry
    /// the shop's one language (`id_lang=1`) or not, while the manufacturers' and CMS pages
    /// always carry it, so the sample never shows it redundant there. Dropped at its value on
    /// every route, it would change those pages with no evidence; beside the product id it
    /// is what the duplicates show.
    #[test]
    fn a_default_shown_on_one_page_type_only_is_dropped_at_its_value_in_that_scope() {
        let b = "https://shop.example/index.php";
        let mut s = Vec::new();
        for p in 1..31u64 {
            s.push(lu(format!("{b}?id_product={p}&controller=product"), p));
            s.push(lu(
                format!("{b}?id_product={p}&controller=product&id_lang=1"),
                p,
            ));
        }
        for m in 1..41u64 {
            s.push(lu(
                format!("{b}?id_manufacturer={m}&controller=manufacturer&id_lang=1"),
                1000 + m,
            ));
            s.push(lu(
                format!("{b}?id_cms={m}&controller=cms&id_lang=1"),
                2000 + m,
            ));
        }
        let out = learn(&s, &LearnConfig::default());
        let scoped = SiteAction::IgnoreParamValue {
            name: "id_lang".into(),
            value: "1".into(),
            beside: Some("id_product".into()),
        };
        assert!(actions(&out).contains(&&scoped), "{:?}", actions(&out));
        assert!(!ignores_value(&out, "id_lang", "1"), "{:?}", actions(&out));
        assert!(!ignores_every_value(&out, "id_lang"), "{:?}", actions(&out));
        let rewriter = SiteRewriter::new(actions(&out));
        let product =
            Url::parse(&format!("{b}?id_product=77&controller=product&id_lang=1")).unwrap();
        assert_eq!(
            rewriter.rewrite(&product).as_deref(),
            Some(format!("{b}?id_product=77&controller=product").as_str())
        );
        for kept in [
            format!("{b}?id_product=77&controller=product&id_lang=2"),
            format!("{b}?id_manufacturer=77&controller=manufacturer&id_lang=1"),
        ] {
            let url = Url::parse(&kept).unwrap();
            assert_eq!(rewriter.rewrite(&url), None, "{kept}");
        }
    }

    #[test]
    fn evidence_for_one_value_is_not_evidence_for_every_value() {
        // No closed list in the sample at all: nothing contradicts dropping `state`, but the
        // duplicates showed one value of it.
        let out = learn(&issue_lists(20, 0), &LearnConfig::default());
        assert!(ignores_value(&out, "state", "open"), "{:?}", actions(&out));
        assert!(!ignores_every_value(&out, "state"), "{:?}", actions(&out));
    }

    #[test]
    fn a_parameter_shown_irrelevant_at_several_values_is_dropped_at_every_value() {
        let mut s = Vec::new();
        for id in 0..20u64 {
            s.push(lu(format!("https://t.example/item/{id}"), id));
            s.push(lu(
                format!("https://t.example/item/{id}?from=f{}", id % 5),
                id,
            ));
        }
        let out = learn(&s, &LearnConfig::default());
        assert!(ignores_every_value(&out, "from"), "{:?}", actions(&out));
    }

    /// Issue lists paged `?page=N`, the pager's link writing every filter at its default before
    /// the page; with `contrary`, a page of each repository holding two of the filters is another
    /// page than the plain list.
    fn pager_site(contrary: bool) -> Vec<LabelledUrl> {
        let mut s = Vec::new();
        for r in 0..8u64 {
            for page in 2..5u64 {
                let cluster = r * 10 + page;
                let list = format!("https://g.example/o/r{r}/issues");
                s.push(lu(format!("{list}?page={page}"), cluster));
                s.push(lu(
                    format!("{list}?type=all&milestone=0&poster=0&page={page}"),
                    cluster,
                ));
            }
            s.push(lu(format!("https://g.example/o/r{r}/issues"), 500 + r));
            if contrary {
                s.push(lu(
                    format!("https://g.example/o/r{r}/issues?type=all&milestone=0"),
                    600 + r,
                ));
            }
        }
        s
    }

    #[test]
    fn defaults_written_together_are_learned_as_one_bundle() {
        let out = learn(&pager_site(false), &LearnConfig::default());
        for (name, value) in [("type", "all"), ("milestone", "0"), ("poster", "0")] {
            assert!(ignores_value(&out, name, value), "{:?}", actions(&out));
            assert!(!ignores_every_value(&out, name), "{:?}", actions(&out));
        }
        let rewriter = SiteRewriter::new(actions(&out));
        let other = Url::parse("https://g.example/o/r1/issues?type=pulls&milestone=3").unwrap();
        assert_eq!(rewriter.rewrite(&other), None, "other values are kept");
    }

    #[test]
    fn a_bundle_of_defaults_that_merges_different_pages_is_refused() {
        let out = learn(&pager_site(true), &LearnConfig::default());
        assert!(
            !actions(&out)
                .iter()
                .any(|a| matches!(a, SiteAction::IgnoreParamValue { .. })),
            "{:?}",
            actions(&out)
        );
    }
}
