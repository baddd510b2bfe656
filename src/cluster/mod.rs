//! Near-duplicate index and duplicate clusters (being written).
