//! PrestaShop 1.6 and 1.7/8: a shop whose pages are controllers of one front script,
//! `index.php?controller=product&id_product=N`, with optional friendly URLs built from route
//! templates.
//!
//! What the model follows (read in the default routes of `classes/Dispatcher.php`, 1.6 and 1.7,
//! the 1.6 listing controllers' `orderby`/`orderway` defaults and 1.7's `SortOrderFactory`; the
//! 1.6 `p=`/`n=` keys and 1.7 writing the default combination into links are from the shops'
//! documented behaviour, not checked in code here):
//!
//! - Friendly URLs (`PS_REWRITING_SETTINGS`) write a product by the route
//!   `{category:/}{id}-{rewrite}{-:ean13}.html` (1.6) or
//!   `{category:/}{id}{-:id_product_attribute}-{rewrite}{-:ean13}.html` (1.7 and 8), a category
//!   by `{id}-{rewrite}`, a CMS page by `content/{id}-{rewrite}`, a brand by `{id}_{rewrite}`
//!   (1.6) or `brand/{id}-{rewrite}`. The dispatcher reads the id: the category folder is
//!   optional (and any category the product is in will do), and the name after the id is not
//!   looked up, so old names keep answering. The front script keeps answering its query form.
//! - A shop with several languages puts each under a folder (`/en/`, `/fr/`); the query form
//!   takes `id_lang=`, and without it shows the default language. Pages in different languages
//!   are different contents (names and descriptions are translated).
//! - 1.7 writes the default combination of a product with combinations into its links
//!   (`/3-12-name.html`), which is the page without it (`/3-name.html`); another combination
//!   (`/3-13-name.html`) is another price and reference: another content. 1.6 keeps the
//!   combination in the fragment, which crawlers drop.
//! - Category listings page with `p=` (1.6) or `page=` (1.7), page 1 being the plain listing;
//!   they sort with `orderby=&orderway=` (1.6) or `order=product.price.asc` (1.7), the shop's
//!   default order (by position, ascending) spelled out being the plain listing and any other
//!   order another one; 1.6 also sets the page size with `n=`.
//! - Products and categories have ids of their own, both counted from 1, so one number names a
//!   product and a category: `/5-a-name.html` (or `/fr/5-a-name.html`) and `/5-shoes` are two
//!   pages, and so are `?controller=product&id_product=5` and
//!   `?controller=category&id_category=5`.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug};
use crate::corpus::PageKind;

/// Language sets of multi-language shops (the first is the default).
const LANGUAGE_SETS: &[&[&str]] = &[
    &["en", "fr"],
    &["fr", "en"],
    &["de", "en", "fr"],
    &["es", "en"],
    &["it", "en", "de"],
    &["nl", "fr", "en"],
];
/// Sort keys of 1.6 listings (`orderby`, `orderway`) besides the default position order.
const SORTS_16: &[(&str, &str)] = &[
    ("price", "asc"),
    ("price", "desc"),
    ("name", "asc"),
    ("name", "desc"),
    ("quantity", "desc"),
    ("reference", "asc"),
];
/// Sort keys of 1.7 listings (`order=`) besides the default position order.
const SORTS_17: &[&str] = &[
    "product.price.asc",
    "product.price.desc",
    "product.name.asc",
    "product.name.desc",
    "product.sales.desc",
];

/// Rule indices into `PrestaShop::rules`.
const SCRIPT: usize = 0;
const ANY_CATEGORY: usize = 1;
const NAME_NOT_READ: usize = 2;
const DEFAULT_LANGUAGE: usize = 3;
const DEFAULT_COMBINATION: usize = 4;
const FIRST_PAGE: usize = 5;
const DEFAULT_SORT: usize = 6;

struct Category {
    id: u32,
    /// The category's name in each language of the shop.
    names: Vec<String>,
    listed: bool,
}

