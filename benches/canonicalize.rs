//! The hot path with a realistic learned rule set: static normalization followed by the host's
//! compiled rules, against static normalization alone and bare `url::Url::parse`, on the same URLs
//! in the same run.
//!
//! Rules are learned per host from a generated multi-site crawl (forums, shops, news, docs, wikis,
//! mixed and clean sites) with its ground-truth clusters; the URLs are every URL of that crawl.
//!
//! `rules_and_mirrors` runs the same URLs plus as many again on alias origins (one mirror set
//! per site: a bare-host alias and a mirror host serving the site under a folder), through a
//! canonicalizer with the same rules and those mirror sets loaded.
//!
//! `static_only` is [`Canonicalizer::static_form`]: the fast path where it proves the input
//! normalized or where only steps on the path and query edit it, the parser and the static
//! steps elsewhere.
//!
//! Before criterion's groups, a paired measurement alternates one round of each case over the
//! same URLs and prints the median per-round throughput relative to bare parsing: on a machine
//! shared with other jobs, load moves between criterion's back-to-back groups, while within one
//! round of four cases it mostly cancels out.
//!
//! `cargo bench --bench canonicalize`

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use undust::canon::engine::HostRules;
use undust::canon::fast::{recognize, recognize_form, FastForm};
use undust::canon::mirror::MirrorTable;
use undust::canon::normalize::{StaticConfig, StaticNormalizer};
use undust::canon::rules::{MirrorAlias, MirrorSet, MirrorSite};
use undust::canon::Canonicalizer;
use undust::corpus::{generate, CorpusConfig};
use undust::learn::{learn_host, LabelledUrl, LearnConfig};

/// A canonicalizer with the same rules and one mirror set per site, and URLs on the aliases.
fn with_mirrors(base: &Canonicalizer, urls: &[String]) -> (Canonicalizer, Vec<String>) {
    let mirrored = Canonicalizer::new(base.normalizer().clone());
    let mut sets: Vec<MirrorSet> = Vec::new();
    let mut alias_urls = Vec::new();
    for url in urls {
        let Ok(parsed) = url::Url::parse(url) else {
            continue;
        };
        let Some(host) = parsed.host_str().map(str::to_owned) else {
            continue;
        };
        if let Some(rules) = base.rules().get(&host) {
            mirrored.rules().swap(&host, rules);
        }
        let origin = format!("{}://{host}", parsed.scheme());
        let n = sets.len();
        if !sets.iter().any(|s| s.canonical.origin == origin) {
            let alias = |origin: String, path_prefix: String| MirrorAlias {
                site: MirrorSite {
                    origin,
                    path_prefix,
                },
                pinned: false,
                evidence: None,
            };
            sets.push(MirrorSet {
                id: format!("mirror:{origin}"),
                canonical: MirrorSite {
                    origin: origin.clone(),
                    path_prefix: String::new(),
                },
                aliases: vec![
                    alias(format!("http://alias{n}.example"), String::new()),
                    alias(
                        "http://mirror.example.edu".to_owned(),
                        format!("/pub/site{n}"),
                    ),
                ],
                forbidden: vec![],
            });
        }
        let i = sets
            .iter()
            .position(|s| s.canonical.origin == origin)
            .unwrap_or(0);
        let rest = &url[origin.len()..];
        alias_urls.push(if alias_urls.len() % 2 == 0 {
            format!("http://alias{i}.example{rest}")
        } else {
            format!("http://mirror.example.edu/pub/site{i}{rest}")
        });
    }
    mirrored.set_mirrors(std::sync::Arc::new(
        MirrorTable::compile(&sets).expect("valid mirror sets"),
    ));
    let mut all = urls.to_vec();
    all.extend(alias_urls);
    (mirrored, all)
}

fn setup() -> (Canonicalizer, Vec<String>, usize) {
    let corpus = generate(&CorpusConfig::new(3, 2).with_pages(500, 2_000));
    let normalizer = StaticNormalizer::new(StaticConfig::default()).expect("default config");
    let canonicalizer = Canonicalizer::new(normalizer.clone());
    let mut urls = Vec::new();
    let mut rules = 0;
    for site in &corpus.sites {
        let labelled: Vec<LabelledUrl> = site
            .pages
            .iter()
            .filter_map(|p| {
                normalizer.normalize(&p.url).ok().map(|u| LabelledUrl {
                    url: u.into(),
                    cluster: p.content_id,
                })
            })
            .collect();
        if let Ok(outcome) = learn_host(&site.host, &labelled, &LearnConfig::default()) {
            if let Ok(compiled) = HostRules::compile(&outcome.rules) {
                rules += compiled.len();
                canonicalizer.rules().swap(&site.host, Arc::new(compiled));
            }
        }
        urls.extend(site.pages.iter().map(|p| p.url.clone()));
    }
    (canonicalizer, urls, rules)
}

/// Rounds of the paired measurement.
const PAIRED_ROUNDS: usize = 21;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// URLs per second of one pass of `run` over `urls`.
fn round(urls: &[String], run: impl Fn(&str) -> bool) -> f64 {
    let start = Instant::now();
    let mut ok = 0usize;
    for url in urls {
        ok += usize::from(run(black_box(url)));
    }
    black_box(ok);
    urls.len() as f64 / start.elapsed().as_secs_f64()
}

