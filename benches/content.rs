//! Content-stage throughput: HTML → template-stripped simhash, against the raw lol_html
//! tokenize/parse pass alone as the same-run baseline.
//!
//! Input: the Zyte benchmark and Readability pages when `../shared/testdata` is present (as on the
//! team machines), else generated pages. `cargo bench --bench content`.

use std::io::Read;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use undust::content::{analyze, fingerprint, ContentConfig, TemplateModel};

#[path = "support/raw_parse.rs"]
mod raw_parse;
use raw_parse::raw_parse;

fn pages() -> Vec<Vec<u8>> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = ["../shared/testdata", "../../shared/testdata"]
        .iter()
        .map(|r| base.join(r))
        .find(|p| p.is_dir());
    let mut out = Vec::new();
    if let Some(root) = root {
        if let Ok(dir) = std::fs::read_dir(root.join("article-extraction-benchmark/html")) {
            for e in dir.flatten() {
                let mut html = Vec::new();
                if let Ok(f) = std::fs::File::open(e.path()) {
                    if flate2::read::GzDecoder::new(f)
                        .read_to_end(&mut html)
                        .is_ok()
                    {
                        out.push(html);
                    }
                }
            }
        }
        if let Ok(dir) = std::fs::read_dir(root.join("readability-test-pages/test-pages")) {
            for e in dir.flatten() {
                if let Ok(html) = std::fs::read(e.path().join("source.html")) {
                    out.push(html);
                }
            }
        }
    }
    if out.is_empty() {
        eprintln!("../shared/testdata not found: benchmarking generated pages");
        for i in 0..200 {
            let nav: String = (0..40)
                .map(|j| format!("<li><a href=\"/s{j}\">Section {j}</a></li>"))
                .collect();
            let body: String = (0..60)
                .map(|p| {
                    let words: String = (0..40)
                        .map(|w| format!("word{} ", (w * 31 + p * 7 + i) % 997))
                        .collect();
                    format!("<p>{words}<a href=\"/x{p}\">link</a></p>")
                })
                .collect();
            out.push(
                format!(
                    "<html><head><script>var x = {i};</script><style>p{{}}</style></head><body>\
                     <nav><ul>{nav}</ul></nav><article>{body}</article><footer>Footer</footer></body></html>"
                )
                .into_bytes(),
            );
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let pages = pages();
    let bytes: usize = pages.iter().map(Vec::len).sum();
    let config = ContentConfig::default();
    // A model that has seen the pages (mature) so fingerprinting pays the template lookups.
    let mut model = TemplateModel::new(&config);
    for p in &pages {
        model.observe(&analyze(p, &config));
    }
    let mut g = c.benchmark_group("content");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.bench_function("raw_parse_lol_html", |b| {
        b.iter(|| pages.iter().map(|p| raw_parse(p)).sum::<usize>())
    });
    g.bench_function("html_to_template_stripped_simhash", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|p| fingerprint(&analyze(p, &config), &model, &config).simhash)
                .fold(0u64, |a, h| a ^ h)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
