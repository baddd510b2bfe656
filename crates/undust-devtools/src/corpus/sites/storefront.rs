//! Shop software as it forms product URLs; the seed picks one of:
//!
//! - Shopify: `/products/handle` ≡ `/collections/c/products/handle` for every collection holding
//!   it; search results add `?_pos=&_sid=&_ss=` (tracking). Distinct: `?variant=N` (another
//!   colour/size preselected), collection pages (`?page=N`) and sorts (`?sort_by=`).
//! - WooCommerce: `/product/slug/` ≡ `/?product=slug` ≡ `/product/slug` (no slash). Distinct:
//!   `?attribute_pa_color=` variations, `/product-category/c/page/N/`, `?orderby=`.
//! - Magento 2: `/slug.html` ≡ `/catalog/product/view/id/N` ≡ `/category/slug.html` (category
//!   path in product URLs), store switcher parameters `___store`/`___from_store` are irrelevant.
//!   Distinct: `?color=` filters, `?p=N` listing pages, `?product_list_order=`.

use std::collections::HashSet;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_ignored_param, add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{hex, pick, slug, COLOURS};
use crate::corpus::PageKind;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Software {
    Shopify,
    WooCommerce,
    Magento,
}

pub(super) struct Storefront {
    base: String,
    software: Software,
    rules: [usize; 2],
    collections: Vec<String>,
    listed: HashSet<usize>,
    next_id: u64,
    used: HashSet<String>,
}

fn add_param(em: &mut Emitter, name: &str, what: &str, prob: f64, values: Vec<String>) {
    add_ignored_param(em, name, format!("{what} `{name}`"), prob, values);
}

impl Storefront {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let software = *[Software::Shopify, Software::WooCommerce, Software::Magento]
            .choose(rng)
            .unwrap_or(&Software::Shopify);
        // A shop's URL keys are unique (Magento's URL rewrites are keyed by the request path):
        // two collections of one name, or a product named as a collection, would be one address
        // for two pages.
        let mut used = HashSet::new();
        let collections = (0..rng.random_range(3..=12))
            .map(|_| slug(rng, 1..=2))
            .filter(|name| used.insert(name.clone()))
            .collect();
        let mut shop = Storefront {
            base: base.to_string(),
            software,
            rules: [0; 2],
            collections,
            listed: HashSet::new(),
            next_id: rng.random_range(1_000..900_000),
            used,
        };
        let b = base;
        match software {
            Software::Shopify => {
                shop.rules[0] = alias_rule(
                    em,
                    &UrlParts::new(format!("{b}/collections/{{c}}/products/{{handle}}")),
                    &UrlParts::new(format!("{b}/products/{{handle}}")),
                    "product inside a collection",
                );
                let n = (em.cap / 10).clamp(4, 3_000);
                add_param(
                    em,
                    "_pos",
                    "search result position",
                    0.12,
                    (1..=24).map(|i| i.to_string()).collect(),
                );
                add_param(
                    em,
                    "_sid",
                    "search id",
                    0.12,
                    (0..n).map(|_| hex(rng, 9)).collect(),
                );
                add_param(
                    em,
                    "_ss",
                    "search source",
                    0.12,
                    vec!["r".into(), "e".into()],
                );
            }
            Software::WooCommerce => {
                shop.rules[0] = alias_rule(
                    em,
                    &UrlParts::new(format!("{b}/")).q("product", "{slug}"),
                    &UrlParts::new(format!("{b}/product/{{slug}}/")),
                    "product by query `?product=`",
                );
                shop.rules[1] = alias_rule(
                    em,
                    &UrlParts::new(format!("{b}/product/{{slug}}")),
                    &UrlParts::new(format!("{b}/product/{{slug}}/")),
                    "product without trailing slash",
                );
                add_tracking(em, rng, 2);
            }
            Software::Magento => {
                shop.rules[0] = alias_rule(
                    em,
                    &UrlParts::new(format!("{b}/catalog/product/view/id/{{id}}")),
                    &UrlParts::new(format!("{b}/{{slug}}.html")),
                    "product by its catalog id",
                );
                shop.rules[1] = alias_rule(
                    em,
                    &UrlParts::new(format!("{b}/{{category}}/{{slug}}.html")),
                    &UrlParts::new(format!("{b}/{{slug}}.html")),
                    "product under its category path",
                );
                add_param(
                    em,
                    "___store",
                    "store switcher",
                    0.1,
                    vec!["default".into(), "en".into()],
                );
                add_param(
                    em,
                    "___from_store",
                    "store switcher origin",
                    0.08,
                    vec!["default".into(), "en".into()],
                );
            }
        }
        shop
    }

    /// The product's forms; `variant` preselects a variation (a different page).
    fn product_forms(
        &self,
        id: u64,
        handle: &str,
        variant: Option<(u64, &str)>,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let b = &self.base;
        let with = |p: UrlParts, key: &str| match variant {
            Some((v, colour)) => {
                if key == "variant" {
                    p.q(key, v.to_string())
                } else {
                    p.q(key, colour)
                }
            }
            None => p,
        };
        let forms = match self.software {
            Software::Shopify => {
                let mut forms = vec![(
                    with(UrlParts::new(format!("{b}/products/{handle}")), "variant"),
                    None,
                )];
                for _ in 0..rng.random_range(1..=3) {
                    let c = pick_string(rng, &self.collections);
                    forms.push((
                        with(
                            UrlParts::new(format!("{b}/collections/{c}/products/{handle}")),
                            "variant",
                        ),
                        Some(self.rules[0]),
                    ));
                }
                forms
            }
            Software::WooCommerce => vec![
                (
                    with(
                        UrlParts::new(format!("{b}/product/{handle}/")),
                        "attribute_pa_color",
                    ),
                    None,
                ),
                (
                    with(
                        UrlParts::new(format!("{b}/")).q("product", handle),
                        "attribute_pa_color",
                    ),
                    Some(self.rules[0]),
                ),
                (
                    with(
                        UrlParts::new(format!("{b}/product/{handle}")),
                        "attribute_pa_color",
                    ),
                    Some(self.rules[1]),
                ),
            ],
            Software::Magento => {
                let c = pick_string(rng, &self.collections);
                vec![
                    (
                        with(UrlParts::new(format!("{b}/{handle}.html")), "color"),
                        None,
                    ),
                    (
                        with(
                            UrlParts::new(format!("{b}/catalog/product/view/id/{id}")),
                            "color",
                        ),
                        Some(self.rules[0]),
                    ),
                    (
                        with(UrlParts::new(format!("{b}/{c}/{handle}.html")), "color"),
                        Some(self.rules[1]),
                    ),
                ]
            }
        };
        forms_of(forms)
    }

    fn listing_forms(&self, c: usize, page: u32, sort: Option<&str>) -> Vec<Form> {
        let name = &self.collections[c];
        let b = &self.base;
        let (mut p, page_key, sort_key) = match self.software {
            Software::Shopify => (
                UrlParts::new(format!("{b}/collections/{name}")),
                "page",
                "sort_by",
            ),
            Software::WooCommerce => (
                UrlParts::new(if page > 1 {
                    format!("{b}/product-category/{name}/page/{page}/")
                } else {
                    format!("{b}/product-category/{name}/")
                }),
                "",
                "orderby",
            ),
            Software::Magento => (
                UrlParts::new(format!("{b}/{name}.html")),
                "p",
                "product_list_order",
            ),
        };
        if let Some(s) = sort {
            p = p.q(sort_key, s);
        }
        if page > 1 && !page_key.is_empty() {
            p = p.q(page_key, page.to_string());
        }
        forms_of(vec![(p, None)])
    }

    fn new_product(&mut self, rng: &mut ChaCha8Rng) -> (u64, String) {
        self.next_id += rng.random_range(1..40);
        let mut h = slug(rng, 2..=5);
        if !self.used.insert(h.clone()) {
            h = format!("{h}-{}", self.used.len());
            self.used.insert(h.clone());
        }
        (self.next_id, h)
    }
}

