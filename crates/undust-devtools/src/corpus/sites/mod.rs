//! Site generators: one per kind of site (forum, shop, news, documentation mirrors,
//! case-insensitive server with a wiki), each with layouts chosen by the seed, plus the assembly of
//! a whole site (host, size, sections, noise, template).
//!
//! A generator ("section") knows what contents exist on its kind of site, which URL layouts are
//! equivalent for a content (its *forms*) and which contents are meaningful siblings (pages,
//! sorts, colours, versions, ...). The emitter decides which URLs the crawl saw.

mod aspnet;
mod boards;
mod bugzilla;
mod calendar;
mod case;
mod discuz;
mod docs;
mod dokuwiki;
mod drupal;
mod forum;
mod gitea;
mod joomla;
mod listing;
mod mediawiki;
mod mybb;
mod news;
mod nodebb;
mod opencart;
mod oscommerce;
mod piwigo;
mod plone;
mod prestashop;
mod qa;
mod renderings;
mod shop;
mod smf;
mod sphinx;
mod storefront;
mod typo3;
mod wordpress;
mod xenforo;

use case::CaseServer;
use docs::Docs;
use forum::Forum;
use news::News;
use shop::Shop;

use std::collections::{HashMap, HashSet};

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::emit::{Added, Emitter, Extra, ExtraPlace, Form, UrlParts, Zipf};
use super::words::{self, capitalize, hex, pick, slug, title, word};
use super::{
    CorpusConfig, DustRule, NoiseKind, PageKind, Site, SiteKind, SiteTemplate, MAX_PAGES_PER_SITE,
};

/// SplitMix64 finalizer: decorrelates seeds derived from (seed, index) pairs.
pub(crate) fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One kind of content area of a site.
trait Section {
    /// Emits one entity (a thread, a product, a story, a doc page, ...) with its siblings.
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng);
    /// Forms of an item that does not exist (for soft-404 noise), in this section's layout.
    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form>;
    /// Which layout the seed chose, e.g. `phpbb`.
    fn variant(&self) -> String;
}

/// `path?k=v&...` of a form, for human-readable rule patterns.
fn pattern(parts: &UrlParts) -> String {
    let mut s = parts.path.clone();
    for (i, (k, v)) in parts.query.iter().enumerate() {
        s.push(if i == 0 { '?' } else { '&' });
        s.push_str(k);
        s.push('=');
        s.push_str(v);
    }
    s
}

/// Registers a [`DustRule::PathAlias`] from one layout to another, documented by example parts.
fn alias_rule(em: &mut Emitter, from: &UrlParts, to: &UrlParts, description: &str) -> usize {
    em.rule(
        DustRule::PathAlias {
            from: pattern(from),
            to: pattern(to),
        },
        description.to_string(),
    )
}

fn forms_of(parts: Vec<(UrlParts, Option<usize>)>) -> Vec<Form> {
    parts
        .into_iter()
        .map(|(parts, rule)| Form { parts, rule })
        .collect()
}

/// A pool of session-id-like values.
fn session_pool(rng: &mut ChaCha8Rng, n: usize, len: usize, upper: bool) -> Vec<String> {
    (0..n)
        .map(|_| {
            if upper {
                hex(rng, len).to_ascii_uppercase()
            } else {
                hex(rng, len)
            }
        })
        .collect()
}

/// A session-id extra with the documented rule for where it sits.
fn add_session(em: &mut Emitter, rng: &mut ChaCha8Rng, name: &str, place: ExtraPlace, len: usize) {
    let pool = (em.cap / 8).clamp(4, 5_000);
    let upper = place == ExtraPlace::PathParam;
    let values = if place == ExtraPlace::PathPrefix {
        (0..pool).map(|_| words::alnum(rng, 24)).collect()
    } else {
        session_pool(rng, pool, len, upper)
    };
    let (rule, description) = match place {
        ExtraPlace::Query => (
            DustRule::IgnoreQueryKey {
                key: name.to_string(),
            },
            format!("session id `{name}` in the query"),
        ),
        ExtraPlace::PathParam => (
            DustRule::IgnorePathParameter {
                name: name.to_string(),
            },
            format!("session id `;{name}=` path parameter"),
        ),
        ExtraPlace::PathPrefix => (
            DustRule::IgnorePathSegment {
                pattern: "/(S({value}))".to_string(),
            },
            "ASP.NET cookieless session segment `/(S(...))`".to_string(),
        ),
    };
    let prob = rng.random_range(0.45..0.85);
    em.add_extra(
        rule,
        description,
        Extra {
            rule: 0,
            name: name.to_string(),
            place,
            prob,
            values,
        },
    );
}

