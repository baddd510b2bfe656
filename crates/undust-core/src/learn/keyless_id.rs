//! Site-rule candidates for an id written as the whole query string, without a key
//! ([`SiteAction::KeylessIdInQuery`]), found in pairs of addresses of one duplicate cluster and
//! then measured by `learn::site` like every other site action.
//!
//! vBulletin 3.8/4's "friendly URLs" write `showthread.php?t=142097` as
//! `showthread.php?142097-Some-Title` and `forumdisplay.php?f=2` as
//! `forumdisplay.php?2-Name` (`&page=2` kept after it): read as parameters, the friendly form is
//! one key without a value, different on every thread, so neither a dropped parameter nor a
//! titled value (`TitledIdInQuery`, which needs a key) reaches it. Parameters in varying order
//! put the keyless part anywhere in the query (`?s=…&5-title`). Which key the id belongs to
//! is the script's (`t` on threads, `f` on forums), so it is learned per script: a cluster
//! holding `S?N-title…` beside `S?…name=N…`, the other parts equal, proposes `(S, name)`.
//!
//! A proposal needs [`MIN_MOVED_ID_VALUES`] distinct ids, as every moved id does, unless the
//! host's sample cannot show that many: a pair of one page's two spellings is fetched together
//! for only a few of a script's pages in a 20% sample, while the script writes every page of
//! its route the keyless way. The ids needed then fall to the share of the script's keyless
//! pages whose keyed spelling the sample also holds ([`ids_needed`]), never below
//! [`MIN_THIN_IDS`]; one merge of different pages refuses the action (`learn::site`).

use rustc_hash::{FxHashMap, FxHashSet};

use super::segments::query_without_part;
use super::site::{most_shown_first, SmallClusters, MIN_MOVED_ID_VALUES};
use crate::canon::rules::site::keyless_part;
use crate::canon::rules::SiteAction;

/// A sample's path and query under the accepted actions.
type Output<'a> = (std::borrow::Cow<'a, str>, Option<std::borrow::Cow<'a, str>>);

/// Keyless-id candidates tested per round (the most shown first).
const MAX_KEYLESS_CANDIDATES: usize = 8;
/// Fewest distinct ids that show a keyless id's key on thin evidence: two pages of a script
/// written both ways, not one coincidence.
pub(super) const MIN_THIN_IDS: usize = 2;
/// Fewest pages a script must write the keyless way before its thin evidence counts: the
/// form is the script's scheme, not a link of one page.
const MIN_KEYLESS_PAGES: usize = 2 * MIN_MOVED_ID_VALUES;

/// The rest of query `q` once its part `name=id` is taken out, in the order written, or `None`
/// when no part is `name=id`.
fn without_keyed(q: &str, name: &str, id: &str) -> Option<String> {
    let mut found = false;
    let rest: Vec<&str> = q
        .split('&')
        .filter(|part| {
            let keyed = !found
                && part
                    .strip_prefix(name)
                    .and_then(|r| r.strip_prefix('='))
                    .is_some_and(|v| v == id);
            found |= keyed;
            !keyed
        })
        .collect();
    found.then(|| rest.join("&"))
}

/// Distinct ids needed for a script with `keyless_pages` distinct keyless queries in the
/// sample, of which `keyed_shown` have their keyed spelling fetched too: [`MIN_MOVED_ID_VALUES`]
/// when the sample can show that many, else every pair it can show, at least [`MIN_THIN_IDS`],
/// and only on a script writing at least [`MIN_KEYLESS_PAGES`] pages keyless.
fn ids_needed(keyless_pages: usize, keyed_shown: usize) -> usize {
    if keyed_shown >= MIN_MOVED_ID_VALUES || keyless_pages < MIN_KEYLESS_PAGES {
        MIN_MOVED_ID_VALUES
    } else {
        keyed_shown.max(MIN_THIN_IDS)
    }
}

