//! Site-rule candidates for one address spelled in several shapes, found in pairs of addresses
//! of one duplicate cluster and then measured by `learn::site` like every other site action:
//!
//! - a query value written inside a templated path segment
//!   ([`SiteAction::TemplatedSegmentToQuery`]): `script?name=V` beside `dir` + `before` + `V` +
//!   `after` (SMF's `index.php?topic=5.0` and `index.php/topic,5.0.html`; phpBB SEO's
//!   `viewtopic.php?t=5` and `topic5.html`), or title + `before` + `V` + `after` with the title
//!   not read (osCommerce's Ultimate SEO URLs: `product_info.php?products_id=5` and
//!   `a-name-p-5.html`, where an old name still answers; [`title_marker`] names the marker);
//! - a default the software fills into a bare value ([`SiteAction::DefaultValueSuffix`]):
//!   `name=N` beside `name=N` + suffix, the rest of the address equal (SMF's `topic=5` and
//!   `topic=5.0`);
//! - a default view written as trailing segments ([`SiteAction::DefaultViewTail`]): a path
//!   beside the same path followed by a literal tail (Discourse's `/c/slug/5` and
//!   `/c/slug/5/l/latest`; Gitea's `/owner/repo` and `/owner/repo/src/branch/main`).
//!
//! A shape is proposed only when at least [`MIN_MOVED_ID_VALUES`] distinct values (ids,
//! pages) show it, so one coincidence is not a scheme (a view tail on fewer where its route
//! shows it as the default, `super::thin_tails`); the measure then pools the evidence of
//! every address of that shape, and one merge of different pages refuses the action. A view
//! tail that is the page on one-page topics only (XenForo's `threads/x.1/latest`, the last
//! page) is refused when a cluster shows it beside other addresses but not beside the page
//! without it.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};

use super::names_a_position;
use super::site::{most_shown_first, SmallClusters, MIN_MOVED_ID_VALUES};
use super::thin_tails::{route_shows_default, MIN_THIN_TAIL_PAGES};
use crate::canon::rules::site::{
    fixed_query_part, is_extension, is_pair_number, is_template_title, is_titled_template_id,
    is_value_suffix, is_view_tail, pair_literals_delimit, query_safe_segment_value, view_tail_base,
    SegmentTemplate,
};
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (Cow<'a, str>, Option<Cow<'a, str>>);

/// Templated-segment candidates tested per round (the most shown first).
const MAX_TEMPLATE_CANDIDATES: usize = 8;
/// Default-suffix candidates tested per round (the most shown first).
const MAX_SUFFIX_CANDIDATES: usize = 8;
/// View-tail candidates tested per round (the most shown first).
const MAX_TAIL_CANDIDATES: usize = 8;

/// The query `q` without its part number `at`, parts joined by `&` as they were (empty when it
/// was the only one).
pub(super) fn query_without_part(q: &str, at: usize) -> String {
    q.split('&')
        .enumerate()
        .filter(|&(i, _)| i != at)
        .map(|(_, part)| part)
        .collect::<Vec<_>>()
        .join("&")
}

/// The parts a query form holds besides the values a template moved (`rest`, in order) that
/// the templated address does not (its own query `other` must be the last of them): the
/// template's fixed parts, joined by `&` (empty when there are none), or `None` when `other` is
/// not what the rest ends with or a fixed part is no page-type selector. A selector names its
/// page type by a word (`mod=forumdisplay`); a part with a digit in its value is an argument
/// of one page (an id, a page), which a template that wrote it would write on every page.
fn fixed_parts<'q>(
    rest: impl Iterator<Item = &'q str> + Clone,
    other: Option<&str>,
) -> Option<String> {
    // Called for every pair of cluster members a template could relate, so nothing is
    // allocated until a template with fixed parts is found (rare: most query forms have none).
    let other = other.filter(|o| !o.is_empty());
    let other_parts = other.map_or(0, |o| o.split('&').count());
    let fixed = rest.clone().count().checked_sub(other_parts)?;
    let tail_agrees = match other {
        Some(o) => rest.clone().skip(fixed).eq(o.split('&')),
        None => true,
    };
    let selector = |part: &str| {
        fixed_query_part(part)
            && part
                .split_once('=')
                .is_some_and(|(_, value)| !value.bytes().any(|b| b.is_ascii_digit()))
    };
    if !tail_agrees || !rest.clone().take(fixed).all(selector) {
        return None;
    }
    if fixed == 0 {
        return Some(String::new());
    }
    let mut joined = String::new();
    for part in rest.take(fixed) {
        if !joined.is_empty() {
            joined.push('&');
        }
        joined.push_str(part);
    }
    Some(joined)
}

