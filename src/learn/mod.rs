//! The pattern-tree learner (being written).
