//! OpenCart: a shop whose pages are routes of one front controller, with or without SEO URLs.
//!
//! Every page is `index.php?route=...`: a product is `route=product/product&product_id=N`, a
//! category `route=product/category&path=A_B` (the path lists the category's ancestors; the page
//! shows the last one, so `path=B` is the same category). Links add context the page only uses
//! for its breadcrumb: a product opened from a category carries `path=`, from a brand page
//! `manufacturer_id=`, from a search `search=`. With SEO URLs on, the `common/seo_url` controller
//! reads each path segment as a keyword: category keywords accumulate into `path` and a product
//! keyword sets `product_id`, so `/{category}/{sub}/{product}`, `/{sub}/{product}` and
//! `/{product}` are one product, and the `index.php?route=` form still answers; parameters the
//! rewrite does not consume stay in the query (`/{product}?manufacturer_id=8`). Affiliate links
//! add `tracking={code}` (stored in a cookie; the page is unchanged). Distinct: category pages
//! (`page=N`), sort orders (`sort=p.price&order=ASC`), page sizes (`limit=`), the product's
//! reviews fragment (`route=product/product/review`), brand pages and other products.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Extra, ExtraPlace, Form, UrlParts};
use crate::corpus::words::{hex, slug, word};
use crate::corpus::{DustRule, PageKind};

/// The sort keys of a category page (OpenCart's `sort` values) with their `order`.
const SORTS: &[(&str, &str)] = &[
    ("p.price", "ASC"),
    ("p.price", "DESC"),
    ("pd.name", "ASC"),
    ("pd.name", "DESC"),
    ("rating", "DESC"),
    ("p.model", "ASC"),
];

/// A category: its id, SEO keyword and parent's index (top-level when `None`).
struct Category {
    id: u32,
    keyword: String,
    parent: Option<usize>,
}

pub(super) struct OpenCart {
    base: String,
    seo: bool,
    categories: Vec<Category>,
    /// (manufacturer id, keyword).
    brands: Vec<(u32, String)>,
    /// Rules: category context, brand context, search context, `index.php?route=` under SEO
    /// URLs, a category by its own id only.
    rules: [usize; 5],
    listed: HashSet<usize>,
    brands_listed: HashSet<usize>,
    next_product: u64,
    used: HashSet<String>,
}