/// Candidates for a query value written inside a templated path segment: inside one duplicate
/// cluster, a URL `S?…&n=V&…` beside a URL whose path is `D` + `B` + `V` + `A` (one segment
/// under directory `D`, `B` and `A` literals not both empty) and whose query is the first URL's
/// other parameters proposes `(D, B, A, S, n)`; a proposal made by at least
/// [`MIN_MOVED_ID_VALUES`] distinct values is a candidate. Each comes with the samples whose
/// path the template matches.
pub(super) fn templated_segments(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    // (dir, before, after, titled, script, name, fixed parts) -> distinct values shown.
    type Shape<'s> = (&'s str, &'s str, &'s str, bool, &'s str, &'s str, String);
    let mut proposals: FxHashMap<Shape<'_>, FxHashSet<&str>> = FxHashMap::default();
    for members in clusters.values() {
        for &a in members {
            let (script, query) = &outputs[a as usize];
            let script: &str = script;
            let Some(q) = query.as_deref() else { continue };
            for (at, part) in q.split('&').enumerate() {
                let Some((name, value)) = part.split_once('=') else {
                    continue;
                };
                if name.is_empty() || !query_safe_segment_value(value) {
                    continue;
                }
                for &b in members {
                    let (path, other_query) = &outputs[b as usize];
                    let path: &str = path;
                    if b == a || path == script {
                        continue;
                    }
                    let Some(slash) = path.rfind('/') else {
                        continue;
                    };
                    let (dir, segment) = path.split_at(slash + 1);
                    let Some(start) = segment.find(value) else {
                        continue;
                    };
                    let (before, after) = (&segment[..start], &segment[start + value.len()..]);
                    let literal = (!before.is_empty() || !after.is_empty())
                        && template_literals(before, after);
                    // A title before the value, not read: the shape is its marker.
                    let titled = || {
                        let start = segment.rfind(value)?;
                        let after = &segment[start + value.len()..];
                        let marker = title_marker(&segment[..start])?;
                        (is_titled_template_id(value) && template_literals("", after))
                            .then_some((marker, after))
                    };
                    let shape = if literal {
                        (before, after, false)
                    } else if let Some((marker, after)) = titled() {
                        (marker, after, true)
                    } else {
                        continue;
                    };
                    // The rest of the address must agree: the value is all that moved, beside
                    // the query form's fixed parts.
                    let rest = q.split('&').enumerate().filter(|&(i, _)| i != at);
                    let Some(fixed) =
                        fixed_parts(rest.map(|(_, part)| part), other_query.as_deref())
                    else {
                        continue;
                    };
                    let (before, after, titled) = shape;
                    proposals
                        .entry((dir, before, after, titled, script, name, fixed))
                        .or_default()
                        .insert(value);
                }
            }
        }
    }
    let mut out: Vec<(usize, SiteAction, Vec<u32>)> = Vec::new();
    for ((dir, before, after, titled, script, name, fixed), values) in proposals {
        if values.len() < MIN_MOVED_ID_VALUES {
            continue;
        }
        // Shown with numbers only, the template reads numbers only: a value with a word in it
        // (`5-lastpost`) is another page type the sample never showed in this shape.
        let numbers = values.iter().all(|v| is_pair_number(v))
            && !before.ends_with(|c: char| c.is_ascii_digit())
            && !after.starts_with(|c: char| c.is_ascii_digit());
        let action = SiteAction::TemplatedSegmentToQuery {
            dir: dir.to_owned(),
            before: before.to_owned(),
            after: after.to_owned(),
            script: script.to_owned(),
            name: name.to_owned(),
            numbers,
            fixed,
            titled,
        };
        // The query form must not read as the template (the rule file refuses it).
        if titled && SegmentTemplate::of(&action).is_some_and(|t| t.reads(script)) {
            continue;
        }
        let samples = read_by(&action, outputs);
        out.push((values.len(), action, samples));
    }
    let mut ranked = most_shown_first(out);
    ranked.truncate(MAX_TEMPLATE_CANDIDATES);
    // Pairs first, as the rewriter tries them: `thread-5-page-2.html` read as one value is
    // no page the query form names.
    let mut pairs = templated_pairs(outputs, clusters);
    pairs.extend(ranked);
    pairs
}

/// The literals and the two numbers of a path segment written `before` + `N` + `between` +
/// `M` + `after`: `before` and `between` short words without digits ([`template_literals`]),
/// `after` a file extension or nothing, or a third number written after a separator and before
/// them (Discuz!'s `thread-5-2-1.html`, where the `1` is the listing page the link was on: the
/// template reads the two numbers and keeps the rest as its literal, so each such page is a
/// template of its own); `None` for any other segment.
fn two_numbers(segment: &str) -> Option<[&str; 5]> {
    let body_end = match segment.rfind('.') {
        Some(dot) if is_extension(&segment[dot..]) => dot,
        _ => segment.len(),
    };
    let (body, after) = segment.split_at(body_end);
    let run = |s: &str, digits: bool| {
        s.bytes()
            .take_while(|b| b.is_ascii_digit() == digits)
            .count()
    };
    let before_end = run(body, false);
    let first_end = before_end + run(&body[before_end..], true);
    let between_end = first_end + run(&body[first_end..], false);
    let second_end = between_end + run(&body[between_end..], true);
    // A third number after a separator joins the literal after the second.
    let separator_end = second_end + run(&body[second_end..], false);
    let third_end = separator_end + run(&body[separator_end..], true);
    let third = third_end == body.len()
        && third_end > separator_end
        && template_literals(&body[second_end..separator_end], "");
    let after = if third { &segment[second_end..] } else { after };
    let parts = [
        &body[..before_end],
        &body[before_end..first_end],
        &body[first_end..between_end],
        &body[between_end..second_end],
        after,
    ];
    let [before, first, between, second, _] = parts;
    ((third || second_end == body.len())
        && is_pair_number(first)
        && is_pair_number(second)
        && template_literals(before, "")
        && template_literals(between, "")
        && pair_literals_delimit(before, between, after))
    .then_some(parts)
}