pub(super) struct PrestaShop {
    base: String,
    /// 1.7 or 8 (else 1.6).
    v17: bool,
    /// Friendly URLs on.
    friendly: bool,
    /// The shop's languages, the default first; one language means no language folder.
    languages: Vec<&'static str>,
    categories: Vec<Category>,
    rules: [usize; 7],
    next_product: u64,
    next_combination: u64,
    next_page: u32,
}

impl PrestaShop {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(rng, &["", "", "", "/shop", "/boutique"], "")
        );
        let languages: Vec<&'static str> = if rng.random_bool(0.5) {
            LANGUAGE_SETS[rng.random_range(0..LANGUAGE_SETS.len())].to_vec()
        } else {
            vec![pick(rng, &["en", "fr", "de", "es"], "en")]
        };
        let mut categories: Vec<Category> = Vec::new();
        let mut id = rng.random_range(3..12);
        for _ in 0..rng.random_range(3..=10) {
            categories.push(Category {
                id,
                names: languages.iter().map(|_| slug(rng, 1..=2)).collect(),
                listed: false,
            });
            id += rng.random_range(1..6);
        }
        let v17 = rng.random_bool(0.6);
        let mut shop = PrestaShop {
            v17,
            friendly: rng.random_bool(0.75),
            languages,
            categories,
            rules: [0; 7],
            // Products and categories are numbered by their own counters from 1 (both are
            // auto-increment ids), so product 8 and category 8 are both pages of the shop.
            next_product: rng.random_range(0..20),
            next_combination: rng.random_range(1..10_000),
            next_page: rng.random_range(1..10),
            base,
        };
        let b = shop.base.clone();
        let at = |path: &str| UrlParts::new(format!("{b}/{path}"));
        let script = at("index.php")
            .q("id_product", "{id}")
            .q("controller", "product");
        let (page_key, sort) = if v17 {
            (
                "page",
                at("{id}-{category}").q("order", "product.position.asc"),
            )
        } else {
            (
                "p",
                at("{id}-{category}")
                    .q("orderby", "position")
                    .q("orderway", "asc"),
            )
        };
        shop.rules = [
            alias_rule(
                em,
                &script,
                &at("{category}/{id}-{name}.html"),
                "the front script behind a friendly link",
            ),
            alias_rule(
                em,
                &at("{id}-{name}.html"),
                &at("{category}/{id}-{name}.html"),
                "a product under any category folder, or none",
            ),
            alias_rule(
                em,
                &at("{category}/{id}-{old-name}.html"),
                &at("{category}/{id}-{name}.html"),
                "the name after an id is not read",
            ),
            alias_rule(
                em,
                &script.clone().q("id_lang", "{default}"),
                &script,
                "the default language's id spelled out (`id_lang=`)",
            ),
            alias_rule(
                em,
                &at("{category}/{id}-{default-combination}-{name}.html"),
                &at("{category}/{id}-{name}.html"),
                "the default combination written into the link",
            ),
            alias_rule(
                em,
                &at("{id}-{category}").q(page_key, "1"),
                &at("{id}-{category}"),
                "the first page spelled out",
            ),
            alias_rule(
                em,
                &sort,
                &at("{id}-{category}"),
                "the default order spelled out",
            ),
        ];
        if rng.random_bool(0.4) {
            add_tracking(em, rng, 2);
        }
        shop
    }

    /// The language folder of language `l` (`/fr`), empty on one-language shops.
    fn folder(&self, l: usize) -> String {
        if self.languages.len() > 1 {
            format!("/{}", self.languages[l])
        } else {
            String::new()
        }
    }

    /// `rest` under the language folder of `l`.
    fn at(&self, l: usize, rest: &str) -> UrlParts {
        UrlParts::new(format!("{}{}/{rest}", self.base, self.folder(l)))
    }

    /// The front script's form of controller `controller` with `key=id`, in language `l`:
    /// `id_lang` written for other languages than the default (and, spelled out, for it).
    fn script(&self, controller: &str, key: &str, id: u64, l: usize) -> UrlParts {
        let p = UrlParts::new(format!("{}/index.php", self.base))
            .q(key, id.to_string())
            .q("controller", controller);
        if l > 0 {
            p.q("id_lang", (l + 1).to_string())
        } else {
            p
        }
    }

    /// The forms of a page whose friendly address is `friendly` and script form `script`, the
    /// default language's id spelled out when `l` is the default language.
    fn page_forms(
        &self,
        friendly: Option<UrlParts>,
        script: UrlParts,
        l: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<(UrlParts, Option<usize>)> {
        let mut forms = Vec::new();
        let script_rule = match friendly.filter(|_| self.friendly) {
            Some(path) => {
                forms.push((path, None));
                Some(self.rules[SCRIPT])
            }
            None => None,
        };
        if l == 0 && rng.random_bool(0.5) {
            let spelled = script.clone().q("id_lang", "1");
            let rule = if script_rule.is_none() {
                Some(self.rules[DEFAULT_LANGUAGE])
            } else {
                None
            };
            forms.push((script.clone(), script_rule));
            forms.push((spelled, rule));
        } else {
            forms.push((script, script_rule));
        }
        forms
    }

    /// Product `id` named `names` (per language) in language `l`, under category `c`, showing
    /// combination `shown` of its combinations (`default` the default one, if any).
    #[allow(clippy::too_many_arguments)]
    fn product_forms(
        &self,
        id: u64,
        names: &[String],
        c: usize,
        l: usize,
        shown: Option<u64>,
        default: Option<u64>,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let name = &names[l];
        let category = &self.categories[c].names[l];
        let file = |attribute: Option<u64>, name: &str| match attribute.filter(|_| self.v17) {
            Some(a) => format!("{id}-{a}-{name}.html"),
            None => format!("{id}-{name}.html"),
        };
        let mut script = self.script("product", "id_product", id, l);
        if let (true, Some(a)) = (self.v17, shown.filter(|a| Some(*a) != default)) {
            script = script.q("id_product_attribute", a.to_string());
        }
        // Another combination than the default: its own page, one spelling each.
        if shown.is_some() && shown != default {
            let friendly = self.at(l, &format!("{category}/{}", file(shown, name)));
            return forms_of(self.page_forms(Some(friendly), script, l, rng));
        }
        // 1.7 links the default combination.
        let linked = file(default, name);
        let mut forms = self.page_forms(
            Some(self.at(l, &format!("{category}/{linked}"))),
            script,
            l,
            rng,
        );
        if self.friendly {
            if rng.random_bool(0.6) {
                forms.push((self.at(l, &linked), Some(self.rules[ANY_CATEGORY])));
            }
            if rng.random_bool(0.25) {
                let other = &self.categories[rng.random_range(0..self.categories.len())].names[l];
                if other != category {
                    forms.push((
                        self.at(l, &format!("{other}/{linked}")),
                        Some(self.rules[ANY_CATEGORY]),
                    ));
                }
            }
            if rng.random_bool(0.2) {
                let old = slug(rng, 1..=3);
                forms.push((
                    self.at(l, &format!("{category}/{}", file(default, &old))),
                    Some(self.rules[NAME_NOT_READ]),
                ));
            }
            if let (true, Some(_)) = (self.v17, default) {
                forms.push((
                    self.at(l, &format!("{category}/{}", file(None, name))),
                    Some(self.rules[DEFAULT_COMBINATION]),
                ));
            }
        } else if let (true, Some(a)) = (self.v17, default) {
            let spelled = self
                .script("product", "id_product", id, l)
                .q("id_product_attribute", a.to_string());
            forms.push((spelled, Some(self.rules[DEFAULT_COMBINATION])));
        }
        forms_of(forms)
    }

    fn product(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_product += rng.random_range(1..6);
        let id = self.next_product;
        let names: Vec<String> = self.languages.iter().map(|_| slug(rng, 2..=5)).collect();
        let c = rng.random_range(0..self.categories.len());
        let combinations: Vec<u64> = if rng.random_bool(0.5) {
            (0..rng.random_range(2..=5))
                .map(|_| {
                    self.next_combination += rng.random_range(1..4);
                    self.next_combination
                })
                .collect()
        } else {
            Vec::new()
        };
        let default = combinations.first().copied();
        let l = if rng.random_bool(0.7) {
            0
        } else {
            rng.random_range(0..self.languages.len())
        };
        let forms = self.product_forms(id, &names, c, l, default, default, rng);
        let first = em.content(rng, &forms, PageKind::Product);
        if self.v17 && combinations.len() > 1 && rng.random_bool(0.5) {
            let other = combinations[rng.random_range(1..combinations.len())];
            let forms = self.product_forms(id, &names, c, l, Some(other), default, rng);
            em.sibling(rng, &first, &forms, PageKind::Product);
        }
        if self.languages.len() > 1 && rng.random_bool(0.35) {
            let other = (l + rng.random_range(1..self.languages.len())) % self.languages.len();
            let forms = self.product_forms(id, &names, c, other, default, default, rng);
            em.sibling(rng, &first, &forms, PageKind::Product);
        }
    }

    /// Page `page` (1 = first) of category `c` in language `l`, in the default order or sorted
    /// by `sort` (its query pairs).
    fn category_forms(
        &self,
        c: usize,
        l: usize,
        page: u32,
        sort: &[(&str, &str)],
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let category = &self.categories[c];
        let page_key = if self.v17 { "page" } else { "p" };
        let tail = |mut p: UrlParts| {
            for (k, v) in sort {
                p = p.q(k, *v);
            }
            if page > 1 {
                p = p.q(page_key, page.to_string());
            }
            p
        };
        let friendly = tail(self.at(l, &format!("{}-{}", category.id, category.names[l])));
        let script = tail(self.script("category", "id_category", category.id.into(), l));
        let mut forms = self.page_forms(Some(friendly.clone()), script, l, rng);
        if sort.is_empty() {
            let default: &[(&str, &str)] = if self.v17 {
                &[("order", "product.position.asc")]
            } else {
                &[("orderby", "position"), ("orderway", "asc")]
            };
            let mut spelled = forms[0].0.clone();
            for (k, v) in default {
                spelled = spelled.q(k, *v);
            }
            forms.push((spelled, Some(self.rules[DEFAULT_SORT])));
            if page == 1 {
                forms.push((
                    forms[0].0.clone().q(page_key, "1"),
                    Some(self.rules[FIRST_PAGE]),
                ));
            }
            if self.friendly && rng.random_bool(0.15) {
                let old = tail(self.at(l, &format!("{}-{}", category.id, slug(rng, 1..=2))));
                forms.push((old, Some(self.rules[NAME_NOT_READ])));
            }
        }
        forms_of(forms)
    }

    fn category(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, c: usize) {
        let l = if rng.random_bool(0.7) {
            0
        } else {
            rng.random_range(0..self.languages.len())
        };
        let forms = self.category_forms(c, l, 1, &[], rng);
        let first = em.content(rng, &forms, PageKind::Listing);
        for page in 2..=rng.random_range(1..=4) {
            let forms = self.category_forms(c, l, page, &[], rng);
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
        if rng.random_bool(0.6) {
            let sort: Vec<(&str, &str)> = if self.v17 {
                vec![("order", pick(rng, SORTS_17, "product.price.asc"))]
            } else {
                let (by, way) = SORTS_16[rng.random_range(0..SORTS_16.len())];
                vec![("orderby", by), ("orderway", way)]
            };
            let forms = self.category_forms(c, l, 1, &sort, rng);
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
        if !self.v17 && rng.random_bool(0.3) {
            let size = pick(rng, &["24", "48", "60"], "24");
            let forms = self.category_forms(c, l, 1, &[("n", size)], rng);
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
        if self.languages.len() > 1 && rng.random_bool(0.3) {
            let other = (l + 1) % self.languages.len();
            let forms = self.category_forms(c, other, 1, &[], rng);
            em.sibling(rng, &first, &forms, PageKind::Listing);
        }
    }

    /// A CMS page (`content/N-name`) or a brand page.
    fn page(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.next_page += rng.random_range(1..4);
        let id = u64::from(self.next_page);
        let name = slug(rng, 1..=3);
        let l = rng.random_range(0..self.languages.len());
        let (friendly, script, kind) = if rng.random_bool(0.5) {
            (
                format!("content/{id}-{name}"),
                self.script("cms", "id_cms", id, l),
                PageKind::Article,
            )
        } else {
            let path = if self.v17 {
                format!("brand/{id}-{name}")
            } else {
                format!("{id}_{name}")
            };
            (
                path,
                self.script("manufacturer", "id_manufacturer", id, l),
                PageKind::Listing,
            )
        };
        let forms = forms_of(self.page_forms(Some(self.at(l, &friendly)), script, l, rng));
        em.content(rng, &forms, kind);
    }
}

impl Section for PrestaShop {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let c = rng.random_range(0..self.categories.len());
        if rng.random_bool(0.12) && !self.categories[c].listed {
            self.categories[c].listed = true;
            self.category(em, rng, c);
        } else if rng.random_bool(0.06) {
            self.page(em, rng);
        } else {
            self.product(em, rng);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let id = self.next_product + rng.random_range(1_000_000..2_000_000);
        let names: Vec<String> = self.languages.iter().map(|_| slug(rng, 2..=4)).collect();
        self.product_forms(id, &names, 0, 0, None, None, rng)
    }

    fn variant(&self) -> String {
        format!(
            "prestashop{}{}{}{}",
            if self.v17 { "1.7" } else { "1.6" },
            self.base,
            if self.friendly { "+friendly" } else { "" },
            if self.languages.len() > 1 {
                format!("+{}", self.languages.join("/"))
            } else {
                String::new()
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::super::family_tests::{
        assert_irrelevant_keys_keep_the_content, check_family, ids_of,
    };
    use crate::corpus::SiteKind;

    /// A friendly product URL read back: language folder, category folder, product id,
    /// combination written into it, name.
    struct ProductUrl<'a> {
        language: Option<&'a str>,
        category: Option<&'a str>,
        id: &'a str,
        combination: Option<&'a str>,
        name: &'a str,
    }

    fn read_product<'a>(path: &'a str, languages: &[&str]) -> Option<ProductUrl<'a>> {
        let (dirs, file) = path.rsplit_once('/')?;
        let stem = file.strip_suffix(".html")?;
        let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
        let (id, rest) = stem.split_once('-')?;
        if !digits(id) {
            return None;
        }
        let (combination, name) = match rest.split_once('-') {
            Some((c, name)) if digits(c) => (Some(c), name),
            _ => (None, rest),
        };
        let dirs: Vec<&str> = dirs.split('/').filter(|d| !d.is_empty()).collect();
        let language = dirs.iter().copied().find(|d| languages.contains(d));
        let category = dirs.last().copied().filter(|d| Some(*d) != language);
        Some(ProductUrl {
            language,
            category,
            id,
            combination,
            name,
        })
    }

    #[test]
    fn prestashop_generates_its_scheme() {
        let (mut scripted, mut folders, mut languages, mut combinations) = (0, 0, 0, 0);
        for site in check_family(SiteKind::PrestaShop) {
            assert_irrelevant_keys_keep_the_content(&site);
            let ids = ids_of(&site);
            // `prestashop1.7/shop+friendly+en/fr`: the base and the languages, default first.
            let after_version = site.variant.trim_start_matches("prestashop1.7");
            let after_version = after_version.trim_start_matches("prestashop1.6");
            let base = after_version.split('+').next().unwrap_or("");
            let iso: Vec<&str> = site
                .variant
                .split('+')
                .next_back()
                .map(|l| l.split('/').collect::<Vec<_>>())
                .filter(|l| l.len() > 1 && l.iter().all(|c| c.len() == 2))
                .unwrap_or_default();
            let origin = format!("https://{}", site.host);
            let origin_http = format!("http://{}", site.host);
            let path_of = |url: &str| -> Option<String> {
                let rest = url
                    .strip_prefix(origin.as_str())
                    .or_else(|| url.strip_prefix(origin_http.as_str()))?;
                Some(rest.strip_prefix(base).unwrap_or(rest).to_string())
            };
            // (product, language) -> ids; (directory, product, name) -> combination -> ids.
            let mut by_language: BTreeMap<(String, Option<String>), BTreeSet<u64>> =
                BTreeMap::new();
            let mut by_combination: BTreeMap<(String, String), BTreeMap<String, u64>> =
                BTreeMap::new();
            for (url, id) in &ids {
                let Some(path) = path_of(url) else { continue };
                if let Some((_, query)) = path.split_once('?') {
                    // The script's form of a combination: `id_product_attribute=` beside the
                    // product (and its language).
                    let value = |k: &str| {
                        query
                            .split('&')
                            .find_map(|p| p.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
                    };
                    if let (Some(product), Some(c)) =
                        (value("id_product"), value("id_product_attribute"))
                    {
                        let key = format!("{product}@{}", value("id_lang").unwrap_or("1"));
                        by_combination
                            .entry((key, String::new()))
                            .or_default()
                            .insert(c.to_string(), *id);
                    }
                    continue;
                }
                let Some(p) = read_product(&path, &iso) else {
                    continue;
                };
                by_language
                    .entry((p.id.to_string(), p.language.map(str::to_string)))
                    .or_default()
                    .insert(*id);
                if let Some(c) = p.combination {
                    by_combination
                        .entry((
                            format!("{}/{}", path.rsplit_once('/').map_or("", |d| d.0), p.id),
                            p.name.to_string(),
                        ))
                        .or_default()
                        .insert(c.to_string(), *id);
                }
                // No combination written and in the default language: the script's page.
                let default_language = p.language.is_none() || p.language == iso.first().copied();
                if p.combination.is_none() && default_language {
                    let script = format!(
                        "{}/index.php?id_product={}&controller=product",
                        &url[..url.len() - path.len()],
                        p.id
                    );
                    if let Some(other) = ids.get(&script) {
                        assert_eq!(other, id, "{url} vs {script}");
                        scripted += 1;
                    }
                }
                // With and without its category folder.
                if let Some(category) = p.category {
                    let bare = url.replacen(&format!("/{category}/"), "/", 1);
                    if let Some(other) = ids.get(&bare) {
                        assert_eq!(other, id, "{url} vs {bare}");
                        folders += 1;
                    }
                }
            }
            // The same product in two languages: two contents.
            let mut products: BTreeMap<&str, Vec<&BTreeSet<u64>>> = BTreeMap::new();
            for ((product, _), set) in &by_language {
                products.entry(product).or_default().push(set);
            }
            for (product, sets) in products.iter().filter(|(_, s)| s.len() > 1) {
                for (i, a) in sets.iter().enumerate() {
                    for b in &sets[i + 1..] {
                        assert!(
                            a.is_disjoint(b),
                            "product {product} shares a content across languages"
                        );
                        languages += 1;
                    }
                }
            }
            // Two combinations written into one product's links: two contents.
            for (key, combos) in by_combination.iter().filter(|(_, c)| c.len() > 1) {
                let distinct: BTreeSet<u64> = combos.values().copied().collect();
                assert_eq!(distinct.len(), combos.len(), "{key:?}: {combos:?}");
                combinations += 1;
            }
        }
        assert!(
            scripted > 0 && folders > 0 && languages > 0 && combinations > 0,
            "scripted {scripted}, folders {folders}, languages {languages}, combinations {combinations}"
        );
    }
}
