//! The seen-set (being written).
