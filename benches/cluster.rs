//! Benchmarks for the near-duplicate index and clustering.
//!
//! - `index/query_1m`: one k = 3 query against 1,000,000 fingerprints (900k random, 100k planted
//!   near-duplicates 1–3 bits from earlier ones); half the queries are near-duplicates of stored
//!   fingerprints, half random.
//! - `index/query_1m_blocksB`: the same with the other k = 3 layouts (B = 4 or 6 blocks: 4 or 20
//!   tables; the default is 5 blocks, 10 tables), to check the layout the cost model picks.
//! - `index/query_10k`: the same against an index of 10,000 (a large per-host sample).
//! - `index/linear_scan_10k`: the baseline, a popcount scan over 10,000 fingerprints with the same
//!   queries (same run, so the ratio is meaningful).
//! - `index/insert_10k_empty`: building an index of 10,000 from empty (throughput per element).
//! - `index/replace_at_1m`: remove one + insert one at 1,000,000 (the reservoir's steady state).
//! - `clusters/finish_10k`: clustering a host of 10,000 pages with near-duplicate groups.
//!
//! Run: `cargo bench --bench cluster`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use undust::cluster::{ClusterBuilder, ClusterConfig, PageEvidence, SimhashIndex};

fn flip(fp: u64, rng: &mut SmallRng, bits: u32) -> u64 {
    let mut out = fp;
    while (out ^ fp).count_ones() < bits {
        out ^= 1u64 << rng.random_range(0..64);
    }
    out
}

fn fingerprints(n: usize, rng: &mut SmallRng) -> Vec<u64> {
    let mut fps: Vec<u64> = Vec::with_capacity(n);
    for i in 0..n {
        let fp = if i % 10 == 9 {
            let base = fps[rng.random_range(0..fps.len())];
            let bits = rng.random_range(1..=3);
            flip(base, rng, bits)
        } else {
            rng.random()
        };
        fps.push(fp);
    }
    fps
}

fn queries(stored: &[u64], rng: &mut SmallRng) -> Vec<u64> {
    (0..10_000)
        .map(|i| {
            if i % 2 == 0 {
                let bits = rng.random_range(0..=3);
                flip(stored[rng.random_range(0..stored.len())], rng, bits)
            } else {
                rng.random()
            }
        })
        .collect()
}

fn index_benches(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(42);
    let fps = fingerprints(1_000_000, &mut rng);
    let build = |index: &mut SimhashIndex| {
        for (id, &fp) in fps.iter().enumerate() {
            index.insert(id as u32, fp);
        }
        eprintln!(
            "index: {} fingerprints, {} blocks, {} tables, {} bytes ({:.0} bytes/fingerprint)",
            index.len(),
            index.layout().blocks,
            index.layout().tables(),
            index.memory_bytes(),
            index.memory_bytes() as f64 / index.len() as f64
        );
    };
    let qs = queries(&fps, &mut rng);
    let mut group = c.benchmark_group("index");
    let mut out = Vec::new();
    // The other k = 3 layouts, for the record (the default is chosen by the cost model).
    for blocks in [4u32, 6] {
        let Ok(mut alt) = SimhashIndex::with_blocks(3, blocks) else {
            continue;
        };
        build(&mut alt);
        let mut i = 0usize;
        group.bench_function(format!("query_1m_blocks{blocks}"), |b| {
            b.iter(|| {
                i = (i + 1) % qs.len();
                alt.query(black_box(qs[i]), &mut out);
                black_box(out.len())
            })
        });
    }
    let mut index = SimhashIndex::new(3);
    build(&mut index);
    let mut i = 0usize;
    group.bench_function("query_1m", |b| {
        b.iter(|| {
            i = (i + 1) % qs.len();
            index.query(black_box(qs[i]), &mut out);
            black_box(out.len())
        })
    });
    let small = &fps[..10_000];
    let mut small_index = SimhashIndex::new(3);
    for (id, &fp) in small.iter().enumerate() {
        small_index.insert(id as u32, fp);
    }
    let mut m = 0usize;
    group.bench_function("query_10k", |b| {
        b.iter(|| {
            m = (m + 1) % qs.len();
            small_index.query(black_box(qs[m]), &mut out);
            black_box(out.len())
        })
    });
    let mut j = 0usize;
    group.bench_function("linear_scan_10k", |b| {
        b.iter(|| {
            j = (j + 1) % qs.len();
            let q = black_box(qs[j]);
            out.clear();
            for (id, &fp) in small.iter().enumerate() {
                if (fp ^ q).count_ones() <= 3 {
                    out.push(id as u32);
                }
            }
            black_box(out.len())
        })
    });
    group.throughput(Throughput::Elements(10_000));
    group.bench_function("insert_10k_empty", |b| {
        b.iter(|| {
            let mut fresh = SimhashIndex::new(3);
            for (id, &fp) in small.iter().enumerate() {
                fresh.insert(id as u32, fp);
            }
            black_box(fresh.len())
        })
    });
    group.throughput(Throughput::Elements(1));
    let mut next_id = fps.len() as u32;
    let mut victim = 0u32;
    group.bench_function("replace_at_1m", |b| {
        b.iter(|| {
            index.remove(victim);
            index.insert(next_id, black_box(qs[next_id as usize % qs.len()]));
            victim = next_id;
            next_id += 1;
        })
    });
    group.finish();
}

fn cluster_benches(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(7);
    let mut pages = Vec::new();
    for g in 0..2_000 {
        let centre: u64 = rng.random();
        for v in 0..5 {
            let bits = rng.random_range(0..=2);
            let simhash = flip(centre, &mut rng, bits);
            let ev = PageEvidence {
                simhash,
                exact: simhash ^ 0xabc,
                strong: v != 4,
            };
            pages.push((format!("https://bench.test/item/{g}?variant={v}"), ev));
        }
    }
    c.bench_function("clusters/finish_10k", |b| {
        b.iter_batched(
            || {
                let mut builder = ClusterBuilder::new(ClusterConfig::default());
                for (url, ev) in &pages {
                    builder.add_page(url, *ev);
                }
                builder
            },
            |builder| black_box(builder.finish().clusters().len()),
            BatchSize::LargeInput,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(4));
    targets = index_benches, cluster_benches
}
criterion_main!(benches);