/// One to three tracking parameters: common names and names made up for this site.
fn add_tracking(em: &mut Emitter, rng: &mut ChaCha8Rng, max: usize) {
    const COMMON: &[&str] = &[
        "ref",
        "src",
        "campaign",
        "utm_source",
        "utm_campaign",
        "utm_medium",
        "affid",
        "cmp",
        "clickid",
        "trk",
        "partner",
        "source",
        "from",
    ];
    const SUFFIXES: &[&str] = &["ref", "src", "tag", "cid", "trk", "from"];
    let n = rng.random_range(1..=max.max(1));
    let mut names: Vec<String> = Vec::new();
    for _ in 0..n {
        let name = if rng.random_bool(0.4) {
            // Per-site names the static normalizer cannot know.
            let w = word(rng);
            format!("{}{}", &w[..w.len().min(4)], pick(rng, SUFFIXES, "ref"))
        } else {
            pick(rng, COMMON, "ref").to_string()
        };
        if names.contains(&name) {
            continue;
        }
        let values: Vec<String> = (0..rng.random_range(3..=12))
            .map(|_| match rng.random_range(0..3) {
                0 => slug(rng, 2..=2),
                1 => rng.random_range(100..100_000u32).to_string(),
                _ => word(rng).to_string(),
            })
            .collect();
        let prob = rng.random_range(0.12..0.4);
        em.add_extra(
            DustRule::IgnoreQueryKey { key: name.clone() },
            format!("tracking parameter `{name}`"),
            Extra {
                rule: 0,
                name: name.clone(),
                place: ExtraPlace::Query,
                prob,
                values,
            },
        );
        names.push(name);
    }
}

/// A forum thread's post ids, as forum software numbers them: 60% of threads fit on one page of
/// `per_page` posts, the others on two to five; ids come from the site's one counter `next`,
/// at most `gap` apart (other threads' posts in between). With the number of pages.
fn thread_posts(rng: &mut ChaCha8Rng, per_page: u32, next: &mut u64, gap: u64) -> (Vec<u64>, u32) {
    let length = if rng.random_bool(0.6) {
        rng.random_range(1..=per_page)
    } else {
        rng.random_range(per_page + 1..=per_page * 5)
    };
    let posts = (0..length)
        .map(|_| {
            *next += rng.random_range(1..gap);
            *next
        })
        .collect();
    (posts, length.div_ceil(per_page))
}

/// An irrelevant query parameter whose values are words (search highlighting, share links).
pub(super) fn add_word_param(
    em: &mut Emitter,
    rng: &mut ChaCha8Rng,
    name: &str,
    what: &str,
    prob: (f64, f64),
) {
    let prob = rng.random_range(prob.0..prob.1);
    let values = (0..(em.cap / 12).clamp(4, 800))
        .map(|_| word(rng).to_string())
        .collect();
    add_ignored_param(em, name, format!("{what} `{name}`"), prob, values);
}

/// An irrelevant query parameter `name` (`description` for humans), added to a share `prob`
/// of the URLs with one of `values`.
pub(super) fn add_ignored_param(
    em: &mut Emitter,
    name: &str,
    description: String,
    prob: f64,
    values: Vec<String>,
) {
    em.add_extra(
        DustRule::IgnoreQueryKey {
            key: name.to_string(),
        },
        description,
        Extra {
            rule: 0,
            name: name.to_string(),
            place: ExtraPlace::Query,
            prob,
            values,
        },
    );
}

// Site assembly

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectionKind {
    Forum,
    Shop,
    News,
    Docs,
    Case,
    /// One software family (see [`SiteKind::FAMILIES`]).
    Family(SiteKind),
}

