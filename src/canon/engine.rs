//! Compiled per-host rule engine (being written).
