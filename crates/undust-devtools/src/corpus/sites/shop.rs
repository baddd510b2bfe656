//! Shop generator: products under one to three equivalent id layouts (`/product/{id}`,
//! `/p/{id}/{slug}`, `/item.php?id=`...), numeric, hex or SKU ids, tracking parameters with
//! common and made-up names; colour/size variants, sorted and paginated listings (negatives).

use std::collections::HashSet;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, forms_of, pattern, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{self, hex, pick, slug, word};
use crate::corpus::{DustRule, PageKind};

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

pub(super) struct Shop {
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
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
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
