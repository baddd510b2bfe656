//! Rendering synthetic pages to HTML with their site's template, the links each page shows
//! ("discovered URLs"), and the JSON lines export read by `undust learn`.
//!
//! The main content is a pure function of (site text seed, page label, page kind), so every URL
//! of one content renders the same main text, while the template around it varies a little per
//! URL and fetch (rotating "trending"/ad snippets, a timestamp), as on real sites. Pages of
//! different contents get different text: other titles, other paragraphs, other list items.

use std::fmt::Write as _;
use std::io::Write;
use std::ops::RangeInclusive;

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::sites::mix;
use super::words::{self, capitalize, paragraph, pick, title};
use super::{Corpus, CorpusError, PageKind, Site, SyntheticPage};

/// Most items on one listing page.
const MAX_LISTING_ITEMS: usize = 30;

/// One line of the JSON lines export (the offline CLI's page format).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JsonlPage {
    /// The fetched URL.
    pub url: String,
    /// The page's HTML.
    pub html: String,
    /// URL after redirects, when different (see `SyntheticPage::final_url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_url: Option<String>,
    /// HTTP status (200: soft-404s are served with 200, which is what makes them noise).
    pub status: u16,
    /// `rel=canonical` target, when the page declares one (see `SyntheticPage::canonical`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
}

