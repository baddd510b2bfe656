//! osCommerce 2.x (2.2-MS2, 2.3 and its CE Phoenix fork): a PHP shop of one script per page
//! type (`index.php`, `product_info.php`, `product_reviews.php`), every link built by
//! `tep_href_link`, often with the "Ultimate SEO URLs" add-on in front.
//!
//! What the model follows (read in `osCommerce/oscommerce2`: `catalog/includes/application_top.php`
//! at 2.2-MS2 and at the 2.4 development head, `includes/functions/html_output.php`,
//! `includes/functions/general.php`, `catalog/index.php`, `catalog/product_info.php` at 2.2-MS2
//! and 2.3, `includes/modules/product_listing.php`, `includes/classes/split_page_results.php`,
//! the `bm_languages` and `bm_currencies` boxes; in `gburton/CE-Phoenix`: `product_info.php`
//! and `includes/functions/href_link.php`; for the add-on, Bobby Easland's `seo.class.php` as
//! shops copied it and its documented `.htaccess` rules):
//!
//! - The session is `osCsid`. When a request brings no session cookie (a crawler), PHP defines
//!   `SID` and `tep_href_link` appends `osCsid=<32 hex>` last to every link, unless the shop
//!   forces cookies or blocks known spiders from sessions: per host, sessions in URLs or not.
//!   A session also remembers the language and currency chosen; the model takes the crawler's
//!   sessions as fresh ones (the shop's defaults), so the id never changes the page.
//! - A product is `product_info.php?products_id=N`; the page reads the id alone (`(int)`), so an
//!   attribute-encoded id from a cart (`42{1}3`, written `%7B1%7D` by crawlers) shows the same
//!   product (a crawler's cart is empty, so no option is preselected). One 2.3 revision sent
//!   ids that are not numbers to the front page; 2.2, later 2.3 code and Phoenix only check that
//!   the id is set, which the model follows.
//! - `cPath` is read by `application_top.php` on every page. On a category listing
//!   (`index.php?cPath=3_10`) it chooses the category: another path is another listing, and a
//!   parent (`cPath=3`, subcategories shown) is another page than its child. On a product page it
//!   only sets the breadcrumb and which branch the categories box opens; without it
//!   `tep_get_product_path` derives the product's own path, so the listing's link
//!   (`product_info.php?cPath=3_10&products_id=N`) is the product page, even in the chrome; a
//!   second category's path changes the breadcrumb only. The main content (name, price,
//!   description, options, reviews button) comes from `products_id`, so the model treats every
//!   `cPath` on `product_info.php` and `product_reviews*.php` as the same content, as the corpus
//!   treats OpenCart's `path=`. The same holds for `manufacturers_id` on a product page (linked
//!   from a manufacturer's listing), while `index.php?manufacturers_id=M` is that manufacturer's
//!   listing.
//! - Listings sort with `sort=<column><a|d>`: column numbers follow the admin's column order, and
//!   without (or with an invalid) `sort` the listing is ordered by name ascending and `sort` set
//!   to that column (`2a` on a default install: image, name, price, buy now). Because `index.php`
//!   writes that default back into `$_GET`, page links carry it (`cPath=3_10&sort=2a&page=2`,
//!   page 1 as `&page=1`), and sort headings write `page=1&sort=X`. The default order spelled
//!   out and `page=1` are the plain listing; another column or direction, later pages and the
//!   manufacturer filter (`filter_id=`, a GET form) are other listings.
//! - `language=xx` (the languages box: every parameter then `language=`) sets the language; the
//!   default language spelled out is the plain page (for a crawler sending no other
//!   `Accept-Language`), another language another content. `currency=XXX` likewise: other
//!   prices, another content; the default currency spelled out, the same page.
//! - `/` and `index.php` of the catalog folder are the front page.
//! - 2.2-MS2's "search-engine safe URLs" write the query as path segments
//!   (`product_info.php/cPath/3_10/products_id/42`), which `application_top.php` reads back; the
//!   query form keeps answering. The model never combines it with sessions in URLs (the id
//!   would become a path segment too) nor with the add-on.
//! - Ultimate SEO URLs writes `name-p-N.html` (`product_info.php`), `name-c-3_10.html`
//!   (`index.php` with `cPath`, the full path), `name-m-M.html` (a manufacturer's listing),
//!   `name-pr-N.html` and `name-pri-N.html?reviews_id=R` (reviews), `name-pi-N.html` (2.2's image
//!   popup); its rewrite rules read only the id after the marker, so an old name still answers,
//!   and the scripts keep answering. It always drops `manufacturers_id` from product links, and
//!   `cPath` unless "Add cPath to product URLs" is on (`name-p-N.html?cPath=3_10`), and leaves
//!   the other parameters in the query in reverse order (it reverses the list before reading it).
//! - Other pages: a product's reviews (`product_reviews.php?products_id=N`, carrying the product
//!   page's `cPath`), each review (`product_reviews_info.php?products_id=N&reviews_id=R`), 2.2's
//!   image popup (`popup_image.php?pID=N`), the specials, new products and reviews lists
//!   (`page=`), the information pages.
//!
//! Not checked in code: the reviews pages' bodies beyond their id handling, the image popup,
//! and the navbar currency links of 2.3.4 (seen in copies of Responsive osCommerce).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_session, add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitted, Emitter, ExtraPlace, Form, UrlParts};
use crate::corpus::words::{pick, slug};
use crate::corpus::{DustRule, PageKind};

