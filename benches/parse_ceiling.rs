//! The ceiling for the offline commands' throughput: read a JSON-lines page file, decode each
//! line's HTML and run the bare `lol_html` pass over it ([`raw_parse`]), on every core, and
//! nothing else (no template model, no fingerprint, no clustering). Timed as a whole process
//! beside `undust clusters` and `undust learn` on the same file, it says how close they come to
//! what parsing alone costs.
//!
//! ```sh
//! cargo build --release --bench parse_ceiling
//! target/release/deps/parse_ceiling-* PAGES.jsonl
//! ```
//!
//! Without a page file (as under `cargo bench`) it says so and does nothing.

use std::io::BufRead;
use std::time::Instant;

use rayon::prelude::*;

#[path = "support/raw_parse.rs"]
mod raw_parse;
use raw_parse::raw_parse;

/// The fields of a page line this pass reads (`html`, or `body` as the readers also accept).
#[derive(serde::Deserialize)]
struct Line {
    #[serde(alias = "body")]
    html: Option<String>,
}

fn main() {
    let Some(path) = std::env::args().skip(1).find(|arg| !arg.starts_with('-')) else {
        eprintln!("parse_ceiling: give a JSON-lines page file (nothing measured)");
        return;
    };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(err) => {
            eprintln!("parse_ceiling: {path}: {err}");
            std::process::exit(1);
        }
    };
    let started = Instant::now();
    let (pages, bytes, seen) = std::io::BufReader::with_capacity(1 << 20, file)
        .split(b'\n')
        .map_while(Result::ok)
        .par_bridge()
        .map(|line| match serde_json::from_slice::<Line>(&line) {
            Ok(Line { html: Some(html) }) => (1usize, line.len(), raw_parse(html.as_bytes())),
            _ => (0, line.len(), 0),
        })
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "parse_ceiling: {pages} pages, {bytes} bytes in {seconds:.3} s: {:.1} MB/s on {} threads \
         ({seen} elements and text bytes)",
        bytes as f64 / seconds / 1e6,
        rayon::current_num_threads()
    );
}
