//! The hot path with a realistic learned rule set: static normalization followed by the host's
//! compiled rules, against static normalization alone and bare `url::Url::parse`, on the same URLs
//! in the same run.
//!
//! Rules are learned per host from a generated multi-site crawl (forums, shops, news, docs, wikis,
//! mixed and clean sites) with its ground-truth clusters; the URLs are every URL of that crawl.
//!
//! `cargo bench --bench canonicalize`

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use undust::canon::engine::HostRules;
use undust::canon::normalize::{StaticConfig, StaticNormalizer};
use undust::canon::Canonicalizer;
use undust::corpus::{generate, CorpusConfig};
use undust::learn::{learn_host, LabelledUrl, LearnConfig};

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
                black_box(canonicalizer.normalize(url).ok());
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
}

criterion_group!(benches, bench);
criterion_main!(benches);