fn make_section(
    kind: SectionKind,
    em: &mut Emitter,
    rng: &mut ChaCha8Rng,
    base: &str,
) -> Box<dyn Section> {
    match kind {
        SectionKind::Forum => Box::new(Forum::new(em, rng, base)),
        SectionKind::Shop => Box::new(Shop::new(em, rng, base)),
        SectionKind::News => Box::new(News::new(em, rng, base)),
        SectionKind::Docs => Box::new(Docs::new(em, rng, base)),
        SectionKind::Case => Box::new(CaseServer::new(em, rng, base)),
        SectionKind::Family(kind) => match kind {
            SiteKind::MediaWiki => Box::new(mediawiki::MediaWiki::new(em, rng, base)),
            SiteKind::WordPress => Box::new(wordpress::WordPress::new(em, rng, base)),
            SiteKind::Drupal => Box::new(drupal::Drupal::new(em, rng, base)),
            SiteKind::Discourse => Box::new(boards::Discourse::new(em, rng, base)),
            SiteKind::PhpBb => Box::new(boards::PhpBb::new(em, rng, base)),
            SiteKind::VBulletin => Box::new(boards::VBulletin::new(em, rng, base)),
            SiteKind::Storefront => Box::new(storefront::Storefront::new(em, rng, base)),
            SiteKind::AspNet => Box::new(aspnet::AspNet::new(em, rng, base)),
            SiteKind::DirectoryListing => Box::new(listing::Listing::new(em, rng, base)),
            SiteKind::Sphinx => Box::new(sphinx::Sphinx::new(em, rng, base)),
            SiteKind::QAndA => Box::new(qa::QAndA::new(em, rng, base)),
            SiteKind::EventCalendar => Box::new(calendar::Calendar::new(em, rng, base)),
            SiteKind::NewsRenderings => Box::new(renderings::Renderings::new(em, rng, base)),
            SiteKind::DokuWiki => Box::new(dokuwiki::DokuWiki::new(em, rng, base)),
            SiteKind::Joomla => Box::new(joomla::Joomla::new(em, rng, base)),
            SiteKind::XenForo => Box::new(xenforo::XenForo::new(em, rng, base)),
            SiteKind::Bugzilla => Box::new(bugzilla::Bugzilla::new(em, rng, base)),
            SiteKind::OpenCart => Box::new(opencart::OpenCart::new(em, rng, base)),
            SiteKind::Plone => Box::new(plone::Plone::new(em, rng, base)),
            SiteKind::Smf => Box::new(smf::Smf::new(em, rng, base)),
            SiteKind::Gitea => Box::new(gitea::Gitea::new(em, rng, base)),
            SiteKind::Piwigo => Box::new(piwigo::Piwigo::new(em, rng, base)),
            SiteKind::MyBb => Box::new(mybb::MyBb::new(em, rng, base)),
            SiteKind::PrestaShop => Box::new(prestashop::PrestaShop::new(em, rng, base)),
            SiteKind::NodeBb => Box::new(nodebb::NodeBb::new(em, rng, base)),
            SiteKind::Typo3 => Box::new(typo3::Typo3::new(em, rng, base)),
            SiteKind::Discuz => Box::new(discuz::Discuz::new(em, rng, base)),
            SiteKind::OsCommerce => Box::new(oscommerce::OsCommerce::new(em, rng, base)),
            // The hand-made kinds are not families; they never reach here.
            _ => Box::new(News::new(em, rng, base)),
        },
    }
}

