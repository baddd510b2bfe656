//! Pages in: readers for crawl dumps (JSON lines, WARC, ARC, WACZ) and crawl indexes (CDX, CDXJ,
//! a CDX server's JSON, Heritrix crawl.log), and per-host reservoir sampling.
pub mod index;
pub mod pages;
pub mod sample;
pub mod wacz;