/// Alternates a round of bare parsing, static normalization, static + rules and rules + mirror
/// sets, the last three also without the fast path (`_parsed`: every input parsed, as before it),
/// and prints each case's median URLs/s and its median per-round ratio to bare parsing.
fn paired_ratios(
    canonicalizer: &Canonicalizer,
    urls: &[String],
    mirrored: &Canonicalizer,
    mirror_urls: &[String],
) {
    let names = [
        "url_parse_baseline",
        "static_only",
        "static_and_learned_rules",
        "rules_and_mirrors",
        "static_only_parsed",
        "static_and_learned_rules_parsed",
        "rules_and_mirrors_parsed",
    ];
    let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(PAIRED_ROUNDS); names.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::with_capacity(PAIRED_ROUNDS); names.len()];
    for _ in 0..PAIRED_ROUNDS {
        // The mirrors case runs over its own URLs (half on alias origins): its parse baseline is
        // a parse round over the same URLs.
        let parse = round(urls, |u| url::Url::parse(u).is_ok());
        let parse_mirror_urls = round(mirror_urls, |u| url::Url::parse(u).is_ok());
        let round_rates = [
            parse,
            round(urls, |u| canonicalizer.static_form(u).is_ok()),
            round(urls, |u| canonicalizer.canonicalize(u).is_ok()),
            round(mirror_urls, |u| mirrored.canonicalize(u).is_ok()),
            round(urls, |u| canonicalizer.normalize(u).is_ok()),
            round(urls, |u| canonicalizer.canonicalize_parsed(u).is_ok()),
            round(mirror_urls, |u| mirrored.canonicalize_parsed(u).is_ok()),
        ];
        for (i, rate) in round_rates.into_iter().enumerate() {
            let baseline = if i == 3 || i == 6 {
                parse_mirror_urls
            } else {
                parse
            };
            rates[i].push(rate);
            ratios[i].push(rate / baseline);
        }
    }
    for (i, name) in names.iter().enumerate() {
        println!(
            "canonicalize paired {name}: median {:.0} URLs/s, median {:.2} of bare parse's rate \
             (min {:.2}, max {:.2}) over {PAIRED_ROUNDS} rounds",
            median(&mut rates[i]),
            median(&mut ratios[i].clone()),
            ratios[i].iter().copied().fold(f64::INFINITY, f64::min),
            ratios[i].iter().copied().fold(0.0, f64::max),
        );
    }
}

fn bench(c: &mut Criterion) {
    let (canonicalizer, urls, rules) = setup();
    let rewritten = urls
        .iter()
        .filter(|u| canonicalizer.canonicalize(u).is_ok_and(|c| c.learned))
        .count();
    println!(
        "canonicalize bench: {} URLs, {} hosts with {rules} rules, {rewritten} URLs rewritten by learned rules",
        urls.len(),
        canonicalizer.rules().len()
    );
    let fast = urls
        .iter()
        .filter(|u| recognize(canonicalizer.normalizer(), u).is_some())
        .count();
    let edited = urls
        .iter()
        .filter(|u| {
            matches!(
                recognize_form(canonicalizer.normalizer(), u),
                Some(FastForm::Edited(_))
            )
        })
        .count();
    println!(
        "canonicalize bench: {fast} of {} URLs ({:.1}%) take the fast path of static normalization \
         as they are, {edited} ({:.1}%) with their path or query edited on it",
        urls.len(),
        100.0 * fast as f64 / urls.len() as f64,
        100.0 * edited as f64 / urls.len() as f64
    );
    let (mirrored, mirror_urls) = with_mirrors(&canonicalizer, &urls);
    let folded = mirror_urls
        .iter()
        .filter(|u| mirrored.canonicalize(u).is_ok_and(|c| c.mirrored))
        .count();
    println!(
        "canonicalize bench: {} mirror sets, {} URLs with aliases, {folded} folded",
        mirrored.mirrors().sets().len(),
        mirror_urls.len()
    );
    paired_ratios(&canonicalizer, &urls, &mirrored, &mirror_urls);
    let mut group = c.benchmark_group("canonicalize");
    group.throughput(Throughput::Elements(urls.len() as u64));
    group.sample_size(20);
    group.bench_function("url_parse_baseline", |b| {
        b.iter(|| {
            for url in &urls {
                black_box(url::Url::parse(url).ok());
            }
        })
    });
    group.bench_function("static_only", |b| {
        b.iter(|| {
            for url in &urls {
                black_box(canonicalizer.static_form(url).ok());
            }
        })
    });
    group.bench_function("static_and_learned_rules", |b| {
        b.iter(|| {
            for url in &urls {
                black_box(canonicalizer.canonicalize(url).ok());
            }
        })
    });
    group.finish();
    let mut group = c.benchmark_group("canonicalize_mirrors");
    group.throughput(Throughput::Elements(mirror_urls.len() as u64));
    group.sample_size(20);
    group.bench_function("rules_and_mirrors", |b| {
        b.iter(|| {
            for url in &mirror_urls {
                black_box(mirrored.canonicalize(url).ok());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
