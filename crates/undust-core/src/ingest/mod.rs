//! Pages in: readers for crawl dumps (JSON lines, WARC, ARC) and crawl indexes (CDX, CDXJ,
//! Heritrix crawl.log), and per-host reservoir sampling.
pub mod index;
pub mod pages;
pub mod sample;
