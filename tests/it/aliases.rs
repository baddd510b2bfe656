//! Declared aliases end to end: generated Drupal and WordPress sites whose pages declare
//! `rel=canonical` (the path alias, the permalink) and `rel=shortlink` (`/node/N`, `/?p=N`), as
//! those programs write them, crawled into JSON lines, learned by `undust learn` with the
//! defaults, and every crawled URL canonicalized with the rule file it wrote. The entity's id URL
//! and its speaking path share no pattern, so only the host's alias table can make them one; the
//! test measures the same rule file with its tables removed beside it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::support::learned_site::{fetched_in_a_fifth, learn_from_pages as learn, truth};
use undust::canon::engine::HostRules;
use undust::canon::normalize::{StaticConfig, StaticNormalizer};
use undust::canon::rules::HostRuleSet;
use undust::corpus::{generate, Corpus, CorpusConfig, Site, SiteKind};
use undust::learn::eval::{canonicalize, measure, Metrics};

/// Corpus seeds: one Drupal and one WordPress site each.
const SEEDS: [u64; 2] = [5, 23];

/// One site's URLs canonicalized with a compiled rule set (or none: static normalization).
struct Canon<'a> {
    normalizer: &'a StaticNormalizer,
    rules: Option<HostRules>,
}

impl Canon<'_> {
    fn of(&self, url: &str) -> String {
        let normal = self
            .normalizer
            .normalize(url)
            .map_or_else(|_| url.to_owned(), String::from);
        match &self.rules {
            Some(rules) => canonicalize(rules, &normal),
            None => normal,
        }
    }
}

/// The entities whose two spellings the site declared and that the generator's truth says are
/// one content: (shortlink, canonical) of each page whose shortlink is its own content's, either
/// because the shortlink was crawled as that content, or because it was not crawled, only pages
/// of that content declare it, and one of them is the entity's own page, not a view of it (a
/// reply form's `?replytocom=`: the cluster builder does not take a view's shortlink). Contents a noisy fetch touched (a URL that served another
/// content, or had its content served elsewhere) are left out: there the crawl contradicts the
/// declaration, and the guards rightly refuse it.
fn declared_entities(site: &Site) -> BTreeSet<(String, String)> {
    let noisy: BTreeSet<u64> = site
        .pages
        .iter()
        .filter(|p| p.noise.is_some())
        .flat_map(|p| [p.content_id, p.label])
        .collect();
    let content_of: HashMap<&str, u64> = site
        .pages
        .iter()
        .map(|p| (p.url.as_str(), p.content_id))
        .collect();
    let mut declaring: HashMap<&str, BTreeSet<u64>> = HashMap::new();
    let mut declared_by_entity_page: BTreeSet<&str> = BTreeSet::new();
    let keys = |url: &str| -> BTreeSet<String> {
        url::Url::parse(url).map_or_else(
            |_| BTreeSet::new(),
            |u| u.query_pairs().map(|(k, _)| k.into_owned()).collect(),
        )
    };
    for p in &site.pages {
        if let Some(s) = &p.shortlink {
            declaring
                .entry(s.as_str())
                .or_default()
                .insert(p.content_id);
            if keys(&p.url).is_subset(&keys(s)) {
                declared_by_entity_page.insert(s.as_str());
            }
        }
    }
    site.pages
        .iter()
        .filter_map(|p| {
            let (s, c) = (p.shortlink.as_deref()?, p.canonical.as_deref()?);
            if noisy.contains(&p.content_id) {
                return None;
            }
            let own = match content_of.get(s) {
                Some(&id) => id == p.content_id,
                None => declaring[s].len() == 1 && declared_by_entity_page.contains(s),
            };
            (own && s != c).then(|| (s.to_owned(), c.to_owned()))
        })
        .collect()
}

