//! Site generators: one per kind of site (forum, shop, news, documentation mirrors,
//! case-insensitive server with a wiki), each with layouts chosen by the seed, plus the assembly of
//! a whole site (host, size, sections, noise, template).
//!
//! A generator ("section") knows what contents exist on its kind of site, which URL layouts are
//! equivalent for a content (its *forms*) and which contents are meaningful siblings (pages,
//! sorts, colours, versions, ...). The emitter decides which URLs the crawl saw.

use std::collections::HashSet;

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

// ---------------------------------------------------------------------------------------------
// Forum

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ForumStyle {
    VBulletin,
    PhpBb,
    Paths,
}

struct Forum {
    style: ForumStyle,
    base: String,
    forums: u32,
    forum_slugs: Vec<String>,
    listed: HashSet<u32>,
    next_thread: u64,
    per_page: u32,
    sort: (String, String),
    alias_rule: Option<usize>,
    session: String,
}

impl Forum {
    fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let style = *[ForumStyle::VBulletin, ForumStyle::PhpBb, ForumStyle::Paths]
            .choose(rng)
            .unwrap_or(&ForumStyle::PhpBb);
        let forums = rng.random_range(3..=30);
        let forum_slugs = (0..forums).map(|_| slug(rng, 2..=2)).collect();
        let sort = match style {
            ForumStyle::VBulletin => pick(
                rng,
                &["order=desc", "sort=replycount", "sort=views"],
                "order=desc",
            ),
            ForumStyle::PhpBb => pick(rng, &["sk=t", "sd=a", "sk=r"], "sk=t"),
            ForumStyle::Paths => pick(
                rng,
                &["sort=newest", "sort=oldest", "order=popular"],
                "sort=newest",
            ),
        };
        let (k, v) = sort.split_once('=').unwrap_or(("sort", "newest"));
        let mut forum = Forum {
            style,
            base: base.to_string(),
            forums,
            forum_slugs,
            listed: HashSet::new(),
            next_thread: rng.random_range(1..50_000),
            per_page: *[10u32, 15, 20, 25].choose(rng).unwrap_or(&20),
            sort: (k.to_string(), v.to_string()),
            alias_rule: None,
            session: String::new(),
        };
        // Session ids: where and how they are named depends on the software.
        let (name, place, len) = match style {
            ForumStyle::VBulletin => (
                pick(rng, &["s", "sid", "sessionhash", "sessid"], "s").to_string(),
                ExtraPlace::Query,
                32,
            ),
            ForumStyle::PhpBb => {
                let name = if rng.random_bool(0.7) {
                    "sid".to_string()
                } else {
                    format!("{}_sid", &word(rng)[..3])
                };
                (name, ExtraPlace::Query, 32)
            }
            ForumStyle::Paths => {
                if rng.random_bool(0.5) {
                    (
                        pick(rng, &["jsessionid", "phpsessid", "sessionid"], "jsessionid")
                            .to_string(),
                        ExtraPlace::PathParam,
                        32,
                    )
                } else {
                    ("S".to_string(), ExtraPlace::PathPrefix, 24)
                }
            }
        };
        add_session(em, rng, &name, place, len);
        forum.session = name;
        if rng.random_bool(0.6) {
            let alias = forum.thread_parts(1, "{t}", "{f}", "{slug}", true);
            let canon = forum.thread_parts(1, "{t}", "{f}", "{slug}", false);
            forum.alias_rule = Some(em.rule(
                DustRule::PathAlias {
                    from: pattern(&alias),
                    to: pattern(&canon),
                },
                "alternative thread URL layout".to_string(),
            ));
        }
        forum
    }

    fn thread_parts(&self, page: u32, t: &str, f: &str, slug: &str, alias: bool) -> UrlParts {
        let b = &self.base;
        match self.style {
            ForumStyle::VBulletin => {
                if alias {
                    let suffix = if page > 1 {
                        format!("/page{page}")
                    } else {
                        String::new()
                    };
                    UrlParts::new(format!("{b}/threads/{t}-{slug}{suffix}"))
                } else {
                    let p = UrlParts::new(format!("{b}/showthread.php")).q("t", t);
                    if page > 1 {
                        p.q("page", page.to_string())
                    } else {
                        p
                    }
                }
            }
            ForumStyle::PhpBb => {
                let p = UrlParts::new(format!("{b}/viewtopic.php"));
                let p = if alias {
                    p.q("t", t)
                } else {
                    p.q("f", f).q("t", t)
                };
                if page > 1 {
                    p.q("start", ((page - 1) * self.per_page).to_string())
                } else {
                    p
                }
            }
            ForumStyle::Paths => {
                let suffix = if page > 1 {
                    format!("/page-{page}")
                } else {
                    String::new()
                };
                if alias {
                    UrlParts::new(format!("{b}/topic/{t}{suffix}"))
                } else {
                    UrlParts::new(format!("{b}/topic/{t}/{slug}{suffix}"))
                }
            }
        }
    }

    fn thread_forms(&self, t: u64, f: u32, slug: &str, page: u32) -> Vec<Form> {
        let (t, f) = (t.to_string(), f.to_string());
        let mut forms = vec![(self.thread_parts(page, &t, &f, slug, false), None)];
        if let Some(rule) = self.alias_rule {
            forms.push((self.thread_parts(page, &t, &f, slug, true), Some(rule)));
        }
        forms_of(forms)
    }

    fn listing_forms(&self, f: u32, page: u32, sorted: bool) -> Vec<Form> {
        let b = &self.base;
        let mut p = match self.style {
            ForumStyle::VBulletin => {
                let p = UrlParts::new(format!("{b}/forumdisplay.php")).q("f", f.to_string());
                if page > 1 {
                    p.q("page", page.to_string())
                } else {
                    p
                }
            }
            ForumStyle::PhpBb => {
                let p = UrlParts::new(format!("{b}/viewforum.php")).q("f", f.to_string());
                if page > 1 {
                    p.q("start", ((page - 1) * self.per_page).to_string())
                } else {
                    p
                }
            }
            ForumStyle::Paths => {
                let s = self
                    .forum_slugs
                    .get(f as usize)
                    .map_or("general", String::as_str);
                let suffix = if page > 1 {
                    format!("/page-{page}")
                } else {
                    String::new()
                };
                UrlParts::new(format!("{b}/forum/{f}-{s}{suffix}"))
            }
        };
        if sorted {
            p = p.q(&self.sort.0, self.sort.1.clone());
        }
        forms_of(vec![(p, None)])
    }
}

