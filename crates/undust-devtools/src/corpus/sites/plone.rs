//! Plone: a content tree published by Zope, where a path names an object and an optional last
//! segment names a view of it.
//!
//! An object's type declares method aliases: `(Default)` is the dynamic view and `view` the
//! selected layout, the same template, so `/folder/page` ≡ `/folder/page/view`, and naming the
//! layout itself (`document_view` for a page, `folder_listing` for a folder's default listing,
//! `newsitem_view` for a news item) renders it again. A folder with a default page (often
//! `front-page`) shows that page at the folder's own URL. Zope's acquisition finds a name in
//! any parent, so `/news/events/item` (where `item` lives in `events` beside `news`) is the
//! item too: relative links on a page produce these paths in crawls. `resolveuid/{uid}` serves
//! any object by its catalog UID (an opaque hash: no rule on the URL can map it). Distinct: a
//! folder's other display views (`folder_summary_view`, `folder_tabular_view`, `album_view`),
//! its batches (`?b_start:int=20`), its feed (`/RSS`); a file or image itself versus its `/view`
//! page (the `(Default)` of a file is its bytes, `view` an HTML page about it) and its
//! full-screen view; and on multilingual sites the same path under another language folder
//! (`/en/...` and `/de/...` are translations).

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{hex, pick, slug};
use crate::corpus::PageKind;

/// Items per folder listing batch (Plone's default `b_size`).
const BATCH: u32 = 20;

/// The other display views a folder offers (distinct renderings of its contents).
const FOLDER_VIEWS: &[&str] = &["folder_summary_view", "folder_tabular_view", "album_view"];

/// A folder: its id, whether it has a default page, and whether it holds news items.
struct Folder {
    id: String,
    front_page: bool,
    news: bool,
}

pub(super) struct Plone {
    base: String,
    /// Language folders on a multilingual site (`plone.app.multilingual`); empty otherwise.
    languages: Vec<&'static str>,
    folders: Vec<Folder>,
    /// Rules: `view` alias, the layout by name, acquisition through a sibling folder,
    /// `resolveuid`, a folder's default page.
    rules: [usize; 5],
    listed: HashSet<usize>,
    used: HashSet<String>,
}

impl Plone {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let languages = if rng.random_bool(0.3) {
            vec!["en", pick(rng, &["de", "fr", "nl", "es"], "de")]
        } else {
            Vec::new()
        };
        let mut folders = Vec::new();
        let mut names = HashSet::new();
        for _ in 0..rng.random_range(3..=10) {
            let id = slug(rng, 1..=2);
            if names.insert(id.clone()) {
                folders.push(Folder {
                    id,
                    front_page: rng.random_bool(0.3),
                    news: rng.random_bool(0.3),
                });
            }
        }
        let mut plone = Plone {
            base: base.to_string(),
            languages,
            folders,
            rules: [0; 5],
            listed: HashSet::new(),
            used: HashSet::new(),
        };
        let item = UrlParts::new(format!("{base}/{{folder}}/{{id}}"));
        let at = |path: &str| UrlParts::new(format!("{base}/{path}"));
        plone.rules = [
            alias_rule(
                em,
                &at("{folder}/{id}/view"),
                &item,
                "the `view` alias of an object",
            ),
            alias_rule(
                em,
                &at("{folder}/{id}/{layout}"),
                &item,
                "an object's layout named (`document_view`, `folder_listing`)",
            ),
            alias_rule(
                em,
                &at("{other}/{folder}/{id}"),
                &item,
                "acquisition through another folder",
            ),
            alias_rule(em, &at("resolveuid/{uid}"), &item, "an object by its UID"),
            alias_rule(
                em,
                &at("{folder}/front-page"),
                &at("{folder}"),
                "a folder's default page",
            ),
        ];
        if rng.random_bool(0.3) {
            add_tracking(em, rng, 2);
        }
        plone
    }

    /// The path of `rest` in language `lang` (`None`: a site without language folders).
    fn at(&self, lang: Option<&str>, rest: &str) -> UrlParts {
        match lang {
            Some(lang) => UrlParts::new(format!("{}/{lang}/{rest}", self.base)),
            None => UrlParts::new(format!("{}/{rest}", self.base)),
        }
    }

    /// Every address of the object at `{folder}/{id}` whose layout is `layout`; `rare` adds the
    /// seldom crawled forms (acquired paths, the UID).
    fn item_forms(
        &self,
        lang: Option<&str>,
        f: usize,
        id: &str,
        layout: &str,
        rare: bool,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Form> {
        let folder = &self.folders[f].id;
        let path = format!("{folder}/{id}");
        let mut forms = vec![
            (self.at(lang, &path), None),
            (self.at(lang, &format!("{path}/view")), Some(self.rules[0])),
            (
                self.at(lang, &format!("{path}/{layout}")),
                Some(self.rules[1]),
            ),
        ];
        if rare {
            let other = &self.folders[rng.random_range(0..self.folders.len())].id;
            if other != folder {
                forms.push((
                    self.at(lang, &format!("{other}/{path}")),
                    Some(self.rules[2]),
                ));
            }
            forms.push((
                UrlParts::new(format!("{}/resolveuid/{}", self.base, hex(rng, 32))),
                Some(self.rules[3]),
            ));
        }
        forms_of(forms)
    }

    /// Folder `f`'s default listing, or its `view` display / batch `batch` (0 = first).
    fn folder_forms(
        &self,
        lang: Option<&str>,
        f: usize,
        view: Option<&str>,
        batch: u32,
    ) -> Vec<Form> {
        let folder = &self.folders[f].id;
        let paged = |p: UrlParts| {
            if batch > 0 {
                p.q("b_start:int", (batch * BATCH).to_string())
            } else {
                p
            }
        };
        if let Some(view) = view {
            return forms_of(vec![(
                paged(self.at(lang, &format!("{folder}/{view}"))),
                None,
            )]);
        }
        let mut forms = vec![
            (paged(self.at(lang, folder)), None),
            (
                paged(self.at(lang, &format!("{folder}/view"))),
                Some(self.rules[0]),
            ),
        ];
        if self.folders[f].front_page {
            if batch == 0 {
                forms.push((
                    self.at(lang, &format!("{folder}/front-page")),
                    Some(self.rules[4]),
                ));
                forms.push((
                    self.at(lang, &format!("{folder}/front-page/view")),
                    Some(self.rules[0]),
                ));
            }
        } else {
            forms.push((
                paged(self.at(lang, &format!("{folder}/folder_listing"))),
                Some(self.rules[1]),
            ));
        }
        forms_of(forms)
    }

    fn new_id(&mut self, rng: &mut ChaCha8Rng, extension: &str) -> String {
        let mut id = format!("{}{extension}", slug(rng, 1..=4));
        if !self.used.insert(id.clone()) {
            id = format!("{}-{}{extension}", slug(rng, 1..=4), self.used.len());
            self.used.insert(id.clone());
        }
        id
    }

    fn language(&self, rng: &mut ChaCha8Rng) -> Option<&'static str> {
        if self.languages.is_empty() {
            None
        } else {
            Some(self.languages[rng.random_range(0..self.languages.len())])
        }
    }
}

