//! Site rules learned on generated hosts of software that spells one page's address in several
//! shapes (`learn::segments`): SMF's search-engine-friendly links, a query value written inside
//! a templated path segment (`index.php/topic,5.0.html` ≡ `index.php?topic=5.0`), and its bare
//! ids completed with the offset (`topic=5` ≡ `topic=5.0`); Discourse's categories with their
//! default view written out (`/c/slug/5/l/latest` ≡ `/c/slug/5`) and Gitea's home written as
//! its default branch's tree (`/o/r/src/branch/main` ≡ `/o/r`). Learned from 20% of the
//! clusters as in the family runs (`learn.rs`), the documented examples are reached on the
//! whole site and no hard negative (later pages, other views, the print view) is merged.

use undust::canon::rules::SiteAction;
use undust::corpus::{generate, CorpusConfig, Site, SiteKind};

use crate::support::learned_site::{learn_generated_one, LearnedSite};

/// Seeds tried for a host of the wanted layout (one host per seed).
const SEEDS: std::ops::Range<u64> = 41..61;

/// The first generated host of `kind` (seeds [`SEEDS`]) that `wanted` accepts, its rules learned
/// from a 20% training split with the defaults ([`learned_at`]).
fn learned(
    kind: SiteKind,
    wanted: impl Fn(&Site) -> bool,
) -> (Site, Vec<SiteAction>, impl Fn(&str) -> String) {
    for seed in SEEDS {
        let corpus = generate(
            &CorpusConfig::new(seed, 1)
                .with_kinds(&[kind])
                .with_pages(1500, 5000),
        );
        if corpus.sites.iter().any(&wanted) {
            return learned_at(kind, seed);
        }
    }
    panic!("no {kind:?} host of the wanted layout among seeds {SEEDS:?}");
}

/// The generated host of `kind` for `seed`, its rules learned from a 20% training split with
/// the defaults as in the family runs ([`learn_generated_one`]), the site actions learned, and a
/// canonicalizer with the rules.
fn learned_at(kind: SiteKind, seed: u64) -> (Site, Vec<SiteAction>, impl Fn(&str) -> String) {
    let LearnedSite { site, rules } = learn_generated_one(kind, seed);
    let actions = rules
        .outcome
        .rules
        .site_rules
        .iter()
        .map(|r| r.action.clone())
        .collect();
    let canon = move |u: &str| rules.canonical(u);
    (site, actions, canon)
}

/// Share of the examples of the site's documented DUST described as `description`, among those
/// whose first URL holds `holding`, that the rules make one URL.
fn reached(site: &Site, canon: &impl Fn(&str) -> String, description: &str, holding: &str) -> f64 {
    let expected = site
        .expected
        .iter()
        .find(|e| e.description.contains(description))
        .unwrap_or_else(|| panic!("{description:?} is not documented on {}", site.host));
    let examples: Vec<_> = expected
        .examples
        .iter()
        .filter(|(a, _)| a.contains(holding))
        .collect();
    let hit = examples
        .iter()
        .filter(|(a, b)| canon(a) == canon(b))
        .count();
    hit as f64 / examples.len().max(1) as f64
}

fn no_hard_negative_merged(site: &Site, canon: &impl Fn(&str) -> String) {
    let merged: Vec<_> = site
        .hard_negatives
        .iter()
        .filter(|(a, b)| canon(a) == canon(b))
        .take(3)
        .collect();
    assert!(merged.is_empty(), "{}: merged {merged:?}", site.host);
}

#[test]
fn smf_links_written_as_templated_segments_and_bare_ids_reach_their_query_form() {
    let (site, actions, canon) = learned(SiteKind::Smf, |s| {
        s.pages.iter().any(|p| p.url.contains("/index.php/topic,"))
    });
    assert!(
        actions.iter().any(
            |a| matches!(a, SiteAction::TemplatedSegmentToQuery { name, .. } if name == "topic")
        ),
        "{}: {actions:?}",
        site.host
    );
    // Topics: boards are too few in a 20% sample to show their own template (three boards).
    let spelled = reached(&site, &canon, "search-engine-friendly link", "topic");
    assert!(
        spelled >= 1.0,
        "{}: {spelled:.2} of the friendly topic links",
        site.host
    );
    no_hard_negative_merged(&site, &canon);
    // The path form of a topic never seen lands on its query form.
    let script = site
        .pages
        .iter()
        .find_map(|p| {
            p.url
                .split_once("/index.php/")
                .map(|(head, _)| head.to_owned())
        })
        .expect("a friendly link");
    assert_eq!(
        canon(&format!("{script}/index.php/topic,987654.30.html")),
        canon(&format!("{script}/index.php?topic=987654.30"))
    );
    assert_ne!(
        canon(&format!("{script}/index.php/topic,987654.30.html")),
        canon(&format!("{script}/index.php?topic=987654.0"))
    );
}