impl Section for Forum {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.12) && self.listed.len() < self.forums as usize {
            let f = rng.random_range(0..self.forums);
            if self.listed.insert(f) {
                let first = em.content(rng, &self.listing_forms(f, 1, false), PageKind::Listing);
                em.sibling(
                    rng,
                    &first,
                    &self.listing_forms(f, 1, true),
                    PageKind::Listing,
                );
                for page in 2..=rng.random_range(1..=6) {
                    em.sibling(
                        rng,
                        &first,
                        &self.listing_forms(f, page, false),
                        PageKind::Listing,
                    );
                }
                return;
            }
        }
        self.next_thread += rng.random_range(1..6);
        let t = self.next_thread;
        let f = rng.random_range(0..self.forums);
        let s = slug(rng, 2..=5);
        let pages = if rng.random_bool(0.7) {
            1
        } else {
            rng.random_range(2..=6)
        };
        let first = em.content(rng, &self.thread_forms(t, f, &s, 1), PageKind::Thread);
        for page in 2..=pages {
            em.sibling(
                rng,
                &first,
                &self.thread_forms(t, f, &s, page),
                PageKind::Thread,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let t = self.next_thread + rng.random_range(1_000_000..2_000_000);
        self.thread_forms(t, rng.random_range(0..self.forums), &slug(rng, 3..=3), 1)
    }

    fn variant(&self) -> String {
        let style = match self.style {
            ForumStyle::VBulletin => "vbulletin",
            ForumStyle::PhpBb => "phpbb",
            ForumStyle::Paths => "paths",
        };
        format!("forum:{style}:{}", self.session)
    }
}

