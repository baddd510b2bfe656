//! Content fingerprints: pagelets, templates, simhash (being written).
