//! Seen-set: check-and-insert throughput, and memory per entry (RSS delta, printed once).
//!
//! `cargo bench --bench seen`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use undust::canon::seen::{key_of, SeenSet};
use undust::config::{SeenSetConfig, SeenSetMode};

fn config(mode: SeenSetMode, max_entries: u64) -> SeenSetConfig {
    SeenSetConfig {
        mode,
        max_entries,
        bloom_fp_rate: 0.0001,
        first_occurrence_cache: 0,
    }
}

/// Resident set size of this process, in bytes (Linux).
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn memory_per_entry() {
    const ENTRIES: u64 = 4_000_000;
    for mode in [SeenSetMode::Exact, SeenSetMode::Bloom] {
        let before = rss_bytes().unwrap_or(0);
        let seen = SeenSet::new(&config(mode, ENTRIES * 2));
        for i in 0..ENTRIES {
            seen.check(
                key_of(&format!("https://host{}.example/page/{i}", i % 1000)),
                true,
                None,
            );
        }
        let after = rss_bytes().unwrap_or(0);
        println!(
            "seen-set {:?}: {ENTRIES} entries, RSS +{} MB = {:.1} bytes per entry",
            mode,
            (after.saturating_sub(before)) / 1_000_000,
            after.saturating_sub(before) as f64 / ENTRIES as f64
        );
        black_box(&seen);
    }
}

fn bench(c: &mut Criterion) {
    memory_per_entry();
    let keys: Vec<u64> = (0..100_000u64)
        .map(|i| key_of(&format!("https://example.com/item/{i}")))
        .collect();
    let mut group = c.benchmark_group("seen_set");
    group.throughput(Throughput::Elements(keys.len() as u64));
    for mode in [SeenSetMode::Exact, SeenSetMode::Bloom] {
        group.bench_function(format!("{mode:?}/insert_100k_new"), |b| {
            b.iter_batched(
                || SeenSet::new(&config(mode, 10_000_000)),
                |seen| {
                    for &key in &keys {
                        black_box(seen.check(key, true, None));
                    }
                    seen
                },
                BatchSize::LargeInput,
            )
        });
        let warm = SeenSet::new(&config(mode, 10_000_000));
        for &key in &keys {
            warm.check(key, true, None);
        }
        group.bench_function(format!("{mode:?}/lookup_100k_seen"), |b| {
            b.iter(|| {
                for &key in &keys {
                    black_box(warm.check(key, true, None));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
