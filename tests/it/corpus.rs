//! Integration tests of the synthetic corpus generator: determinism, variety across seeds, ground
//! truth consistency (negatives, expected DUST, unique ids), sizes, noise, rendering and export.

use std::collections::{BTreeMap, HashMap, HashSet};

use undust::corpus::{
    generate, page_links, render_html, render_html_fetch, write_jsonl, CorpusConfig, DustRule,
    NoiseConfig, NoiseKind, PageKind, Site, SiteKind,
};

const SEEDS: [u64; 5] = [0, 1, 7, 42, 2024];

fn corpus(seed: u64) -> undust::corpus::Corpus {
    generate(&CorpusConfig::new(seed, 2).with_pages(60, 600))
}

/// The main content of a rendered page (what survives template removal).
fn main_text(html: &str) -> &str {
    let start = html.find("<main").unwrap_or(0);
    let end = html.find("</main>").unwrap_or(html.len());
    &html[start..end]
}

/// Canonical form of `url` under every expected rule of the site except path aliases (whose
/// placeholders are not always recoverable). Built from the documented rules only.
fn apply_expected(site: &Site, url: &str) -> String {
    let parsed = url::Url::parse(url).expect("generated URLs parse");
    let mut path = parsed.path().to_string();
    let mut query: Vec<(String, String)> = parsed
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let mut case_insensitive = false;
    let mut sort = false;
    for e in &site.expected {
        match &e.rule {
            DustRule::IgnoreQueryKey { key } => query.retain(|(k, _)| k != key),
            DustRule::IgnorePathParameter { name } => {
                let marker = format!(";{name}=");
                if let Some(i) = path.find(&marker) {
                    path.truncate(i);
                }
            }
            DustRule::IgnorePathSegment { .. } => {
                if path.starts_with("/(S(") {
                    if let Some(end) = path.find("))") {
                        path = path[end + 2..].to_string();
                    }
                }
            }
            DustRule::CaseInsensitivePath => case_insensitive = true,
            DustRule::CaseInsensitiveQuery => {
                case_insensitive = true;
                for (k, v) in &mut query {
                    *k = k.to_ascii_lowercase();
                    *v = v.to_ascii_lowercase();
                }
            }
            DustRule::QueryOrder => sort = true,
            DustRule::MirrorPrefix { .. }
            | DustRule::DefaultDocument { .. }
            | DustRule::PathAlias { .. } => {}
        }
    }
    if case_insensitive {
        path = path.to_ascii_lowercase();
    }
    for e in &site.expected {
        match &e.rule {
            DustRule::MirrorPrefix { prefixes } => {
                let best = prefixes
                    .iter()
                    .map(|p| {
                        if case_insensitive {
                            p.to_ascii_lowercase()
                        } else {
                            p.clone()
                        }
                    })
                    .filter(|p| !p.is_empty() && path.starts_with(&format!("{p}/")))
                    .max_by_key(String::len);
                if let Some(p) = best {
                    path = path[p.len()..].to_string();
                }
            }
            DustRule::DefaultDocument { names } => {
                for n in names {
                    let n = if case_insensitive {
                        n.to_ascii_lowercase()
                    } else {
                        n.clone()
                    };
                    if let Some(stripped) = path.strip_suffix(&n) {
                        if stripped.ends_with('/') {
                            path = stripped.to_string();
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if sort {
        query.sort();
    }
    let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "{}{}?{}",
        parsed.host_str().unwrap_or(""),
        path,
        q.join("&")
    )
}

#[test]
fn same_seed_same_corpus_and_html() {
    let a = corpus(11);
    let b = corpus(11);
    assert_eq!(a, b);
    let site = &a.sites[0];
    assert_eq!(
        render_html(site, &site.pages[0]),
        render_html(&b.sites[0], &b.sites[0].pages[0])
    );
}

#[test]
fn seeds_vary_names_layouts_and_parameters() {
    let mut hosts = HashSet::new();
    let mut variants: HashMap<SiteKind, HashSet<String>> = HashMap::new();
    let mut query_keys = HashSet::new();
    for seed in SEEDS {
        let c = generate(&CorpusConfig::new(seed, 1).with_pages(100, 100));
        for s in &c.sites {
            hosts.insert(s.host.clone());
            variants
                .entry(s.kind)
                .or_default()
                .insert(s.variant.clone());
            for e in &s.expected {
                if let DustRule::IgnoreQueryKey { key } = &e.rule {
                    query_keys.insert(key.clone());
                }
            }
        }
    }
    assert_eq!(
        hosts.len(),
        SEEDS.len() * SiteKind::ALL.len(),
        "hosts repeat across seeds"
    );
    for (kind, v) in &variants {
        assert!(
            v.len() >= 3,
            "{kind}: only {} layouts over {} seeds: {v:?}",
            v.len(),
            SEEDS.len()
        );
    }
    assert!(
        query_keys.len() >= 6,
        "irrelevant parameter names barely vary: {query_keys:?}"
    );
}

#[test]
fn ground_truth_is_consistent() {
    let mut all_ids: HashMap<u64, String> = HashMap::new();
    for seed in SEEDS {
        let c = corpus(seed);
        let mut hosts = HashSet::new();
        for site in &c.sites {
            assert!(hosts.insert(site.host.clone()), "host {} twice", site.host);
            let by_url: HashMap<&str, u64> = site
                .pages
                .iter()
                .map(|p| (p.url.as_str(), p.content_id))
                .collect();
            assert_eq!(
                by_url.len(),
                site.pages.len(),
                "{}: duplicate URL",
                site.host
            );
            for p in &site.pages {
                let prefix_ok = p.url.starts_with(&format!("https://{}/", site.host))
                    || p.url.starts_with(&format!("http://{}/", site.host));
                assert!(prefix_ok, "{} not on {}", p.url, site.host);
                assert!(url::Url::parse(&p.url).is_ok(), "{} does not parse", p.url);
                assert_eq!(p.label, p.content_id, "no noise requested");
                if seed == SEEDS[0] {
                    if let Some(other) = all_ids.insert(p.content_id, site.host.clone()) {
                        assert_eq!(other, site.host, "content id shared across sites");
                    }
                }
            }
            for (a, b) in &site.hard_negatives {
                let (ca, cb) = (by_url.get(a.as_str()), by_url.get(b.as_str()));
                assert!(
                    ca.is_some() && cb.is_some(),
                    "negative not crawled: {a} {b}"
                );
                assert_ne!(ca, cb, "hard negative with one content: {a} {b}");
            }
            for e in &site.expected {
                for (a, b) in &e.examples {
                    assert_ne!(a, b);
                    let (ca, cb) = (by_url.get(a.as_str()), by_url.get(b.as_str()));
                    assert!(ca.is_some(), "example not crawled: {a}");
                    assert_eq!(ca, cb, "{:?} example with two contents: {a} {b}", e.rule);
                }
            }
            // The documented rules never merge two contents (they are true on the site).
            let mut keyed: HashMap<String, u64> = HashMap::new();
            for p in &site.pages {
                let key = apply_expected(site, &p.url);
                if let Some(&other) = keyed.get(&key) {
                    assert_eq!(
                        other, p.content_id,
                        "{}: rules merge contents at {key} ({})",
                        site.variant, p.url
                    );
                }
                keyed.insert(key, p.content_id);
            }
            let contents: HashSet<u64> = site.pages.iter().map(|p| p.content_id).collect();
            if site.kind == SiteKind::NoDust {
                assert!(site.expected.is_empty());
                assert_eq!(
                    contents.len(),
                    site.pages.len(),
                    "no-dust site with duplicates"
                );
            } else {
                assert!(
                    !site.expected.is_empty(),
                    "{} has no expected DUST",
                    site.variant
                );
                assert!(
                    contents.len() < site.pages.len(),
                    "{} has no duplicates",
                    site.variant
                );
                assert!(
                    site.expected.iter().any(|e| !e.examples.is_empty()),
                    "{}: no rule has examples",
                    site.variant
                );
                // Rules other than aliases (which this check does not apply) explain duplicates.
                if site
                    .expected
                    .iter()
                    .any(|e| !matches!(e.rule, DustRule::PathAlias { .. }))
                {
                    assert!(
                        keyed.len() < site.pages.len(),
                        "{}: rules explain nothing",
                        site.variant
                    );
                }
            }
            assert!(
                !site.hard_negatives.is_empty(),
                "{} has no hard negatives",
                site.variant
            );
        }
    }
}

#[test]
fn every_kind_documents_its_characteristic_dust() {
    for seed in SEEDS {
        let c = generate(&CorpusConfig::new(seed, 1).with_pages(300, 300));
        for site in &c.sites {
            let has = |f: &dyn Fn(&DustRule) -> bool| site.expected.iter().any(|e| f(&e.rule));
            match site.kind {
                SiteKind::Forum => assert!(
                    has(&|r| matches!(
                        r,
                        DustRule::IgnoreQueryKey { .. }
                            | DustRule::IgnorePathParameter { .. }
                            | DustRule::IgnorePathSegment { .. }
                    )),
                    "forum without session ids: {:?}",
                    site.expected
                ),
                SiteKind::Shop => assert!(has(&|r| matches!(r, DustRule::IgnoreQueryKey { .. }))),
                SiteKind::DocsMirror => {
                    assert!(has(&|r| matches!(r, DustRule::MirrorPrefix { .. })))
                }
                SiteKind::CaseInsensitive => {
                    assert!(has(&|r| matches!(r, DustRule::CaseInsensitivePath)));
                    assert!(has(&|r| matches!(r, DustRule::DefaultDocument { .. })));
                }
                SiteKind::News | SiteKind::Mixed => assert!(!site.expected.is_empty()),
                SiteKind::NoDust => assert!(site.expected.is_empty()),
                // The software families are checked by `every_family_documents_its_dust`.
                _ => {}
            }
        }
    }
}

#[test]
fn sizes_stay_within_config() {
    for (min, max) in [(1, 1), (10, 30), (200, 200), (50, 3000)] {
        let c = generate(&CorpusConfig::new(3, 1).with_pages(min, max));
        for s in &c.sites {
            assert!(
                (min..=max).contains(&s.pages.len()),
                "{}: {} not in {min}..={max}",
                s.variant,
                s.pages.len()
            );
        }
    }
    // Out-of-range values are clamped, not trusted.
    let c = generate(&CorpusConfig::new(3, 1).with_pages(0, 0));
    assert!(c.sites.iter().all(|s| s.pages.len() == 1));
    let c = generate(&CorpusConfig::new(3, 1).with_pages(20, 5));
    assert!(c.sites.iter().all(|s| s.pages.len() == 20));
}

#[test]
fn popularity_is_skewed() {
    let c = generate(
        &CorpusConfig::default()
            .with_kinds(&[SiteKind::Forum, SiteKind::Shop, SiteKind::News])
            .with_pages(3000, 3000),
    );
    for site in &c.sites {
        let mut sizes: BTreeMap<u64, usize> = BTreeMap::new();
        for p in &site.pages {
            *sizes.entry(p.content_id).or_default() += 1;
        }
        let small = sizes.values().filter(|&&n| n <= 3).count();
        let big = sizes.values().filter(|&&n| n >= 8).count();
        assert!(
            small * 10 >= sizes.len() * 7,
            "{}: only {small} of {} contents have 1-3 URLs",
            site.variant,
            sizes.len()
        );
        assert!(
            big >= 3,
            "{}: only {big} contents with 8+ URLs",
            site.variant
        );
    }
}

#[test]
fn noise_is_labelled_and_bounded() {
    let noise = NoiseConfig {
        soft_404_share: 0.1,
        wrong_merge_share: 0.05,
    };
    let c = generate(
        &CorpusConfig::new(5, 1)
            .with_pages(400, 400)
            .with_noise(noise),
    );
    for site in &c.sites {
        assert_eq!(site.pages.len(), 400);
        let soft: Vec<_> = site
            .pages
            .iter()
            .filter(|p| p.noise == Some(NoiseKind::Soft404))
            .collect();
        assert!(
            (25..=40).contains(&soft.len()),
            "{}: {} soft-404s",
            site.variant,
            soft.len()
        );
        let labels: HashSet<u64> = soft.iter().map(|p| p.label).collect();
        let ids: HashSet<u64> = soft.iter().map(|p| p.content_id).collect();
        assert_eq!(labels.len(), 1, "soft-404s share one label");
        assert_eq!(ids.len(), soft.len(), "soft-404s are distinct contents");
        assert!(soft.iter().all(|p| p.kind == PageKind::NotFound));
        let wrong = site
            .pages
            .iter()
            .filter(|p| p.noise == Some(NoiseKind::WrongMerge))
            .count();
        assert!(
            (5..=20).contains(&wrong),
            "{}: {wrong} wrong merges",
            site.variant
        );
        for p in &site.pages {
            assert_eq!(p.noise.is_none(), p.label == p.content_id, "{}", p.url);
        }
        let html = render_html(site, soft[0]);
        assert!(main_text(&html).contains("could not be found"));
    }
    // Absurd shares are clamped.
    let noise = NoiseConfig {
        soft_404_share: f64::NAN,
        wrong_merge_share: 7.0,
    };
    let c = generate(&CorpusConfig::new(5, 1).with_pages(50, 50).with_noise(noise));
    assert!(c.sites.iter().all(|s| s.pages.len() == 50));
}

#[test]
fn same_content_renders_same_main_text_and_negatives_differ() {
    let c = corpus(9);
    for site in &c.sites {
        let mut by_label: HashMap<u64, String> = HashMap::new();
        let mut varied = false;
        for p in &site.pages {
            let html = render_html(site, p);
            assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
            let main = main_text(&html).to_string();
            match by_label.get(&p.label) {
                Some(m) => assert_eq!(m, &main, "{}: same content, other main text", p.url),
                None => {
                    by_label.insert(p.label, main);
                }
            }
            varied |= render_html_fetch(site, p, 1) != html;
        }
        assert!(
            varied,
            "{}: template never varies between fetches",
            site.host
        );
        let distinct: HashSet<&String> = by_label.values().collect();
        assert_eq!(
            distinct.len(),
            by_label.len(),
            "{}: two contents render the same",
            site.host
        );
        let url_label: HashMap<&str, u64> = site
            .pages
            .iter()
            .map(|p| (p.url.as_str(), p.label))
            .collect();
        for (a, b) in &site.hard_negatives {
            let (la, lb) = (url_label[a.as_str()], url_label[b.as_str()]);
            assert_ne!(by_label[&la], by_label[&lb]);
        }
    }
}

#[test]
fn links_point_into_the_site() {
    let c = corpus(4);
    for site in &c.sites {
        let urls: HashSet<&str> = site.pages.iter().map(|p| p.url.as_str()).collect();
        assert!(!site.template.nav.is_empty());
        let mut total = 0;
        for p in site.pages.iter().take(50) {
            let links = page_links(site, p);
            let html = render_html(site, p);
            for l in &links {
                assert!(
                    urls.contains(l.as_str()),
                    "{l} is not a page of {}",
                    site.host
                );
                assert!(
                    html.contains(&l.replace('&', "&amp;")),
                    "{l} not in the HTML"
                );
            }
            total += links.len();
        }
        assert!(
            total > 50 * site.template.nav.len(),
            "{}: pages link nowhere but the nav",
            site.host
        );
    }
}

#[test]
fn jsonl_export_round_trips() {
    let c = generate(&CorpusConfig::new(2, 1).with_pages(20, 20));
    let mut out = Vec::new();
    write_jsonl(&c, &mut out).expect("writing to memory");
    let text = String::from_utf8(out).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), c.total_pages());
    let mut i = 0;
    for site in &c.sites {
        for p in &site.pages {
            let v: serde_json::Value = serde_json::from_str(lines[i]).expect("valid JSON");
            assert_eq!(v["url"], p.url.as_str());
            assert_eq!(v["status"], 200);
            assert_eq!(v["html"], render_html(site, p).as_str());
            assert!(v.get("final_url").is_none());
            i += 1;
        }
    }
}

#[test]
fn rel_canonical_is_consistent_and_does_not_change_urls() {
    let plain = generate(&CorpusConfig::new(8, 1).with_pages(150, 150));
    let with = generate(
        &CorpusConfig::new(8, 1)
            .with_pages(150, 150)
            .with_rel_canonical(1.0),
    );
    for (a, b) in plain.sites.iter().zip(&with.sites) {
        assert!(!a.declares_canonical && b.declares_canonical);
        let urls_a: Vec<&str> = a.pages.iter().map(|p| p.url.as_str()).collect();
        let urls_b: Vec<&str> = b.pages.iter().map(|p| p.url.as_str()).collect();
        assert_eq!(urls_a, urls_b, "the option changed the crawl");
        let mut canon_of: HashMap<u64, &str> = HashMap::new();
        let mut owner: HashMap<&str, u64> = HashMap::new();
        for p in &b.pages {
            let c = p.canonical.as_deref().expect("every page declares one");
            assert!(c.starts_with("http") && c.contains(&b.host));
            assert_eq!(*canon_of.entry(p.content_id).or_insert(c), c, "{}", p.url);
            assert_eq!(
                *owner.entry(c).or_insert(p.content_id),
                p.content_id,
                "{c} shared"
            );
            assert!(render_html(b, p).contains(&format!(
                "<link rel=\"canonical\" href=\"{}\">",
                c.replace('&', "&amp;")
            )));
        }
    }
    // Half the sites, decided per site.
    let c = generate(&CorpusConfig::new(8, 6).with_rel_canonical(0.5));
    let declaring = c.sites.iter().filter(|s| s.declares_canonical).count();
    assert!(
        declaring > 5 && declaring < c.sites.len() - 5,
        "{declaring} of {}",
        c.sites.len()
    );
}

#[test]
fn helpers_group_and_split_pages() {
    let noise = NoiseConfig {
        soft_404_share: 0.0,
        wrong_merge_share: 0.1,
    };
    let c = generate(
        &CorpusConfig::new(6, 1)
            .with_pages(500, 500)
            .with_noise(noise),
    );
    for site in &c.sites {
        let clusters = site.clusters();
        let sizes: usize = clusters.values().map(Vec::len).sum();
        assert_eq!(sizes, site.pages.len());
        let index = site.content_index();
        for (id, urls) in &clusters {
            assert!(urls.iter().all(|u| index[u] == *id));
        }
        let observed = site.observed_clusters();
        assert_eq!(
            observed.values().map(Vec::len).sum::<usize>(),
            site.pages.len()
        );
        assert!(
            observed.len() < clusters.len(),
            "wrong merges merge clusters"
        );

        let (train, held) = site.split(0.3, 99);
        assert_eq!(train.len() + held.len(), site.pages.len());
        let share = held.len() as f64 / site.pages.len() as f64;
        assert!((0.2..0.4).contains(&share), "{share}");
        let (train2, _) = site.split(0.3, 99);
        assert_eq!(train, train2);
        assert_ne!(site.split(0.3, 100).0, train);
        assert!(site.split(0.0, 1).1.is_empty());
        assert!(site.split(1.0, 1).0.is_empty());
    }
}

#[test]
fn large_sites_generate_quickly() {
    // Debug-profile guard against accidental quadratic behaviour; release figures are in
    // `benches/corpus.rs`.
    let start = std::time::Instant::now();
    let c = generate(
        &CorpusConfig::default()
            .with_kinds(&[SiteKind::Mixed])
            .with_pages(100_000, 100_000),
    );
    let elapsed = start.elapsed();
    assert_eq!(c.total_pages(), 100_000);
    assert!(elapsed.as_secs_f64() < 20.0, "100k URLs took {elapsed:?}");
}

#[test]
fn redirects_lead_to_the_same_content_and_do_not_change_urls() {
    let plain = generate(&CorpusConfig::new(12, 1).with_pages(200, 200));
    let with = generate(
        &CorpusConfig::new(12, 1)
            .with_pages(200, 200)
            .with_redirects(1.0),
    );
    let mut redirected = 0;
    for (a, b) in plain.sites.iter().zip(&with.sites) {
        assert!(!a.redirects_aliases && b.redirects_aliases);
        assert!(a.pages.iter().all(|p| p.final_url.is_none()));
        let urls_a: Vec<&str> = a.pages.iter().map(|p| p.url.as_str()).collect();
        let urls_b: Vec<&str> = b.pages.iter().map(|p| p.url.as_str()).collect();
        assert_eq!(urls_a, urls_b, "the option changed the crawl");
        let index = b.content_index();
        let mut target_owner: HashMap<&str, u64> = HashMap::new();
        for p in &b.pages {
            let Some(target) = p.final_url.as_deref() else {
                continue;
            };
            redirected += 1;
            assert_ne!(target, p.url);
            assert!(url::Url::parse(target).is_ok());
            if let Some(&c) = index.get(target) {
                assert_eq!(c, p.content_id, "{} redirects to another content", p.url);
            }
            let owner = *target_owner.entry(target).or_insert(p.content_id);
            assert_eq!(owner, p.content_id, "{target} ends two contents");
        }
    }
    assert!(redirected > 50, "only {redirected} redirects");
    let mut out = Vec::new();
    write_jsonl(&with, &mut out).expect("writing to memory");
    let text = String::from_utf8(out).expect("utf-8");
    assert_eq!(text.matches("\"final_url\"").count(), redirected);
}

/// Patterns of the meaningful differences the brief asks for, compiled once.
static CLASSES: std::sync::LazyLock<Vec<(&'static str, regex::Regex)>> =
    std::sync::LazyLock::new(|| {
        [
            ("revision", r"[?&]oldid="),
            ("history", r"[?&]action=history"),
            ("comments", r"comments"),
            (
                "variant",
                r"[?&](colou?r|variant_color|c|size|sz|variant_size)=",
            ),
            ("sort", r"[?&](sort|order|orderby|sort_by|sk|sd)="),
            ("pagination", r"([?&](page|pg|p|start)=\d|/page[-/]?\d)"),
        ]
        .into_iter()
        .map(|(name, p)| (name, regex::Regex::new(p).expect("valid pattern")))
        .collect()
    });

/// What distinguishes the two URLs of a hard negative, in the brief's terms.
fn negative_class(a: &str, b: &str) -> &'static str {
    if let Some((name, _)) = CLASSES
        .iter()
        .find(|(_, r)| r.is_match(b) && !r.is_match(a))
    {
        return name;
    }
    let seg = |u: &str| -> Vec<String> {
        url::Url::parse(u).map_or_else(
            |_| Vec::new(),
            |u| u.path().split('/').map(str::to_string).collect(),
        )
    };
    let (sa, sb) = (seg(a), seg(b));
    let diff = (0..sa.len().max(sb.len()))
        .filter(|&i| sa.get(i) != sb.get(i))
        .count();
    if diff == 1 && sa.len() == sb.len() {
        "path-segment"
    } else {
        "other-item"
    }
}

#[test]
fn hard_negatives_cover_each_kinds_dimensions() {
    let mut classes: HashMap<SiteKind, HashSet<&'static str>> = HashMap::new();
    for seed in SEEDS {
        let c = generate(&CorpusConfig::new(seed, 1).with_pages(400, 400));
        for site in &c.sites {
            let set = classes.entry(site.kind).or_default();
            for (a, b) in &site.hard_negatives {
                set.insert(negative_class(a, b));
            }
        }
    }
    let want: [(SiteKind, &[&str]); 5] = [
        (SiteKind::Forum, &["pagination", "sort"]),
        (SiteKind::Shop, &["pagination", "sort", "variant"]),
        (SiteKind::News, &["pagination", "comments"]),
        (SiteKind::DocsMirror, &["path-segment"]),
        (SiteKind::CaseInsensitive, &["revision", "history"]),
    ];
    for (kind, needed) in want {
        let got = &classes[&kind];
        for n in needed {
            assert!(got.contains(n), "{kind}: no `{n}` negatives, only {got:?}");
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        crate::support::proptest_cases(24)
    ))]

    /// Any configuration generates (never panics), sizes obey the clamped range and the truth
    /// stays consistent.
    #[test]
    fn any_config_generates_consistently(
        seed in proptest::prelude::any::<u64>(),
        min in 0usize..200,
        max in 0usize..200,
        kinds in proptest::collection::vec(0usize..7, 0..4),
        soft in proptest::prelude::any::<f64>(),
        wrong in proptest::prelude::any::<f64>(),
        canonical in proptest::prelude::any::<f64>(),
    ) {
        let kinds: Vec<SiteKind> = kinds.into_iter().map(|i| SiteKind::ALL[i]).collect();
        let mut config = CorpusConfig::new(seed, 0)
            .with_kinds(&kinds)
            .with_pages(min, max)
            .with_noise(NoiseConfig { soft_404_share: soft, wrong_merge_share: wrong })
            .with_rel_canonical(canonical);
        config.redirect_share = canonical;
        let c = generate(&config);
        proptest::prop_assert_eq!(c.sites.len(), kinds.len());
        let lo = min.max(1);
        let hi = max.max(lo);
        for site in &c.sites {
            proptest::prop_assert!((lo..=hi).contains(&site.pages.len()));
            let index = site.content_index();
            proptest::prop_assert_eq!(index.len(), site.pages.len());
            for (a, b) in &site.hard_negatives {
                proptest::prop_assert_ne!(index.get(a.as_str()), index.get(b.as_str()));
            }
            for e in &site.expected {
                for (a, b) in &e.examples {
                    proptest::prop_assert_eq!(index.get(a.as_str()), index.get(b.as_str()));
                }
            }
            if let Some(p) = site.pages.first() {
                proptest::prop_assert!(render_html(site, p).ends_with("</html>\n"));
            }
        }
    }
}

/// Every software family documents its DUST with example pairs of one content, and has hard
/// negatives of different contents; the tuning and held-out lists split the families exactly.
#[test]
fn every_family_documents_its_dust() {
    let mut split: Vec<SiteKind> = SiteKind::TUNING_FAMILIES
        .iter()
        .chain(&SiteKind::HELD_OUT_FAMILIES)
        .copied()
        .collect();
    split.sort_by_key(|k| k.name());
    let mut all = SiteKind::FAMILIES.to_vec();
    all.sort_by_key(|k| k.name());
    assert_eq!(
        split, all,
        "tuning + held-out must be the families, once each"
    );
    for seed in SEEDS {
        let c = generate(
            &CorpusConfig::new(seed, 1)
                .with_kinds(&SiteKind::FAMILIES)
                .with_pages(600, 600),
        );
        for site in &c.sites {
            assert_eq!(site.kind.name().parse::<SiteKind>().ok(), Some(site.kind));
            let index = site.content_index();
            assert!(
                site.expected.len() >= 2,
                "{} ({}): only {:?}",
                site.kind,
                site.variant,
                site.expected
            );
            for e in &site.expected {
                for (a, b) in &e.examples {
                    assert_eq!(index[a.as_str()], index[b.as_str()], "{a} {b}");
                }
            }
            assert!(
                !site.hard_negatives.is_empty(),
                "{} ({}): no hard negatives",
                site.kind,
                site.variant
            );
            for (a, b) in &site.hard_negatives {
                assert_ne!(index[a.as_str()], index[b.as_str()], "{a} {b}");
            }
            // Some content has several URLs: there is DUST to find.
            assert!(site.clusters().values().any(|urls| urls.len() > 1));
        }
    }
}