impl OpenCart {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        // SEO keywords are unique across products, categories and brands (OpenCart refuses a
        // keyword already in use), so one path segment names one thing.
        let mut used: HashSet<String> = HashSet::new();
        let mut unique = |rng: &mut ChaCha8Rng, keyword: String| {
            let mut keyword = keyword;
            while !used.insert(keyword.clone()) {
                keyword = format!("{keyword}-{}", rng.random_range(2..100));
            }
            keyword
        };
        let mut categories: Vec<Category> = Vec::new();
        let mut next_id = rng.random_range(17..40);
        for _ in 0..rng.random_range(3..=7) {
            let top = categories.len();
            categories.push(Category {
                id: next_id,
                keyword: {
                    let k = slug(rng, 1..=1);
                    unique(rng, k)
                },
                parent: None,
            });
            next_id += 1;
            for _ in 0..rng.random_range(0..=3) {
                categories.push(Category {
                    id: next_id,
                    keyword: {
                        let k = format!("{}-{}", word(rng), word(rng));
                        unique(rng, k)
                    },
                    parent: Some(top),
                });
                next_id += rng.random_range(1..4);
            }
        }
        let brands = (0..rng.random_range(3..=10))
            .map(|i| {
                let k = slug(rng, 1..=1);
                (5 + i * 2, unique(rng, k))
            })
            .collect();
        let mut shop = OpenCart {
            base: base.to_string(),
            seo: rng.random_bool(0.6),
            categories,
            brands,
            rules: [0; 5],
            listed: HashSet::new(),
            brands_listed: HashSet::new(),
            next_product: rng.random_range(28..5_000),
            used,
        };
        let product = shop.route("product/product").q("product_id", "{id}");
        let canon = if shop.seo {
            UrlParts::new(format!("{base}/{{product}}"))
        } else {
            product.clone()
        };
        let context = |key: &str| {
            if shop.seo {
                UrlParts::new(format!("{base}/{{product}}")).q(key, format!("{{{key}}}"))
            } else {
                shop.route("product/product")
                    .q(key, format!("{{{key}}}"))
                    .q("product_id", "{id}")
            }
        };
        let by_category = if shop.seo {
            UrlParts::new(format!("{base}/{{category}}/{{product}}"))
        } else {
            context("path")
        };
        shop.rules = [
            alias_rule(
                em,
                &by_category,
                &canon,
                "a product under the category it was opened from",
            ),
            alias_rule(
                em,
                &context("manufacturer_id"),
                &canon,
                "a product opened from its brand's page",
            ),
            alias_rule(
                em,
                &context("search"),
                &canon,
                "a product opened from a search",
            ),
            alias_rule(
                em,
                &product,
                &canon,
                "the front controller's route under SEO URLs",
            ),
            alias_rule(
                em,
                &shop.route("product/category").q("path", "{category}"),
                &shop
                    .route("product/category")
                    .q("path", "{parent}_{category}"),
                "a category by its own id, without its ancestors",
            ),
        ];
        // Affiliate links: `tracking` sets a cookie and changes nothing on the page.
        let pool = (em.cap / 40).clamp(3, 200);
        em.add_extra(
            DustRule::IgnoreQueryKey {
                key: "tracking".to_string(),
            },
            "affiliate code `tracking`".to_string(),
            Extra {
                rule: 0,
                name: "tracking".to_string(),
                place: ExtraPlace::Query,
                prob: rng.random_range(0.03..0.12),
                values: (0..pool).map(|_| hex(rng, 13)).collect(),
            },
        );
        if rng.random_bool(0.4) {
            add_tracking(em, rng, 2);
        }
        shop
    }

    fn route(&self, route: &str) -> UrlParts {
        UrlParts::new(format!("{}/index.php", self.base)).q("route", route)
    }

    /// The category path `A_B` of category `c` (ancestors first).
    fn path_of(&self, c: usize) -> String {
        let cat = &self.categories[c];
        match cat.parent {
            Some(p) => format!("{}_{}", self.categories[p].id, cat.id),
            None => cat.id.to_string(),
        }
    }

    /// The SEO keywords of category `c`, ancestors first, joined by `/`.
    fn keywords_of(&self, c: usize) -> String {
        let cat = &self.categories[c];
        match cat.parent {
            Some(p) => format!("{}/{}", self.categories[p].keyword, cat.keyword),
            None => cat.keyword.clone(),
        }
    }

    /// Every address of product `id` (SEO keyword `keyword`) in category `c` of brand `b`.
    fn product_forms(&self, id: u64, keyword: &str, c: usize, b: usize, query: &str) -> Vec<Form> {
        let n = id.to_string();
        let brand = self.brands[b].0.to_string();
        let route = self.route("product/product");
        let mut forms = Vec::new();
        if self.seo {
            let seo = |path: String| UrlParts::new(format!("{}/{path}", self.base));
            forms.push((seo(keyword.to_string()), None));
            forms.push((
                seo(format!("{}/{keyword}", self.keywords_of(c))),
                Some(self.rules[0]),
            ));
            if self.categories[c].parent.is_some() {
                // Linked from the subcategory alone: its keyword only.
                forms.push((
                    seo(format!("{}/{keyword}", self.categories[c].keyword)),
                    Some(self.rules[0]),
                ));
            }
            forms.push((
                seo(keyword.to_string()).q("manufacturer_id", brand.as_str()),
                Some(self.rules[1]),
            ));
            forms.push((
                seo(keyword.to_string()).q("search", query),
                Some(self.rules[2]),
            ));
            forms.push((route.q("product_id", n.as_str()), Some(self.rules[3])));
        } else {
            forms.push((route.clone().q("product_id", n.as_str()), None));
            forms.push((
                route
                    .clone()
                    .q("path", self.path_of(c))
                    .q("product_id", n.as_str()),
                Some(self.rules[0]),
            ));
            forms.push((
                route
                    .clone()
                    .q("manufacturer_id", brand.as_str())
                    .q("product_id", n.as_str()),
                Some(self.rules[1]),
            ));
            forms.push((
                route.q("product_id", n.as_str()).q("search", query),
                Some(self.rules[2]),
            ));
        }
        forms_of(forms)
    }

    /// Page `page` (1 = first) of category `c`, sorted by `sort`, `limit` products a page.
    fn category_forms(
        &self,
        c: usize,
        page: u32,
        sort: Option<(&str, &str)>,
        limit: Option<u32>,
    ) -> Vec<Form> {
        let view = |mut p: UrlParts| {
            if let Some((key, order)) = sort {
                p = p.q("sort", key).q("order", order);
            }
            if let Some(limit) = limit {
                p = p.q("limit", limit.to_string());
            }
            if page > 1 {
                p = p.q("page", page.to_string());
            }
            p
        };
        let full = view(self.route("product/category").q("path", self.path_of(c)));
        let mut forms = Vec::new();
        if self.seo {
            forms.push((
                view(UrlParts::new(format!(
                    "{}/{}",
                    self.base,
                    self.keywords_of(c)
                ))),
                None,
            ));
            forms.push((full, Some(self.rules[3])));
        } else {
            forms.push((full, None));
        }
        if self.categories[c].parent.is_some() {
            let own = self.categories[c].id.to_string();
            forms.push((
                view(self.route("product/category").q("path", own)),
                Some(self.rules[4]),
            ));
        }
        forms_of(forms)
    }

    fn new_product(&mut self, rng: &mut ChaCha8Rng) -> (u64, String) {
        self.next_product += rng.random_range(1..5);
        let mut keyword = slug(rng, 1..=3);
        if !self.used.insert(keyword.clone()) {
            keyword = format!("{keyword}-{}", self.next_product);
            self.used.insert(keyword.clone());
        }
        (self.next_product, keyword)
    }
}

