//! Piwigo: a photo gallery whose pages are two scripts, `index.php` (albums and other lists of
//! photos) and `picture.php` (one photo), each followed by a path written as the query string
//! (`index.php?/category/5`, `picture.php?/123/category/5`), or as the path itself when
//! `question_mark_in_urls` is off (`index.php/category/5`).
//!
//! The URL functions write a section (`/category/{id}`, `/tags/{id}-{name}`, `/recent_pics`,
//! `/most_visited`, ...) and then well-known suffixes: `/flat` (the photos of every sub-album),
//! a chronology (`/posted-monthly-list`) and `/start-N` for later pages. The parser reads an
//! album token as a number with an optional `-name` (`category_url_style` `id` or `id-name`
//! choose what the site writes; both are read), a photo token as a number with an optional
//! `-filename` (`picture_url_style` `id-file`), and the home page is the album list, also
//! reached as `index.php` and `index.php?/categories`. A photo's page is the same photo in
//! whatever section it was reached from (an album, a tag, the recent photos, or none): the
//! section only changes the previous/next links around it.
//!
//! Distinct: later pages of an album or tag, its flat view and its chronology, other albums and
//! tags, the special lists, other photos of an album, a photo's metadata view (`&metadata`) and
//! its file (`action.php?id=N&part=e&download`).

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitted, Emitter, Form, UrlParts};
use crate::corpus::words::{join_words, pick, word};
use crate::corpus::PageKind;

/// Photos per album page (Piwigo's default `nb_image_page`).
const PER_PAGE: u32 = 15;

/// Lists of photos that are not albums or tags.
const SPECIAL: &[&str] = &["most_visited", "best_rated", "recent_pics", "recent_cats"];

pub(super) struct Piwigo {
    base: String,
    /// `index.php?/…` (true) or `index.php/…`.
    question_mark: bool,
    /// Albums are written `id-name` rather than `id`.
    album_names: bool,
    /// Photos are written `id-filename` rather than `id`.
    file_names: bool,
    /// (id, name) of albums and tags.
    albums: Vec<(u32, String)>,
    tags: Vec<(u32, String)>,
    /// Rules: album or tag without (or with) its name, a photo in another section, a photo
    /// without (or with) its file name, the home page's other addresses.
    rules: [usize; 4],
    listed: HashSet<(bool, usize)>,
    specials_listed: HashSet<&'static str>,
    home_listed: bool,
    next_photo: u64,
}

