//! Learner and rule-engine benchmarks.
//!
//! - `learn/100k`: `learn_host` on a realistic generated host of 100,000 training URLs (tree,
//!   candidates, proofing, selection and verification). Target: at most 1 s. The learner shares
//!   one host's work out among the threads of the pool it runs in (every core here;
//!   `RAYON_NUM_THREADS=1` gives the one-core figure).
//! - `engine/apply` versus `engine/url_parse`: applying the host's compiled rules to parsed
//!   URLs, and the same-run baseline of parsing those URLs with `url::Url::parse`.
//!
//! Run: `cargo bench --bench learn`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use undust::canon::engine::HostRules;
use undust::learn::{learn_host, LabelledUrl, LearnConfig};
use url::Url;

/// A shop-and-forum host: session ids, tracking parameters, id aliases between path and
/// query, mirrors, default documents, with pagination, sort orders and colour variants as
/// distinct pages. Page popularity is skewed, so some pages have many URLs.
fn host(n: usize, seed: u64) -> Vec<LabelledUrl> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    let mut page = 0u64;
    let cats = [
        "books", "music", "toys", "garden", "tools", "sports", "office", "kitchen",
    ];
    let sorts = ["price", "name", "date"];
    while out.len() < n {
        page += 1;
        let copies = 1 + (rng.random::<f64>().powi(3) * 6.0) as usize;
        let kind = rng.random_range(0..100);
        let id = rng.random_range(1..2_000_000u32);
        let mut urls: Vec<String> = Vec::new();
        for c in 0..copies {
            let sid = format!("{:016x}", rng.random::<u64>());
            let url = match kind {
                0..=34 => match c % 3 {
                    0 => format!("http://shop.example.com/item.php?id={id}"),
                    1 => format!("http://shop.example.com/item.php?id={id}&sid={sid}"),
                    _ => format!("http://shop.example.com/product/{id}"),
                },
                35..=54 => {
                    let src = ["mail", "rss", "home", "social"][c % 4];
                    if c == 0 {
                        format!("http://shop.example.com/news/{id}/story-{}", id % 977)
                    } else {
                        format!(
                            "http://shop.example.com/news/{id}/story-{}?ref={src}",
                            id % 977
                        )
                    }
                }
                55..=74 => {
                    let cat = cats[id as usize % cats.len()];
                    let p = 1 + id % 4000;
                    let s = sorts[(id / 4000) as usize % sorts.len()];
                    if c % 2 == 0 {
                        format!("http://shop.example.com/category/{cat}?page={p}&sort={s}")
                    } else {
                        format!(
                            "http://shop.example.com/category/{cat}?page={p}&sid={sid}&sort={s}"
                        )
                    }
                }
                75..=89 => {
                    let m = ["eu", "us", "asia"][c % 3];
                    format!("http://shop.example.com/mirror-{m}/docs/page{id}.html")
                }
                _ => {
                    let colour = ["red", "blue", "green"][id as usize % 3];
                    if c % 2 == 0 {
                        format!("http://shop.example.com/dir{id}/?colour={colour}")
                    } else {
                        format!("http://shop.example.com/dir{id}/index.html?colour={colour}")
                    }
                }
            };
            urls.push(url);
        }
        urls.sort();
        urls.dedup();
        for u in urls {
            out.push(LabelledUrl {
                url: u,
                cluster: page,
            });
        }
    }
    out.truncate(n);
    out
}

fn bench(c: &mut Criterion) {
    let samples = host(100_000, 7);
    let config = LearnConfig::default();
    let outcome = learn_host("shop.example.com", &samples, &config).expect("learning runs");
    eprintln!(
        "learned {} site rules and {} rules from {} URLs ({} clusters, {} tree nodes); report: {:?}",
        outcome.rules.site_rules.len(),
        outcome.rules.rules.len(),
        outcome.report.samples,
        outcome.report.clusters,
        outcome.report.tree_nodes,
        outcome.report
    );
    let mut g = c.benchmark_group("learn");
    g.sample_size(10);
    g.throughput(Throughput::Elements(samples.len() as u64));
    g.bench_function("100k", |b| {
        b.iter(|| {
            learn_host("shop.example.com", black_box(&samples), &config)
                .map(|o| o.rules.rules.len())
        })
    });
    g.finish();

    let engine = HostRules::compile(&outcome.rules).expect("rules compile");
    let texts: Vec<&str> = samples
        .iter()
        .take(20_000)
        .map(|s| s.url.as_str())
        .collect();
    let parsed: Vec<Url> = texts.iter().filter_map(|t| Url::parse(t).ok()).collect();
    let rewritten = parsed.iter().filter(|u| engine.apply(u).is_some()).count();
    eprintln!(
        "engine: {} rules, {rewritten} of {} URLs rewritten",
        engine.len(),
        parsed.len()
    );
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(parsed.len() as u64));
    g.bench_function("apply", |b| {
        b.iter(|| {
            parsed
                .iter()
                .filter(|u| engine.apply(black_box(u)).is_some())
                .count()
        })
    });
    g.bench_function("url_parse", |b| {
        b.iter(|| {
            texts
                .iter()
                .filter(|t| Url::parse(black_box(t)).is_ok())
                .count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