/// Candidates for two query numbers written inside one templated path segment: inside one
/// duplicate cluster, a URL `S?…&n=N&…&m=M&…` beside a URL whose last segment is `B` + `N` +
/// `W` + `M` + `A` under directory `D` ([`two_numbers`]) and whose query is the first URL's
/// other parameters proposes `(D, B, W, A, S, n, m)`; a proposal made by at least
/// [`MIN_MOVED_ID_VALUES`] distinct pairs of numbers is a candidate (MyBB's
/// `showthread.php?tid=5&page=2` beside `thread-5-page-2.html`). Each comes with the samples
/// whose path the template matches.
fn templated_pairs(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    // (dir, before, between, after, script, first name, second name, fixed parts) -> distinct
    // pairs shown.
    type Shape<'s> = (
        &'s str,
        &'s str,
        &'s str,
        &'s str,
        &'s str,
        &'s str,
        &'s str,
        String,
    );
    let mut proposals: FxHashMap<Shape<'_>, FxHashSet<(&str, &str)>> = FxHashMap::default();
    for members in clusters.values() {
        for &b in members {
            let (path, other_query) = &outputs[b as usize];
            let path: &str = path;
            let Some(slash) = path.rfind('/') else {
                continue;
            };
            let (dir, segment) = path.split_at(slash + 1);
            let Some([before, n, between, m, after]) = two_numbers(segment) else {
                continue;
            };
            for &a in members {
                let (script, query) = &outputs[a as usize];
                let script: &str = script;
                let Some(q) = query.as_deref() else { continue };
                if a == b || script == path {
                    continue;
                }
                let parts: Vec<&str> = q.split('&').collect();
                let holding = |v: &str| -> Vec<(usize, &str)> {
                    parts
                        .iter()
                        .enumerate()
                        .filter_map(|(at, part)| {
                            let (name, value) = part.split_once('=')?;
                            (!name.is_empty() && value == v).then_some((at, name))
                        })
                        .collect()
                };
                let (firsts, seconds) = (holding(n), holding(m));
                for &(i, first) in &firsts {
                    for &(j, second) in &seconds {
                        if i == j || first == second {
                            continue;
                        }
                        // The rest of the address must agree: the numbers are all that moved,
                        // beside the query form's fixed parts.
                        let rest = parts
                            .iter()
                            .enumerate()
                            .filter(|&(at, _)| at != i && at != j)
                            .map(|(_, part)| *part);
                        if let Some(fixed) = fixed_parts(rest, other_query.as_deref()) {
                            proposals
                                .entry((dir, before, between, after, script, first, second, fixed))
                                .or_default()
                                .insert((n, m));
                        }
                    }
                }
            }
        }
    }
    let mut out: Vec<(usize, SiteAction, Vec<u32>)> = Vec::new();
    for ((dir, before, between, after, script, first, second, fixed), shown) in proposals {
        if shown.len() < MIN_MOVED_ID_VALUES {
            continue;
        }
        let action = SiteAction::TemplatedPairToQuery {
            dir: dir.to_owned(),
            before: before.to_owned(),
            between: between.to_owned(),
            after: after.to_owned(),
            script: script.to_owned(),
            first: first.to_owned(),
            second: second.to_owned(),
            fixed,
        };
        // The query form must not read as the template (the rule file refuses it).
        if SegmentTemplate::of(&action).is_some_and(|t| t.reads(script)) {
            continue;
        }
        let samples = read_by(&action, outputs);
        out.push((shown.len(), action, samples));
    }
    let mut ranked = most_shown_first(out);
    ranked.truncate(MAX_TEMPLATE_CANDIDATES);
    ranked
}

