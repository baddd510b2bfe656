//! Learned rule data model and rule files (being written).
