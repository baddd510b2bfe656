//! Synthetic mirror groups with hard negatives, for mirror detection tests, measures and
//! benchmarks ([`generate_mirrors`]).
//!
//! Each group is one site served by several origins, with ground truth:
//!
//! - the primary `https://www.{name}.com`;
//! - its bare host `http://{name}.com` and its http origin `http://www.{name}.com` (same IP,
//!   same template);
//! - depending on the group: another TLD with its own template and IP (`https://www.{name}.de`),
//!   a mirror network host serving it under a folder (`http://mirror.{uni}.edu/pub/{name}/…`,
//!   one host mirroring several sites), a partial mirror holding a third of the pages, or a stale
//!   mirror (the older 70% of the pages, each with a "mirrored on" line, plus pages the primary
//!   has since deleted).
//!
//! Hard negatives that must stay apart:
//!
//! - a sibling subdomain `https://blog.{name}.com` on the primary's IP, sharing its about and
//!   privacy pages (same content) and its home path (different content);
//! - in some groups, a host that redirects every path to the primary's home page (every URL of
//!   it serves the home page's content);
//! - sites built on one shop software, all on one shared-hosting IP: the same paths
//!   (`/product/{n}.html`), overlapping ids, the software's identical terms page, different
//!   content otherwise.
//!
//! Every URL carries its content id (the truth), every page renders to full HTML with its
//! origin's template, and the true mirror pairs of origins are listed.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::words::{paragraph, slug, title, word};

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorCorpusConfig {
    /// Seed of everything.
    pub seed: u64,
    /// Mirror groups (one site each).
    pub groups: usize,
    /// Pages of each primary site.
    pub pages_per_site: usize,
    /// Sites on the shared shop software (one shared-hosting IP).
    pub software_sites: usize,
}

impl MirrorCorpusConfig {
    /// A corpus of `groups` groups of `pages_per_site` pages and 8 shop-software sites.
    pub fn new(seed: u64, groups: usize, pages_per_site: usize) -> Self {
        MirrorCorpusConfig {
            seed,
            groups: groups.min(MAX_GROUPS),
            pages_per_site: pages_per_site.clamp(8, 10_000),
            software_sites: 8,
        }
    }
}

/// Most groups one corpus may hold (keeps memory bounded).
pub const MAX_GROUPS: usize = 2_000;

/// One fetched page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorPage {
    /// The URL fetched.
    pub url: String,
    /// The truth: equal ids, equal content (near-duplicate stale copies included).
    pub content_id: u64,
    /// The page as served, with its origin's template.
    pub html: String,
}

/// One origin of the corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorHost {
    /// `scheme://host`.
    pub origin: String,
    /// The server's address.
    pub ip: IpAddr,
    /// Its fetched pages.
    pub pages: Vec<MirrorPage>,
}

/// What a pair of origins is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PairKind {
    /// Mirrors (possibly partial, stale, or under a folder).
    Mirror,
    /// Looks alike, must stay apart.
    HardNegative,
}

/// A generated corpus.
#[derive(Clone, Debug, Default)]
pub struct MirrorCorpus {
    /// The origins.
    pub hosts: Vec<MirrorHost>,
    /// True mirror pairs of origins (sorted pair, each once).
    pub mirror_pairs: BTreeSet<(String, String)>,
    /// Hard-negative pairs of origins.
    pub negative_pairs: BTreeSet<(String, String)>,
}

impl MirrorCorpus {
    /// Pages over all origins.
    pub fn total_pages(&self) -> usize {
        self.hosts.iter().map(|h| h.pages.len()).sum()
    }
}

struct Template {
    nav: Vec<(String, String)>,
    footer: String,
}

impl Template {
    fn new(rng: &mut ChaCha8Rng, partners: &[String]) -> Self {
        let mut nav: Vec<(String, String)> = (0..6)
            .map(|_| (format!("/{}/", word(rng)), title(rng, 1..=2, " ")))
            .collect();
        for p in partners {
            nav.push((format!("https://{p}/"), title(rng, 1..=2, " ")));
        }
        Template {
            nav,
            footer: paragraph(rng, 2..=2),
        }
    }

    fn render(&self, title: &str, body: &str, links: &[String], note: Option<&str>) -> String {
        let mut html = String::with_capacity(body.len() + 2048);
        html.push_str("<!doctype html><html><head><title>");
        html.push_str(title);
        html.push_str("</title></head><body><nav><ul>");
        for (href, text) in &self.nav {
            html.push_str(&format!("<li><a href=\"{href}\">{text}</a></li>"));
        }
        html.push_str("</ul></nav><main><h1>");
        html.push_str(title);
        html.push_str("</h1>");
        html.push_str(body);
        if let Some(note) = note {
            html.push_str(&format!("<p class=\"note\">{note}</p>"));
        }
        html.push_str("<ul class=\"related\">");
        for l in links {
            html.push_str(&format!("<li><a href=\"{l}\">{l}</a></li>"));
        }
        html.push_str("</ul></main><footer><p>");
        html.push_str(&self.footer);
        html.push_str("</p></footer></body></html>");
        html
    }
}