/// Prints (to stderr) up to five canonical forms `canon` gives URLs of different contents.
fn print_false_merges(site: &Site, canon: &Canon<'_>) {
    let mut forms: BTreeMap<String, BTreeMap<u64, Vec<&str>>> = BTreeMap::new();
    for p in &site.pages {
        forms
            .entry(canon.of(&p.url))
            .or_default()
            .entry(p.content_id)
            .or_default()
            .push(p.url.as_str());
    }
    for (form, contents) in forms.iter().filter(|(_, c)| c.len() > 1).take(5) {
        eprintln!("    false merge into {form}: {contents:?}");
    }
}

/// One Drupal and one WordPress site whose pages declare their canonicals and shortlinks.
fn declaring_sites(seed: u64) -> Corpus {
    generate(
        &CorpusConfig::new(seed, 1)
            .with_kinds(&[SiteKind::Drupal, SiteKind::WordPress])
            .with_pages(600, 1200)
            .with_rel_canonical(1.0),
    )
}

/// A host's rule set compiled as learned, and without its alias table.
fn with_and_without<'a>(
    set: Option<&HostRuleSet>,
    normalizer: &'a StaticNormalizer,
) -> (Canon<'a>, Canon<'a>) {
    let with = Canon {
        normalizer,
        rules: set.map(|s| HostRules::compile(s).expect("compiles")),
    };
    let without = Canon {
        normalizer,
        rules: set.map(|s| {
            let mut bare = s.clone();
            bare.aliases.clear();
            HostRules::compile(&bare).expect("compiles without aliases")
        }),
    };
    (with, without)
}

#[test]
fn declared_aliases_make_an_entitys_id_url_and_speaking_path_one() {
    let normalizer = StaticNormalizer::new(StaticConfig::default()).expect("default config");
    let (mut with_total, mut without_total) = (Metrics::default(), Metrics::default());
    let mut entities_checked = 0usize;
    let mut aliases_learned = 0usize;
    for seed in SEEDS {
        let corpus = declaring_sites(seed);
        let file = learn(&corpus);
        let sets: BTreeMap<&str, &HostRuleSet> =
            file.hosts.iter().map(|h| (h.host.as_str(), h)).collect();
        for site in &corpus.sites {
            assert!(site.declares_canonical);
            assert!(
                site.pages.iter().any(|p| p.shortlink.is_some()),
                "{}: no shortlink declared",
                site.host
            );
            let set = sets.get(site.host.as_str()).copied();
            let table = set.map_or(0, |s| s.aliases.len());
            aliases_learned += table;
            let (with, without) = with_and_without(set, &normalizer);
            let truth = truth(site);
            let m_with = measure(&truth, |u| with.of(u));
            let m_without = measure(&truth, |u| without.of(u));
            eprintln!(
                "seed {seed} {:>9} {:<36} {:>5} urls, {:>4} aliases: compression {:.4} without the \
                 table, {:.4} with it (best {:.4}); false-positive pairs {} without, {} with",
                site.kind.name(),
                site.variant,
                m_with.urls,
                table,
                m_without.compression_rate(),
                m_with.compression_rate(),
                m_with.best_compression_rate(),
                m_without.false_positive_pairs,
                m_with.false_positive_pairs,
            );
            // No two different contents share a canonical form.
            if m_with.false_positive_pairs > 0 {
                print_false_merges(site, &with);
            }
            assert_eq!(
                m_with.false_positive_pairs, 0,
                "{}: different contents merged",
                site.host
            );
            // Every entity's declared spellings are one canonical form, whichever was crawled.
            let mut apart = Vec::new();
            for (shortlink, canonical) in declared_entities(site) {
                if with.of(&shortlink) != with.of(&canonical) {
                    apart.push((shortlink, canonical));
                }
                entities_checked += 1;
            }
            for (shortlink, canonical) in apart.iter().take(3) {
                eprintln!(
                    "    apart: {shortlink} -> {} and {canonical} -> {}",
                    with.of(shortlink),
                    with.of(canonical)
                );
                for p in site
                    .pages
                    .iter()
                    .filter(|p| p.shortlink.as_deref() == Some(shortlink) || &p.url == shortlink)
                {
                    eprintln!(
                        "      page {} (content {}, label {}, noise {:?}) canonical {:?}",
                        p.url, p.content_id, p.label, p.noise, p.canonical
                    );
                }
            }
            assert!(
                apart.is_empty(),
                "{}: {} declared entities keep two canonical forms",
                site.host,
                apart.len()
            );
            // Canonicalization stays idempotent with the table.
            for page in &site.pages {
                let once = with.of(&page.url);
                assert_eq!(with.of(&once), once, "{}", page.url);
            }
            with_total.add(&m_with);
            without_total.add(&m_without);
        }
    }
    eprintln!(
        "all sites: {} URLs, {aliases_learned} aliases, {entities_checked} entities checked: \
         compression {:.4} without the alias tables, {:.4} with them (best {:.4}); false-positive \
         pairs {} without, {} with",
        with_total.urls,
        without_total.compression_rate(),
        with_total.compression_rate(),
        with_total.best_compression_rate(),
        without_total.false_positive_pairs,
        with_total.false_positive_pairs,
    );
    assert!(entities_checked > 0, "no declared entity to check");
    assert!(
        with_total.compression_rate() > without_total.compression_rate(),
        "the alias tables compress no further: {:.4} <= {:.4}",
        with_total.compression_rate(),
        without_total.compression_rate()
    );
}

