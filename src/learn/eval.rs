//! The evaluation protocol of Lei et al. (section 3, equations 1-3; section 6.1).