impl Piwigo {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let base = format!(
            "{base}{}",
            pick(rng, &["", "/gallery", "/piwigo", "/photos"], "")
        );
        let named = |rng: &mut ChaCha8Rng, n: usize| {
            let mut out: Vec<(u32, String)> = Vec::new();
            for _ in 0..n {
                let id = rng.random_range(1..400);
                if !out.iter().any(|(i, _)| *i == id) {
                    out.push((id, join_words(rng, 1..=3, "_")));
                }
            }
            out
        };
        let n_albums = rng.random_range(4..=16);
        let albums = named(rng, n_albums);
        let n_tags = rng.random_range(2..=10);
        let tags = named(rng, n_tags);
        let mut piwigo = Piwigo {
            question_mark: rng.random_bool(0.75),
            album_names: rng.random_bool(0.5),
            file_names: rng.random_bool(0.3),
            albums,
            tags,
            rules: [0; 4],
            listed: HashSet::new(),
            specials_listed: HashSet::new(),
            home_listed: false,
            next_photo: rng.random_range(1..30_000),
            base,
        };
        piwigo.rules = [
            alias_rule(
                em,
                &piwigo.at("index", "/category/{id}-{name}"),
                &piwigo.at("index", "/category/{id}"),
                "an album or tag with or without its name",
            ),
            alias_rule(
                em,
                &piwigo.at("picture", "/{photo}/{section}"),
                &piwigo.at("picture", "/{photo}/category/{album}"),
                "a photo reached from another section",
            ),
            alias_rule(
                em,
                &piwigo.at("picture", "/{photo}-{file}/category/{album}"),
                &piwigo.at("picture", "/{photo}/category/{album}"),
                "a photo with or without its file name",
            ),
            alias_rule(
                em,
                &piwigo.at("index", "/categories"),
                &UrlParts::new(format!("{}/", piwigo.base)),
                "the home page's other addresses",
            ),
        ];
        // The query string is a path: its first pair names the page and stays first.
        em.first_query_pair_fixed = true;
        if rng.random_bool(0.4) {
            add_tracking(em, rng, 2);
        }
        piwigo
    }

    /// `{script}.php` followed by `section`, as the site writes it.
    fn at(&self, script: &str, section: &str) -> UrlParts {
        if self.question_mark {
            UrlParts::new(format!("{}/{script}.php", self.base)).q(section, "")
        } else {
            UrlParts::new(format!("{}/{script}.php{section}", self.base))
        }
    }

    /// A token `id` or `id-name`.
    fn token(id: impl std::fmt::Display, name: &str, with_name: bool) -> String {
        if with_name {
            format!("{id}-{name}")
        } else {
            id.to_string()
        }
    }

    /// Page `page` (0 = first) of album or tag `i`, with a `suffix` view (`/flat`, a
    /// chronology) or not.
    fn list_forms(&self, tag: bool, i: usize, page: u32, suffix: &str) -> Vec<Form> {
        let (section, (id, name), names) = if tag {
            ("tags", &self.tags[i], true)
        } else {
            ("category", &self.albums[i], self.album_names)
        };
        let start = if page > 0 {
            format!("/start-{}", page * PER_PAGE)
        } else {
            String::new()
        };
        let spell = |with_name: bool| {
            self.at(
                "index",
                &format!(
                    "/{section}/{}{suffix}{start}",
                    Self::token(id, name, with_name)
                ),
            )
        };
        forms_of(vec![
            (spell(names), None),
            (spell(!names), Some(self.rules[0])),
        ])
    }

    /// Photo `photo` (file `file`) of album `a`, with the other sections it was reached from.
    fn photo_forms(&self, photo: u64, file: &str, a: usize, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let (album, name) = &self.albums[a];
        let in_album = |photo_names: bool, album_names: bool| {
            self.at(
                "picture",
                &format!(
                    "/{}/category/{}",
                    Self::token(photo, file, photo_names),
                    Self::token(album, name, album_names)
                ),
            )
        };
        let mut forms = vec![
            (in_album(self.file_names, self.album_names), None),
            (
                in_album(self.file_names, !self.album_names),
                Some(self.rules[0]),
            ),
        ];
        if rng.random_bool(0.3) {
            forms.push((
                in_album(!self.file_names, self.album_names),
                Some(self.rules[2]),
            ));
        }
        let photo_token = Self::token(photo, file, self.file_names);
        if rng.random_bool(0.3) {
            forms.push((
                self.at("picture", &format!("/{photo_token}")),
                Some(self.rules[1]),
            ));
        }
        if rng.random_bool(0.25) {
            let (t, tag) = &self.tags[rng.random_range(0..self.tags.len())];
            forms.push((
                self.at("picture", &format!("/{photo_token}/tags/{t}-{tag}")),
                Some(self.rules[1]),
            ));
        }
        if rng.random_bool(0.15) {
            let special = pick(rng, &SPECIAL[..3], "recent_pics");
            forms.push((
                self.at("picture", &format!("/{photo_token}/{special}")),
                Some(self.rules[1]),
            ));
        }
        forms_of(forms)
    }

    fn list(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, tag: bool, i: usize) {
        let first = em.content(rng, &self.list_forms(tag, i, 0, ""), PageKind::Listing);
        let mut previous = first.clone();
        for page in 1..rng.random_range(1..=4) {
            previous = em.sibling(
                rng,
                &previous,
                &self.list_forms(tag, i, page, ""),
                PageKind::Listing,
            );
        }
        if !tag && rng.random_bool(0.25) {
            let flat = self.list_forms(tag, i, 0, "/flat");
            em.sibling(rng, &first, &flat, PageKind::Listing);
        }
        if !tag && rng.random_bool(0.15) {
            let chronology = self.list_forms(tag, i, 0, "/posted-monthly-list");
            em.sibling(rng, &first, &chronology, PageKind::Listing);
        }
    }

    /// Emits a photo; as a sibling of `of` (a hard negative) when given.
    fn photo(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, of: Option<&Emitted>) -> Emitted {
        self.next_photo += rng.random_range(1..20);
        let photo = self.next_photo;
        let file = format!(
            "{}_{}",
            pick(rng, &["img", "dsc", "p", "dscn"], "img"),
            rng.random_range(1000..99_999)
        );
        let a = rng.random_range(0..self.albums.len());
        let forms = self.photo_forms(photo, &file, a, rng);
        let shown = match of {
            Some(of) => em.sibling(rng, of, &forms, PageKind::Article),
            None => em.content(rng, &forms, PageKind::Article),
        };
        if rng.random_bool(0.1) {
            let metadata = forms[0].parts.clone().q("metadata", "");
            em.sibling(
                rng,
                &shown,
                &forms_of(vec![(metadata, None)]),
                PageKind::Article,
            );
        }
        if rng.random_bool(0.15) {
            let download = UrlParts::new(format!("{}/action.php", self.base))
                .q("id", photo.to_string())
                .q("part", "e")
                .q("download", "");
            em.sibling(
                rng,
                &shown,
                &forms_of(vec![(download, None)]),
                PageKind::Article,
            );
        }
        shown
    }
}

