//! The memory budgets count what template models and kept pages really hold: the accounted bytes
//! ([`TemplateModel::held_bytes`], [`EvidencePage::held_bytes`]) are checked against the bytes a
//! heap profiler sees them take.
//!
//! Its own test binary, because a heap profiler is process-wide: the one test here measures
//! with nothing else allocating beside it. dhat's testing mode counts the live bytes and blocks
//! the program asked for; the system allocator (glibc malloc) takes a little more per block (an
//! 8-byte header, 16-byte granularity), which [`system_bytes`] bounds from those two counts, so
//! no test code needs `unsafe`.

#![forbid(unsafe_code)]

use undust_core::content::{self, ContentConfig, TemplateModel};
use undust_core::pipeline::EvidencePage;

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

/// Live heap: (bytes asked for, blocks).
fn live() -> (u64, u64) {
    let stats = dhat::HeapStats::get();
    (stats.curr_bytes as u64, stats.curr_blocks as u64)
}

/// What the system allocator holds for `bytes` asked for in `blocks` blocks, as a range: each
/// block takes its size plus an 8-byte header, rounded up to 16 bytes (between 8 and 23 bytes
/// more), and at least 32 bytes.
fn system_bytes(before: (u64, u64), after: (u64, u64)) -> (usize, usize) {
    let bytes = after.0.saturating_sub(before.0);
    let blocks = after.1.saturating_sub(before.1);
    (
        (bytes + 8 * blocks) as usize,
        (bytes + 23 * blocks).max(32 * blocks) as usize,
    )
}

/// A page of a small site: navigation, a sidebar with a rotating line, an article, a footer with
/// a timestamp (what template models see on every host).
fn page(i: usize) -> String {
    let nav: String = (0..12)
        .map(|k| format!("<a href=\"/section/{k}\">Section {k}</a>"))
        .collect();
    let article: String = (0..6)
        .map(|p| {
            format!(
                "<p>Article {i} paragraph {p}: {} the rest of the story goes on with words.</p>",
                "word ".repeat(10 + (i * 7 + p) % 30)
            )
        })
        .collect();
    let related: String = (0..8)
        .map(|k| format!("<li><a href=\"/story/{}\">Story {}</a></li>", i + k, i + k))
        .collect();
    format!(
        "<html><head><title>Story {i}</title></head><body><nav>{nav}</nav><div><aside>\
         <p>Sponsored line number {} of the rotation.</p><ul>{related}</ul></aside>\
         <article>{article}</article></div><footer>Generated at {} by the site.</footer>\
         </body></html>",
        i % 20,
        1_700_000_000 + i
    )
}

fn within(accounted: usize, (low, high): (usize, usize), what: &str) {
    let (low_ratio, high_ratio) = (
        accounted as f64 / high as f64,
        accounted as f64 / low as f64,
    );
    assert!(
        low_ratio <= 1.25 && high_ratio >= 0.8,
        "{what}: accounted {accounted} bytes, the allocator holds {low} to {high} \
         ({low_ratio:.2}x to {high_ratio:.2}x)"
    );
}

#[test]
fn accounted_bytes_of_template_models_and_kept_pages_match_the_heap() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let config = ContentConfig {
        template_connectivity: true,
        ..ContentConfig::default()
    };
    for pages in [3usize, 40, 600] {
        let analyses: Vec<_> = (0..pages)
            .map(|i| content::analyze(page(i).as_bytes(), &config))
            .collect();
        let before = live();
        let mut model = TemplateModel::new(&config);
        for (i, analysis) in analyses.iter().enumerate() {
            model.observe_linked(&format!("http://news.example/story/{i}"), analysis);
        }
        let measured = system_bytes(before, live());
        within(
            model.held_bytes(),
            measured,
            &format!("template model of {pages} pages"),
        );
        drop(model);

        // A kept page: its heap parts (the struct itself sits in the reservoir's vector).
        let kept = EvidencePage {
            url: format!("http://news.example/story/{pages}"),
            final_url: None,
            rel_canonical: Some("http://news.example/story/canonical".into()),
            digest: analyses[pages - 1].digest.clone(),
            shortlink: None,
        };
        let before = live();
        let copy = kept.clone();
        let measured = system_bytes(before, live());
        within(
            copy.held_bytes() - std::mem::size_of::<EvidencePage>(),
            measured,
            "kept page",
        );
    }
}