// ---------------------------------------------------------------------------------------------
// Shop

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShopForm {
    Product,
    PSlug,
    ItemPhp,
    ProductsHtml,
    CatalogPhp,
    Dp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdStyle {
    Numeric,
    Hex,
    Sku,
}

struct Shop {
    base: String,
    forms: Vec<ShopForm>,
    rules: Vec<Option<usize>>,
    id_style: IdStyle,
    next_id: u64,
    sku_prefix: String,
    colour_key: String,
    size_key: String,
    sort_key: String,
    sort_values: Vec<String>,
    page_key: String,
    listing: u8,
    categories: Vec<String>,
    listed: HashSet<usize>,
}

impl Shop {
    fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let mut all = vec![
            ShopForm::Product,
            ShopForm::PSlug,
            ShopForm::ItemPhp,
            ShopForm::ProductsHtml,
            ShopForm::CatalogPhp,
            ShopForm::Dp,
        ];
        all.shuffle(rng);
        let n = rng.random_range(1..=3);
        let forms: Vec<ShopForm> = all.into_iter().take(n).collect();
        let id_style = *[
            IdStyle::Numeric,
            IdStyle::Numeric,
            IdStyle::Hex,
            IdStyle::Sku,
        ]
        .choose(rng)
        .unwrap_or(&IdStyle::Numeric);
        let mut shop = Shop {
            base: base.to_string(),
            forms,
            rules: Vec::new(),
            id_style,
            next_id: rng.random_range(100..20_000),
            sku_prefix: word(rng)[..2].to_ascii_uppercase(),
            colour_key: pick(rng, &["color", "colour", "variant_color", "c"], "color").to_string(),
            size_key: pick(rng, &["size", "sz", "variant_size"], "size").to_string(),
            sort_key: pick(rng, &["sort", "orderby", "order", "sort_by"], "sort").to_string(),
            sort_values: vec![
                "price_asc".into(),
                "price_desc".into(),
                "newest".into(),
                "rating".into(),
            ],
            page_key: pick(rng, &["page", "p", "pg"], "page").to_string(),
            listing: rng.random_range(0..3),
            categories: (0..rng.random_range(4..=40))
                .map(|_| slug(rng, 1..=2))
                .collect(),
            listed: HashSet::new(),
        };
        shop.sort_values.shuffle(rng);
        let canon = shop.product_parts(shop.forms[0], "{id}", "{slug}");
        for (i, &f) in shop.forms.iter().enumerate() {
            let rule = (i > 0).then(|| {
                em.rule(
                    DustRule::PathAlias {
                        from: pattern(&shop.product_parts(f, "{id}", "{slug}")),
                        to: pattern(&canon),
                    },
                    "product id alias layout".to_string(),
                )
            });
            shop.rules.push(rule);
        }
        add_tracking(em, rng, 3);
        shop
    }

    fn product_parts(&self, form: ShopForm, id: &str, slug: &str) -> UrlParts {
        let b = &self.base;
        match form {
            ShopForm::Product => UrlParts::new(format!("{b}/product/{id}")),
            ShopForm::PSlug => UrlParts::new(format!("{b}/p/{id}/{slug}")),
            ShopForm::ItemPhp => UrlParts::new(format!("{b}/item.php")).q("id", id),
            ShopForm::ProductsHtml => UrlParts::new(format!("{b}/products/{slug}-{id}.html")),
            ShopForm::CatalogPhp => {
                UrlParts::new(format!("{b}/catalog/product_view.php")).q("product_id", id)
            }
            ShopForm::Dp => UrlParts::new(format!("{b}/shop/{slug}/dp/{id}")),
        }
    }

    fn product_forms(&self, id: &str, slug: &str, facet: Option<(&str, &str)>) -> Vec<Form> {
        self.forms
            .iter()
            .zip(&self.rules)
            .map(|(&f, &rule)| {
                let mut parts = self.product_parts(f, id, slug);
                if let Some((k, v)) = facet {
                    parts = parts.q(k, v);
                }
                Form { parts, rule }
            })
            .collect()
    }

    fn fresh_id(&mut self, rng: &mut ChaCha8Rng) -> String {
        self.next_id += rng.random_range(1..40);
        match self.id_style {
            IdStyle::Numeric => self.next_id.to_string(),
            IdStyle::Hex => format!("{:x}{}", self.next_id, hex(rng, 6)),
            IdStyle::Sku => format!("{}{:06}", self.sku_prefix, self.next_id),
        }
    }

    fn listing_forms(&self, c: usize, page: u32, sort: Option<&str>) -> Vec<Form> {
        let b = &self.base;
        let cat = self.categories.get(c).map_or("all", String::as_str);
        let mut p = match self.listing {
            0 => UrlParts::new(format!("{b}/category/{cat}")),
            1 => UrlParts::new(format!("{b}/c/{cat}.html")),
            _ => UrlParts::new(format!("{b}/shop.php")).q("cat", c.to_string()),
        };
        if let Some(s) = sort {
            p = p.q(&self.sort_key, s);
        }
        if page > 1 {
            p = p.q(&self.page_key, page.to_string());
        }
        forms_of(vec![(p, None)])
    }
}

