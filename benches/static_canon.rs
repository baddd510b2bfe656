//! Static canonicalization throughput: `StaticNormalizer::normalize` against a bare
//! `url::Url::parse` of the same URLs in the same run (the floor any WHATWG-based canonicalizer
//! pays).
//!
//! The URL mix is (a) the absolute links found in the third-party test data (`href`/`src` values of
//! the real article pages, and the URLs of the URL test suites) when `../shared/testdata` exists,
//! and (b) generated forum, shop and news URLs with tracking parameters, session ids, fragments
//! and odd percent-encodings at fixed rates from a seeded generator, so the bench also runs
//! without the test data. Run with `cargo bench --bench static_canon`.

use std::collections::HashSet;
use std::fs;
use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use undust::canon::normalize::{StaticConfig, StaticNormalizer};

/// How many generated URLs join the mix.
const GENERATED: usize = 20_000;
/// Cap on URLs taken from the test data (keeps one iteration in the tens of milliseconds).
const MAX_TESTDATA_URLS: usize = 30_000;

fn testdata_dir() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["../shared/testdata", "../../shared/testdata"]
        .iter()
        .map(|rel| root.join(rel))
        .find(|dir| dir.is_dir())
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn read_text(path: &Path) -> Option<String> {
    let bytes = fs::read(path).ok()?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .ok()?;
        Some(text)
    } else {
        String::from_utf8(bytes).ok()
    }
}

/// Absolute http(s) URLs in the test data: attribute values in HTML, string values elsewhere.
fn testdata_urls() -> Vec<String> {
    let Some(dir) = testdata_dir() else {
        eprintln!("static_canon bench: ../shared/testdata not found, generated URLs only");
        return Vec::new();
    };
    let mut files = Vec::new();
    files_under(&dir, &mut files);
    files.sort();
    let mut seen = HashSet::new();
    let mut urls = Vec::new();
    for file in files {
        let name = file.to_string_lossy();
        if !(name.ends_with(".html")
            || name.ends_with(".html.gz")
            || name.ends_with(".json")
            || name.ends_with(".jsonl"))
            || name.contains("clearurls")
        {
            continue;
        }
        let Some(text) = read_text(&file) else {
            continue;
        };
        let mut rest = text.as_str();
        while let Some(at) = rest.find("http") {
            let tail = &rest[at..];
            let end = tail
                .find(['"', '\'', '<', '>', ' ', '\n', '\r', '\t', '\\', ')'])
                .unwrap_or(tail.len());
            let candidate = tail[..end].replace("&amp;", "&");
            rest = &tail[end.max(4)..];
            if (candidate.starts_with("http://") || candidate.starts_with("https://"))
                && candidate.len() > 10
                && seen.insert(candidate.clone())
            {
                urls.push(candidate);
                if urls.len() >= MAX_TESTDATA_URLS {
                    return urls;
                }
            }
        }
    }
    urls
}

/// Seeded generator of forum, shop and news URLs as a crawler discovers them.
fn generated_urls(count: usize) -> Vec<String> {
    const WORDS: &[&str] = &[
        "news", "sport", "world", "tech", "garden", "kitchen", "shoes", "winter", "review",
        "how-to", "best", "cheap", "2024", "guide", "forum", "thread", "reply", "electric",
    ];
    const TRACKING: &[&str] = &[
        "utm_source=newsletter",
        "utm_medium=email",
        "utm_campaign=spring_sale",
        "fbclid=IwAR2xYz0AbCdEfGhIjKlMnOpQrStUvWxYz",
        "gclid=Cj0KCQiA0fr_BRDaARIsAABw4EuJbLz",
        "mc_eid=4f1d2c3b4a",
        "_ga=2.1234567.890123.1600000000-1234",
        "msclkid=9a8b7c6d5e4f",
    ];
    const SESSIONS: &[&str] = &[
        "PHPSESSID=9682993c8daa2c5497996114facdc805",
        "sid=0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "jsessionid=1E6FEC0D14D044541DD84D2D013D29ED",
    ];
    let mut rng = SmallRng::seed_from_u64(0x5eed_ca70);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let word = |rng: &mut SmallRng| WORDS[rng.random_range(0..WORDS.len())];
        let site = i % 50;
        let mut url = match rng.random_range(0..3) {
            0 => format!(
                "https://forum{site}.example.com/viewtopic.php?t={}&start={}",
                rng.random_range(1..200_000),
                rng.random_range(0..10) * 25
            ),
            1 => format!(
                "https://www.shop{site}.example/{}/{}-{}.html?color={}&size={}",
                word(&mut rng),
                word(&mut rng),
                rng.random_range(1000..99_999),
                word(&mut rng),
                rng.random_range(36..46)
            ),
            _ => format!(
                "https://news{site}.example.org/{}/{}/{}-{}-{}",
                rng.random_range(2015..2026),
                word(&mut rng),
                word(&mut rng),
                word(&mut rng),
                rng.random_range(100_000..999_999)
            ),
        };
        // Rates chosen to look like a frontier's discovered links: most are clean.
        if rng.random_bool(0.25) {
            let sep = if url.contains('?') { '&' } else { '?' };
            url.push(sep);
            let n = rng.random_range(1..4);
            let picked: Vec<&str> = (0..n)
                .map(|_| TRACKING[rng.random_range(0..TRACKING.len())])
                .collect();
            url.push_str(&picked.join("&"));
        }
        if rng.random_bool(0.05) {
            let session = SESSIONS[rng.random_range(0..SESSIONS.len())];
            if session.starts_with("jsessionid") {
                let at = url.find('?').unwrap_or(url.len());
                url.insert_str(at, &format!(";{session}"));
            } else {
                let sep = if url.contains('?') { '&' } else { '?' };
                url.push(sep);
                url.push_str(session);
            }
        }
        if rng.random_bool(0.05) {
            url = url
                .replacen("example", "Example", 1)
                .replacen("/", "/%7e", 4);
        }
        if rng.random_bool(0.10) {
            url.push_str("#comments");
        }
        out.push(url);
    }
    out
}

