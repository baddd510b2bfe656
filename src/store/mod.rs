//! The embedded store (being written).