fn make_host(
    rng: &mut ChaCha8Rng,
    kind: SiteKind,
    index: usize,
    hosts: &mut HashSet<String>,
) -> String {
    let prefixes: &[&str] = match kind {
        SiteKind::Forum => &["forum.", "boards.", "www.", "community.", ""],
        SiteKind::Shop => &["shop.", "www.", "store.", ""],
        SiteKind::News => &["www.", "news.", ""],
        SiteKind::DocsMirror => &["docs.", "ftp.", "www.", "mirror."],
        SiteKind::CaseInsensitive => &["www.", "intranet.", "wiki.", ""],
        SiteKind::Mixed | SiteKind::NoDust => &["www.", ""],
        SiteKind::MediaWiki | SiteKind::DokuWiki => &["wiki.", "www.", ""],
        SiteKind::WordPress | SiteKind::Drupal | SiteKind::Joomla | SiteKind::NewsRenderings => {
            &["www.", "blog.", ""]
        }
        SiteKind::Discourse
        | SiteKind::PhpBb
        | SiteKind::VBulletin
        | SiteKind::XenForo
        | SiteKind::Smf
        | SiteKind::MyBb
        | SiteKind::NodeBb => &["forum.", "discuss.", "community.", "www."],
        SiteKind::Storefront | SiteKind::OpenCart | SiteKind::PrestaShop | SiteKind::OsCommerce => {
            &["shop.", "store.", "www.", ""]
        }
        SiteKind::Discuz => &["bbs.", "bbs.", "club.", "forum.", "www."],
        SiteKind::Bugzilla => &["bugzilla.", "bugs.", "issues."],
        SiteKind::Plone => &["www.", "intranet.", "portal.", ""],
        SiteKind::Typo3 => &["www.", "portal.", "news.", ""],
        SiteKind::Gitea => &["git.", "code.", "gitea.", "forge."],
        SiteKind::Piwigo => &["photos.", "gallery.", "www.", ""],
        SiteKind::AspNet => &["www.", "portal.", "intranet."],
        SiteKind::DirectoryListing => &["ftp.", "mirror.", "download."],
        SiteKind::Sphinx => &["docs.", "developer."],
        SiteKind::QAndA => &["", "answers.", "ask."],
        SiteKind::EventCalendar => &["www.", "events.", ""],
    };
    for _ in 0..16 {
        let host = format!(
            "{}{}{}.{}",
            pick(rng, prefixes, "www."),
            word(rng),
            word(rng),
            pick(rng, words::TLDS, "com")
        );
        if hosts.insert(host.clone()) {
            return host;
        }
    }
    let host = format!("site{index}.example");
    hosts.insert(host.clone());
    host
}