/// Writes every page of every site as one JSON object per line:
/// `{"url": ..., "html": ..., "status": 200}`.
pub fn write_jsonl(corpus: &Corpus, mut out: impl Write) -> Result<(), CorpusError> {
    for site in &corpus.sites {
        for page in &site.pages {
            let line = JsonlPage {
                url: page.url.clone(),
                html: render_html(site, page),
                final_url: page.final_url.clone(),
                status: 200,
                canonical: page.canonical.clone(),
            };
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The page as the crawler's first fetch saw it.
pub fn render_html(site: &Site, page: &SyntheticPage) -> String {
    render_html_fetch(site, page, 0)
}

/// The page as fetch number `fetch` saw it: same main content, other rotating snippets and
/// timestamp.
pub fn render_html_fetch(site: &Site, page: &SyntheticPage, fetch: u64) -> String {
    let t = &site.template;
    let c = &t.class_prefix;
    let main = MainContent::new(site, page.label, page.kind);
    let mut html = String::with_capacity(8 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{} | {}</title>\n\
         <link rel=\"stylesheet\" href=\"/static/{c}-theme.css\">\n",
        esc(&main.title),
        esc(&t.name)
    );
    if let Some(canonical) = &page.canonical {
        let _ = writeln!(html, "<link rel=\"canonical\" href=\"{}\">", esc(canonical));
    }
    if let Some(shortlink) = &page.shortlink {
        let _ = writeln!(html, "<link rel=\"shortlink\" href=\"{}\">", esc(shortlink));
    }
    let _ = writeln!(html, "</head>\n<body class=\"{c}-body\">");
    let _ = write!(
        html,
        "<header class=\"{c}-header\">\n<a class=\"{c}-logo\" href=\"/\">{}</a>\n<p class=\"{c}-tagline\">{}</p>\n<nav class=\"{c}-nav\"><ul>\n",
        esc(&t.name),
        esc(&t.tagline)
    );
    for (label, href) in &t.nav {
        let _ = writeln!(
            html,
            "<li><a href=\"{}\">{}</a></li>",
            esc(href),
            esc(label)
        );
    }
    html.push_str("</ul></nav>\n</header>\n");
    let _ = write!(
        html,
        "<div class=\"{c}-wrap\">\n<aside class=\"{c}-sidebar\">\n"
    );
    for (heading, text) in &t.sidebar {
        let _ = writeln!(
            html,
            "<section class=\"{c}-block\"><h3>{}</h3><p>{}</p></section>",
            esc(heading),
            esc(text)
        );
    }
    // The rotating block and timestamp depend on the URL and fetch, not on the content.
    let mut vary = ChaCha8Rng::seed_from_u64(mix(hash_str(&page.url), fetch));
    let _ = writeln!(html, "<section class=\"{c}-trending\"><ul>");
    for _ in 0..3 {
        if let Some(s) = t.rotating.choose(&mut vary) {
            let _ = writeln!(html, "<li>{}</li>", esc(s));
        }
    }
    html.push_str("</ul></section>\n</aside>\n");
    let _ = writeln!(html, "<main class=\"{c}-main\">");
    main.write_html(&mut html);
    html.push_str("</main>\n</div>\n");
    let _ = write!(
        html,
        "<footer class=\"{c}-footer\"><p>{}</p><p class=\"{c}-generated\">Page generated {}</p></footer>\n</body>\n</html>\n",
        esc(&t.footer),
        timestamp(&mut vary)
    );
    html
}

/// Every link the page shows, in document order, as absolute URLs: the template's navigation
/// first, then the links in the main content (listing items, related pages).
pub fn page_links(site: &Site, page: &SyntheticPage) -> Vec<String> {
    let main = MainContent::new(site, page.label, page.kind);
    site.template
        .nav
        .iter()
        .map(|(_, href)| href.clone())
        .chain(main.links.into_iter().map(|(href, _)| href))
        .collect()
}

/// The main content of one label.
struct MainContent {
    title: String,
    kind: PageKind,
    byline: Option<String>,
    /// Each block: (optional heading, paragraphs).
    blocks: Vec<(Option<String>, Vec<String>)>,
    /// Definition list (product specs) or revision list entries.
    facts: Vec<String>,
    code: Option<String>,
    /// (absolute URL, anchor text).
    links: Vec<(String, String)>,
}

impl MainContent {
    fn new(site: &Site, label: u64, kind: PageKind) -> Self {
        let mut rng = text_rng(site, label);
        let page_title = draw_title(&mut rng, kind);
        let mut content = MainContent {
            title: page_title,
            kind,
            byline: None,
            blocks: Vec::new(),
            facts: Vec::new(),
            code: None,
            links: Vec::new(),
        };
        match kind {
            PageKind::NotFound => {
                content.blocks.push((
                    None,
                    vec!["Sorry, the page you requested could not be found. It may have been moved or deleted.".to_string()],
                ));
            }
            PageKind::Article => {
                content.byline = Some(byline(&mut rng));
                // Lengths vary from a two-sentence note to a long feature.
                let n = if rng.random_bool(0.15) {
                    1
                } else {
                    rng.random_range(2..=12)
                };
                let paras = (0..n).map(|_| paragraph(&mut rng, 1..=7)).collect();
                content.blocks.push((None, paras));
                content.links = related(site, &mut rng, 0..=4);
            }
            PageKind::Thread => {
                for _ in 0..rng.random_range(1..=10) {
                    let who = format!(
                        "{} wrote on {}",
                        pick(&mut rng, words::NAMES, "alice"),
                        date(&mut rng)
                    );
                    let paras = (0..rng.random_range(1..=3))
                        .map(|_| paragraph(&mut rng, 1..=5))
                        .collect();
                    content.blocks.push((Some(who), paras));
                }
            }
            PageKind::Product => {
                content.byline = Some(format!(
                    "Price: {}.{:02}",
                    rng.random_range(3..2_000),
                    rng.random_range(0..100)
                ));
                let paras = (0..rng.random_range(1..=4))
                    .map(|_| paragraph(&mut rng, 2..=6))
                    .collect();
                content.blocks.push((None, paras));
                content.facts = (0..rng.random_range(3..=8))
                    .map(|_| {
                        format!(
                            "{}: {} {}",
                            capitalize(words::word(&mut rng)),
                            rng.random_range(1..500),
                            words::word(&mut rng)
                        )
                    })
                    .collect();
                content.links = related(site, &mut rng, 2..=6);
            }
            PageKind::Listing => {
                // Some listings are empty (a new forum, a category without stock).
                let n = if rng.random_bool(0.05) {
                    0
                } else {
                    rng.random_range(3..=MAX_LISTING_ITEMS)
                };
                content.links = related(site, &mut rng, n..=n);
                if n == 0 {
                    content
                        .blocks
                        .push((None, vec!["There are no entries here yet.".to_string()]));
                }
            }
            PageKind::Doc => {
                for _ in 0..rng.random_range(1..=6) {
                    let heading = title(&mut rng, 1..=4, " ");
                    let paras = (0..rng.random_range(1..=3))
                        .map(|_| paragraph(&mut rng, 2..=6))
                        .collect();
                    content.blocks.push((Some(heading), paras));
                }
                if rng.random_bool(0.6) {
                    let f = words::join_words(&mut rng, 2..=2, "_");
                    let a = words::word(&mut rng);
                    let b = words::word(&mut rng);
                    content.code = Some(format!(
                        "let {a} = {f}({b}, {});\nprintln!(\"{{}}\", {a});",
                        rng.random_range(1..1000)
                    ));
                }
                content.links = related(site, &mut rng, 1..=5);
            }
            PageKind::History => {
                content.facts = (0..rng.random_range(3..=20))
                    .map(|_| {
                        format!(
                            "{} {} (+{} bytes) {}",
                            date(&mut rng),
                            pick(&mut rng, words::NAMES, "alice"),
                            rng.random_range(1..4_000),
                            words::sentence(&mut rng)
                        )
                    })
                    .collect();
            }
        }
        content
    }

    fn write_html(&self, html: &mut String) {
        html.push_str("<article>\n");
        let _ = writeln!(html, "<h1>{}</h1>", esc(&self.title));
        if let Some(b) = &self.byline {
            let _ = writeln!(html, "<p class=\"byline\">{}</p>", esc(b));
        }
        for (heading, paras) in &self.blocks {
            if self.kind == PageKind::Thread {
                html.push_str("<div class=\"post\">\n");
            }
            if let Some(h) = heading {
                let _ = writeln!(html, "<h2>{}</h2>", esc(h));
            }
            for p in paras {
                let _ = writeln!(html, "<p>{}</p>", esc(p));
            }
            if self.kind == PageKind::Thread {
                html.push_str("</div>\n");
            }
        }
        if let Some(code) = &self.code {
            let _ = writeln!(html, "<pre><code>{}</code></pre>", esc(code));
        }
        if !self.facts.is_empty() {
            html.push_str("<ul class=\"facts\">\n");
            for f in &self.facts {
                let _ = writeln!(html, "<li>{}</li>", esc(f));
            }
            html.push_str("</ul>\n");
        }
        if !self.links.is_empty() {
            let class = if self.kind == PageKind::Listing {
                "items"
            } else {
                "related"
            };
            let _ = writeln!(html, "<ul class=\"{class}\">");
            for (href, anchor) in &self.links {
                let _ = writeln!(
                    html,
                    "<li><a href=\"{}\">{}</a></li>",
                    esc(href),
                    esc(anchor)
                );
            }
            html.push_str("</ul>\n");
        }
        html.push_str("</article>\n");
    }
}

fn text_rng(site: &Site, label: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix(site.text_seed, label))
}

fn draw_title(rng: &mut ChaCha8Rng, kind: PageKind) -> String {
    match kind {
        PageKind::NotFound => "Page not found".to_string(),
        PageKind::History => format!("Revision history of {}", title(rng, 1..=3, " ")),
        _ => title(rng, 2..=8, " "),
    }
}

/// `n` links to pages of the site (chosen by the content's own text stream, so every URL of a
/// content links to the same pages), with the linked page's title as anchor text.
fn related(site: &Site, rng: &mut ChaCha8Rng, n: RangeInclusive<usize>) -> Vec<(String, String)> {
    if site.pages.is_empty() {
        return Vec::new();
    }
    let n = rng.random_range(n);
    (0..n)
        .filter_map(|_| site.pages.get(rng.random_range(0..site.pages.len())))
        .map(|target| {
            let anchor = draw_title(&mut text_rng(site, target.label), target.kind);
            (target.url.clone(), anchor)
        })
        .collect()
}

fn byline(rng: &mut ChaCha8Rng) -> String {
    format!(
        "By {} {}, {}",
        capitalize(pick(rng, words::NAMES, "alice")),
        capitalize(words::word(rng)),
        date(rng)
    )
}

fn date(rng: &mut ChaCha8Rng) -> String {
    format!(
        "{}-{:02}-{:02}",
        rng.random_range(2005..=2025),
        rng.random_range(1..=12),
        rng.random_range(1..=28)
    )
}

fn timestamp(rng: &mut ChaCha8Rng) -> String {
    format!(
        "{} {:02}:{:02}:{:02}",
        date(rng),
        rng.random_range(0..24),
        rng.random_range(0..60),
        rng.random_range(0..60)
    )
}

fn hash_str(s: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}

/// Escapes text for HTML content and double-quoted attributes.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("a&b<c>\"d\""), "a&amp;b&lt;c&gt;&quot;d&quot;");
    }
}
