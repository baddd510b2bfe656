//! The memory budgets count what template models and kept pages really hold: the accounted bytes
//! ([`TemplateModel::held_bytes`], [`EvidencePage::held_bytes`]) are checked against the bytes a
//! counting allocator sees them take.
//!
//! Its own test binary, because a counting allocator is process-wide: the one test here measures
//! with nothing else allocating beside it. The allocator is the only `unsafe` code of the
//! workspace (the `GlobalAlloc` trait is unsafe to implement); the library crates forbid it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use undust_core::content::{self, ContentConfig, TemplateModel};
use undust_core::heap::alloc_bytes;
use undust_core::pipeline::EvidencePage;

/// Counts the bytes of live heap blocks, each rounded as the system allocator takes it.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() {
            LIVE.fetch_add(alloc_bytes(layout.size()), Ordering::Relaxed);
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's block and layout.
        unsafe { System.dealloc(block, layout) };
        LIVE.fetch_sub(alloc_bytes(layout.size()), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's block, layout and size.
        let moved = unsafe { System.realloc(block, layout, new_size) };
        if !moved.is_null() {
            LIVE.fetch_sub(alloc_bytes(layout.size()), Ordering::Relaxed);
            LIVE.fetch_add(alloc_bytes(new_size), Ordering::Relaxed);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
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

fn within(accounted: usize, measured: usize, what: &str) {
    let ratio = accounted as f64 / measured as f64;
    assert!(
        (0.8..=1.25).contains(&ratio),
        "{what}: accounted {accounted} bytes, the allocator holds {measured} ({ratio:.2}x)"
    );
}

#[test]
fn accounted_bytes_of_template_models_and_kept_pages_match_the_heap() {
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
        let measured = live() - before;
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
        };
        let before = live();
        let copy = kept.clone();
        let measured = live() - before;
        within(
            copy.held_bytes() - std::mem::size_of::<EvidencePage>(),
            measured,
            "kept page",
        );
    }
}
