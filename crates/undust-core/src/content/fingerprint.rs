//! Page fingerprints: the simhash and exact hash of a page's content once its template and
//! boilerplate are removed.
//!
//! # Which pagelets count
//!
//! 1. Pagelets the host's [`TemplateModel`] calls template are removed (none while the model has
//!    seen fewer than `template_min_pages` pages). From the others, the text blocks the model
//!    calls template ([`TemplateModel::is_template_block`]) are subtracted: their simhash vectors,
//!    tokens and link tokens (a block's vector is exactly its part of the pagelet's, since
//!    features do not cross block boundaries; pagelets of more than ~16 000 tokens are quantized
//!    and the subtraction is then approximate). The rest of this list sees the reduced pagelets.
//! 2. Boilerplate cues, the fallback that makes a lone page (1–2 pages of a host) yield mostly its
//!    main text, and that also drops per-page boilerplate a template model cannot see (related
//!    links, tag lists): a pagelet is kept when its link density (link-text tokens / tokens) is at
//!    most [`ContentConfig::boilerplate_max_link_density`] (default 0.33) and it has at least
//!    [`ContentConfig::boilerplate_min_tokens`] tokens (default 20) and at least
//!    [`ContentConfig::boilerplate_min_share_of_largest`] (default 0.2) of the tokens of the largest
//!    such pagelet (a 15-word ad or copyright line beside a 300-word article goes; the paragraphs
//!    of an article split into pagelets by their inline links stay).
//! 3. If what the cues keep is less than [`ContentConfig::weak_tokens`], the cues are dropped and
//!    every non-template pagelet counts (listing and index pages are mostly links, and their links
//!    are their content).
//!
//! The simhash is the sign of the sum of the kept pagelets' simhash vectors, exactly the simhash of
//! their features (see [`super::simhash`]); the exact hash is the xxh3 of the kept pagelets'
//! exact hashes in document order, where a pagelet that lost template blocks contributes the hash
//! of its reduced vector and token count instead (its token sequence is not kept).
//!
//! # Strength
//!
//! A page whose kept content has fewer than [`ContentConfig::weak_tokens`] tokens (default 40:
//! soft-404s, empty listings, login walls, pages that are all template, short posts) is
//! [`Strength::Weak`]: its simhash is no evidence of duplication, and the cluster stage merges
//! Weak pages only on equal `exact` hashes. Which text that hash covers depends on how much of
//! it is the page's own:
//! - kept content of fewer than [`ContentConfig::boilerplate_min_tokens`] tokens (default 20, what
//!   the cues ask of a pagelet before calling it main text): the *whole* page's text, template
//!   included, so such pages merge only when their full text is identical; pages with no text
//!   at all (script-rendered shells) hash their HTML bytes instead, so they merge only when
//!   byte-identical;
//! - more: the kept content, as for a Strong page. A short post's two fetches differ in their
//!   chrome (a rotating "Trending" list, a render time) while its own text is the same; hashing
//!   the whole page left every such pair apart, and the learner read the pair as two pages
//!   (measured on the generated WordPress and Drupal sites learned from their pages: QUALITY.md,
//!   stop 42).

use serde::{Deserialize, Serialize};

use super::simhash::SimhashVector;
use super::{ContentConfig, PageAnalysis, PageDigest, PageletDigest, TemplateModel};
use xxhash_rust::xxh3::xxh3_64;
use xxhash_rust::xxh3::Xxh3;

/// Whether a fingerprint is evidence on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Strength {
    /// Enough content: near-equal simhashes mean near-duplicate pages.
    Strong,
    /// Too little content: only exact equality of the whole page's text means duplicate.
    Weak,
}

/// A page's content fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fingerprint {
    /// 64-bit Charikar simhash of the kept content.
    pub simhash: u64,
    /// Exact hash: of the kept content when Strong, of the whole page's text when Weak.
    pub exact: u64,
    /// Tokens of kept content.
    pub tokens: u32,
    /// Strong or Weak (see the module documentation).
    pub strength: Strength,
}

/// Fingerprints an analysed page against its host's template model.
pub fn fingerprint(
    page: &PageAnalysis,
    template: &TemplateModel,
    config: &ContentConfig,
) -> Fingerprint {
    fingerprint_digest(&page.digest, template, config)
}