/// The same sites when the crawl fetched a fifth of their URLs (the evaluation's sample): the
/// table covers only the entities a fetched page declared, so it gains less than on the whole
/// crawl, but it still gains on every URL the sites have, fetched or not, and merges nothing.
#[test]
fn declared_aliases_gain_when_a_fifth_of_the_urls_is_fetched() {
    let normalizer = StaticNormalizer::new(StaticConfig::default()).expect("default config");
    let (mut with_total, mut without_total) = (Metrics::default(), Metrics::default());
    for seed in SEEDS {
        let corpus = declaring_sites(seed);
        let mut sampled = corpus.clone();
        for site in &mut sampled.sites {
            site.pages.retain(|p| fetched_in_a_fifth(&p.url));
        }
        let file = learn(&sampled);
        for site in &corpus.sites {
            let set = file.hosts.iter().find(|h| h.host == site.host);
            let (with, without) = with_and_without(set, &normalizer);
            let truth = truth(site);
            let m_with = measure(&truth, |u| with.of(u));
            let m_without = measure(&truth, |u| without.of(u));
            eprintln!(
                "seed {seed} {:>9} {:>5} urls, {:>5} fetched, {:>4} aliases: compression {:.4} \
                 without the table, {:.4} with it (best {:.4}); false-positive pairs {} without, \
                 {} with",
                site.kind.name(),
                m_with.urls,
                site.pages
                    .iter()
                    .filter(|p| fetched_in_a_fifth(&p.url))
                    .count(),
                set.map_or(0, |s| s.aliases.len()),
                m_without.compression_rate(),
                m_with.compression_rate(),
                m_with.best_compression_rate(),
                m_without.false_positive_pairs,
                m_with.false_positive_pairs,
            );
            if m_with.false_positive_pairs > m_without.false_positive_pairs {
                print_false_merges(site, &with);
            }
            assert_eq!(
                m_with.false_positive_pairs, m_without.false_positive_pairs,
                "{}: the alias table merged different contents",
                site.host
            );
            with_total.add(&m_with);
            without_total.add(&m_without);
        }
    }
    eprintln!(
        "a fifth fetched: {} URLs: compression {:.4} without the alias tables, {:.4} with them \
         (best {:.4})",
        with_total.urls,
        without_total.compression_rate(),
        with_total.compression_rate(),
        with_total.best_compression_rate(),
    );
    assert!(
        with_total.compression_rate() > without_total.compression_rate(),
        "the alias tables compress no further: {:.4} <= {:.4}",
        with_total.compression_rate(),
        without_total.compression_rate()
    );
}