impl Section for Shop {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.15) && self.listed.len() < self.categories.len() {
            let c = rng.random_range(0..self.categories.len());
            if self.listed.insert(c) {
                let first = em.content(rng, &self.listing_forms(c, 1, None), PageKind::Listing);
                for s in 0..rng.random_range(0..=2usize) {
                    let sort = self.sort_values.get(s).cloned().unwrap_or_default();
                    em.sibling(
                        rng,
                        &first,
                        &self.listing_forms(c, 1, Some(&sort)),
                        PageKind::Listing,
                    );
                }
                for page in 2..=rng.random_range(1..=5) {
                    em.sibling(
                        rng,
                        &first,
                        &self.listing_forms(c, page, None),
                        PageKind::Listing,
                    );
                }
                return;
            }
        }
        let id = self.fresh_id(rng);
        let s = slug(rng, 2..=4);
        let base = em.content(rng, &self.product_forms(&id, &s, None), PageKind::Product);
        if rng.random_bool(0.3) {
            let mut colours: Vec<&str> = words::COLOURS.to_vec();
            colours.shuffle(rng);
            for c in colours.iter().take(rng.random_range(2..=4)) {
                let forms = self.product_forms(&id, &s, Some((&self.colour_key, c)));
                em.sibling(rng, &base, &forms, PageKind::Product);
            }
        }
        if rng.random_bool(0.1) {
            for size in words::SIZES.iter().take(rng.random_range(2..=4)) {
                let forms = self.product_forms(&id, &s, Some((&self.size_key, size)));
                em.sibling(rng, &base, &forms, PageKind::Product);
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        self.next_id += 1_000_000;
        let id = self.fresh_id(rng);
        let s = slug(rng, 3..=3);
        self.product_forms(&id, &s, None)
    }

    fn variant(&self) -> String {
        let forms: Vec<&str> = self
            .forms
            .iter()
            .map(|f| match f {
                ShopForm::Product => "product",
                ShopForm::PSlug => "p-slug",
                ShopForm::ItemPhp => "item.php",
                ShopForm::ProductsHtml => "products-html",
                ShopForm::CatalogPhp => "catalog.php",
                ShopForm::Dp => "dp",
            })
            .collect();
        format!("shop:{}", forms.join("+"))
    }
}