/// Fingerprints a kept [`PageDigest`] (same result as [`fingerprint`] on the page it came from).
pub fn fingerprint_digest(
    digest: &PageDigest,
    template: &TemplateModel,
    config: &ContentConfig,
) -> Fingerprint {
    let content: Vec<Part> = digest
        .pagelets
        .iter()
        .filter(|p| !goes_whole_as_template(p, template, config))
        .filter_map(|p| Part::without_template_blocks(p, template))
        .collect();
    let textual = |p: &Part| p.link_density() <= config.boilerplate_max_link_density;
    let largest = content
        .iter()
        .filter(|p| textual(p))
        .map(|p| p.tokens)
        .max()
        .unwrap_or(0);
    let min_tokens = config
        .boilerplate_min_tokens
        .max((config.boilerplate_min_share_of_largest * f64::from(largest)) as u32);
    let cued: Vec<&Part> = content
        .iter()
        .filter(|p| textual(p) && p.tokens >= min_tokens)
        .collect();
    let total = |ps: &[&Part]| ps.iter().map(|p| u64::from(p.tokens)).sum::<u64>();
    let kept = if total(&cued) >= u64::from(config.weak_tokens) {
        cued
    } else {
        content.iter().collect()
    };
    let tokens = total(&kept).min(u64::from(u32::MAX)) as u32;
    let mut vector = SimhashVector::default();
    let mut exact = Xxh3::new();
    for p in &kept {
        vector.add(&p.vector);
        exact.update(&p.exact.to_le_bytes());
    }
    if tokens >= config.weak_tokens {
        Fingerprint {
            simhash: vector.finish(),
            exact: exact.digest(),
            tokens,
            strength: Strength::Strong,
        }
    } else {
        // Too little text for its simhash to be evidence. A page with hardly any text of its own
        // (a soft-404, a login wall, an empty listing) is known by its whole text; one whose own
        // text is as long as the cues ask of main text (a short post) is known by that text, as
        // a Strong page is, so that a rotating widget or a render time in its chrome does not
        // tell two fetches of it apart.
        let exact = if tokens >= config.boilerplate_min_tokens {
            exact.digest()
        } else {
            digest.page_exact
        };
        Fingerprint {
            simhash: vector.finish(),
            exact,
            tokens,
            strength: Strength::Weak,
        }
    }
}

/// Whether a pagelet is removed whole: the model calls its identity template, and its text
/// blocks (when it has any) hold fewer than `boilerplate_min_tokens` tokens the model does not
/// call template.
///
/// A pagelet's identity is a min-hash of its shingles. When one pagelet holds a site-wide sidebar
/// beside an article (an `<aside>` and the `<main>` under one link-poor `<div>`), the pages whose
/// smallest shingles fall in the sidebar share one identity, which the model rightly finds on
/// many pages beside many companions. Removing the pagelet whole took the article with it
/// (measured: a popular post's pages kept no text at all, on one of the generated WordPress
/// sites). Its blocks say which part is the template: the template blocks are subtracted
/// ([`Part::without_template_blocks`]) and the article stays.
fn goes_whole_as_template(
    p: &PageletDigest,
    template: &TemplateModel,
    config: &ContentConfig,
) -> bool {
    if !template.is_template(p.identity) {
        return false;
    }
    let own: u32 = p
        .blocks
        .iter()
        .filter(|b| !template.is_template_block(b.identity))
        .map(|b| b.tokens)
        .sum();
    own < config.boilerplate_min_tokens
}

/// A non-template pagelet with its template blocks subtracted.
struct Part {
    tokens: u32,
    link_tokens: u32,
    vector: [i32; 64],
    exact: u64,
}