/// Language sets of multi-language shops (the default first; the stock install ships three).
const LANGUAGE_SETS: &[&[&str]] = &[
    &["en", "de", "es"],
    &["en", "de", "es"],
    &["de", "en"],
    &["en", "fr"],
    &["nl", "en", "de"],
    &["es", "en"],
];
/// Currency sets of multi-currency shops (the default first).
const CURRENCY_SETS: &[&[&str]] = &[
    &["USD", "EUR"],
    &["EUR", "USD"],
    &["GBP", "EUR", "USD"],
    &["EUR", "CHF"],
    &["USD", "CAD"],
];
/// Listing column layouts: the name column's number and the other sortable columns (image and
/// buy-now columns have no sort link). The first is the stock install's.
const LAYOUTS: &[(u8, &[u8])] = &[
    (2, &[3]),
    (2, &[3]),
    (2, &[3, 4]),
    (3, &[2, 4]),
    (1, &[2]),
    (1, &[2, 3]),
];
/// Pages outside the catalog: (script, paged listing).
const MISC: &[(&str, bool)] = &[
    ("specials.php", true),
    ("products_new.php", true),
    ("reviews.php", true),
    ("shipping.php", false),
    ("privacy.php", false),
    ("conditions.php", false),
    ("contact_us.php", false),
];
/// Scripts the SEO add-on rewrites.
const SEO_PAGES: &[&str] = &[
    "index.php",
    "product_info.php",
    "product_reviews.php",
    "product_reviews_info.php",
    "popup_image.php",
];

/// Rule indices into `OsCommerce::rules`.
const SEO_SCRIPT: usize = 0;
const NAME_NOT_READ: usize = 1;
const CATEGORY_CONTEXT: usize = 2;
const BRAND_CONTEXT: usize = 3;
const ATTRIBUTES: usize = 4;
const SAFE_PATH: usize = 5;
const DEFAULT_LANGUAGE: usize = 6;
const DEFAULT_CURRENCY: usize = 7;
const DEFAULT_SORT: usize = 8;
const FIRST_PAGE: usize = 9;
const DEFAULT_DOCUMENT: usize = 10;