impl Section for Piwigo {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if !self.home_listed {
            self.home_listed = true;
            let forms = forms_of(vec![
                (UrlParts::new(format!("{}/", self.base)), None),
                (
                    UrlParts::new(format!("{}/index.php", self.base)),
                    Some(self.rules[3]),
                ),
                (self.at("index", "/categories"), Some(self.rules[3])),
            ]);
            em.content(rng, &forms, PageKind::Listing);
            return;
        }
        let roll = rng.random::<f64>();
        if roll < 0.12 {
            let i = rng.random_range(0..self.albums.len());
            if self.listed.insert((false, i)) {
                self.list(em, rng, false, i);
                return;
            }
        } else if roll < 0.17 {
            let i = rng.random_range(0..self.tags.len());
            if self.listed.insert((true, i)) {
                self.list(em, rng, true, i);
                return;
            }
        } else if roll < 0.19 {
            let special = pick(rng, SPECIAL, "most_visited");
            if self.specials_listed.insert(special) {
                let forms = forms_of(vec![(self.at("index", &format!("/{special}")), None)]);
                em.content(rng, &forms, PageKind::Listing);
                return;
            }
        }
        let shown = self.photo(em, rng, None);
        if rng.random_bool(0.25) {
            // The next photo: the same template around another photo.
            self.photo(em, rng, Some(&shown));
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let photo = self.next_photo + rng.random_range(1_000_000..2_000_000);
        let a = rng.random_range(0..self.albums.len());
        self.photo_forms(photo, &format!("img_{}", word(rng)), a, rng)
    }

    fn variant(&self) -> String {
        format!(
            "piwigo{}{}{}{}",
            self.base,
            if self.question_mark { "?/" } else { "/" },
            if self.album_names { "+album-names" } else { "" },
            if self.file_names { "+file-names" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::family_tests::{check_family, ids_of};
    use crate::corpus::SiteKind;

    #[test]
    fn piwigo_generates_its_scheme() {
        let (mut contexts, mut pages) = (0, 0);
        for site in check_family(SiteKind::Piwigo) {
            let ids = ids_of(&site);
            for (url, id) in &ids {
                // A photo in an album is the photo without a section (both undecorated).
                if let Some((photo, _)) = url
                    .split_once("picture.php")
                    .and_then(|(_, rest)| rest.split_once("/category/"))
                    .filter(|(_, album)| !album.contains(['&', '?']))
                {
                    let head = &url[..url.find("picture.php").unwrap_or(0)];
                    let bare = format!("{head}picture.php{photo}");
                    if let Some(other) = ids.get(&bare) {
                        assert_eq!(other, id, "{url} vs {bare}");
                        contexts += 1;
                    }
                }
                // A later page of an album is another content.
                if let Some(first) = url.strip_suffix("/start-15") {
                    if let Some(other) = ids.get(first) {
                        assert_ne!(other, id, "{url}");
                        pages += 1;
                    }
                }
            }
        }
        assert!(
            contexts > 0 && pages > 0,
            "contexts {contexts}, pages {pages}"
        );
    }
}