/// Rounds of the paired measurement.
const PAIRED_ROUNDS: usize = 15;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Alternates a bare-parse round and a normalize round over the same URLs and prints the median
/// per-round ratio: on a machine shared with other jobs, load changes between criterion's
/// back-to-back groups; within a pair of rounds it mostly cancels out.
fn paired_ratio(urls: &[String], normalizer: &StaticNormalizer, name: &str) {
    let mut ratios = Vec::with_capacity(PAIRED_ROUNDS);
    let mut parse_rates = Vec::with_capacity(PAIRED_ROUNDS);
    let mut normalize_rates = Vec::with_capacity(PAIRED_ROUNDS);
    for _ in 0..PAIRED_ROUNDS {
        let start = Instant::now();
        let mut ok = 0usize;
        for u in urls {
            ok += usize::from(url::Url::parse(black_box(u)).is_ok());
        }
        let parse = start.elapsed().as_secs_f64();
        let start = Instant::now();
        for u in urls {
            ok += usize::from(normalizer.normalize(black_box(u)).is_ok());
        }
        let normalize = start.elapsed().as_secs_f64();
        black_box(ok);
        ratios.push(normalize / parse);
        parse_rates.push(urls.len() as f64 / parse);
        normalize_rates.push(urls.len() as f64 / normalize);
    }
    eprintln!(
        "static_canon paired {name}: median {:.0} URLs/s vs url::Url::parse {:.0} URLs/s, \
         median ratio {:.2}x (min {:.2}x, max {:.2}x) over {PAIRED_ROUNDS} rounds",
        median(&mut normalize_rates),
        median(&mut parse_rates),
        median(&mut ratios.clone()),
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(0.0, f64::max),
    );
}

fn bench(c: &mut Criterion) {
    let mut urls = testdata_urls();
    let from_testdata = urls.len();
    urls.extend(generated_urls(GENERATED));
    let default = StaticNormalizer::new(StaticConfig::default()).expect("default config is valid");
    let aggressive = StaticNormalizer::new(StaticConfig {
        sort_query: true,
        strip_www: true,
        ..StaticConfig::default()
    })
    .expect("aggressive config is valid");
    let accepted = urls.iter().filter(|u| default.normalize(u).is_ok()).count();
    let changed = urls
        .iter()
        .filter(|u| {
            default
                .normalize(u)
                .is_ok_and(|n| url::Url::parse(u).is_ok_and(|p| p != n))
        })
        .count();
    let mean_len = urls.iter().map(String::len).sum::<usize>() as f64 / urls.len() as f64;
    eprintln!(
        "static_canon bench: {} URLs ({from_testdata} from testdata, {GENERATED} generated), \
         mean length {mean_len:.0} bytes, {accepted} accepted, {changed} changed beyond parsing",
        urls.len()
    );

    let generated = &urls[from_testdata..];
    paired_ratio(&urls, &default, "normalize_default (whole mix)");
    paired_ratio(&urls, &aggressive, "normalize_sort_www (whole mix)");
    paired_ratio(generated, &default, "normalize_default (generated only)");

    let mut group = c.benchmark_group("static_canon");
    group.throughput(Throughput::Elements(urls.len() as u64));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("url_parse_baseline", |b| {
        b.iter(|| {
            let mut ok = 0usize;
            for u in &urls {
                ok += usize::from(url::Url::parse(black_box(u)).is_ok());
            }
            ok
        })
    });
    group.bench_function("normalize_default", |b| {
        b.iter(|| {
            let mut ok = 0usize;
            for u in &urls {
                ok += usize::from(default.normalize(black_box(u)).is_ok());
            }
            ok
        })
    });
    group.bench_function("normalize_sort_www", |b| {
        b.iter(|| {
            let mut ok = 0usize;
            for u in &urls {
                ok += usize::from(aggressive.normalize(black_box(u)).is_ok());
            }
            ok
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
