//! Tracking and session parameter lists (being written).
