//! Synthetic multi-site crawls (being written).