// ---------------------------------------------------------------------------------------------
// News

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transform {
    PathPrefix(&'static str),
    PathSuffix(&'static str),
    Query(&'static str, &'static str),
}

impl Transform {
    fn apply(self, rel: &UrlParts) -> UrlParts {
        let mut p = rel.clone();
        match self {
            Transform::PathPrefix(s) => p.path = format!("{s}{}", p.path),
            Transform::PathSuffix(s) => p.path = format!("{}{s}", p.path.trim_end_matches('/')),
            Transform::Query(k, v) => p = p.q(k, v),
        }
        p
    }
}

struct News {
    base: String,
    layout: u8,
    sections: Vec<String>,
    listed: HashSet<usize>,
    variants: Vec<(Transform, usize)>,
    comments: Transform,
    page_key: String,
    date: (u32, u32, u32),
    next_id: u64,
    used: HashSet<String>,
}

impl News {
    fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let mut news = News {
            base: base.to_string(),
            layout: rng.random_range(0..5),
            sections: (0..rng.random_range(3..=9))
                .map(|_| word(rng).to_string())
                .collect(),
            listed: HashSet::new(),
            variants: Vec::new(),
            comments: *[
                Transform::PathSuffix("/comments"),
                Transform::Query("comments", "all"),
                Transform::Query("show", "comments"),
            ]
            .choose(rng)
            .unwrap_or(&Transform::PathSuffix("/comments")),
            page_key: pick(rng, &["page", "pg", "p"], "page").to_string(),
            date: (
                rng.random_range(2009..=2025),
                rng.random_range(1..=12),
                rng.random_range(1..=28),
            ),
            next_id: rng.random_range(10_000..9_000_000),
            used: HashSet::new(),
        };
        news.sections.sort();
        news.sections.dedup();
        let example = news.story_rel("{section}", (2024, 5, 12), "{slug}", "{id}");
        if rng.random_bool(0.85) {
            let amp = *[
                Transform::PathPrefix("/amp"),
                Transform::PathSuffix("/amp"),
                Transform::Query("output", "amp"),
                Transform::Query("amp", "1"),
            ]
            .choose(rng)
            .unwrap_or(&Transform::PathPrefix("/amp"));
            let rule = em.rule(
                DustRule::PathAlias {
                    from: pattern(&news.absolute(&amp.apply(&example))),
                    to: pattern(&news.absolute(&example)),
                },
                "AMP version of a story".to_string(),
            );
            news.variants.push((amp, rule));
        }
        if rng.random_bool(0.7) {
            let print = *[
                Transform::PathSuffix("/print"),
                Transform::Query("print", "1"),
                Transform::Query("view", "print"),
                Transform::PathPrefix("/print"),
            ]
            .choose(rng)
            .unwrap_or(&Transform::PathSuffix("/print"));
            let rule = em.rule(
                DustRule::PathAlias {
                    from: pattern(&news.absolute(&print.apply(&example))),
                    to: pattern(&news.absolute(&example)),
                },
                "print version of a story".to_string(),
            );
            news.variants.push((print, rule));
        }
        if rng.random_bool(0.5) {
            add_tracking(em, rng, 2);
        }
        news
    }

    /// The story path relative to the section base.
    fn story_rel(
        &self,
        section: &str,
        (y, m, d): (u32, u32, u32),
        slug: &str,
        id: &str,
    ) -> UrlParts {
        let (y, m, d) = (y.to_string(), format!("{m:02}"), format!("{d:02}"));
        let (m, d) = if m.starts_with('{') {
            ("{mm}".to_string(), "{dd}".to_string())
        } else {
            (m, d)
        };
        match self.layout {
            0 => UrlParts::new(format!("/{y}/{m}/{d}/{slug}")),
            1 => UrlParts::new(format!("/{section}/{y}/{m}/{d}/{slug}")),
            2 => UrlParts::new(format!("/news/{slug}-{id}")),
            3 => UrlParts::new(format!("/article/{id}/{slug}")),
            _ => UrlParts::new(format!("/{section}/{slug}-{id}.html")),
        }
    }

    fn absolute(&self, rel: &UrlParts) -> UrlParts {
        UrlParts {
            path: format!("{}{}", self.base, rel.path),
            query: rel.query.clone(),
        }
    }

    /// Canonical plus AMP/print forms of `rel` (a story, its page n, or its comments).
    fn forms(&self, rel: &UrlParts) -> Vec<Form> {
        let mut forms = vec![Form {
            parts: self.absolute(rel),
            rule: None,
        }];
        for &(t, rule) in &self.variants {
            forms.push(Form {
                parts: self.absolute(&t.apply(rel)),
                rule: Some(rule),
            });
        }
        forms
    }

    fn new_story(&mut self, rng: &mut ChaCha8Rng) -> UrlParts {
        for _ in 0..8 {
            let section = self
                .sections
                .choose(rng)
                .cloned()
                .unwrap_or_else(|| "news".into());
            let s = slug(rng, 3..=7);
            self.next_id += rng.random_range(1..500);
            let rel = self.story_rel(&section, self.date, &s, &self.next_id.to_string());
            if self.used.insert(rel.path.clone()) {
                return rel;
            }
        }
        self.next_id += 1;
        self.story_rel(
            "news",
            self.date,
            &format!("story-{}", self.next_id),
            &self.next_id.to_string(),
        )
    }

    fn advance_date(&mut self, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.4) {
            let (y, m, d) = &mut self.date;
            *d += 1;
            if *d > 28 {
                *d = 1;
                *m += 1;
            }
            if *m > 12 {
                *m = 1;
                *y += 1;
            }
        }
    }
}

