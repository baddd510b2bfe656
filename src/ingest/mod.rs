//! Pages in: readers for JSON lines and WARC, and per-host sampling (being written).