/// Generates site number `index` of the corpus.
pub(crate) fn generate_site(
    config: &CorpusConfig,
    index: usize,
    kind: SiteKind,
    hosts: &mut HashSet<String>,
) -> Site {
    let mut rng = ChaCha8Rng::seed_from_u64(mix(config.seed, index as u64));
    let host = make_host(&mut rng, kind, index, hosts);
    let scheme = if rng.random_bool(0.8) {
        "https"
    } else {
        "http"
    };

    let min = config.min_pages.clamp(1, MAX_PAGES_PER_SITE);
    let max = config.max_pages.clamp(min, MAX_PAGES_PER_SITE);
    // Log-uniform: a range of 10..10000 gives as many small sites as large ones.
    let total = if min == max {
        min
    } else {
        let x = rng
            .random_range((min as f64).ln()..=(max as f64).ln())
            .exp()
            .round() as usize;
        x.clamp(min, max)
    };
    let soft_share = finite_share(config.noise.soft_404_share);
    let wrong_share = finite_share(config.noise.wrong_merge_share);
    let n_soft = ((total as f64) * soft_share).round() as usize;
    let main_cap = total - n_soft.min(total.saturating_sub(1));

    let zipf = Zipf::new(rng.random_range(8..=40), rng.random_range(1.5..2.5));
    let dust = kind != SiteKind::NoDust;
    let mut em = Emitter::new(format!("{scheme}://{host}"), index, main_cap, zipf, dust);
    em.set_first_form_weight(rng.random_range(1.0..5.0));
    // Decided outside the site's random stream so the option does not change the URLs.
    let canonical_draw =
        (mix(config.seed ^ 0xCA40_1CA1, index as u64) >> 11) as f64 / (1u64 << 53) as f64;
    em.declares_canonical = canonical_draw < finite_unit(config.rel_canonical_share);
    let redirect_draw =
        (mix(config.seed ^ 0x301_301, index as u64) >> 11) as f64 / (1u64 << 53) as f64;
    em.redirects_aliases = redirect_draw < finite_unit(config.redirect_share);

    let all = [
        SectionKind::Forum,
        SectionKind::Shop,
        SectionKind::News,
        SectionKind::Docs,
        SectionKind::Case,
    ];
    let plan: Vec<(SectionKind, String)> = match kind {
        SiteKind::Forum => vec![(SectionKind::Forum, String::new())],
        SiteKind::Shop => vec![(SectionKind::Shop, String::new())],
        SiteKind::News => vec![(SectionKind::News, String::new())],
        SiteKind::DocsMirror => vec![(SectionKind::Docs, String::new())],
        SiteKind::CaseInsensitive => vec![(SectionKind::Case, String::new())],
        SiteKind::NoDust => vec![(
            *all.choose(&mut rng).unwrap_or(&SectionKind::News),
            String::new(),
        )],
        SiteKind::Mixed => {
            let mut kinds = all.to_vec();
            kinds.shuffle(&mut rng);
            let n = rng.random_range(2..=3);
            let mut bases = vec![
                "/community",
                "/boards",
                "/journal",
                "/newsroom",
                "/helpcenter",
                "/kb",
                "/store",
                "/market",
                "/knowledge",
                "/support-center",
            ];
            bases.shuffle(&mut rng);
            kinds
                .into_iter()
                .take(n)
                .enumerate()
                .map(|(i, k)| {
                    (
                        k,
                        if i == 0 {
                            String::new()
                        } else {
                            bases[i].to_string()
                        },
                    )
                })
                .collect()
        }
        family => vec![(SectionKind::Family(family), String::new())],
    };
    let mut sections: Vec<Box<dyn Section>> = plan
        .iter()
        .map(|(k, base)| make_section(*k, &mut em, &mut rng, base))
        .collect();
    if dust && rng.random_bool(0.4) {
        em.set_query_order(rng.random_range(0.1..0.35));
    }
    let weights: Vec<f64> = sections
        .iter()
        .map(|_| rng.random_range(0.5..2.0))
        .collect();
    let weight_total: f64 = weights.iter().sum();
    let pick_section = |rng: &mut ChaCha8Rng| {
        let mut x = rng.random::<f64>() * weight_total;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    };

    // Main phase: entities until the site is full. Stops if entities keep adding nothing.
    let mut idle = 0;
    while !em.is_full() && idle < 500 {
        let before = em.len();
        let s = pick_section(&mut rng);
        sections[s].entity(&mut em, &mut rng);
        idle = if em.len() == before { idle + 1 } else { 0 };
    }

    // Soft-404 noise: fresh items in the site's own layouts serving one "not found" page.
    em.cap = total;
    em.clear_canonical();
    if n_soft > 0 {
        let not_found = em.new_id();
        let mut added = 0;
        for _ in 0..n_soft.saturating_mul(4) {
            if added >= n_soft || em.is_full() {
                break;
            }
            let s = pick_section(&mut rng);
            let forms = sections[s].phantom(&mut rng);
            let form = rng.random_range(0..forms.len().max(1));
            let mut d = em.random_decoration(&mut rng, forms.len());
            d.form = form;
            let url = em.build(&forms, &d);
            let id = em.new_id();
            if em.add_labelled(
                url,
                id,
                not_found,
                PageKind::NotFound,
                Some(NoiseKind::Soft404),
                None,
            ) == Added::New
            {
                added += 1;
            }
        }
    }

    let mut pages = std::mem::take(&mut em.pages);
    // Wrong merges: a page serves another content (both keep their URLs and content ids).
    let n_wrong = ((pages.len() as f64) * wrong_share).round() as usize;
    if pages.len() > 1 {
        for _ in 0..n_wrong {
            let i = rng.random_range(0..pages.len());
            let j = rng.random_range(0..pages.len());
            if pages[i].noise.is_none() && pages[i].content_id != pages[j].content_id {
                pages[i].label = pages[j].label;
                pages[i].kind = pages[j].kind;
                // The served page declares what it is, not what was asked for.
                pages[i].canonical = pages[j].canonical.clone();
                pages[i].noise = Some(NoiseKind::WrongMerge);
            }
        }
    }

    let variant = match kind {
        SiteKind::Mixed => {
            let parts: Vec<String> = sections
                .iter()
                .zip(&plan)
                .map(|(s, (_, base))| {
                    if base.is_empty() {
                        s.variant()
                    } else {
                        format!("{}@{base}", s.variant())
                    }
                })
                .collect();
            format!("mixed[{}]", parts.join(","))
        }
        SiteKind::NoDust => format!(
            "no-dust[{}]",
            sections
                .iter()
                .map(|s| s.variant())
                .collect::<Vec<_>>()
                .join(",")
        ),
        _ => sections
            .iter()
            .map(|s| s.variant())
            .collect::<Vec<_>>()
            .join(","),
    };
    let mut expected = std::mem::take(&mut em.rules);
    if !dust {
        expected.clear();
    }
    // Only rules the crawl shows: a rule registered for the layout but never exercised (a tiny
    // site, parameter order with single-parameter URLs) would document DUST that is not there.
    expected.retain(|e| !e.examples.is_empty());
    let template = make_template(&mut rng, &pages, &host);
    Site {
        host,
        kind,
        variant,
        pages,
        template,
        hard_negatives: std::mem::take(&mut em.hard_negatives),
        expected,
        text_seed: mix(config.seed ^ 0x5EED_7E87, index as u64),
        declares_canonical: em.declares_canonical,
        redirects_aliases: em.redirects_aliases,
    }
}