impl Part {
    /// `None` when nothing is left.
    fn without_template_blocks(p: &PageletDigest, template: &TemplateModel) -> Option<Part> {
        let mut vector = [0i32; 64];
        for (slot, &x) in vector.iter_mut().zip(&p.vector) {
            *slot = i32::from(x);
        }
        let (mut tokens, mut link_tokens, mut removed) = (p.tokens, p.link_tokens, false);
        for b in p
            .blocks
            .iter()
            .filter(|b| template.is_template_block(b.identity))
        {
            for (slot, &x) in vector.iter_mut().zip(&b.vector) {
                *slot -= i32::from(x);
            }
            tokens = tokens.saturating_sub(b.tokens);
            link_tokens = link_tokens.saturating_sub(b.link_tokens);
            removed = true;
        }
        if tokens == 0 {
            return None;
        }
        let exact = if removed {
            let mut bytes = [0u8; 4 * 65];
            for (chunk, x) in bytes
                .chunks_exact_mut(4)
                .zip(vector.iter().chain([&(tokens as i32)]))
            {
                chunk.copy_from_slice(&x.to_le_bytes());
            }
            xxh3_64(&bytes)
        } else {
            p.exact
        };
        Some(Part {
            tokens,
            link_tokens,
            vector,
            exact,
        })
    }

    fn link_density(&self) -> f64 {
        if self.tokens == 0 {
            0.0
        } else {
            f64::from(self.link_tokens.min(self.tokens)) / f64::from(self.tokens)
        }
    }
}

/// The offline, whole-batch case: all sampled pages of one host.
#[derive(Clone, Debug)]
pub struct HostFingerprints {
    /// The host's template model, learnt from every page.
    pub model: TemplateModel,
    /// One fingerprint per page, in input order.
    pub fingerprints: Vec<Fingerprint>,
}

/// Two passes over one host's pages: learn the template model from all of them, then fingerprint
/// each against it.
pub fn fingerprint_host(pages: &[PageAnalysis], config: &ContentConfig) -> HostFingerprints {
    let mut model = TemplateModel::new(config);
    for p in pages {
        model.observe(p);
    }
    let fingerprints = pages
        .iter()
        .map(|p| fingerprint(p, &model, config))
        .collect();
    HostFingerprints {
        model,
        fingerprints,
    }
}