impl Section for News {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.08) && self.listed.len() < self.sections.len() {
            let i = rng.random_range(0..self.sections.len());
            if self.listed.insert(i) {
                let s = &self.sections[i];
                let listing = |page: u32| {
                    let path = if page > 1 {
                        format!("{}/{s}/page/{page}", self.base)
                    } else {
                        format!("{}/{s}/", self.base)
                    };
                    forms_of(vec![(UrlParts::new(path), None)])
                };
                let first = em.content(rng, &listing(1), PageKind::Listing);
                for page in 2..=rng.random_range(1..=5) {
                    em.sibling(rng, &first, &listing(page), PageKind::Listing);
                }
                return;
            }
        }
        self.advance_date(rng);
        let mut previous = None;
        for _ in 0..rng.random_range(1..=3) {
            let rel = self.new_story(rng);
            let story = match &previous {
                // Another story of the same day: a hard negative of the first.
                Some(prev) => em.sibling(rng, prev, &self.forms(&rel), PageKind::Article),
                None => em.content(rng, &self.forms(&rel), PageKind::Article),
            };
            if rng.random_bool(0.2) {
                for page in 2..=rng.random_range(2..=4) {
                    let paged = rel.clone().q(&self.page_key, page.to_string());
                    em.sibling(rng, &story, &self.forms(&paged), PageKind::Article);
                }
            }
            if rng.random_bool(0.25) {
                em.sibling(
                    rng,
                    &story,
                    &self.forms(&self.comments.apply(&rel)),
                    PageKind::Listing,
                );
            }
            previous.get_or_insert(story);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let rel = self.new_story(rng);
        self.forms(&rel)
    }

    fn variant(&self) -> String {
        let layout = [
            "date",
            "section-date",
            "news-slug-id",
            "article-id-slug",
            "section-slug-id-html",
        ];
        format!(
            "news:{}+{}",
            layout.get(self.layout as usize).unwrap_or(&"date"),
            self.variants.len()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Documentation mirrors

struct Docs {
    base: String,
    mirrors: Vec<String>,
    mirror_rule: usize,
    root: String,
    versions: Vec<String>,
    langs: Vec<String>,
    sections: Vec<String>,
    ext: &'static str,
    used: HashSet<String>,
    indexed: HashSet<(usize, usize)>,
}

impl Docs {
    fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let mirrors: Vec<String> = match rng.random_range(0..4) {
            0 => (1..=rng.random_range(2..=4))
                .map(|i| format!("/mirror{i}"))
                .collect(),
            // The paper's Figure 4: `archive` and `archive3` serve the same files.
            1 => {
                let w = pick(rng, &["archive", "arch", "files"], "archive");
                let mut m = vec![format!("/{w}")];
                for i in 2..=rng.random_range(2..=4) {
                    m.push(format!("/{w}{i}"));
                }
                m
            }
            2 => vec![String::new(), format!("/mirror/{}", word(rng))],
            _ => {
                let a = word(rng);
                let b = word(rng);
                let b = if a == b { "backup" } else { b };
                vec![format!("/pub/{a}"), format!("/mirrors/{b}")]
            }
        };
        let mut mirrors = mirrors;
        if rng.random_bool(0.5) {
            mirrors.shuffle(rng);
        }
        let mirror_rule = em.rule(
            DustRule::MirrorPrefix {
                prefixes: mirrors.iter().map(|m| format!("{base}{m}")).collect(),
            },
            "the same documentation is mirrored under several path prefixes".to_string(),
        );
        let n_versions = rng.random_range(2..=5);
        let major = rng.random_range(0..4);
        let versions = match rng.random_range(0..3) {
            0 => (0..n_versions)
                .map(|i| format!("v{}", major + i + 1))
                .collect(),
            1 => (0..n_versions)
                .map(|i| format!("{}.{}", major + 1, i))
                .collect(),
            _ => (0..n_versions)
                .map(|i| format!("release-{}", major + i + 1))
                .collect(),
        };
        let langs = if rng.random_bool(0.6) {
            let mut all = vec!["en", "de", "fr", "ja", "es", "pt-br", "zh-cn"];
            all.shuffle(rng);
            all.into_iter()
                .take(rng.random_range(2..=4))
                .map(str::to_string)
                .collect()
        } else {
            Vec::new()
        };
        Docs {
            base: base.to_string(),
            mirrors,
            mirror_rule,
            root: pick(rng, &["docs", "manual", "doc", "reference"], "docs").to_string(),
            versions,
            langs,
            sections: (0..rng.random_range(3..=10))
                .map(|_| word(rng).to_string())
                .collect(),
            ext: pick(rng, &[".html", ".htm", "", "/"], ".html"),
            used: HashSet::new(),
            indexed: HashSet::new(),
        }
    }

    fn prefix(&self, v: usize, l: usize) -> String {
        let version = self.versions.get(v).map_or("latest", String::as_str);
        match self.langs.get(l) {
            Some(lang) => format!("/{}/{version}/{lang}", self.root),
            None => format!("/{}/{version}", self.root),
        }
    }

    fn forms(&self, rel: &str) -> Vec<Form> {
        self.mirrors
            .iter()
            .enumerate()
            .map(|(i, m)| Form {
                parts: UrlParts::new(format!("{}{m}{rel}", self.base)),
                rule: (i > 0).then_some(self.mirror_rule),
            })
            .collect()
    }

    fn page_rel(&self, v: usize, l: usize, page: &str) -> String {
        format!("{}/{page}{}", self.prefix(v, l), self.ext)
    }

    fn new_page(&mut self, rng: &mut ChaCha8Rng) -> String {
        for _ in 0..8 {
            let section = self
                .sections
                .choose(rng)
                .map_or("guide", String::as_str)
                .to_string();
            let page = format!("{section}/{}", slug(rng, 1..=3));
            if self.used.insert(page.clone()) {
                return page;
            }
        }
        format!("misc/page-{}", self.used.len())
    }
}

impl Section for Docs {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let n_langs = self.langs.len().max(1);
        if rng.random_bool(0.05) && self.indexed.len() < self.versions.len() * n_langs {
            let key = (
                rng.random_range(0..self.versions.len()),
                rng.random_range(0..n_langs),
            );
            if self.indexed.insert(key) {
                let rel = format!("{}/", self.prefix(key.0, key.1));
                em.content(rng, &self.forms(&rel), PageKind::Listing);
                return;
            }
        }
        let page = self.new_page(rng);
        // Pages exist in a contiguous range of versions and some languages.
        let v_count = rng.random_range(1..=self.versions.len().clamp(1, 3));
        let v_start = rng.random_range(0..=self.versions.len().saturating_sub(v_count));
        let l_count = rng.random_range(1..=n_langs.min(3));
        let first = em.content(
            rng,
            &self.forms(&self.page_rel(v_start, 0, &page)),
            PageKind::Doc,
        );
        for v in v_start..v_start + v_count {
            for l in 0..l_count {
                if (v, l) == (v_start, 0) {
                    continue;
                }
                let forms = self.forms(&self.page_rel(v, l, &page));
                if v == v_start || l == 0 {
                    // Differs from the first only in version or only in language.
                    em.sibling(rng, &first, &forms, PageKind::Doc);
                } else {
                    em.content(rng, &forms, PageKind::Doc);
                }
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let page = self.new_page(rng);
        self.forms(&self.page_rel(0, 0, &page))
    }

    fn variant(&self) -> String {
        format!(
            "docs:{}x{}:{}",
            self.mirrors.len(),
            self.versions.len(),
            self.langs.len()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Case-insensitive server with default documents and a wiki

struct CaseServer {
    base: String,
    sections: Vec<String>,
    ext: &'static str,
    default_docs: Vec<String>,
    dd_rule: usize,
    /// The wiki's alias layout, if it has one: (rule, uses `/w/index.php`).
    wiki: Option<(usize, bool)>,
    next_oldid: u64,
    used: HashSet<String>,
}

impl CaseServer {
    fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        em.set_case_insensitive(rng.random_range(0.25..0.5));
        let mut names = vec![
            "index.html",
            "index.htm",
            "default.aspx",
            "Default.asp",
            "index.php",
            "home.html",
        ];
        names.shuffle(rng);
        let default_docs: Vec<String> = names
            .into_iter()
            .take(rng.random_range(1..=2))
            .map(str::to_string)
            .collect();
        let dd_rule = em.rule(
            DustRule::DefaultDocument {
                names: default_docs.clone(),
            },
            "a directory URL equals its default document".to_string(),
        );
        let wiki = if rng.random_bool(0.7) {
            let short = rng.random_bool(0.5);
            let (from, to) = if short {
                (
                    format!("{base}/w/index.php?title={{title}}"),
                    format!("{base}/wiki/{{title}}"),
                )
            } else {
                (
                    format!("{base}/index.php?title={{title}}"),
                    format!("{base}/wiki/{{title}}"),
                )
            };
            let rule = em.rule(
                DustRule::PathAlias { from, to },
                "wiki article by query title".to_string(),
            );
            Some((rule, short))
        } else {
            None
        };
        CaseServer {
            base: base.to_string(),
            sections: (0..rng.random_range(3..=8))
                .map(|_| capitalize(word(rng)))
                .collect(),
            ext: pick(rng, &[".aspx", ".html", ".htm", ""], ".aspx"),
            default_docs,
            dd_rule,
            wiki,
            next_oldid: rng.random_range(1_000..900_000),
            used: HashSet::new(),
        }
    }

    fn unique(&mut self, candidate: String) -> Option<String> {
        self.used
            .insert(candidate.to_ascii_lowercase())
            .then_some(candidate)
    }

    fn wiki_forms(&self, title: &str, extra: Option<(&str, String)>) -> Vec<Form> {
        let b = &self.base;
        let mut canon = UrlParts::new(format!("{b}/wiki/{title}"));
        if let Some((k, v)) = &extra {
            canon = canon.q(k, v.clone());
        }
        let mut forms = vec![(canon, None)];
        if let Some((rule, short)) = self.wiki {
            let script = if short {
                format!("{b}/w/index.php")
            } else {
                format!("{b}/index.php")
            };
            let mut alias = UrlParts::new(script).q("title", title);
            if let Some((k, v)) = extra {
                alias = alias.q(k, v);
            }
            forms.push((alias, Some(rule)));
        }
        forms_of(forms)
    }

    fn dir_forms(&self, dir: &str) -> Vec<Form> {
        let mut forms = vec![(UrlParts::new(format!("{}{dir}", self.base)), None)];
        for name in &self.default_docs {
            forms.push((
                UrlParts::new(format!("{}{dir}{name}", self.base)),
                Some(self.dd_rule),
            ));
        }
        forms_of(forms)
    }

    fn new_title(&mut self, rng: &mut ChaCha8Rng) -> String {
        for _ in 0..8 {
            let t = title(rng, 1..=3, "_");
            if let Some(t) = self.unique(format!("wiki:{t}")) {
                return t.trim_start_matches("wiki:").to_string();
            }
        }
        format!("Page_{}", self.used.len())
    }
}

impl Section for CaseServer {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let roll: f64 = rng.random();
        if roll < 0.4 {
            let t = self.new_title(rng);
            let article = em.content(rng, &self.wiki_forms(&t, None), PageKind::Article);
            for _ in 0..rng.random_range(0..=3) {
                self.next_oldid += rng.random_range(1..5_000);
                let forms = self.wiki_forms(&t, Some(("oldid", self.next_oldid.to_string())));
                em.sibling(rng, &article, &forms, PageKind::Article);
            }
            if rng.random_bool(0.3) {
                let forms = self.wiki_forms(&t, Some(("action", "history".to_string())));
                em.sibling(rng, &article, &forms, PageKind::History);
            }
        } else if roll < 0.6 {
            let section = self
                .sections
                .choose(rng)
                .cloned()
                .unwrap_or_else(|| "Home".into());
            let dir = if rng.random_bool(0.5) {
                format!("/{section}/")
            } else {
                format!("/{section}/{}/", title(rng, 1..=2, "-"))
            };
            if let Some(dir) = self.unique(dir) {
                em.content(rng, &self.dir_forms(&dir), PageKind::Listing);
            }
        } else {
            let section = self
                .sections
                .choose(rng)
                .cloned()
                .unwrap_or_else(|| "Home".into());
            let name = title(rng, 1..=3, "-");
            if let Some(path) = self.unique(format!("{}/{section}/{name}{}", self.base, self.ext)) {
                let kind = if rng.random_bool(0.5) {
                    PageKind::Product
                } else {
                    PageKind::Article
                };
                em.content(rng, &forms_of(vec![(UrlParts::new(path), None)]), kind);
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let section = self
            .sections
            .choose(rng)
            .cloned()
            .unwrap_or_else(|| "Home".into());
        let name = format!(
            "{}-{}",
            title(rng, 2..=2, "-"),
            rng.random_range(100..100_000)
        );
        forms_of(vec![(
            UrlParts::new(format!("{}/{section}/{name}{}", self.base, self.ext)),
            None,
        )])
    }

    fn variant(&self) -> String {
        format!(
            "case-insensitive:{}{}",
            self.default_docs.join("+"),
            if self.wiki.is_some() {
                "+wiki-alias"
            } else {
                "+wiki"
            }
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Site assembly

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectionKind {
    Forum,
    Shop,
    News,
    Docs,
    Case,
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
    let mut nav = Vec::new();
    let mut seen = HashSet::new();
    for p in pages
        .iter()
        .filter(|p| p.kind == PageKind::Listing)
        .chain(pages.iter())
    {
        if nav.len() >= 6 {
            break;
        }
        if p.noise.is_none() && seen.insert(p.content_id) {
            nav.push((title(rng, 1..=2, " "), p.url.clone()));
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
