//! Page readers (being written).