/// A page of a site before it is served by some origin: its path, content and in-site links.
#[derive(Clone)]
struct SitePage {
    path: String,
    content_id: u64,
    title: String,
    body: String,
    links: Vec<String>,
}

fn body(rng: &mut ChaCha8Rng) -> String {
    (0..3)
        .map(|_| format!("<p>{}</p>", paragraph(rng, 3..=5)))
        .collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_owned(), b.to_owned())
    } else {
        (b.to_owned(), a.to_owned())
    }
}

struct Builder {
    rng: ChaCha8Rng,
    next_id: u64,
    corpus: MirrorCorpus,
}

impl Builder {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn site(
        &mut self,
        n: usize,
        paths: &mut dyn FnMut(&mut ChaCha8Rng, usize) -> String,
    ) -> Vec<SitePage> {
        let mut pages: Vec<SitePage> = Vec::with_capacity(n);
        for i in 0..n {
            let path = paths(&mut self.rng, i);
            let id = self.id();
            let t = title(&mut self.rng, 2..=5, " ");
            let b = body(&mut self.rng);
            pages.push(SitePage {
                path,
                content_id: id,
                title: t,
                body: b,
                links: Vec::new(),
            });
        }
        let all: Vec<String> = pages.iter().map(|p| p.path.clone()).collect();
        for p in &mut pages {
            p.links = (0..4)
                .map(|_| all[self.rng.random_range(0..all.len())].clone())
                .collect();
        }
        pages
    }

    /// Serves `pages` from `origin` (under `prefix`) with `template`.
    fn serve(
        &mut self,
        origin: &str,
        ip: IpAddr,
        prefix: &str,
        pages: &[SitePage],
        template: &Template,
        note: Option<&str>,
    ) {
        let served: Vec<MirrorPage> = pages
            .iter()
            .map(|p| {
                let links: Vec<String> = p.links.iter().map(|l| format!("{prefix}{l}")).collect();
                MirrorPage {
                    url: format!("{origin}{prefix}{}", p.path),
                    content_id: p.content_id,
                    html: template.render(&p.title, &p.body, &links, note),
                }
            })
            .collect();
        match self.corpus.hosts.iter_mut().find(|h| h.origin == origin) {
            Some(h) => h.pages.extend(served),
            None => self.corpus.hosts.push(MirrorHost {
                origin: origin.to_owned(),
                ip,
                pages: served,
            }),
        }
    }
}