fn finite_unit(x: f64) -> f64 {
    if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

fn finite_share(x: f64) -> f64 {
    if x.is_finite() {
        x.clamp(0.0, 0.5)
    } else {
        0.0
    }
}

/// The site's look: navigation to listing pages, sidebar, footer, rotating snippets.
fn make_template(rng: &mut ChaCha8Rng, pages: &[super::SyntheticPage], host: &str) -> SiteTemplate {
    let name_word = host
        .split('.')
        .find(|p| {
            ![
                "www",
                "forum",
                "boards",
                "shop",
                "store",
                "news",
                "docs",
                "ftp",
                "mirror",
                "community",
                "intranet",
                "wiki",
            ]
            .contains(p)
        })
        .unwrap_or(host);
    let name = capitalize(name_word);
    // Navigation: listing pages spread over the site (menus link the section roots), other
    // pages when there are few; each by its shortest crawled URL, as menus link plain addresses.
    let mut shortest: HashMap<u64, &str> = HashMap::new();
    let (mut listings, mut others) = (Vec::new(), Vec::new());
    for p in pages.iter().filter(|p| p.noise.is_none()) {
        match shortest.get_mut(&p.content_id) {
            Some(url) if p.url.len() < url.len() => *url = p.url.as_str(),
            Some(_) => {}
            None => {
                shortest.insert(p.content_id, p.url.as_str());
                if p.kind == PageKind::Listing {
                    listings.push(p.content_id);
                } else {
                    others.push(p.content_id);
                }
            }
        }
    }
    let mut nav = Vec::new();
    for group in [&listings, &others] {
        let want = 6usize.saturating_sub(nav.len()).min(group.len());
        for i in 0..want {
            if let Some(url) = group
                .get(i * group.len() / want)
                .and_then(|id| shortest.get(id))
            {
                nav.push((title(rng, 1..=2, " "), (*url).to_string()));
            }
        }
    }
    let sidebar = (0..rng.random_range(2..=4))
        .map(|_| (title(rng, 2..=2, " "), words::sentence(rng)))
        .collect();
    let rotating = (0..rng.random_range(8..=20))
        .map(|_| {
            if rng.random_bool(0.5) {
                format!("Trending: {}", title(rng, 3..=6, " "))
            } else {
                format!("Sponsored: {}", words::sentence(rng))
            }
        })
        .collect();
    SiteTemplate {
        name: name.clone(),
        tagline: words::sentence(rng),
        nav,
        sidebar,
        footer: format!(
            "Copyright {} {name}. {}",
            rng.random_range(2005..=2025),
            words::sentence(rng)
        ),
        rotating,
        class_prefix: format!("{}{}", &word(rng)[..3], rng.random_range(0..10)),
    }
}

/// Checks every family generator needs, shared by the families' own tests.
#[cfg(test)]
pub(super) mod family_tests {
    use std::collections::HashMap;

    use undust_core::canon::normalize::{StaticConfig, StaticNormalizer};

    use crate::corpus::{generate, render_html, CorpusConfig, DustRule, Site, SiteKind};

    /// Seeds the family tests generate with: several layouts each.
    const SEEDS: [u64; 4] = [3, 11, 29, 71];

    /// The main content of a rendered page (what a content clusterer compares).
    fn main_of(html: &str) -> &str {
        let start = html.find("<main").unwrap_or(0);
        let end = html.find("</main>").unwrap_or(html.len());
        &html[start..end]
    }

    /// Generates `kind` on several seeds and checks what every family must hold: the same seed
    /// gives the same site; every URL is on the site and parses; each expected rule's examples
    /// are one content; hard negatives exist and render different main content; some content
    /// has several URLs. Returns the sites for the family's own checks.
    pub(crate) fn check_family(kind: SiteKind) -> Vec<Site> {
        let normalizer = StaticNormalizer::new(StaticConfig::default()).expect("default config");
        let mut sites = Vec::new();
        for seed in SEEDS {
            let config = CorpusConfig::new(seed, 1)
                .with_kinds(&[kind])
                .with_pages(800, 800);
            let site = generate(&config).sites.remove(0);
            let again = generate(&config).sites.remove(0);
            let urls = |s: &Site| s.pages.iter().map(|p| p.url.clone()).collect::<Vec<_>>();
            assert_eq!(urls(&site), urls(&again), "{kind}: not deterministic");
            assert_eq!(site.kind, kind);
            let origin = format!("://{}/", site.host);
            for p in &site.pages {
                assert!(p.url.contains(&origin), "{} is off the site", p.url);
                assert!(
                    normalizer.normalize(&p.url).is_ok(),
                    "{} does not parse",
                    p.url
                );
            }
            let index = site.content_index();
            assert!(
                site.expected.len() >= 2,
                "{}: {:?}",
                site.variant,
                site.expected
            );
            for e in &site.expected {
                for (a, b) in &e.examples {
                    assert_eq!(index[a.as_str()], index[b.as_str()], "{a} {b}");
                }
            }
            assert!(
                !site.hard_negatives.is_empty(),
                "{}: no negatives",
                site.variant
            );
            let by_url: HashMap<&str, _> = site.pages.iter().map(|p| (p.url.as_str(), p)).collect();
            for (a, b) in &site.hard_negatives {
                assert_ne!(index[a.as_str()], index[b.as_str()], "{a} {b}");
                let (pa, pb) = (by_url[a.as_str()], by_url[b.as_str()]);
                assert_ne!(
                    main_of(&render_html(&site, pa)),
                    main_of(&render_html(&site, pb)),
                    "{a} and {b} render the same main content"
                );
            }
            assert!(site.clusters().values().any(|urls| urls.len() > 1));
            // No family makes the order of query parameters meaningful: two URLs that differ
            // only by it are one content (a generator that emits one page twice breaks this).
            let mut by_sorted: HashMap<String, u64> = HashMap::new();
            for p in &site.pages {
                let id = by_sorted
                    .entry(sorted_query(&p.url))
                    .or_insert(p.content_id);
                assert_eq!(
                    *id, p.content_id,
                    "{} is another content in another order",
                    p.url
                );
            }
            sites.push(site);
        }
        sites
    }

    /// On `site`, URLs that differ only by query parameters its expected rules call irrelevant
    /// (sessions, tracking, highlighting) denote one content: a generator that emits one page
    /// twice under two contents (two siblings of the same forms) breaks this.
    pub(crate) fn assert_irrelevant_keys_keep_the_content(site: &Site) {
        let irrelevant: Vec<&str> = site
            .expected
            .iter()
            .filter_map(|e| match &e.rule {
                DustRule::IgnoreQueryKey { key } => Some(key.as_str()),
                _ => None,
            })
            .collect();
        let mut by_stripped: HashMap<String, (u64, &str)> = HashMap::new();
        for p in &site.pages {
            let stripped = match p.url.split_once('?') {
                Some((head, query)) => {
                    let mut kept: Vec<&str> = query
                        .split('&')
                        .filter(|pair| {
                            let key = pair.split('=').next().unwrap_or(pair);
                            !irrelevant.contains(&key)
                        })
                        .collect();
                    kept.sort_unstable();
                    if kept.is_empty() {
                        head.to_string()
                    } else {
                        format!("{head}?{}", kept.join("&"))
                    }
                }
                None => p.url.clone(),
            };
            let (id, first) = *by_stripped
                .entry(stripped)
                .or_insert((p.content_id, p.url.as_str()));
            assert_eq!(id, p.content_id, "{} and {first} are two contents", p.url);
        }
    }

    /// `url` with its query parameters sorted.
    fn sorted_query(url: &str) -> String {
        match url.split_once('?') {
            Some((head, query)) => {
                let mut pairs: Vec<&str> = query.split('&').collect();
                pairs.sort_unstable();
                format!("{head}?{}", pairs.join("&"))
            }
            None => url.to_string(),
        }
    }

    /// URL → content id of a site.
    pub(crate) fn ids_of(site: &Site) -> HashMap<String, u64> {
        site.pages
            .iter()
            .map(|p| (p.url.clone(), p.content_id))
            .collect()
    }
}
