//! Static normalization (owned by the static-canonicalization work; being written).
