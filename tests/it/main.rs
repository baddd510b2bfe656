//! All integration tests compile into this one binary (faster builds than one binary per file).
//! One module per area; shared helpers live in `support`.
mod corpus;
mod learn;
mod static_canon;
