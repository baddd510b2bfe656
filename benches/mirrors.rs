//! Mirror detection at scale: candidate generation and confirmation on 100,000 synthetic hosts.
//!
//! 100,000 origins: 95,000 unrelated sites and 2,500 mirror pairs (the second of a pair holding
//! 80% of the first's paths with the same content). Each origin has 40 URLs (paths drawn from a
//! 2,000-word vocabulary, so unrelated sites share words, shapes and a few common paths), 10
//! fetched pages with content marks, an IPv4 address (a fifth of the hosts on shared-hosting
//! addresses of up to 50 sites) and out-links to 5 of 1,000 popular hosts. Peak resident memory
//! (VmHWM) is printed after building the summaries and after detection.
//!
//! `cargo bench --bench mirrors`

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use criterion::{criterion_group, criterion_main, Criterion};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use undust::mirrors::{
    detect, rank_technique, ContentMark, HostSummaries, HostSummary, MirrorConfig, Technique,
};

const HOSTS: usize = 100_000;
const PAIRS: usize = 2_500;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn site(rng: &mut SmallRng) -> Vec<(String, u64)> {
    let mut paths = vec![
        ("/".to_owned(), rng.random()),
        ("/robots.txt".to_owned(), rng.random()),
    ];
    for i in 0..38 {
        let a: u32 = rng.random_range(0..2_000);
        let b: u32 = rng.random_range(0..2_000);
        paths.push((
            format!("/w{a}/w{b}-{}.html", rng.random_range(0..10_000) + i),
            rng.random(),
        ));
    }
    paths
}

fn summary(name: &str, ip: IpAddr, paths: &[(String, u64)], rng: &mut SmallRng) -> HostSummary {
    let mut h = HostSummary::new(&format!("http://{name}"), name);
    h.ip = Some(ip);
    h.urls_seen = paths.len() as u64;
    for (i, (p, content)) in paths.iter().enumerate() {
        h.paths.insert(p.clone());
        if i % 4 == 0 {
            let page = h.pages.entry(p.clone()).or_default();
            page.marks.push(ContentMark {
                exact: *content,
                simhash: Some(*content),
                strong: true,
            });
        }
    }
    for _ in 0..5 {
        *h.link_hosts
            .entry(format!("popular{}.com", rng.random_range(0..1_000)))
            .or_default() += 1;
    }
    h
}

fn corpus() -> HostSummaries {
    let mut rng = SmallRng::seed_from_u64(12);
    let mut s = HostSummaries::default();
    let ip = |rng: &mut SmallRng| -> IpAddr {
        if rng.random_bool(0.2) {
            IpAddr::V4(Ipv4Addr::new(10, 200, 0, rng.random_range(0..200)))
        } else {
            IpAddr::V4(Ipv4Addr::from(rng.random::<u32>()))
        }
    };
    for p in 0..PAIRS {
        let paths = site(&mut rng);
        let address = ip(&mut rng);
        s.insert(summary(
            &format!("www.site{p}.com"),
            address,
            &paths,
            &mut rng,
        ));
        let copy = &paths[..paths.len() * 8 / 10];
        s.insert(summary(&format!("site{p}.com"), address, copy, &mut rng));
    }
    for u in 0..HOSTS - 2 * PAIRS {
        let paths = site(&mut rng);
        let address = ip(&mut rng);
        s.insert(summary(
            &format!("www.other{u}.net"),
            address,
            &paths,
            &mut rng,
        ));
    }
    s
}

fn bench(c: &mut Criterion) {
    let s = corpus();
    println!(
        "mirrors bench: {} hosts built, peak RSS {:.0} MiB",
        s.len(),
        peak_rss_mib()
    );
    let config = MirrorConfig::default();
    let detection = detect(&s, &config);
    let found = detection
        .confirmed
        .iter()
        .filter(|c| {
            let (a, b) = (
                &s.hosts()[c.alignment.a as usize].host,
                &s.hosts()[c.alignment.b as usize].host,
            );
            a.trim_start_matches("www.") == b.trim_start_matches("www.")
        })
        .count();
    println!(
        "mirrors bench: {} alignments proposed, {} confirmed ({found} true of {PAIRS}), peak RSS {:.0} MiB",
        detection.proposed,
        detection.confirmed.len(),
        peak_rss_mib()
    );
    let mut group = c.benchmark_group("mirrors_100k_hosts");
    group.sample_size(10);
    for t in [
        Technique::Ip4,
        Technique::Hosts,
        Technique::Paths,
        Technique::Prefix,
        Technique::Content,
    ] {
        group.bench_function(t.name(), |b| {
            b.iter(|| black_box(rank_technique(s.hosts(), t, &config).len()))
        });
    }
    group.bench_function("detect", |b| {
        b.iter(|| black_box(detect(&s, &config).sets.len()))
    });
    group.finish();
    println!(
        "mirrors bench: peak RSS at the end {:.0} MiB",
        peak_rss_mib()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