fn pick_string(rng: &mut ChaCha8Rng, list: &[String]) -> String {
    list.choose(rng)
        .cloned()
        .unwrap_or_else(|| "all".to_string())
}

impl Section for Storefront {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.1) && self.listed.len() < self.collections.len() {
            let c = rng.random_range(0..self.collections.len());
            if self.listed.insert(c) {
                let first = em.content(rng, &self.listing_forms(c, 1, None), PageKind::Listing);
                let sort = pick(
                    rng,
                    &[
                        "price-ascending",
                        "price",
                        "best-selling",
                        "title-descending",
                    ],
                    "price",
                );
                em.sibling(
                    rng,
                    &first,
                    &self.listing_forms(c, 1, Some(sort)),
                    PageKind::Listing,
                );
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
        let (id, handle) = self.new_product(rng);
        let forms = self.product_forms(id, &handle, None, rng);
        let product = em.content(rng, &forms, PageKind::Product);
        if rng.random_bool(0.35) {
            let mut colours: Vec<&str> = COLOURS.to_vec();
            colours.shuffle(rng);
            // Distinct colours: each variation is its own page.
            for colour in colours.into_iter().take(rng.random_range(1..=3)) {
                self.next_id += 1;
                let forms =
                    self.product_forms(id, &handle, Some((self.next_id * 7 + 3, colour)), rng);
                em.sibling(rng, &product, &forms, PageKind::Product);
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let (id, handle) = self.new_product(rng);
        self.product_forms(id, &handle, None, rng)
    }

    fn variant(&self) -> String {
        match self.software {
            Software::Shopify => "storefront:shopify",
            Software::WooCommerce => "storefront:woocommerce",
            Software::Magento => "storefront:magento",
        }
        .to_string()
    }
}
