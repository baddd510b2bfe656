//! Precision and recall of the one pipeline's content clusters on real pages (issue 13, part 4).
//!
//! The real pages of `../shared/testdata` (Readability's test pages and the Zyte article benchmark)
//! are grouped by site; every article is served as an original and as four near-duplicates made
//! the way real sites make them: a rotated ad block, a changed footer, a different related-links
//! box, and tracking parameters in every link. Each site's pages go through the one path from
//! pages to clusters (`pipeline::analyze` → observe into the host's template model →
//! `pipeline::cluster_pages`), with no URL or canonical evidence, so only content decides. Pairs of
//! the same article must meet (recall), pairs of different articles of one site must not
//! (precision).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use undust::content::{ContentConfig, TemplateModel};
use undust::pipeline::{cluster_pages, AnalyzedPage, EvidencePage};

use crate::support::testdata;

/// One real article page of a site.
struct Article {
    /// Where it came from (Readability dir or Zyte id), for messages.
    name: String,
    /// Which story it is: its canonical URL when known (two Readability snapshots of one
    /// Lifehacker story are the same article), else its name.
    story: String,
    /// Its raw HTML.
    html: String,
}

/// Readability pages of real sites (the synthetic unit cases are tiny and skipped), by site: the
/// canonical host when the page declares one, else its group.
fn readability_sites(root: &Path) -> BTreeMap<String, Vec<Article>> {
    let dir = root.join("readability-test-pages");
    let tsv = std::fs::read_to_string(dir.join("pages.tsv")).expect("pages.tsv reads");
    let mut sites: BTreeMap<String, Vec<Article>> = BTreeMap::new();
    for line in tsv.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (name, group, host) = (cols[0], cols[1], cols.get(2).copied().unwrap_or(""));
        let Ok(html) = std::fs::read(dir.join("test-pages").join(name).join("source.html")) else {
            panic!("{name}: source.html missing");
        };
        if html.len() < 10_000 {
            continue;
        }
        let site = if host.is_empty() { group } else { host };
        let story = cols.get(3).filter(|c| !c.is_empty()).unwrap_or(&name);
        sites.entry(site.to_owned()).or_default().push(Article {
            name: format!("readability/{name}"),
            story: (*story).to_owned(),
            html: String::from_utf8_lossy(&html).into_owned(),
        });
    }
    sites
}

/// Zyte benchmark pages, by host.
fn zyte_sites(root: &Path) -> BTreeMap<String, Vec<Article>> {
    let dir = root.join("article-extraction-benchmark");
    let gt = std::fs::read_to_string(dir.join("ground-truth.json")).expect("ground truth reads");
    let gt: serde_json::Value = serde_json::from_str(&gt).expect("ground truth parses");
    let mut sites: BTreeMap<String, Vec<Article>> = BTreeMap::new();
    for (id, entry) in gt.as_object().expect("an object") {
        let url = entry["url"].as_str().expect("a url");
        let host = url::Url::parse(url)
            .expect("a valid url")
            .host_str()
            .expect("a host")
            .to_owned();
        let file = std::fs::File::open(dir.join("html").join(format!("{id}.html.gz")))
            .expect("page opens");
        let mut html = Vec::new();
        flate2::read::GzDecoder::new(file)
            .read_to_end(&mut html)
            .expect("page decompresses");
        sites.entry(host).or_default().push(Article {
            name: format!("zyte/{id}"),
            story: url.to_owned(),
            html: String::from_utf8_lossy(&html).into_owned(),
        });
    }
    sites
}

const ADS: [&str; 3] = [
    "Save 20 percent on running shoes this week only at the outlet store near you. Shop now",
    "New phones from 9 dollars a month with unlimited data and free delivery today. Order",
    "Book your summer holiday early: flights and hotels bundled at member prices. Explore",
];

const HEADLINES: [&str; 10] = [
    "City council approves the new budget after a long night of debate",
    "Five recipes for a quick weeknight dinner the whole family will like",
    "Why the price of coffee keeps climbing and what it means for you",
    "The best hiking trails within two hours of the city this autumn",
    "Local team wins the championship in overtime thriller at home",
    "Scientists find a new species of frog in the mountain rain forest",
    "How to protect your savings when interest rates start to fall",
    "Review: the new electric hatchback is quiet, quick and pricey",
    "Schools prepare for the new term with more teachers and bigger classes",
    "A guide to the film festival: what to see and where to eat nearby",
];