/// The samples whose path a templated action reads, by the rewriter's own reading.
pub(super) fn read_by(action: &SiteAction, outputs: &[Output<'_>]) -> Vec<u32> {
    let Some(template) = SegmentTemplate::of(action) else {
        return Vec::new();
    };
    outputs
        .iter()
        .enumerate()
        .filter(|(_, (path, _))| template.reads(path))
        .map(|(i, _)| i as u32)
        .collect()
}

/// The samples whose query carries `name` with a bare number: those a default suffix for
/// `name` may change.
pub(super) fn with_bare_value(outputs: &[Output<'_>], name: &str) -> Vec<u32> {
    outputs
        .iter()
        .enumerate()
        .filter(|(_, (_, query))| {
            query.as_deref().is_some_and(|q| {
                q.split('&').any(|p| {
                    p.split_once('=')
                        .is_some_and(|(n, v)| n == name && is_bare_number(v))
                })
            })
        })
        .map(|(i, _)| i as u32)
        .collect()
}

/// Whether a value is a bare number (all ASCII digits, at most 19).
fn is_bare_number(v: &str) -> bool {
    !v.is_empty() && v.len() <= 19 && v.bytes().all(|b| b.is_ascii_digit())
}

/// Candidates for a default filled into a bare value: inside one duplicate cluster, two URLs of
/// one path whose queries differ in one part only, `n=N` (`N` a bare number) and `n=N` +
/// suffix, propose `(n, suffix)`; a proposal made by at least [`MIN_MOVED_ID_VALUES`] distinct
/// numbers is a candidate. Each comes with the samples that carry `n` with a bare number.
pub(super) fn default_value_suffixes(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    let mut proposals: FxHashMap<(&str, &str), FxHashSet<&str>> = FxHashMap::default();
    for members in clusters.values() {
        for &a in members {
            let (path, query) = &outputs[a as usize];
            let Some(q) = query.as_deref() else { continue };
            for (at, part) in q.split('&').enumerate() {
                let Some((name, number)) = part.split_once('=') else {
                    continue;
                };
                if name.is_empty() || !is_bare_number(number) {
                    continue;
                }
                for &b in members {
                    let (other_path, other_query) = &outputs[b as usize];
                    if b == a || other_path != path {
                        continue;
                    }
                    let Some(other) = other_query.as_deref() else {
                        continue;
                    };
                    // One part differs, at the same place: the value written with its suffix.
                    let mut parts = q.split('&');
                    let mut others = other.split('&');
                    let mut suffix = None;
                    let mut same = true;
                    for i in 0.. {
                        match (parts.next(), others.next()) {
                            (None, None) => break,
                            (Some(x), Some(y)) if i == at => {
                                suffix = y.strip_prefix(x).filter(|s| is_value_suffix(s));
                                same &= suffix.is_some();
                            }
                            (Some(x), Some(y)) => same &= x == y,
                            _ => same = false,
                        }
                        if !same {
                            break;
                        }
                    }
                    if let (true, Some(suffix)) = (same, suffix) {
                        proposals.entry((name, suffix)).or_default().insert(number);
                    }
                }
            }
        }
    }
    let mut out: Vec<(usize, SiteAction, Vec<u32>)> = Vec::new();
    for ((name, suffix), numbers) in proposals {
        if numbers.len() < MIN_MOVED_ID_VALUES {
            continue;
        }
        let samples = with_bare_value(outputs, name);
        let action = SiteAction::DefaultValueSuffix {
            name: name.to_owned(),
            suffix: suffix.to_owned(),
        };
        out.push((numbers.len(), action, samples));
    }
    let mut ranked = most_shown_first(out);
    ranked.truncate(MAX_SUFFIX_CANDIDATES);
    ranked
}

/// Candidates for a default view written as trailing segments: inside one duplicate cluster,
/// two URLs with one query whose paths are `P` and `P` + `T` (`T` one to three named segments,
/// [`is_view_tail`], `P` at least one segment) propose `T`; a tail shown on at least
/// [`MIN_MOVED_ID_VALUES`] distinct pages (path and query) is a candidate, unless a cluster
/// shows a URL ending with it beside another page of its item and not beside its page without
/// the tail ([`stray_tails`], on every member of `clusters`, whose `paths` are the samples' paths
/// as crawled). Each comes with the samples whose path ends with it after at least one segment
/// that is not a file.
pub(super) fn default_view_tails(
    outputs: &[Output<'_>],
    distinct: &SmallClusters,
    clusters: &SmallClusters,
    paths: &[&str],
) -> Vec<(SiteAction, Vec<u32>)> {
    // tail -> distinct (path without it, query) shown.
    let mut proposals: FxHashMap<&str, FxHashSet<(&str, Option<&str>)>> = FxHashMap::default();
    for members in distinct.values() {
        for &a in members {
            let (long, query) = &outputs[a as usize];
            for &b in members {
                let (short, other_query) = &outputs[b as usize];
                let short: &str = short;
                if b == a || query != other_query || short.len() <= 1 || short.ends_with('/') {
                    continue;
                }
                let Some(tail) = long.strip_prefix(short) else {
                    continue;
                };
                if is_view_tail(tail) && view_tail_base(long, tail) == Some(short) {
                    proposals
                        .entry(tail)
                        .or_default()
                        .insert((short, query.as_deref()));
                }
            }
        }
    }
    let mut out: Vec<(usize, SiteAction, Vec<u32>)> = Vec::new();
    for (tail, pages) in proposals {
        // Fewer pages suffice where the route shows the tail as its default view.
        let needed = if pages.len() >= MIN_MOVED_ID_VALUES {
            MIN_MOVED_ID_VALUES
        } else if route_shows_default(outputs, distinct, tail) {
            MIN_THIN_TAIL_PAGES
        } else {
            MIN_MOVED_ID_VALUES
        };
        if pages.len() < needed || stray_tails(outputs, clusters, paths, tail) {
            continue;
        }
        let samples: Vec<u32> = outputs
            .iter()
            .enumerate()
            .filter(|(_, (path, _))| view_tail_base(path, tail).is_some())
            .map(|(i, _)| i as u32)
            .collect();
        out.push((
            pages.len(),
            SiteAction::DefaultViewTail {
                tail: tail.to_owned(),
            },
            samples,
        ));
    }
    let mut ranked = most_shown_first(out);
    ranked.truncate(MAX_TAIL_CANDIDATES);
    ranked
}

/// Whether a duplicate cluster holds a URL `P` + `tail` beside another page of its item (`P`
/// and a segment holding a number: `P/page-3`, `P/post-9`), and not beside `P` (a trailing
/// slash aside): the view the tail names is then a page of its own that is sometimes the same
/// as `P`, not `P`'s default view. Other addresses say nothing of the tail: a named view
/// (Plone's `P/folder_listing` beside `P/view`: two names of one rendering), an alias of the
/// page elsewhere (`/resolveuid/…`), a view of a file (whose tail is never dropped).
/// XenForo's `threads/x.1/latest` opens the last page: on a one-page thread it is the thread, on a longer one it sits in the cluster
/// of `page-3`. A 20% sample seldom holds both the thread's first page and its last, so the
/// merge of different pages that would refuse the tail is rarely seen, while the last page's
/// cluster, which shows the same, is as common as the tail itself.
///
/// Another page is looked for in the paths as crawled too: an accepted action may have written
/// it as the tail already (`P/page-3` read as `P/latest` by an alias that the sample shows).
fn stray_tails(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
    paths: &[&str],
    tail: &str,
) -> bool {
    clusters.values().any(|members| {
        members.iter().any(|&a| {
            let Some(short) = view_tail_base(&outputs[a as usize].0, tail) else {
                return false;
            };
            let page_of_item = |path: &str| {
                path.strip_prefix(short).is_some_and(|rest| {
                    rest != tail && rest.starts_with('/') && names_a_position(rest)
                })
            };
            let another_page = members.iter().any(|&b| {
                b != a && (page_of_item(&outputs[b as usize].0) || page_of_item(paths[b as usize]))
            });
            another_page
                && !members.iter().any(|&b| {
                    let other: &str = &outputs[b as usize].0;
                    b != a && (other == short || other.strip_suffix('/') == Some(short))
                })
        })
    })
}

/// Most letters of a titled template's marker word (`-p-`, `-pri-`, phpBB SEO's `-t`): a longer
/// last word before the value is the title's own.
const MAX_MARKER_LETTERS: usize = 3;

/// The marker a titled template reads in `before` (what precedes the value in a segment): a
/// short word and its separators after a title (`-p-` in `a-name-p-`, `-t` in `a-title-t`), or
/// `None`. The title holds two letters and no digit: a number in it may be another id of a
/// template with two (MyBB's `thread-5-post-12.html` is post 12 of thread 5, its
/// `forum-3-page-2.html` a forum's page), which a title template would read as one id.
fn title_marker(before: &str) -> Option<&str> {
    let separator = |c: char| !c.is_ascii_alphanumeric();
    let core = before.trim_end_matches(separator);
    let word_start = core
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .len();
    if !(1..=MAX_MARKER_LETTERS).contains(&(core.len() - word_start)) {
        return None;
    }
    let title_end = core[..word_start].trim_end_matches(separator).len();
    let (title, marker) = before.split_at(title_end);
    (is_template_title(title) && marker.starts_with(separator) && template_literals(marker, ""))
        .then_some(marker)
}

/// Whether `before` and `after` are what software writes around an id in a segment: a short
/// word and its separator before it (`topic,`, `thread-`, `t`), a file extension or nothing
/// after it (`.html`). Anything else (`-blue-widget` after `5`) is a title that happens to be
/// shared by a few pages, not a template: a template learned from it would reach only pages
/// with that title, and never the scheme.
fn template_literals(before: &str, after: &str) -> bool {
    let word = before.len() <= 16
        && before
            .bytes()
            .all(|b| b.is_ascii_alphabetic() || b",-_~".contains(&b));
    let tail = after.is_empty() || crate::canon::rules::site::is_extension(after);
    word && tail
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{learned, lu};
    use super::super::LabelledUrl;
    use crate::canon::rules::SiteAction;

    /// An SMF-like forum: topic pages in both spellings (path form for most, both for some),
    /// bare ids beside the first page's offset `.0` for some, later pages (`.15`) other pages.
    /// `same` says whether the path form and the bare id are the page they appear to be.
    fn forum(same: impl Fn(u64) -> bool) -> Vec<LabelledUrl> {
        let b = "http://smf.example/forum/index.php";
        let mut s = Vec::new();
        for n in 100..160u64 {
            let first = n * 10;
            let other = |c: u64| if same(n) { first } else { c };
            s.push(lu(&format!("{b}/topic,{n}.0.html"), first));
            if n % 2 == 0 {
                s.push(lu(&format!("{b}?topic={n}.0"), other(first + 1)));
            }
            if n % 3 == 0 {
                s.push(lu(&format!("{b}?topic={n}"), other(first + 2)));
            }
            if n % 4 == 0 {
                s.push(lu(&format!("{b}/topic,{n}.15.html"), first + 5));
                s.push(lu(&format!("{b}?topic={n}.15"), first + 5));
            }
            s.push(lu(&format!("{b}?action=printpage;topic={n}.0"), first + 7));
        }
        s
    }

    #[test]
    fn a_query_value_written_in_a_templated_segment_and_its_default_are_learned() {
        let (actions, canon) = learned(&forum(|_| true));
        let template = SiteAction::TemplatedSegmentToQuery {
            dir: "/forum/index.php/".into(),
            before: "topic,".into(),
            after: ".html".into(),
            script: "/forum/index.php".into(),
            name: "topic".into(),
            numbers: false,
            fixed: String::new(),
            titled: false,
        };
        let default = SiteAction::DefaultValueSuffix {
            name: "topic".into(),
            suffix: ".0".into(),
        };
        assert!(actions.contains(&template), "{actions:?}");
        assert!(actions.contains(&default), "{actions:?}");
        let b = "http://smf.example/forum/index.php";
        // Topics never seen in training.
        assert_eq!(
            canon(&format!("{b}/topic,9.0.html")),
            format!("{b}?topic=9.0")
        );
        assert_eq!(canon(&format!("{b}?topic=9")), format!("{b}?topic=9.0"));
        assert_eq!(
            canon(&format!("{b}/topic,9.30.html")),
            format!("{b}?topic=9.30")
        );
        assert_ne!(
            canon(&format!("{b}?topic=9.15")),
            canon(&format!("{b}?topic=9"))
        );
        assert_ne!(
            canon(&format!("{b}?action=printpage;topic=9.0")),
            canon(&format!("{b}?topic=9.0"))
        );
    }

    #[test]
    fn templated_segments_and_defaults_are_refused_when_a_sample_contradicts_them() {
        // Every fifth topic's path form and bare id are other pages than its `.0` page.
        let (actions, _) = learned(&forum(|n| n % 5 != 0));
        assert!(
            !actions.iter().any(|a| matches!(
                a,
                SiteAction::TemplatedSegmentToQuery { .. } | SiteAction::DefaultValueSuffix { .. }
            )),
            "{actions:?}"
        );
        // Without two spellings of one page in a cluster, nothing is proposed.
        let alone: Vec<LabelledUrl> = forum(|_| true)
            .into_iter()
            .enumerate()
            .map(|(i, mut l)| {
                l.cluster = i as u64;
                l
            })
            .collect();
        let (actions, _) = learned(&alone);
        assert!(actions.is_empty(), "{actions:?}");
    }

    /// An osCommerce-like shop behind Ultimate SEO URLs: products `a-name-p-N.html` beside
    /// `product_info.php?products_id=N` for some, some under an old name too, categories
    /// `a-name-c-P.html` (`P` a category path) beside `index.php?cPath=P` for some. `same` says
    /// whether a product's spellings are one page.
    fn seo_shop(same: impl Fn(u64) -> bool) -> Vec<LabelledUrl> {
        let b = "https://shop.example";
        let names = ["red-kettle", "tea-cup-set", "oak-board", "blue-mug"];
        let mut s = Vec::new();
        for n in 1..=60u64 {
            let c = n * 10;
            let name = names[n as usize % names.len()];
            s.push(lu(&format!("{b}/{name}-p-{n}.html"), c));
            let other = if same(n) { c } else { c + 1 };
            if n % 2 == 0 {
                s.push(lu(&format!("{b}/product_info.php?products_id={n}"), other));
            }
            if n % 5 == 0 {
                s.push(lu(&format!("{b}/old-{name}-p-{n}.html"), other));
            }
            // Reviews of the product: another page, in another template.
            s.push(lu(&format!("{b}/{name}-pr-{n}.html"), c + 3));
        }
        for n in 1..=12u64 {
            let c = 10_000 + n * 10;
            let path = format!("{n}_{}", n + 20);
            s.push(lu(&format!("{b}/kitchen-things-c-{path}.html"), c));
            if n % 2 == 0 {
                s.push(lu(&format!("{b}/index.php?cPath={path}"), c));
            }
        }
        s
    }

    #[test]
    fn an_id_written_after_an_unread_title_and_a_marker_is_its_query_form() {
        let (actions, canon) = learned(&seo_shop(|_| true));
        let product = SiteAction::TemplatedSegmentToQuery {
            dir: "/".into(),
            before: "-p-".into(),
            after: ".html".into(),
            script: "/product_info.php".into(),
            name: "products_id".into(),
            numbers: true,
            fixed: String::new(),
            titled: true,
        };
        assert!(actions.contains(&product), "{actions:?}");
        let b = "https://shop.example";
        // A product never seen, under any name: its query form.
        let query_form = format!("{b}/product_info.php?products_id=907");
        assert_eq!(canon(&format!("{b}/green-lamp-p-907.html")), query_form);
        assert_eq!(canon(&format!("{b}/a-renamed-lamp-p-907.html")), query_form);
        // Another product, its reviews, and a category of the same number stay apart.
        assert_ne!(canon(&format!("{b}/green-lamp-p-908.html")), query_form);
        assert_ne!(canon(&format!("{b}/green-lamp-pr-907.html")), query_form);
        assert_ne!(canon(&format!("{b}/lamps-c-907.html")), query_form);
        // A marker inside the title is not the end of it, and no title is no template.
        assert_eq!(
            canon(&format!("{b}/the-p-word-lamp-p-907.html")),
            query_form
        );
        assert_eq!(canon(&format!("{b}/p-907.html")), format!("{b}/p-907.html"));
        // A number in the title may be another id of the segment: not read as a title.
        let two_ids = format!("{b}/thread-5-p-907.html");
        assert_eq!(canon(&two_ids), two_ids);
        // The category template, shown with its own pairs, reads category paths.
        assert_eq!(
            canon(&format!("{b}/garden-c-3_70.html")),
            format!("{b}/index.php?cPath=3_70")
        );
    }

    #[test]
    fn a_titled_template_is_refused_where_the_title_names_another_page() {
        // Every seventh product's old name and query form are other pages.
        let (actions, _) = learned(&seo_shop(|n| n % 7 != 0));
        assert!(
            !actions.iter().any(|a| matches!(
                a,
                SiteAction::TemplatedSegmentToQuery { titled: true, before, .. } if before == "-p-"
            )),
            "{actions:?}"
        );
    }

    /// A MyBB-like board with search-engine-friendly links: threads `thread-N.html` beside
    /// `showthread.php?tid=N` for some, later pages `thread-N-page-M.html` beside
    /// `showthread.php?tid=N&page=M` for some, the last post's link another page. `same` says
    /// whether a page's two spellings are one page.
    fn board_with_pages(same: impl Fn(u64) -> bool) -> Vec<LabelledUrl> {
        let b = "https://bb.example/forum";
        let mut s = Vec::new();
        for n in 200..260u64 {
            let c = n * 10;
            s.push(lu(&format!("{b}/thread-{n}.html"), c));
            if n % 2 == 0 {
                s.push(lu(&format!("{b}/showthread.php?tid={n}"), c));
            }
            for page in 2..=(2 + n % 3) {
                let p = c + page;
                s.push(lu(&format!("{b}/thread-{n}-page-{page}.html"), p));
                if n % 3 != 1 {
                    let other = if same(n) { p } else { p + 5 };
                    s.push(lu(
                        &format!("{b}/showthread.php?tid={n}&page={page}"),
                        other,
                    ));
                }
            }
            s.push(lu(&format!("{b}/thread-{n}-lastpost.html"), c + 9));
            // Other views named in the query, never shown in their query spelling: one busy
            // thread's posts in the threaded view make its path a page type of its own.
            if n == 250 {
                for post in 0..12 {
                    let url = format!("{b}/thread-{n}.html?mode=threaded&pid={post}");
                    s.push(lu(&url, 100_000 + post));
                }
            }
        }
        s
    }

    #[test]
    fn two_numbers_written_in_one_templated_segment_are_learned_as_a_pair() {
        let (actions, canon) = learned(&board_with_pages(|_| true));
        let pair = SiteAction::TemplatedPairToQuery {
            dir: "/forum/".into(),
            before: "thread-".into(),
            between: "-page-".into(),
            after: ".html".into(),
            script: "/forum/showthread.php".into(),
            first: "tid".into(),
            second: "page".into(),
            fixed: String::new(),
        };
        assert!(actions.contains(&pair), "{actions:?}");
        // The one-value template too, reading numbers only, though the threaded view named in
        // the query was never shown in its other spelling: the query comes along as it is.
        let thread = SiteAction::TemplatedSegmentToQuery {
            dir: "/forum/".into(),
            before: "thread-".into(),
            after: ".html".into(),
            script: "/forum/showthread.php".into(),
            name: "tid".into(),
            numbers: true,
            fixed: String::new(),
            titled: false,
        };
        assert!(actions.contains(&thread), "{actions:?}");
        // No default read into the thread's id from a page's spelling (`tid=N -> N-page-1`).
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, SiteAction::DefaultValueSuffix { .. })),
            "{actions:?}"
        );
        let b = "https://bb.example/forum";
        // Threads never seen in training.
        assert_eq!(
            canon(&format!("{b}/thread-9-page-3.html")),
            canon(&format!("{b}/showthread.php?tid=9&page=3"))
        );
        assert_eq!(
            canon(&format!("{b}/thread-9.html")),
            canon(&format!("{b}/showthread.php?tid=9"))
        );
        assert_ne!(
            canon(&format!("{b}/thread-9-page-3.html")),
            canon(&format!("{b}/thread-9-page-2.html"))
        );
        assert_ne!(
            canon(&format!("{b}/thread-9-page-2.html")),
            canon(&format!("{b}/thread-9.html"))
        );
        assert_ne!(
            canon(&format!("{b}/thread-9-lastpost.html")),
            canon(&format!("{b}/thread-9.html"))
        );
        assert_eq!(
            canon(&format!("{b}/thread-9.html?mode=threaded")),
            canon(&format!("{b}/showthread.php?tid=9&mode=threaded"))
        );
        assert_ne!(
            canon(&format!("{b}/thread-9.html?mode=threaded")),
            canon(&format!("{b}/thread-9.html"))
        );
    }

    /// A Discuz!-like board with its rewrite rules on: a forum's pages `forum-F-P.html` beside
    /// `forum.php?mod=forumdisplay&fid=F&page=P`, a thread's pages `thread-T-P-X.html` (X the
    /// forum page the link was on) beside `forum.php?mod=viewthread&tid=T&page=P`, for some.
    /// The query forms name their page type (`mod=…`), which the templates write.
    #[test]
    fn templates_write_the_page_type_their_query_form_names() {
        let b = "https://dz.example/bbs";
        let mut s = Vec::new();
        for f in 1..9u64 {
            for page in 1..=2 {
                let c = 1_000 + f * 10 + page;
                s.push(lu(&format!("{b}/forum-{f}-{page}.html"), c));
                if f % 2 == 0 {
                    let query = format!("{b}/forum.php?mod=forumdisplay&fid={f}&page={page}");
                    s.push(lu(&query, c));
                }
            }
        }
        for t in 500..560u64 {
            for page in 1..=(1 + t % 2) {
                let c = t * 10 + page;
                let listing = 1 + t % 3;
                s.push(lu(&format!("{b}/thread-{t}-{page}-{listing}.html"), c));
                if t % 2 == 0 {
                    let query = format!("{b}/forum.php?mod=viewthread&tid={t}&page={page}");
                    s.push(lu(&query, c));
                }
            }
        }
        let (actions, canon) = learned(&s);
        let forum = SiteAction::TemplatedPairToQuery {
            dir: "/bbs/".into(),
            before: "forum-".into(),
            between: "-".into(),
            after: ".html".into(),
            script: "/bbs/forum.php".into(),
            first: "fid".into(),
            second: "page".into(),
            fixed: "mod=forumdisplay".into(),
        };
        assert!(actions.contains(&forum), "{actions:?}");
        // Never seen in training: another forum, a thread linked from each listing page.
        assert_eq!(
            canon(&format!("{b}/forum-77-3.html")),
            canon(&format!("{b}/forum.php?mod=forumdisplay&fid=77&page=3"))
        );
        for listing in 1..=3 {
            assert_eq!(
                canon(&format!("{b}/thread-9-2-{listing}.html")),
                canon(&format!("{b}/forum.php?mod=viewthread&tid=9&page=2")),
                "{actions:?}"
            );
        }
        // Another page type of the same script is not written as the template's.
        assert_ne!(
            canon(&format!("{b}/forum-77-3.html")),
            canon(&format!("{b}/forum.php?mod=viewthread&tid=77&page=3"))
        );
        assert_ne!(
            canon(&format!("{b}/thread-9-2-1.html")),
            canon(&format!("{b}/thread-9-1-1.html"))
        );
    }

    #[test]
    fn a_templated_pair_is_refused_when_a_sample_contradicts_it() {
        // Every fifth thread's later pages are other pages in their query spelling.
        let (actions, _) = learned(&board_with_pages(|n| n % 5 != 0));
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, SiteAction::TemplatedPairToQuery { .. })),
            "{actions:?}"
        );
    }

    /// A Discourse-like board: categories with their `latest` view written out for some, other
    /// views (`top`) other listings. `same` says whether the written-out view is the category.
    fn board(same: impl Fn(u64) -> bool) -> Vec<LabelledUrl> {
        let b = "https://talk.example";
        let mut s = Vec::new();
        for id in 1..40u64 {
            let c = id * 10;
            let slug = format!("topic-area-{id}");
            s.push(lu(&format!("{b}/c/{slug}/{id}"), c));
            if id % 2 == 0 {
                let latest = if same(id) { c } else { c + 3 };
                s.push(lu(&format!("{b}/c/{slug}/{id}/l/latest"), latest));
            }
            if id % 3 == 0 {
                s.push(lu(&format!("{b}/c/{slug}/{id}/l/top"), c + 1));
            }
            s.push(lu(&format!("{b}/c/{slug}/{id}?page=2"), c + 2));
        }
        s
    }

    #[test]
    fn a_default_view_written_as_trailing_segments_is_dropped_and_its_siblings_stay() {
        let (actions, canon) = learned(&board(|_| true));
        let tail = SiteAction::DefaultViewTail {
            tail: "/l/latest".into(),
        };
        assert!(actions.contains(&tail), "{actions:?}");
        let b = "https://talk.example";
        assert_eq!(
            canon(&format!("{b}/c/new-area/77/l/latest")),
            format!("{b}/c/new-area/77")
        );
        assert_eq!(
            canon(&format!("{b}/c/new-area/77/l/latest?page=2")),
            format!("{b}/c/new-area/77?page=2")
        );
        assert_ne!(
            canon(&format!("{b}/c/new-area/77/l/top")),
            canon(&format!("{b}/c/new-area/77"))
        );
    }

    #[test]
    fn a_view_tail_that_sits_with_another_page_of_its_item_is_refused() {
        // XenForo's `threads/x.N/latest` opens the last page: on one-page threads the thread,
        // on longer ones the cluster of `page-3`, whose first page the sample does not hold, so
        // no merge of different pages is ever seen.
        let b = "https://xf.example/threads";
        let mut s = Vec::new();
        for n in 1..40u64 {
            let c = n * 10;
            if n % 3 == 0 {
                s.push(lu(&format!("{b}/t.{n}/page-3"), c + 3));
                s.push(lu(&format!("{b}/t.{n}/latest"), c + 3));
            } else {
                s.push(lu(&format!("{b}/t.{n}"), c));
                s.push(lu(&format!("{b}/t.{n}/latest"), c));
            }
        }
        let (actions, _) = learned(&s);
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, SiteAction::DefaultViewTail { .. })),
            "{actions:?}"
        );
        // The same threads without the longer ones: the tail is the thread.
        let short: Vec<LabelledUrl> = s.into_iter().filter(|l| l.cluster % 10 == 0).collect();
        let (actions, _) = learned(&short);
        assert!(
            actions.contains(&SiteAction::DefaultViewTail {
                tail: "/latest".into()
            }),
            "{actions:?}"
        );
    }

    #[test]
    fn a_view_tail_beside_a_named_view_an_alias_or_a_file_stays_the_default_view() {
        // A Plone-like host: `x/view` is `x`. Some clusters hold `x/view` without `x`: beside
        // the layout named (`x/folder_listing`, a word: another name of the view, not another
        // page of `x`), beside the object's UID (no view of `x` at all), or, for an image, beside
        // `img.jpg/image_view` (a view of a file, which keeps its tail). None of them shows the
        // tail standing for another page of its item, as XenForo's `x/latest` beside
        // `x/page-3` does.
        let b = "https://plone.example";
        let mut s = Vec::new();
        for n in 1..40u64 {
            let c = n * 10;
            match n % 4 {
                0 => {
                    s.push(lu(&format!("{b}/folder-{n}/view?b_start:int=20"), c));
                    s.push(lu(
                        &format!("{b}/folder-{n}/folder_listing?b_start:int=20"),
                        c,
                    ));
                }
                1 => {
                    s.push(lu(&format!("{b}/news/item-{n}/view"), c));
                    s.push(lu(&format!("{b}/resolveuid/{:032x}", n * 7919), c));
                }
                _ => {
                    s.push(lu(&format!("{b}/news/item-{n}"), c));
                    s.push(lu(&format!("{b}/news/item-{n}/view"), c));
                }
            }
            s.push(lu(&format!("{b}/images/photo-{n}.jpg"), c + 1));
            s.push(lu(&format!("{b}/images/photo-{n}.jpg/view"), c + 2));
            s.push(lu(&format!("{b}/images/photo-{n}.jpg/image_view"), c + 2));
        }
        let (actions, canon) = learned(&s);
        assert!(
            actions.contains(&SiteAction::DefaultViewTail {
                tail: "/view".into()
            }),
            "{actions:?}"
        );
        assert_eq!(
            canon(&format!("{b}/docs/new-page/view")),
            format!("{b}/docs/new-page")
        );
        assert_ne!(
            canon(&format!("{b}/images/new.png/view")),
            canon(&format!("{b}/images/new.png"))
        );
    }

    #[test]
    fn a_view_tail_is_refused_when_a_sample_shows_it_another_page() {
        // Some categories' `latest` view differs from the category (as XenForo's
        // `threads/x.1/latest` does on topics of several pages).
        let (actions, _) = learned(&board(|id| id % 6 != 0));
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, SiteAction::DefaultViewTail { .. })),
            "{actions:?}"
        );
    }
}