impl Section for Plone {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let f = rng.random_range(0..self.folders.len());
        let lang = self.language(rng);
        if rng.random_bool(0.12) && self.listed.insert(f) {
            let first = em.content(rng, &self.folder_forms(lang, f, None, 0), PageKind::Listing);
            for batch in 1..rng.random_range(1..=4) {
                em.sibling(
                    rng,
                    &first,
                    &self.folder_forms(lang, f, None, batch),
                    PageKind::Listing,
                );
            }
            let view = pick(rng, FOLDER_VIEWS, "folder_summary_view");
            em.sibling(
                rng,
                &first,
                &self.folder_forms(lang, f, Some(view), 0),
                PageKind::Listing,
            );
            if rng.random_bool(0.4) {
                em.sibling(
                    rng,
                    &first,
                    &self.folder_forms(lang, f, Some("RSS"), 0),
                    PageKind::Listing,
                );
            }
            return;
        }
        let rare = rng.random_bool(0.15);
        if rng.random_bool(0.15) {
            // An image: the file itself, its HTML view page and its full-screen view differ.
            let extension = pick(rng, &[".jpg", ".png"], ".jpg");
            let id = self.new_id(rng, extension);
            let folder = self.folders[f].id.clone();
            let path = format!("{folder}/{id}");
            let file = em.content(
                rng,
                &forms_of(vec![(self.at(lang, &path), None)]),
                PageKind::Article,
            );
            let page = em.sibling(
                rng,
                &file,
                &forms_of(vec![
                    (self.at(lang, &format!("{path}/view")), None),
                    (
                        self.at(lang, &format!("{path}/image_view")),
                        Some(self.rules[1]),
                    ),
                ]),
                PageKind::Article,
            );
            em.sibling(
                rng,
                &page,
                &forms_of(vec![(
                    self.at(lang, &format!("{path}/image_view_fullscreen")),
                    None,
                )]),
                PageKind::Article,
            );
            return;
        }
        let layout = if self.folders[f].news {
            "newsitem_view"
        } else {
            "document_view"
        };
        let id = self.new_id(rng, "");
        let forms = self.item_forms(lang, f, &id, layout, rare, rng);
        let item = em.content(rng, &forms, PageKind::Article);
        if !self.languages.is_empty() && rng.random_bool(0.3) {
            // Its translation keeps the id under the other language folder.
            let other = self.languages.iter().copied().find(|l| Some(*l) != lang);
            let forms = self.item_forms(other, f, &id, layout, false, rng);
            em.sibling(rng, &item, &forms, PageKind::Article);
        }
        if rng.random_bool(0.15) {
            // Another page of the same folder: same template, other content.
            let id = self.new_id(rng, "");
            let forms = self.item_forms(lang, f, &id, layout, false, rng);
            em.sibling(rng, &item, &forms, PageKind::Article);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let f = rng.random_range(0..self.folders.len());
        let lang = self.language(rng);
        let id = format!(
            "{}-{}",
            self.new_id(rng, ""),
            rng.random_range(1_000..9_999)
        );
        self.item_forms(lang, f, &id, "document_view", false, rng)
    }

    fn variant(&self) -> String {
        if self.languages.is_empty() {
            "plone".to_string()
        } else {
            format!("plone:{}", self.languages.join("+"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::family_tests::{check_family, ids_of};
    use crate::corpus::SiteKind;

    #[test]
    fn plone_generates_its_scheme() {
        let (mut views, mut files) = (0, 0);
        for site in check_family(SiteKind::Plone) {
            let ids = ids_of(&site);
            for (url, id) in &ids {
                let Some(object) = url.strip_suffix("/view") else {
                    continue;
                };
                let Some(plain) = ids.get(object) else {
                    continue;
                };
                // `view` is the object itself, except on a file, whose bare URL is its bytes.
                if object.ends_with(".jpg") || object.ends_with(".png") {
                    assert_ne!(plain, id, "{url}");
                    files += 1;
                } else {
                    assert_eq!(plain, id, "{url}");
                    views += 1;
                }
            }
        }
        assert!(views > 0 && files > 0, "views {views}, files {files}");
    }
}