/// Like [`fingerprint_host`] with page URLs, so that the connectivity test
/// ([`ContentConfig::template_connectivity`]) can use the host's link graph.
pub fn fingerprint_host_linked(
    pages: &[(String, PageAnalysis)],
    config: &ContentConfig,
) -> HostFingerprints {
    let mut model = TemplateModel::new(config);
    for (url, p) in pages {
        model.observe_linked(url, p);
    }
    let fingerprints = pages
        .iter()
        .map(|(_, p)| fingerprint(p, &model, config))
        .collect();
    HostFingerprints {
        model,
        fingerprints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::analyze;

    #[test]
    fn weak_pages_merge_only_on_whole_page_equality() {
        let config = ContentConfig::default();
        let model = TemplateModel::new(&config);
        let a = analyze(
            b"<p>No results found.</p><footer>Example Corp</footer>",
            &config,
        );
        let b = analyze(
            b"<p>No results found.</p><footer>Example Corp</footer>",
            &config,
        );
        let c = analyze(
            b"<p>No results found.</p><footer>Other Corp</footer>",
            &config,
        );
        let (fa, fb, fc) = (
            fingerprint(&a, &model, &config),
            fingerprint(&b, &model, &config),
            fingerprint(&c, &model, &config),
        );
        assert_eq!(fa.strength, Strength::Weak);
        assert_eq!(fa.exact, fb.exact);
        assert_ne!(fa.exact, fc.exact);
    }

    /// Two fetches of a short post (too little text to be Strong) whose chrome differs: another
    /// choice of trending links, another render time. Its own text is the same, so they share
    /// their exact hash; another post does not, and neither do two soft-404s whose chrome
    /// differs (too little text of their own: their whole text decides).
    #[test]
    fn a_short_post_is_known_by_its_own_text_a_soft_404_by_its_whole_text() {
        let config = ContentConfig::default();
        let trending = [
            "Harbour budget passes",
            "Winter market opens",
            "Signal bridge closed",
            "Orchard ledger found",
            "Canvas rocket lands",
            "Garden silver award",
        ];
        let page = |n: usize, own: &str, fetch: usize| {
            let picks: String = (0..3)
                .map(|i| {
                    let t = trending[(n + fetch + 2 * i) % trending.len()];
                    format!("<li><a href=/t{i}>{t}</a></li>")
                })
                .collect();
            let html = format!(
                "<html><body><header><a href=/>Site</a> <a href=/news>News</a> \
                 <a href=/about>About</a></header><aside><ul>{picks}</ul></aside>\
                 <article><p>{own}</p></article><footer>Page generated 2024-01-{:02} \
                 10:{:02}:00</footer></body></html>",
                1 + (n + fetch) % 28,
                (n * 7 + fetch) % 60
            );
            analyze(html.as_bytes(), &config)
        };
        let post = |n: usize| -> String {
            (0..24)
                .map(|i| format!("w{}x{} ", (n * 31 + i * 7) % 97, i))
                .collect()
        };
        let mut pages: Vec<PageAnalysis> = (0..12).map(|n| page(n, &post(n), 0)).collect();
        pages.push(page(0, &post(0), 5));
        pages.push(page(20, "Sorry, this page was not found.", 0));
        pages.push(page(21, "Sorry, this page was not found.", 3));
        let host = fingerprint_host(&pages, &config);
        let fp = &host.fingerprints;
        assert_eq!(fp[0].strength, Strength::Weak, "{:?}", fp[0]);
        assert!(fp[0].tokens >= config.boilerplate_min_tokens, "{:?}", fp[0]);
        assert_eq!(fp[0].exact, fp[12].exact, "one post, two fetches");
        assert_ne!(fp[0].exact, fp[1].exact, "two posts");
        assert_eq!(fp[13].strength, Strength::Weak);
        assert_ne!(
            fp[13].exact, fp[14].exact,
            "two soft-404s whose chrome differs"
        );
    }

    /// A sidebar and the article under one link-poor element are one pagelet, whose min-hash
    /// identity is the sidebar's on the pages whose smallest shingles fall in it: the model
    /// calls that identity template. The article's blocks are not, so the article stays.
    #[test]
    fn a_template_pagelet_keeps_the_article_its_blocks_show() {
        let config = ContentConfig::default();
        let sidebar: String = (0..6)
            .map(|i| {
                let words: String = (0..16).map(|j| format!("side{i}word{j} ")).collect();
                format!("<p>{words}</p>")
            })
            .collect();
        let pages: Vec<PageAnalysis> = (0..40)
            .map(|n| {
                let article: String = (0..30).map(|j| format!("post{n}term{j} ")).collect();
                // A promotion from a pool of five under the page: another textual pagelet.
                let promo: String = (0..25).map(|j| format!("promo{}line{j} ", n % 5)).collect();
                let html = format!(
                    "<html><body><nav><a href=/>Home</a> <a href=/a>A</a> <a href=/b>B</a> \
                     <a href=/c>C</a></nav><div><aside>{sidebar}</aside><main><p>{article}</p>\
                     </main></div><footer><p>{promo}</p></footer></body></html>"
                );
                analyze(html.as_bytes(), &config)
            })
            .collect();
        let host = fingerprint_host(&pages, &config);
        let big = |p: &PageAnalysis| {
            p.digest
                .pagelets
                .iter()
                .max_by_key(|pagelet| pagelet.tokens)
                .expect("a pagelet")
                .identity
        };
        let whole_template = pages
            .iter()
            .filter(|p| host.model.is_template(big(p)))
            .count();
        assert!(
            whole_template > 0,
            "the sidebar's identity is template somewhere"
        );
        for (n, print) in host.fingerprints.iter().enumerate() {
            assert!(print.tokens >= 30, "page {n} kept its article: {print:?}");
        }
        let mut exact: Vec<u64> = host.fingerprints.iter().map(|f| f.exact).collect();
        exact.sort_unstable();
        exact.dedup();
        assert_eq!(exact.len(), pages.len(), "every article its own");
    }

    #[test]
    fn listing_pages_keep_their_links_as_content() {
        let config = ContentConfig::default();
        let items: String = (0..30)
            .map(|i| format!("<li><a href=/p{i}>Product number {i} in red</a></li>"))
            .collect();
        let page = analyze(format!("<ul>{items}</ul>").as_bytes(), &config);
        let fp = fingerprint(&page, &TemplateModel::new(&config), &config);
        assert_eq!(fp.strength, Strength::Strong);
        assert_eq!(fp.tokens, page.digest.page_tokens);
    }
}
