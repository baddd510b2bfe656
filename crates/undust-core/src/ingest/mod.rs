//! Pages in: readers for JSON lines and WARC crawl dumps, and per-host reservoir sampling.
pub mod pages;
pub mod sample;
