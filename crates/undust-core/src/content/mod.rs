//! Content fingerprints: what a page says once its site's template is removed.
//!
//! Pipeline (pure, no I/O):
//!
//! 1. [`analyze`] parses a page's HTML in one streaming pass into pagelets (Bar-Yossef &
//!    Rajagopalan, WWW 2002, Definition 2) and summarizes each as a [`PageletDigest`]: a shingle
//!    identity, token counts and its contribution to the simhash. See [`pagelet`].
//! 2. A per-host [`TemplateModel`] observes pages incrementally and calls template the pagelet
//!    identities recurring on a large share of the host's pages (the paper's local algorithm,
//!    bounded with heavy-hitters counting; the global algorithm's connectivity test is an option),
//!    and, inside pagelets, the text blocks recurring beside different content (the paper's
//!    future-work direction: link-free sidebars and rotating promo lines share a pagelet with the
//!    article). Identities mask numbers. See [`template`].
//! 3. [`fingerprint`] keeps the non-template, non-boilerplate pagelets minus their template
//!    blocks and returns a 64-bit simhash, an exact hash and a [`Strength`]. See
//!    [`fingerprint`](mod@fingerprint).
//!
//! The sidecar keeps a [`PageDigest`] per sampled page (not the body) and re-fingerprints it with
//! [`fingerprint_digest`] when the host's template model has matured. The offline pipeline uses
//! [`fingerprint_host`] (learn the template from all pages of a host, then fingerprint each).

pub mod fingerprint;
mod html_scan;
pub mod pagelet;
pub mod simhash;
mod space_saving;
pub mod template;
pub mod tokens;

use serde::{Deserialize, Serialize};

pub use fingerprint::{
    fingerprint, fingerprint_digest, fingerprint_host, fingerprint_host_linked, Fingerprint,
    HostFingerprints, Strength,
};
pub use pagelet::{
    analyze, BlockDigest, PageAnalysis, PageDigest, PageletDigest, MAX_CANONICAL_BYTES,
};
pub use simhash::{hamming, simhash_text};
pub use template::TemplateModel;

/// Invalid content configuration.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ContentError {
    /// A share or density outside `0..=1`.
    #[error("{name} must be between 0 and 1, got {value}")]
    OutOfUnitRange {
        /// The setting's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A size or count that must be positive.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
}

/// Every knob of the content stage. `Default` gives the documented defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContentConfig {
    /// `k` of the pagelet definition: an element with a child holding at least `k` links is
    /// split (default 3, as in the paper).
    pub pagelet_links: u32,
    /// HTML bytes parsed per page; the rest is ignored (default 4 MiB).
    pub max_bytes: usize,
    /// Tokens kept per page (default 200 000).
    pub max_tokens: usize,
    /// Links kept per page for the template model's connectivity test (default 1000).
    pub max_links: usize,
    /// Pagelets kept per page, the ones with most text (default 64); bounds a [`PageDigest`].
    pub max_pagelets: usize,
    /// Text blocks kept per page, the ones with most text (default 128); bounds a [`PageDigest`].
    pub max_blocks: usize,
    /// Share of a host's pages that must carry a pagelet for it to be template (default 0.4).
    pub template_min_share: f64,
    /// Pages a host's model must have seen before anything is template (default 3).
    pub template_min_pages: u64,
    /// Pagelet identities tracked per host by the heavy-hitters counter (default 1024).
    pub template_capacity: usize,
    /// Share of a host's pages that must carry a text block for it to be template, together with
    /// evidence that it sits beside different content (default 0.05; see [`template`]).
    pub block_template_min_share: f64,
    /// Text-block identities tracked per host by the heavy-hitters counter (default 2048).
    pub block_template_capacity: usize,
    /// Also require template owners to be connected in the host's link graph (default false;
    /// needs pages observed with their URL, see [`TemplateModel::observe_linked`]).
    pub template_connectivity: bool,
    /// Boilerplate cue: pagelets with a higher link density are dropped (default 0.33).
    pub boilerplate_max_link_density: f64,
    /// Boilerplate cue: pagelets with fewer tokens are dropped (default 20).
    pub boilerplate_min_tokens: u32,
    /// Boilerplate cue: pagelets with fewer tokens than this share of the largest textual pagelet
    /// are dropped (default 0.2).
    pub boilerplate_min_share_of_largest: f64,
    /// Content below this many tokens gives a [`Strength::Weak`] fingerprint (default 40).
    pub weak_tokens: u32,
}

impl Default for ContentConfig {
    fn default() -> Self {
        ContentConfig {
            pagelet_links: 3,
            max_bytes: 4 << 20,
            max_tokens: 200_000,
            max_links: 1000,
            max_pagelets: 64,
            max_blocks: 128,
            template_min_share: 0.4,
            template_min_pages: 3,
            template_capacity: 1024,
            block_template_min_share: 0.05,
            block_template_capacity: 2048,
            template_connectivity: false,
            boilerplate_max_link_density: 0.33,
            boilerplate_min_tokens: 20,
            boilerplate_min_share_of_largest: 0.2,
            weak_tokens: 40,
        }
    }
}

impl ContentConfig {
    /// Checks ranges (shares in `0..=1`, positive sizes).
    pub fn validate(&self) -> Result<(), ContentError> {
        for (name, value) in [
            ("template_min_share", self.template_min_share),
            ("block_template_min_share", self.block_template_min_share),
            (
                "boilerplate_max_link_density",
                self.boilerplate_max_link_density,
            ),
            (
                "boilerplate_min_share_of_largest",
                self.boilerplate_min_share_of_largest,
            ),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(ContentError::OutOfUnitRange { name, value });
            }
        }
        for (name, value) in [
            ("pagelet_links", self.pagelet_links as usize),
            ("max_bytes", self.max_bytes),
            ("max_tokens", self.max_tokens),
            ("max_pagelets", self.max_pagelets),
            ("template_capacity", self.template_capacity),
            ("block_template_capacity", self.block_template_capacity),
        ] {
            if value == 0 {
                return Err(ContentError::Zero(name));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_rejected() {
        assert_eq!(ContentConfig::default().validate(), Ok(()));
        let bad = ContentConfig {
            template_min_share: 1.5,
            ..ContentConfig::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(ContentError::OutOfUnitRange {
                name: "template_min_share",
                ..
            })
        ));
        let zero = ContentConfig {
            max_pagelets: 0,
            ..ContentConfig::default()
        };
        assert_eq!(zero.validate(), Err(ContentError::Zero("max_pagelets")));
        // Partial configs deserialize over the defaults.
        let c: ContentConfig = serde_json::from_str(r#"{"pagelet_links": 5}"#).expect("parses");
        assert_eq!(c.pagelet_links, 5);
        assert_eq!(c.weak_tokens, 40);
    }
}