/// Query pairs in the order a link writes them.
type Pairs = Vec<(&'static str, String)>;

fn pairs(list: &[(&'static str, &str)]) -> Pairs {
    list.iter().map(|(k, v)| (*k, (*v).to_string())).collect()
}

/// How a link came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Query,
    Safe,
    Seo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V22,
    V23,
    Phoenix,
}

/// The Ultimate SEO URLs add-on's options.
#[derive(Debug, Clone, Copy)]
struct SeoUrls {
    /// "Add cPath to product URLs".
    add_cpath: bool,
    /// "Add category parent to beginning of URLs" (names only).
    cat_parent: bool,
}

struct Category {
    id: u32,
    /// `3_10`: the ids from the top.
    path: String,
    /// The name the SEO add-on writes.
    seo_name: String,
    parent: Option<usize>,
    /// Has subcategories: its page shows them, not products.
    nested: bool,
    listed: bool,
}

pub(super) struct OsCommerce {
    base: String,
    version: Version,
    seo: Option<SeoUrls>,
    /// 2.2's search-engine-safe URLs.
    safe: bool,
    sessions: bool,
    languages: Vec<&'static str>,
    currencies: Vec<&'static str>,
    /// The listing's default sort (`2a`) and the other sort values it links.
    default_sort: String,
    sorts: Vec<String>,
    categories: Vec<Category>,
    /// (id, SEO name, listed).
    manufacturers: Vec<(u32, String, bool)>,
    rules: [usize; 11],
    home_done: bool,
    misc_done: usize,
    next_product: u64,
    next_review: u64,
}

impl OsCommerce {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(
                rng,
                &["", "", "/catalog", "/catalog", "/shop", "/store"],
                ""
            )
        );
        let version = match rng.random_range(0..20) {
            0..=5 => Version::V22,
            6..=14 => Version::V23,
            _ => Version::Phoenix,
        };
        let seo = rng.random_bool(0.4).then(|| SeoUrls {
            add_cpath: rng.random_bool(0.3),
            cat_parent: rng.random_bool(0.5),
        });
        let safe = seo.is_none() && version == Version::V22 && rng.random_bool(0.35);
        let sessions = !safe && rng.random_bool(0.5);
        let languages = if rng.random_bool(0.5) {
            LANGUAGE_SETS[rng.random_range(0..LANGUAGE_SETS.len())].to_vec()
        } else {
            vec![pick(rng, &["en", "en", "de", "fr"], "en")]
        };
        let currencies = if rng.random_bool(0.45) {
            CURRENCY_SETS[rng.random_range(0..CURRENCY_SETS.len())].to_vec()
        } else {
            vec![pick(rng, &["USD", "EUR", "GBP"], "USD")]
        };
        let (name_col, others) = LAYOUTS[rng.random_range(0..LAYOUTS.len())];
        let mut sorts = vec![format!("{name_col}d")];
        for c in others {
            sorts.push(format!("{c}a"));
            sorts.push(format!("{c}d"));
        }
        let categories = Self::tree(rng, seo.is_some_and(|s| s.cat_parent));
        let mut manufacturers = Vec::new();
        let mut m = rng.random_range(1..10);
        for _ in 0..rng.random_range(2..=8) {
            manufacturers.push((m, slug(rng, 1..=2), false));
            m += rng.random_range(1..4);
        }
        let mut shop = OsCommerce {
            base,
            version,
            seo,
            safe,
            sessions,
            default_sort: format!("{name_col}a"),
            sorts,
            categories,
            manufacturers,
            rules: [0; 11],
            home_done: false,
            misc_done: 0,
            next_product: rng.random_range(1..2_000),
            next_review: rng.random_range(1..500),
            languages,
            currencies,
        };
        let b = shop.base.clone();
        let at = |path: &str| UrlParts::new(format!("{b}/{path}"));
        let product = at("product_info.php").q("products_id", "{id}");
        let listing = at("index.php").q("cPath", "{path}");
        shop.rules = [
            alias_rule(
                em,
                &product,
                &at("{name}-p-{id}.html"),
                "the script behind an Ultimate SEO URLs link",
            ),
            alias_rule(
                em,
                &at("{old-name}-p-{id}.html"),
                &at("{name}-p-{id}.html"),
                "the name before `-p-`, `-c-` or `-m-` is not read",
            ),
            alias_rule(
                em,
                &at("product_info.php")
                    .q("cPath", "{path}")
                    .q("products_id", "{id}"),
                &product,
                "`cPath` on a product page only sets the breadcrumb",
            ),
            alias_rule(
                em,
                &at("product_info.php")
                    .q("manufacturers_id", "{m}")
                    .q("products_id", "{id}"),
                &product,
                "`manufacturers_id` on a product page only sets the breadcrumb",
            ),
            alias_rule(
                em,
                &at("product_info.php").q("products_id", "{id}%7B{option}%7D{value}"),
                &product,
                "an attribute-encoded product id shows the product",
            ),
            alias_rule(
                em,
                &at("product_info.php/products_id/{id}"),
                &product,
                "search-engine-safe URLs: the query written as path segments",
            ),
            alias_rule(
                em,
                &product.clone().q("language", shop.languages[0]),
                &product,
                "the default language spelled out (`language=`)",
            ),
            alias_rule(
                em,
                &product.clone().q("currency", shop.currencies[0]),
                &product,
                "the default currency spelled out (`currency=`)",
            ),
            alias_rule(
                em,
                &listing.clone().q("sort", shop.default_sort.clone()),
                &listing,
                "a listing's default order spelled out (`sort=`)",
            ),
            alias_rule(
                em,
                &listing.clone().q("page", "1"),
                &listing,
                "the first page spelled out (`page=1`)",
            ),
            em.rule(
                DustRule::DefaultDocument {
                    names: vec!["index.php".to_string()],
                },
                "the catalog folder equals its default document `index.php`".to_string(),
            ),
        ];
        if sessions {
            add_session(em, rng, "osCsid", ExtraPlace::Query, 32);
        }
        if rng.random_bool(0.3) {
            add_tracking(em, rng, 1);
        }
        shop
    }

    /// A category tree: top categories, some with subcategories, a few of those with their own.
    fn tree(rng: &mut ChaCha8Rng, cat_parent: bool) -> Vec<Category> {
        let mut categories: Vec<Category> = Vec::new();
        let mut next = rng.random_range(1..25u32);
        let mut add =
            |rng: &mut ChaCha8Rng, categories: &mut Vec<Category>, parent: Option<usize>| {
                next += rng.random_range(1..4);
                let name = slug(rng, 1..=2);
                let (path, seo_name) = match parent {
                    Some(p) => (
                        format!("{}_{next}", categories[p].path),
                        if cat_parent {
                            format!("{}-{name}", categories[p].seo_name)
                        } else {
                            name
                        },
                    ),
                    None => (next.to_string(), name),
                };
                if let Some(p) = parent {
                    categories[p].nested = true;
                }
                categories.push(Category {
                    id: next,
                    path,
                    seo_name,
                    parent,
                    nested: false,
                    listed: false,
                });
                categories.len() - 1
            };
        for _ in 0..rng.random_range(3..=7) {
            let top = add(rng, &mut categories, None);
            if rng.random_bool(0.6) {
                for _ in 0..rng.random_range(1..=4) {
                    let sub = add(rng, &mut categories, Some(top));
                    if rng.random_bool(0.15) {
                        for _ in 0..rng.random_range(1..=3) {
                            add(rng, &mut categories, Some(sub));
                        }
                    }
                }
            }
        }
        categories
    }

    fn at(&self, path: &str) -> UrlParts {
        UrlParts::new(format!("{}/{path}", self.base))
    }

    /// The plain script form: `script?k=v&...`.
    fn query(&self, script: &str, pairs: &Pairs) -> UrlParts {
        pairs
            .iter()
            .fold(self.at(script), |p, (k, v)| p.q(k, v.clone()))
    }

    /// The search-engine-safe form: `script/k/v/...`.
    fn safe_form(&self, script: &str, pairs: &Pairs) -> UrlParts {
        let mut path = script.to_string();
        for (k, v) in pairs {
            path.push('/');
            path.push_str(k);
            path.push('/');
            path.push_str(v);
        }
        self.at(&path)
    }

    /// The SEO add-on's form of a link, if it rewrites it: the anchor `name-X-id.html` and the
    /// parameters it keeps, in reverse order.
    fn seo_form(&self, script: &str, pairs: &Pairs, name: &str) -> Option<UrlParts> {
        let seo = self.seo?;
        if !SEO_PAGES.contains(&script) {
            return None;
        }
        let has = |key: &str| pairs.iter().any(|(k, _)| *k == key);
        let mut anchor = None;
        let mut kept: Vec<(&str, &str)> = Vec::new();
        for (k, v) in pairs.iter().rev() {
            let (k, v) = (*k, v.as_str());
            match (k, script) {
                ("products_id", "product_info.php") if !v.contains('%') => {
                    anchor = Some(format!("{name}-p-{v}.html"));
                }
                ("products_id", "product_reviews.php") => {
                    anchor = Some(format!("{name}-pr-{v}.html"));
                }
                ("products_id", "product_reviews_info.php") => {
                    anchor = Some(format!("{name}-pri-{v}.html"));
                }
                ("cPath", "index.php") => anchor = Some(format!("{name}-c-{v}.html")),
                ("cPath", _) => {
                    if seo.add_cpath {
                        kept.push((k, v));
                    }
                }
                ("manufacturers_id", "index.php") if !has("cPath") && !has("products_id") => {
                    anchor = Some(format!("{name}-m-{v}.html"));
                }
                ("manufacturers_id", "product_info.php") => {}
                ("pID", "popup_image.php") => anchor = Some(format!("{name}-pi-{v}.html")),
                _ => kept.push((k, v)),
            }
        }
        let anchor = anchor?;
        Some(
            kept.into_iter()
                .fold(self.at(&anchor), |p, (k, v)| p.q(k, v)),
        )
    }

    /// The link the shop writes for `script` with `pairs`, and in which scheme.
    fn linked(&self, script: &str, pairs: &Pairs, name: &str) -> (UrlParts, Scheme) {
        if let Some(p) = self.seo_form(script, pairs, name) {
            (p, Scheme::Seo)
        } else if self.safe && !pairs.is_empty() {
            (self.safe_form(script, pairs), Scheme::Safe)
        } else {
            (self.query(script, pairs), Scheme::Query)
        }
    }

    /// The forms of one page: the link of `canon` first, then the links of `alts` (each with the
    /// rule that makes it `canon`, kept when the link is in the same scheme), then, where links
    /// are rewritten, the script's query forms.
    fn forms(
        &self,
        script: &str,
        name: &str,
        canon: &Pairs,
        alts: &[(Pairs, Option<usize>)],
    ) -> Vec<(UrlParts, Option<usize>)> {
        let (first, scheme) = self.linked(script, canon, name);
        let mut out = vec![(first, None)];
        for (p, rule) in alts {
            let (url, s) = self.linked(script, p, name);
            out.push((url, rule.filter(|_| s == scheme).map(|r| self.rules[r])));
        }
        if scheme != Scheme::Query {
            let rule = if scheme == Scheme::Seo {
                SEO_SCRIPT
            } else {
                SAFE_PATH
            };
            out.push((self.query(script, canon), Some(self.rules[rule])));
            for (p, _) in alts {
                out.push((self.query(script, p), None));
            }
        }
        let mut unique: Vec<(UrlParts, Option<usize>)> = Vec::with_capacity(out.len());
        for (url, rule) in out {
            if !unique.iter().any(|(u, _)| *u == url) {
                unique.push((url, rule));
            }
        }
        unique
    }

    fn multi_language(&self) -> bool {
        self.languages.len() > 1
    }

    fn multi_currency(&self) -> bool {
        self.currencies.len() > 1
    }

    /// A product page in the default language and currency, or with `extra` (`language=de`,
    /// `currency=EUR`) chosen; `paths` its categories' paths (the first its own), `brand` its
    /// manufacturer, `uprid` an attribute-encoded id linked to it.
    #[allow(clippy::too_many_arguments)]
    fn product_forms(
        &self,
        id: u64,
        name: &str,
        paths: &[&str],
        brand: Option<u32>,
        uprid: Option<&str>,
        extra: Option<(&'static str, &str)>,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let id = id.to_string();
        let tail = |mut p: Pairs| {
            if let Some((k, v)) = extra {
                p.push((k, v.to_string()));
            }
            p
        };
        let canon = tail(pairs(&[("products_id", &id)]));
        let mut alts = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            // Listings link their products with their path; boxes without.
            if i > 0 || rng.random_bool(0.85) {
                alts.push((
                    tail(pairs(&[("cPath", path), ("products_id", &id)])),
                    Some(CATEGORY_CONTEXT),
                ));
            }
        }
        if let (Some(m), true) = (brand, rng.random_bool(0.4)) {
            alts.push((
                tail(pairs(&[
                    ("manufacturers_id", &m.to_string()),
                    ("products_id", &id),
                ])),
                Some(BRAND_CONTEXT),
            ));
        }
        if extra.is_none() {
            if let Some(u) = uprid {
                alts.push((pairs(&[("products_id", u)]), Some(ATTRIBUTES)));
            }
            if self.multi_language() && rng.random_bool(0.3) {
                let default = self.languages[0];
                alts.push((
                    pairs(&[("products_id", &id), ("language", default)]),
                    Some(DEFAULT_LANGUAGE),
                ));
                if let (Some(path), true) = (paths.first(), rng.random_bool(0.5)) {
                    alts.push((
                        pairs(&[("cPath", path), ("products_id", &id), ("language", default)]),
                        None,
                    ));
                }
            }
            if self.multi_currency() && rng.random_bool(0.25) {
                alts.push((
                    pairs(&[("products_id", &id), ("currency", self.currencies[0])]),
                    Some(DEFAULT_CURRENCY),
                ));
            }
        }
        let mut forms = self.forms("product_info.php", name, &canon, &alts);
        if extra.is_none() && rng.random_bool(0.12) {
            if let Some(old) = self.seo_form("product_info.php", &canon, &slug(rng, 1..=3)) {
                forms.push((old, Some(self.rules[NAME_NOT_READ])));
            }
        }
        forms_of(forms)
    }

    /// Indices of the categories that list products.
    fn leaves(&self) -> Vec<usize> {
        (0..self.categories.len())
            .filter(|&i| !self.categories[i].nested)
            .collect()
    }

    fn product(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_product += rng.random_range(1..6);
        let id = self.next_product;
        let name = slug(rng, 2..=5);
        let leaves = self.leaves();
        let own = leaves[rng.random_range(0..leaves.len())];
        let mut paths = vec![self.categories[own].path.as_str()];
        if rng.random_bool(0.15) {
            let other = leaves[rng.random_range(0..leaves.len())];
            if other != own {
                paths.push(self.categories[other].path.as_str());
            }
        }
        let brand = rng
            .random_bool(0.6)
            .then(|| self.manufacturers[rng.random_range(0..self.manufacturers.len())].0);
        let uprid = rng.random_bool(0.06).then(|| {
            format!(
                "{id}%7B{}%7D{}",
                rng.random_range(1..8),
                rng.random_range(1..40)
            )
        });
        let forms = self.product_forms(id, &name, &paths, brand, uprid.as_deref(), None, rng);
        let first = em.content(rng, &forms, PageKind::Product);
        if self.multi_language() && rng.random_bool(0.3) {
            let other = self.languages[rng.random_range(1..self.languages.len())];
            let forms = self.product_forms(
                id,
                &name,
                &paths,
                brand,
                None,
                Some(("language", other)),
                rng,
            );
            em.sibling(rng, &first, &forms, PageKind::Product);
        }
        if self.multi_currency() && rng.random_bool(0.2) {
            let other = self.currencies[rng.random_range(1..self.currencies.len())];
            let forms = self.product_forms(
                id,
                &name,
                &paths,
                brand,
                None,
                Some(("currency", other)),
                rng,
            );
            em.sibling(rng, &first, &forms, PageKind::Product);
        }
        if rng.random_bool(0.25) {
            // The reviews button carries the product page's parameters.
            let pid = id.to_string();
            let canon = pairs(&[("products_id", &pid)]);
            let mut alts = Vec::new();
            if rng.random_bool(0.5) {
                alts.push((
                    pairs(&[("cPath", paths[0]), ("products_id", &pid)]),
                    Some(CATEGORY_CONTEXT),
                ));
            }
            let forms = forms_of(self.forms("product_reviews.php", &name, &canon, &alts));
            let reviews = em.sibling(rng, &first, &forms, PageKind::Listing);
            for _ in 0..rng.random_range(0..=2) {
                self.next_review += rng.random_range(1..5);
                let r = self.next_review.to_string();
                let canon = pairs(&[("products_id", &pid), ("reviews_id", &r)]);
                let forms = forms_of(self.forms("product_reviews_info.php", &name, &canon, &[]));
                em.sibling(rng, &reviews, &forms, PageKind::Article);
            }
        }
        if self.version == Version::V22 && rng.random_bool(0.25) {
            let canon = pairs(&[("pID", &id.to_string())]);
            let forms = forms_of(self.forms("popup_image.php", &name, &canon, &[]));
            em.sibling(rng, &first, &forms, PageKind::Article);
        }
    }

    /// A product listing of `key=value` (`cPath=3_10`, `manufacturers_id=5`): page `page`
    /// (1 = first) in the default order, or in order `sort` (reached from its heading), or
    /// narrowed by `filter` (`filter_id=`), or with `extra` chosen (`language=`, `currency=`).
    #[allow(clippy::too_many_arguments)]
    fn listing_forms(
        &self,
        key: &'static str,
        value: &str,
        name: &str,
        page: u32,
        sort: Option<&str>,
        filter: Option<u32>,
        extra: Option<(&'static str, &str)>,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let d = self.default_sort.as_str();
        let base = pairs(&[(key, value)]);
        let with = |list: &[(&'static str, &str)]| {
            let mut p = base.clone();
            p.extend(pairs(list));
            if let Some((k, v)) = extra {
                p.push((k, v.to_string()));
            }
            p
        };
        let page_s = page.to_string();
        let (canon, alts): (Pairs, Vec<(Pairs, Option<usize>)>) = match (sort, filter) {
            (_, Some(f)) => (
                with(&[("sort", d), ("filter_id", &f.to_string())]),
                Vec::new(),
            ),
            (Some(s), None) if page == 1 => {
                let mut alts = Vec::new();
                if rng.random_bool(0.4) {
                    alts.push((with(&[("sort", s), ("page", "1")]), None));
                }
                if rng.random_bool(0.5) {
                    alts.push((with(&[("sort", s)]), Some(FIRST_PAGE)));
                }
                (with(&[("page", "1"), ("sort", s)]), alts)
            }
            (Some(s), None) => (with(&[("sort", s), ("page", &page_s)]), Vec::new()),
            (None, None) if page == 1 && extra.is_some() => (with(&[("sort", d)]), Vec::new()),
            (None, None) if page == 1 => {
                let mut alts = Vec::new();
                if rng.random_bool(0.5) {
                    alts.push((with(&[("sort", d)]), Some(DEFAULT_SORT)));
                }
                if rng.random_bool(0.6) {
                    alts.push((with(&[("sort", d), ("page", "1")]), None));
                }
                if rng.random_bool(0.3) {
                    alts.push((with(&[("page", "1"), ("sort", d)]), None));
                }
                if rng.random_bool(0.2) {
                    alts.push((with(&[("page", "1")]), Some(FIRST_PAGE)));
                }
                if self.multi_language() && rng.random_bool(0.2) {
                    let default = self.languages[0];
                    alts.push((with(&[("sort", d), ("language", default)]), None));
                }
                (with(&[]), alts)
            }
            (None, None) => {
                let mut alts = Vec::new();
                if rng.random_bool(0.3) {
                    alts.push((with(&[("page", &page_s)]), Some(DEFAULT_SORT)));
                }
                (with(&[("sort", d), ("page", &page_s)]), alts)
            }
        };
        let mut forms = self.forms("index.php", name, &canon, &alts);
        if page == 1 && sort.is_none() && filter.is_none() && rng.random_bool(0.1) {
            if let Some(old) = self.seo_form("index.php", &canon, &slug(rng, 1..=2)) {
                forms.push((old, Some(self.rules[NAME_NOT_READ])));
            }
        }
        forms_of(forms)
    }

    /// A listing's pages, sorts, filter and other languages and currencies, as siblings of its
    /// first page.
    fn listing(
        &self,
        em: &mut Emitter,
        rng: &mut ChaCha8Rng,
        key: &'static str,
        value: &str,
        name: &str,
        filters: &[u32],
    ) -> Emitted {
        let forms = self.listing_forms(key, value, name, 1, None, None, None, rng);
        let first = em.content(rng, &forms, PageKind::Listing);
        for page in 2..=rng.random_range(1..=5u32) {
            let forms = self.listing_forms(key, value, name, page, None, None, None, rng);
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
        if rng.random_bool(0.6) {
            let s = self.sorts[rng.random_range(0..self.sorts.len())].clone();
            let forms = self.listing_forms(key, value, name, 1, Some(&s), None, None, rng);
            let sorted = em.sibling(rng, &first, &forms, PageKind::Listing);
            if rng.random_bool(0.3) {
                let forms = self.listing_forms(key, value, name, 2, Some(&s), None, None, rng);
                em.sibling(rng, &sorted, &forms, PageKind::Listing);
            }
        }
        if !filters.is_empty() && rng.random_bool(0.25) {
            let f = filters[rng.random_range(0..filters.len())];
            let forms = self.listing_forms(key, value, name, 1, None, Some(f), None, rng);
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
        if self.multi_language() && rng.random_bool(0.3) {
            let other = self.languages[rng.random_range(1..self.languages.len())];
            let forms = self.listing_forms(
                key,
                value,
                name,
                1,
                None,
                None,
                Some(("language", other)),
                rng,
            );
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
        if self.multi_currency() && rng.random_bool(0.15) {
            let other = self.currencies[rng.random_range(1..self.currencies.len())];
            let forms = self.listing_forms(
                key,
                value,
                name,
                1,
                None,
                None,
                Some(("currency", other)),
                rng,
            );
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
        first
    }

    /// A category with subcategories: its page shows them (no sort, no pages).
    fn nested_forms(&self, c: usize, extra: Option<(&'static str, &str)>) -> Vec<Form> {
        let cat = &self.categories[c];
        let mut canon = pairs(&[("cPath", &cat.path)]);
        let mut alts = Vec::new();
        match extra {
            Some((k, v)) => canon.push((k, v.to_string())),
            None if self.multi_language() => alts.push((
                pairs(&[("cPath", &cat.path), ("language", self.languages[0])]),
                Some(DEFAULT_LANGUAGE),
            )),
            None => {}
        }
        forms_of(self.forms("index.php", &cat.seo_name, &canon, &alts))
    }

    fn category(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, c: usize) {
        self.categories[c].listed = true;
        if self.categories[c].nested {
            let first = em.content(rng, &self.nested_forms(c, None), PageKind::Listing);
            if self.multi_language() && rng.random_bool(0.3) {
                let other = self.languages[rng.random_range(1..self.languages.len())];
                let forms = self.nested_forms(c, Some(("language", other)));
                em.sibling(rng, &first, &forms, PageKind::Listing);
            }
            return;
        }
        let filters: Vec<u32> = self.manufacturers.iter().map(|m| m.0).collect();
        let (path, name) = (
            self.categories[c].path.clone(),
            self.categories[c].seo_name.clone(),
        );
        let first = self.listing(em, rng, "cPath", &path, &name, &filters);
        // The parent's page, which shows this category among its subcategories.
        if let Some(p) = self.categories[c].parent {
            if !self.categories[p].listed && rng.random_bool(0.5) {
                self.categories[p].listed = true;
                em.sibling(rng, &first, &self.nested_forms(p, None), PageKind::Listing);
            }
        }
    }

    fn manufacturer(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, i: usize) {
        self.manufacturers[i].2 = true;
        let (m, name) = (self.manufacturers[i].0, self.manufacturers[i].1.clone());
        let filters: Vec<u32> = self
            .leaves()
            .into_iter()
            .map(|c| self.categories[c].id)
            .collect();
        self.listing(em, rng, "manufacturers_id", &m.to_string(), &name, &filters);
    }

    fn home(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let mut forms = vec![
            (self.at(""), None),
            (self.at("index.php"), Some(self.rules[DEFAULT_DOCUMENT])),
        ];
        if self.multi_language() {
            let (url, _) = self.linked("index.php", &pairs(&[("language", self.languages[0])]), "");
            forms.push((url, None));
        }
        let first = em.content(rng, &forms_of(forms), PageKind::Listing);
        let mut others: Vec<(&'static str, &'static str)> = Vec::new();
        if self.multi_language() {
            others.push(("language", self.languages[1]));
        }
        if self.multi_currency() {
            others.push(("currency", self.currencies[1]));
        }
        for (k, v) in others {
            let (url, _) = self.linked("index.php", &pairs(&[(k, v)]), "");
            em.sibling(rng, &first, &forms_of(vec![(url, None)]), PageKind::Listing);
        }
    }

    /// A page outside the catalog (specials, new products, reviews; shipping, privacy, ...).
    fn misc(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let (script, paged) = MISC[self.misc_done];
        self.misc_done += 1;
        let mut alts = Vec::new();
        if paged && rng.random_bool(0.3) {
            alts.push((pairs(&[("page", "1")]), Some(FIRST_PAGE)));
        }
        if self.multi_language() && rng.random_bool(0.2) {
            alts.push((
                pairs(&[("language", self.languages[0])]),
                Some(DEFAULT_LANGUAGE),
            ));
        }
        let kind = if paged {
            PageKind::Listing
        } else {
            PageKind::Article
        };
        let first = em.content(
            rng,
            &forms_of(self.forms(script, "", &Vec::new(), &alts)),
            kind,
        );
        if paged {
            for page in 2..=rng.random_range(1..=3u32) {
                let canon = pairs(&[("page", &page.to_string())]);
                let forms = forms_of(self.forms(script, "", &canon, &[]));
                em.sibling(rng, &first, &forms, kind);
            }
        }
    }
}

impl Section for OsCommerce {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if !self.home_done {
            self.home_done = true;
            self.home(em, rng);
            return;
        }
        let roll: f64 = rng.random();
        let c = rng.random_range(0..self.categories.len());
        let m = rng.random_range(0..self.manufacturers.len());
        if roll < 0.12 && !self.categories[c].listed {
            self.category(em, rng, c);
        } else if roll < 0.17 && !self.manufacturers[m].2 {
            self.manufacturer(em, rng, m);
        } else if roll < 0.19 && self.misc_done < MISC.len() {
            self.misc(em, rng);
        } else {
            self.product(em, rng);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let id = self.next_product + rng.random_range(1_000_000..2_000_000);
        let name = slug(rng, 2..=4);
        let path = self.categories[self.leaves()[0]].path.clone();
        self.product_forms(id, &name, &[&path], None, None, None, rng)
    }

    fn variant(&self) -> String {
        format!(
            "oscommerce{}{}{}{}{}+sort{}+{}+{}",
            match self.version {
                Version::V22 => "2.2",
                Version::V23 => "2.3",
                Version::Phoenix => "-phoenix",
            },
            self.base,
            match self.seo {
                Some(SeoUrls {
                    add_cpath: true, ..
                }) => "+seo-cpath",
                Some(_) => "+seo",
                None => "",
            },
            if self.safe { "+safe" } else { "" },
            if self.sessions { "+osCsid" } else { "" },
            self.default_sort,
            self.languages.join("/"),
            self.currencies.join("/"),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};

    use super::super::family_tests::{
        assert_irrelevant_keys_keep_the_content, check_family, ids_of,
    };
    use crate::corpus::{generate, CorpusConfig, SiteKind};

    /// The query of `url` as pairs, and the part before `?`.
    fn split(url: &str) -> (&str, Vec<(&str, &str)>) {
        match url.split_once('?') {
            Some((head, query)) => (
                head,
                query
                    .split('&')
                    .map(|p| p.split_once('=').unwrap_or((p, "")))
                    .collect(),
            ),
            None => (url, Vec::new()),
        }
    }

    #[test]
    fn oscommerce_generates_its_scheme() {
        let (mut context, mut seo, mut sorts, mut languages, mut parents) = (0, 0, 0, 0, 0);
        for site in check_family(SiteKind::OsCommerce) {
            assert_irrelevant_keys_keep_the_content(&site);
            let ids = ids_of(&site);
            // `oscommerce2.3/catalog+seo+osCsid+sort2a+en/de/es+USD/EUR`.
            let parts: Vec<&str> = site.variant.split('+').collect();
            let default_sort = parts
                .iter()
                .find_map(|p| p.strip_prefix("sort"))
                .expect("default sort in the variant");
            let default_language = parts[parts.len() - 2].split('/').next().unwrap_or("en");
            let default_currency = parts[parts.len() - 1].split('/').next().unwrap_or("USD");
            // Category listings by path: another path is another listing.
            let mut listings: HashMap<&str, (String, u64)> = HashMap::new();
            for (url, id) in &ids {
                let (head, query) = split(url);
                let value = |k: &str| query.iter().find(|(key, _)| *key == k).map(|p| p.1);
                if let Some(script_head) = head.strip_suffix("/product_info.php") {
                    // `cPath` and `manufacturers_id` on a product page keep it the product.
                    if let (Some(p), 2) = (value("products_id"), query.len()) {
                        if value("cPath").is_some() || value("manufacturers_id").is_some() {
                            let plain = format!("{script_head}/product_info.php?products_id={p}");
                            if let Some(other) = ids.get(&plain) {
                                assert_eq!(other, id, "{url} vs {plain}");
                                context += 1;
                            }
                        }
                    }
                }
                // Another language or currency is another content; the default spelled out is
                // the page without it.
                for (key, default) in [
                    ("language", default_language),
                    ("currency", default_currency),
                ] {
                    let Some((_, chosen)) = query.iter().find(|(k, _)| *k == key) else {
                        continue;
                    };
                    let rest: Vec<String> = query
                        .iter()
                        .filter(|(k, _)| *k != key)
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    let plain = if rest.is_empty() {
                        head.to_string()
                    } else {
                        format!("{head}?{}", rest.join("&"))
                    };
                    if let Some(other) = ids.get(&plain) {
                        if *chosen == default {
                            assert_eq!(other, id, "{url} vs {plain}");
                        } else {
                            assert_ne!(other, id, "{url} vs {plain}");
                        }
                        languages += 1;
                    }
                }
                if let Some(script_head) = head.strip_suffix("/index.php") {
                    if let (Some(path), 1) = (value("cPath"), query.len()) {
                        listings.insert(path, (script_head.to_string(), *id));
                    }
                    // The default order spelled out is the listing; another order is not.
                    if let (Some(path), Some(s), None) =
                        (value("cPath"), value("sort"), value("filter_id"))
                    {
                        let plain = format!("{script_head}/index.php?cPath={path}");
                        let first_page = value("page").is_none_or(|p| p == "1");
                        let only_order = query
                            .iter()
                            .all(|(k, _)| ["cPath", "sort", "page"].contains(k));
                        if let (true, true, Some(other)) = (first_page, only_order, ids.get(&plain))
                        {
                            if s == default_sort {
                                assert_eq!(other, id, "{url}");
                            } else {
                                assert_ne!(other, id, "{url}");
                            }
                            sorts += 1;
                        }
                    }
                }
                // An SEO product link is the script's page.
                if let (Some((dir, file)), true) = (url.rsplit_once('/'), query.is_empty()) {
                    if let Some((_, n)) = file
                        .strip_suffix(".html")
                        .and_then(|stem| stem.rsplit_once("-p-"))
                    {
                        let script = format!("{dir}/product_info.php?products_id={n}");
                        if let Some(other) = ids.get(&script) {
                            assert_eq!(other, id, "{url} vs {script}");
                            seo += 1;
                        }
                    }
                }
            }
            let distinct: BTreeSet<u64> = listings.values().map(|v| v.1).collect();
            assert_eq!(distinct.len(), listings.len(), "{listings:?}");
            // A parent category is another page than its child.
            for (path, (_, id)) in &listings {
                if let Some((parent, _)) = path.rsplit_once('_') {
                    if let Some((_, other)) = listings.get(parent) {
                        assert_ne!(other, id, "{path}");
                        parents += 1;
                    }
                }
            }
        }
        assert!(
            context > 0 && seo > 0 && sorts > 0 && languages > 0 && parents > 0,
            "context {context}, seo {seo}, sorts {sorts}, languages {languages}, parents {parents}"
        );
    }

    #[test]
    fn oscommerce_draws_every_host_option() {
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for seed in 0..64 {
            let config = CorpusConfig::new(seed, 1)
                .with_kinds(&[SiteKind::OsCommerce])
                .with_pages(40, 40);
            let site = generate(&config).sites.remove(0);
            let v = &site.variant;
            let parts: Vec<&str> = v.split('+').collect();
            let (languages, currencies) = (parts[parts.len() - 2], parts[parts.len() - 1]);
            for (flag, on) in [
                ("seo", v.contains("+seo")),
                ("seo-cpath", v.contains("+seo-cpath")),
                ("safe", v.contains("+safe")),
                ("sessions", v.contains("+osCsid")),
                ("languages", languages.contains('/')),
                ("currencies", currencies.contains('/')),
                ("2.2", v.starts_with("oscommerce2.2")),
                ("2.3", v.starts_with("oscommerce2.3")),
                ("phoenix", v.starts_with("oscommerce-phoenix")),
                ("catalog", v.contains("/catalog")),
                ("sort1a", v.contains("+sort1a")),
                ("sort3a", v.contains("+sort3a")),
            ] {
                seen.insert(format!("{flag}={on}"));
            }
            assert_eq!(
                v.contains("+osCsid"),
                site.expected
                    .iter()
                    .any(|e| e.description.contains("osCsid")),
                "{v}"
            );
        }
        for flag in [
            "seo",
            "seo-cpath",
            "safe",
            "sessions",
            "languages",
            "currencies",
            "2.2",
            "2.3",
            "phoenix",
            "catalog",
            "sort1a",
            "sort3a",
        ] {
            for on in [true, false] {
                assert!(
                    seen.contains(&format!("{flag}={on}")),
                    "{flag}={on} never drawn"
                );
            }
        }
    }
}
