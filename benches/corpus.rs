//! Synthetic corpus generation and rendering speed: benchmarks and tests build sites of up to
//! 100k URLs, so generating one must take well under a second.
//!
//! `cargo bench --bench corpus`
//!
//! Baseline (same run): formatting 100k URL strings and inserting them into a `HashSet`, the
//! floor any generator of 100k unique URLs pays.

use std::collections::HashSet;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use undust::corpus::{generate, render_html, CorpusConfig, SiteKind};

const URLS: usize = 100_000;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("corpus");
    group.sample_size(10);
    group.throughput(Throughput::Elements(URLS as u64));
    group.bench_function("baseline/format_and_dedup_100k_urls", |b| {
        b.iter(|| {
            let mut set = HashSet::with_capacity(URLS);
            for i in 0..URLS {
                set.insert(format!(
                    "https://www.example.com/showthread.php?t={i}&sid={:032x}",
                    i * 7919
                ));
            }
            black_box(set.len())
        })
    });
    for kind in [
        SiteKind::Forum,
        SiteKind::Shop,
        SiteKind::News,
        SiteKind::DocsMirror,
        SiteKind::CaseInsensitive,
        SiteKind::Mixed,
    ] {
        let config = CorpusConfig::default()
            .with_kinds(&[kind])
            .with_pages(URLS, URLS);
        group.bench_function(format!("generate_100k/{kind}"), |b| {
            b.iter(|| black_box(generate(black_box(&config)).total_pages()))
        });
    }
    group.finish();

    let corpus = generate(
        &CorpusConfig::default()
            .with_kinds(&[SiteKind::Mixed])
            .with_pages(1_000, 1_000),
    );
    let site = &corpus.sites[0];
    let mut group = c.benchmark_group("corpus_render");
    group.sample_size(10);
    group.throughput(Throughput::Elements(site.pages.len() as u64));
    group.bench_function("render_html_1k_pages", |b| {
        b.iter(|| {
            site.pages
                .iter()
                .map(|p| render_html(site, p).len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