#[test]
fn smf_bare_ids_are_completed_with_their_offset() {
    let (site, actions, canon) = learned(SiteKind::Smf, |_| true);
    assert!(
        actions.iter().any(
            |a| matches!(a, SiteAction::DefaultValueSuffix { name, suffix } if name == "topic" && suffix == ".0")
        ),
        "{}: {actions:?}",
        site.host
    );
    let bare = reached(&site, &canon, "without its offset", "topic");
    assert!(bare >= 0.5, "{}: {bare:.2} of the bare ids", site.host);
    no_hard_negative_merged(&site, &canon);
}

/// Hosts of each kind, one per seed, searched for a default view written as trailing segments.
const VIEW_TAIL_SEEDS: std::ops::Range<u64> = 41..49;

#[test]
fn default_views_written_as_trailing_segments_are_dropped_where_shown_and_nothing_else_merges() {
    // Discourse's `/c/slug/N/l/latest` ≡ `/c/slug/N` (`/l/top` another listing) and Gitea's
    // `/o/r/src/branch/{default}` ≡ `/o/r` (other branches, raw files, blame other pages). A
    // 20% sample shows a category's two spellings on few hosts (three to fifteen categories a
    // host), so the capability is asked of the hosts together and the guarantee of each.
    let mut learned_on = Vec::new();
    for kind in [SiteKind::Discourse, SiteKind::Gitea] {
        for seed in VIEW_TAIL_SEEDS {
            let (site, actions, canon) = learned_at(kind, seed);
            let tails: Vec<&String> = actions
                .iter()
                .filter_map(|a| match a {
                    SiteAction::DefaultViewTail { tail } => Some(tail),
                    _ => None,
                })
                .collect();
            if kind == SiteKind::Gitea {
                // Gitea's known false merges (a path lower-cased site-wide folds files whose
                // names differ in case; `GUARANTEES_NOT_MET_YET` in `learn.rs`) are not this
                // capability's: no merged pair may end with a tail learned here.
                let path_end = |u: &str| u.split('?').next().unwrap_or(u).to_owned();
                let by_tail: Vec<_> = site
                    .hard_negatives
                    .iter()
                    .filter(|(a, b)| canon(a) == canon(b))
                    .filter(|(a, b)| {
                        tails.iter().any(|t| {
                            path_end(a).ends_with(t.as_str()) || path_end(b).ends_with(t.as_str())
                        })
                    })
                    .take(3)
                    .collect();
                assert!(by_tail.is_empty(), "{}: merged {by_tail:?}", site.host);
            } else {
                no_hard_negative_merged(&site, &canon);
            }
            if tails.is_empty() {
                continue;
            }
            if kind == SiteKind::Discourse {
                let latest = reached(&site, &canon, "default `latest` view", "");
                assert!(
                    latest >= 1.0,
                    "{}: {latest:.2} of the latest views",
                    site.host
                );
                if let Some(category) = site
                    .pages
                    .iter()
                    .find_map(|p| p.url.strip_suffix("/l/latest").map(str::to_owned))
                {
                    assert_ne!(canon(&format!("{category}/l/top")), canon(&category));
                }
            }
            learned_on.push((
                site.host.clone(),
                tails.into_iter().cloned().collect::<Vec<_>>(),
            ));
        }
    }
    eprintln!("default view tails learned: {learned_on:?}");
    assert!(
        !learned_on.is_empty(),
        "no default view's tail learned on {} Discourse and Gitea hosts",
        2 * VIEW_TAIL_SEEDS.count()
    );
}