impl Section for OpenCart {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let c = rng.random_range(0..self.categories.len());
        if rng.random_bool(0.15) && self.listed.insert(c) {
            let first = em.content(
                rng,
                &self.category_forms(c, 1, None, None),
                PageKind::Listing,
            );
            for page in 2..rng.random_range(2..=5) {
                em.sibling(
                    rng,
                    &first,
                    &self.category_forms(c, page, None, None),
                    PageKind::Listing,
                );
            }
            let sort = SORTS[rng.random_range(0..SORTS.len())];
            em.sibling(
                rng,
                &first,
                &self.category_forms(c, 1, Some(sort), None),
                PageKind::Listing,
            );
            if rng.random_bool(0.4) {
                let limit = *[25u32, 50, 75, 100]
                    .get(rng.random_range(0..4))
                    .unwrap_or(&25);
                em.sibling(
                    rng,
                    &first,
                    &self.category_forms(c, 1, None, Some(limit)),
                    PageKind::Listing,
                );
            }
            return;
        }
        let b = rng.random_range(0..self.brands.len());
        if rng.random_bool(0.05) && self.brands_listed.insert(b) {
            let (id, keyword) = &self.brands[b];
            let info = self
                .route("product/manufacturer/info")
                .q("manufacturer_id", id.to_string());
            let forms = if self.seo {
                vec![
                    (UrlParts::new(format!("{}/{keyword}", self.base)), None),
                    (info, Some(self.rules[3])),
                ]
            } else {
                vec![(info, None)]
            };
            em.content(rng, &forms_of(forms), PageKind::Listing);
            return;
        }
        let (id, keyword) = self.new_product(rng);
        let query = word(rng).to_string();
        let product = em.content(
            rng,
            &self.product_forms(id, &keyword, c, b, &query),
            PageKind::Product,
        );
        if rng.random_bool(0.25) {
            let reviews = self
                .route("product/product/review")
                .q("product_id", id.to_string());
            em.sibling(
                rng,
                &product,
                &forms_of(vec![(reviews, None)]),
                PageKind::Listing,
            );
        }
        if rng.random_bool(0.2) {
            // A neighbour in the same category: another product, same template and context.
            let (id, keyword) = self.new_product(rng);
            em.sibling(
                rng,
                &product,
                &self.product_forms(id, &keyword, c, b, &query),
                PageKind::Product,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let c = rng.random_range(0..self.categories.len());
        let (id, keyword) = self.new_product(rng);
        self.product_forms(id + 1_000_000, &keyword, c, 0, "x")
    }

    fn variant(&self) -> String {
        format!(
            "opencart:{}",
            if self.seo { "seo-urls" } else { "index.php" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::family_tests::{check_family, ids_of};
    use crate::corpus::SiteKind;

    /// `url` without its query parameter `key`.
    fn without(url: &str, key: &str) -> String {
        let Some((head, query)) = url.split_once('?') else {
            return url.to_string();
        };
        let kept: Vec<&str> = query
            .split('&')
            .filter(|p| !p.starts_with(&format!("{key}=")))
            .collect();
        if kept.is_empty() {
            head.to_string()
        } else {
            format!("{head}?{}", kept.join("&"))
        }
    }

    #[test]
    fn opencart_generates_its_scheme() {
        let mut context = 0;
        let mut sorted = 0;
        for site in check_family(SiteKind::OpenCart) {
            let ids = ids_of(&site);
            for (url, id) in &ids {
                // A product opened from a search is the product.
                if url.contains("search=") {
                    if let Some(plain) = ids.get(&without(url, "search")) {
                        assert_eq!(plain, id, "{url}");
                        context += 1;
                    }
                }
                // A sorted category page is another page.
                if url.contains("sort=") {
                    let unsorted = without(&without(url, "sort"), "order");
                    if let Some(plain) = ids.get(&unsorted) {
                        assert_ne!(plain, id, "{url}");
                        sorted += 1;
                    }
                }
            }
        }
        assert!(
            context > 0 && sorted > 0,
            "context {context}, sorted {sorted}"
        );
    }
}