/// [`SiteAction::KeylessIdInQuery`] candidates: inside one duplicate cluster, a URL
/// `S?N-title&rest` (or `S?N&rest`, the keyless part anywhere) beside a URL `S?…&name=N&…`
/// whose other parts are `rest` proposes `(S, name)`; a proposal shown by enough distinct ids
/// ([`ids_needed`]) is a candidate. Each comes with the samples of `S` with a keyless id.
pub(super) fn keyless_ids(
    outputs: &[Output<'_>],
    clusters: &SmallClusters,
) -> Vec<(SiteAction, Vec<u32>)> {
    // (script, name) -> distinct ids shown.
    let mut proposals: FxHashMap<(&str, &str), FxHashSet<&str>> = FxHashMap::default();
    for members in clusters.values() {
        for &a in members {
            let (script, query) = &outputs[a as usize];
            let Some(q) = query.as_deref() else { continue };
            let Some((at, id)) = keyless_part(q) else {
                continue;
            };
            let rest = query_without_part(q, at);
            for &b in members {
                let (path, other) = &outputs[b as usize];
                if b == a || path != script {
                    continue;
                }
                let Some(other) = other.as_deref() else {
                    continue;
                };
                for part in other.split('&') {
                    let Some((name, value)) = part.split_once('=') else {
                        continue;
                    };
                    if name.is_empty() || value != id {
                        continue;
                    }
                    if without_keyed(other, name, id).as_deref() == Some(rest.as_str()) {
                        proposals
                            .entry((script.as_ref(), name))
                            .or_default()
                            .insert(id);
                    }
                }
            }
        }
    }
    if proposals.is_empty() {
        return Vec::new();
    }
    // Per proposed script: its samples with a keyless id, their distinct ids, and the ids whose
    // keyed spelling the sample holds under each proposed name.
    let mut keyless: FxHashMap<&str, (Vec<u32>, FxHashSet<&str>)> = FxHashMap::default();
    let mut keyed: FxHashMap<(&str, &str), FxHashSet<&str>> = FxHashMap::default();
    for (i, (path, query)) in outputs.iter().enumerate() {
        let Some(q) = query.as_deref() else { continue };
        let path: &str = path;
        if !proposals.keys().any(|(s, _)| *s == path) {
            continue;
        }
        if let Some((_, id)) = keyless_part(q) {
            let entry = keyless.entry(path).or_default();
            entry.0.push(i as u32);
            entry.1.insert(id);
            continue;
        }
        for part in q.split('&') {
            if let Some((name, value)) = part.split_once('=') {
                if proposals.contains_key(&(path, name)) {
                    keyed.entry((path, name)).or_default().insert(value);
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((script, name), ids) in proposals {
        let Some((samples, keyless_ids)) = keyless.get(script) else {
            continue;
        };
        let keyed_shown = keyed
            .get(&(script, name))
            .map_or(0, |values| keyless_ids.intersection(values).count());
        if ids.len() < ids_needed(keyless_ids.len(), keyed_shown) {
            continue;
        }
        out.push((
            ids.len(),
            SiteAction::KeylessIdInQuery {
                script: script.to_owned(),
                name: name.to_owned(),
            },
            samples.clone(),
        ));
    }
    let mut ranked = most_shown_first(out);
    ranked.truncate(MAX_KEYLESS_CANDIDATES);
    ranked
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{learned, lu};
    use super::super::LabelledUrl;
    use crate::canon::rules::SiteAction;

    /// A vBulletin-like forum as a 20% sample shows it: every thread linked by its friendly
    /// URL (`?N-Title`, second pages `&page=2`), the keyed spelling `?t=N` fetched beside it
    /// for the threads `both` names only. `same` says whether the two are one page.
    fn forum(both: impl Fn(u64) -> bool, same: impl Fn(u64) -> bool) -> Vec<LabelledUrl> {
        let b = "http://vb.example/forums/showthread.php";
        let mut s = Vec::new();
        for n in 100..140u64 {
            let c = n * 10;
            s.push(lu(&format!("{b}?{n}-Some-Thread-Title"), c));
            if n % 3 == 0 {
                s.push(lu(&format!("{b}?{n}-Some-Thread-Title&page=2"), c + 1));
            }
            if both(n) {
                s.push(lu(&format!("{b}?t={n}"), if same(n) { c } else { c + 2 }));
            }
        }
        s
    }

    #[test]
    fn an_id_written_as_the_whole_query_is_keyed_on_thin_evidence() {
        // Two threads of forty show both spellings: fewer than a moved id needs, all the sample
        // can show.
        let (actions, canon) = learned(&forum(|n| n == 103 || n == 117, |_| true));
        let keyless = SiteAction::KeylessIdInQuery {
            script: "/forums/showthread.php".into(),
            name: "t".into(),
        };
        assert!(actions.contains(&keyless), "{actions:?}");
        let b = "http://vb.example/forums/showthread.php";
        // Threads never seen in training.
        assert_eq!(
            canon(&format!("{b}?977-Another-Title")),
            format!("{b}?t=977")
        );
        assert_eq!(
            canon(&format!("{b}?977-Another-Title&page=2")),
            format!("{b}?t=977&page=2")
        );
        assert_ne!(
            canon(&format!("{b}?977-Another-Title&page=2")),
            canon(&format!("{b}?t=977"))
        );
        // Another script of the host keeps its queries.
        assert_eq!(
            canon("http://vb.example/forums/member.php?977-someone"),
            "http://vb.example/forums/member.php?977-someone"
        );
    }

    #[test]
    fn a_keyless_id_is_refused_when_a_sample_contradicts_it_or_one_page_shows_it() {
        // One of three threads shown both ways is another page under its keyed spelling.
        let (actions, _) = learned(&forum(|n| n % 13 == 0, |n| n != 117));
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, SiteAction::KeylessIdInQuery { .. })),
            "{actions:?}"
        );
        // One thread shown both ways is a coincidence, not a scheme.
        let (actions, _) = learned(&forum(|n| n == 103, |_| true));
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, SiteAction::KeylessIdInQuery { .. })),
            "{actions:?}"
        );
    }
}
