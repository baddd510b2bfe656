//! Reservoir sampler (being written).