/// Byte offset just after the opening `<body ...>` tag (0 when there is none).
fn after_body_open(html: &str) -> usize {
    let lower = html.to_ascii_lowercase();
    lower
        .find("<body")
        .and_then(|at| lower[at..].find('>').map(|end| at + end + 1))
        .unwrap_or(0)
}

/// Byte offset of the closing `</body>` (the end when there is none).
fn before_body_close(html: &str) -> usize {
    html.to_ascii_lowercase()
        .rfind("</body")
        .unwrap_or(html.len())
}

fn insert_at(html: &str, at: usize, what: &str) -> String {
    format!("{}{what}{}", &html[..at], &html[at..])
}

/// The site's chrome around a real page: an ad slot at the top, a related box and a footer at the
/// bottom (the parts that rotate between fetches of one article).
fn dressed(html: &str, ad: &str, related: &[&str], footer: &str) -> String {
    let related: String = related
        .iter()
        .enumerate()
        .map(|(i, h)| format!("<li><a href=\"/story/{}\">{h}</a></li>", h.len() * 7 + i))
        .collect();
    let bottom = format!(
        "<aside class=\"related\"><h3>Related stories</h3><ul>{related}</ul></aside>\
         <footer><p>{footer}</p><a href=\"/privacy\">Privacy</a> <a href=\"/terms\">Terms</a></footer>"
    );
    let with_bottom = insert_at(html, before_body_close(html), &bottom);
    let top =
        format!("<div class=\"ad-slot\"><p>{ad}</p><a href=\"/ads/click\">Sponsored</a></div>");
    insert_at(&with_bottom, after_body_open(&with_bottom), &top)
}