fn ip(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

/// Generates a corpus of mirror groups and hard negatives (a pure function of the config).
pub fn generate_mirrors(config: &MirrorCorpusConfig) -> MirrorCorpus {
    let mut b = Builder {
        rng: ChaCha8Rng::seed_from_u64(config.seed),
        next_id: 0,
        corpus: MirrorCorpus::default(),
    };
    let n = config.pages_per_site;
    let unis = ["ftp.sunet", "mirror.aarnet", "mirrors.kernel"];
    let partners: Vec<String> = (0..12)
        .map(|i| format!("www.partner{i}-{}.org", config.seed))
        .collect();
    for g in 0..config.groups.min(MAX_GROUPS) {
        let name = format!("{}{}{g}", word(&mut b.rng), word(&mut b.rng));
        let sections: Vec<String> = (0..4).map(|_| word(&mut b.rng).to_owned()).collect();
        let mut pages = b.site(n, &mut |rng, i| match i {
            0 => "/".to_owned(),
            1 => "/about.html".to_owned(),
            2 => "/privacy.html".to_owned(),
            _ => format!(
                "/{}/{}-{}.html",
                sections[i % sections.len()],
                slug(rng, 1..=3),
                100 + i
            ),
        });
        let net = (g % 250) as u8;
        let primary_ip = ip(10, 1, net, 10);
        let group_partners: Vec<String> = (0..3)
            .map(|k| partners[(g * 3 + k) % partners.len()].clone())
            .collect();
        let tpl = Template::new(&mut b.rng, &group_partners);
        let primary = format!("https://www.{name}.com");
        let mut members = vec![primary.clone()];
        b.serve(&primary, primary_ip, "", &pages, &tpl, None);
        let bare = format!("http://{name}.com");
        b.serve(&bare, primary_ip, "", &pages, &tpl, None);
        members.push(bare);
        if g % 2 == 0 {
            let http = format!("http://www.{name}.com");
            b.serve(&http, primary_ip, "", &pages[..n * 9 / 10], &tpl, None);
            members.push(http);
        }
        let own = Template::new(&mut b.rng, &group_partners);
        match g % 4 {
            0 => {
                let tld = format!("https://www.{name}.de");
                b.serve(
                    &tld,
                    ip(10, 2, net, 20),
                    "",
                    &pages[..n * 8 / 10],
                    &own,
                    None,
                );
                members.push(tld);
            }
            1 => {
                let uni = unis[g % unis.len()];
                let origin = format!("http://{uni}.edu");
                let uni_tpl = Template::new(&mut b.rng, &[]);
                b.serve(
                    &origin,
                    ip(10, 3, (g % unis.len()) as u8, 30),
                    &format!("/pub/{name}"),
                    &pages,
                    &uni_tpl,
                    None,
                );
                members.push(origin);
            }
            2 => {
                let partial = format!("http://archive.{name}.net");
                let third: Vec<SitePage> = pages.iter().step_by(3).cloned().collect();
                b.serve(&partial, ip(10, 4, net, 40), "", &third, &own, None);
                members.push(partial);
            }
            _ => {
                let stale = format!("http://www.{name}-mirror.org");
                let deleted = b.site(5, &mut |rng, i| {
                    format!("/{}/gone-{}-{i}.html", sections[0], slug(rng, 1..=2))
                });
                let mut held: Vec<SitePage> = pages[..n * 7 / 10].to_vec();
                held.extend(deleted);
                let note = format!(
                    "Mirrored on 20{:02}-0{}-1{}",
                    10 + g % 10,
                    1 + g % 9,
                    g % 10
                );
                b.serve(&stale, ip(10, 5, net, 50), "", &held, &own, Some(&note));
                members.push(stale);
            }
        }
        // Hard negative: a sibling subdomain on the same IP sharing about and privacy pages.
        let blog = format!("https://blog.{name}.com");
        let mut blog_pages = b.site(n / 2, &mut |rng, i| {
            if i == 0 {
                "/".to_owned()
            } else {
                format!("/post/{}-{}.html", slug(rng, 2..=4), 100 + i)
            }
        });
        blog_pages.push(pages[1].clone());
        blog_pages.push(pages[2].clone());
        let blog_tpl = Template::new(&mut b.rng, &group_partners);
        b.serve(&blog, primary_ip, "", &blog_pages, &blog_tpl, None);
        for m in &members {
            b.corpus.negative_pairs.insert(pair(m, &blog));
        }
        // Hard negative: a host redirecting everything to the primary's home page.
        if g % 2 == 1 {
            let old = format!("http://{name}-old.com");
            let home = pages[0].clone();
            let redirected: Vec<SitePage> = pages
                .iter()
                .take(6)
                .map(|p| SitePage {
                    path: p.path.clone(),
                    ..home.clone()
                })
                .collect();
            b.serve(&old, ip(10, 6, net, 60), "", &redirected, &tpl, None);
            for m in &members {
                b.corpus.negative_pairs.insert(pair(m, &old));
            }
        }
        for (i, x) in members.iter().enumerate() {
            for y in &members[i + 1..] {
                b.corpus.mirror_pairs.insert(pair(x, y));
            }
        }
        pages.clear();
    }
    // Hard negatives: sites on one shop software, on one shared-hosting IP.
    let terms_body = body(&mut b.rng);
    let shop_ip = ip(10, 9, 9, 9);
    let mut shops = Vec::new();
    for s in 0..config.software_sites {
        let origin = format!("https://shop.{}{s}.com", word(&mut b.rng));
        let mut pages = b.site(n, &mut |_, i| match i {
            0 => "/".to_owned(),
            1 => "/terms.html".to_owned(),
            _ => format!("/product/{}.html", 1000 + i),
        });
        pages[1].body = terms_body.clone();
        pages[1].title = "Terms of sale".to_owned();
        pages[1].content_id = u64::MAX; // the software's page, identical everywhere
        let tpl = Template::new(&mut b.rng, &[]);
        b.serve(&origin, shop_ip, "", &pages, &tpl, None);
        shops.push(origin);
    }
    for (i, x) in shops.iter().enumerate() {
        for y in &shops[i + 1..] {
            b.corpus.negative_pairs.insert(pair(x, y));
        }
    }
    b.corpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_hold_every_kind_of_mirror_and_negative() {
        let c = generate_mirrors(&MirrorCorpusConfig::new(1, 4, 20));
        let origins: Vec<&str> = c.hosts.iter().map(|h| h.origin.as_str()).collect();
        assert!(origins.iter().any(|o| o.ends_with(".de")));
        assert!(origins.iter().any(|o| o.ends_with(".edu")));
        assert!(origins.iter().any(|o| o.starts_with("http://archive.")));
        assert!(origins.iter().any(|o| o.ends_with("-mirror.org")));
        assert!(origins.iter().any(|o| o.ends_with("-old.com")));
        assert!(c.mirror_pairs.iter().all(|p| !c.negative_pairs.contains(p)));
        let edu = c.hosts.iter().find(|h| h.origin.ends_with(".edu")).unwrap();
        assert!(edu.pages.iter().all(|p| p.url.contains("/pub/")));
        // Same content id means the same page on every origin (the terms page aside).
        assert_eq!(
            generate_mirrors(&MirrorCorpusConfig::new(1, 4, 20)).hosts,
            c.hosts
        );
    }
}