/// Appends tracking parameters to every absolute or root-relative `href`.
fn tracked_links(html: &str) -> String {
    let mut out = String::with_capacity(html.len() + html.len() / 10);
    let mut rest = html;
    while let Some(at) = rest.find("href=\"") {
        let start = at + "href=\"".len();
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find('"').unwrap_or(rest.len());
        let link = &rest[..end];
        out.push_str(link);
        if link.starts_with("http") || link.starts_with('/') {
            let sep = if link.contains('?') { '&' } else { '?' };
            out.push(sep);
            out.push_str("utm_source=newsletter&utm_medium=email&utm_campaign=weekly");
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// An article's original and its four near-duplicates, with their URL suffixes.
fn versions(article: &str, index: usize) -> Vec<(&'static str, String)> {
    let related = |shift: usize| -> Vec<&str> {
        (0..5)
            .map(|i| HEADLINES[(index + shift + i) % HEADLINES.len()])
            .collect()
    };
    let footer = "Copyright 2024 Example Media. All rights reserved. Served by web-3 at 10:22:05.";
    let original = dressed(article, ADS[0], &related(0), footer);
    vec![
        ("", original.clone()),
        (
            "?ad=rotated",
            dressed(article, ADS[1 + index % 2], &related(0), footer),
        ),
        (
            "?footer=changed",
            dressed(
                article,
                ADS[0],
                &related(0),
                "Copyright 2025 Example Media Group. Terms changed. Served by web-7 at 18:01:44.",
            ),
        ),
        (
            "?related=other",
            dressed(article, ADS[0], &related(5), footer),
        ),
        ("?utm=links", tracked_links(&original)),
    ]
}

/// Pair counts over one or more sites.
#[derive(Default, Debug)]
struct Pairs {
    /// Same-article pairs in one cluster.
    true_positive: usize,
    /// Different-article pairs in one cluster.
    false_positive: usize,
    /// Same-article pairs apart.
    false_negative: usize,
}

impl Pairs {
    fn precision(&self) -> f64 {
        let together = self.true_positive + self.false_positive;
        if together == 0 {
            1.0
        } else {
            self.true_positive as f64 / together as f64
        }
    }
    fn recall(&self) -> f64 {
        let same = self.true_positive + self.false_negative;
        if same == 0 {
            1.0
        } else {
            self.true_positive as f64 / same as f64
        }
    }
}

/// Clusters one site's articles and their near-duplicates through the one pipeline and counts
/// pairs; different-article merges are described in `merges`.
fn site_pairs(
    site: &str,
    articles: &[Article],
    config: &ContentConfig,
    merges: &mut Vec<String>,
) -> Pairs {
    let mut template = TemplateModel::new(config);
    let mut pages: Vec<EvidencePage> = Vec::new();
    let mut truth: Vec<&str> = Vec::new();
    for (index, article) in articles.iter().enumerate() {
        for (suffix, html) in versions(&article.html, index) {
            let url = format!("https://{}/article-{index}{suffix}", site.replace('/', "-"));
            let analysis = undust::content::analyze(html.as_bytes(), config);
            let page = AnalyzedPage {
                host: site.to_owned(),
                url,
                final_url: None,
                rel_canonical: None,
                canonical_from_html: false,
                shortlink: None,
                analysis,
            };
            pages.push(page.observe_into(&mut template));
            truth.push(&article.story);
        }
    }
    let host = cluster_pages(&pages, &[], &template, config);
    let cluster: Vec<u64> = pages
        .iter()
        .map(|p| {
            host.clustering
                .cluster_of(&p.url)
                .expect("every page is clustered")
        })
        .collect();
    let mut pairs = Pairs::default();
    for i in 0..pages.len() {
        for j in i + 1..pages.len() {
            match (truth[i] == truth[j], cluster[i] == cluster[j]) {
                (true, true) => pairs.true_positive += 1,
                (true, false) => pairs.false_negative += 1,
                (false, true) => {
                    pairs.false_positive += 1;
                    let (a, b) = (&host.fingerprints[i].1, &host.fingerprints[j].1);
                    merges.push(format!(
                        "{site}: {} ~ {} (distance {}, tokens {} / {}, exact equal {})",
                        pages[i].url,
                        pages[j].url,
                        (a.simhash ^ b.simhash).count_ones(),
                        a.tokens,
                        b.tokens,
                        a.exact == b.exact,
                    ));
                }
                (false, false) => {}
            }
        }
    }
    pairs
}

fn measure(sites: &BTreeMap<String, Vec<Article>>, label: &str) -> Pairs {
    let config = ContentConfig::default();
    let mut total = Pairs::default();
    let mut merges = Vec::new();
    let mut used = (0, 0);
    for (site, articles) in sites.iter().filter(|(_, a)| a.len() >= 2) {
        let pairs = site_pairs(site, articles, &config, &mut merges);
        if pairs.false_negative > 0 {
            let names: Vec<&str> = articles.iter().map(|a| a.name.as_str()).collect();
            eprintln!("{label} {site}: {pairs:?} {names:?}");
        }
        total.true_positive += pairs.true_positive;
        total.false_positive += pairs.false_positive;
        total.false_negative += pairs.false_negative;
        used.0 += 1;
        used.1 += articles.len();
    }
    for merge in &merges {
        eprintln!("{label} different articles merged: {merge}");
    }
    eprintln!(
        "{label}: {} sites, {} articles, {} pages: precision {:.4} recall {:.4} {total:?}",
        used.0,
        used.1,
        used.1 * 5,
        total.precision(),
        total.recall()
    );
    total
}

#[test]
fn same_site_real_articles_stay_apart_and_their_near_duplicates_meet() {
    let Some(root) = testdata() else { return };
    let readability = measure(&readability_sites(&root), "readability");
    let zyte_pairs = measure(&zyte_sites(&root), "zyte");
    let all = Pairs {
        true_positive: readability.true_positive + zyte_pairs.true_positive,
        false_positive: readability.false_positive + zyte_pairs.false_positive,
        false_negative: readability.false_negative + zyte_pairs.false_negative,
    };
    eprintln!(
        "all: precision {:.4} recall {:.4}",
        all.precision(),
        all.recall()
    );
    assert!(all.precision() >= 0.995, "precision {:.4}", all.precision());
    assert!(all.recall() >= 0.95, "recall {:.4}", all.recall());
}
