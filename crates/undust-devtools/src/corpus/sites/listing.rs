//! Apache directory listings (mod_autoindex): a folder's listing answers with any sort
//! arguments, new style `?C=M;O=A` (column N/M/S/D, order A/D) and old style `?N=D`, `?M=A`;
//! the folder without its trailing slash redirects to it; a folder with an `index.html` serves
//! that document. Files are distinct from each other, and versions of one package too
//! (`pkg-1.2.tar.gz`, `pkg-1.3.tar.gz`).

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::PageKind;

pub(super) struct Listing {
    root: String,
    rules: [usize; 4],
    /// Whether the server also answers old-style sort keys (`?N=D`).
    old_style: bool,
    used: HashSet<String>,
}

impl Listing {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let root = format!(
            "{base}{}",
            pick(rng, &["/pub", "/files", "/dist", "/download", ""], "/pub")
        );
        let dir = UrlParts::new(format!("{root}/{{dir}}/"));
        let rules = [
            alias_rule(
                em,
                &UrlParts::new(format!("{root}/{{dir}}/?C={{column}};O={{order}}")),
                &dir,
                "listing sorted by a column",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{root}/{{dir}}/?{{column}}={{order}}")),
                &dir,
                "listing sorted by an old-style column key",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{root}/{{dir}}")),
                &dir,
                "folder without its trailing slash",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{root}/{{dir}}/index.html")),
                &dir,
                "folder's index document",
            ),
        ];
        Listing {
            root,
            rules,
            old_style: rng.random_bool(0.5),
            used: HashSet::new(),
        }
    }

    fn dir_forms(&self, rng: &mut ChaCha8Rng, dir: &str, has_index: bool) -> Vec<Form> {
        let path = format!("{}/{dir}/", self.root);
        let mut forms = vec![(UrlParts::new(path.clone()), None)];
        for _ in 0..3 {
            let c = pick(rng, &["N", "M", "S", "D"], "N");
            let o = pick(rng, &["A", "D"], "A");
            // `C=M;O=A` is one query pair to most parsers: key `C`, value `M;O=A`.
            forms.push((
                UrlParts::new(path.clone()).q("C", format!("{c};O={o}")),
                Some(self.rules[0]),
            ));
            if self.old_style {
                forms.push((UrlParts::new(path.clone()).q(c, o), Some(self.rules[1])));
            }
        }
        forms.push((
            UrlParts::new(path.trim_end_matches('/').to_string()),
            Some(self.rules[2]),
        ));
        if has_index {
            forms.push((
                UrlParts::new(format!("{path}index.html")),
                Some(self.rules[3]),
            ));
        }
        forms_of(forms)
    }

    fn new_dir(&mut self, rng: &mut ChaCha8Rng) -> String {
        for _ in 0..8 {
            let depth = rng.random_range(1..=3);
            let dir = (0..depth).map(|_| word(rng)).collect::<Vec<_>>().join("/");
            if self.used.insert(dir.clone()) {
                return dir;
            }
        }
        let dir = format!("{}/{}", word(rng), self.used.len());
        self.used.insert(dir.clone());
        dir
    }
}

impl Section for Listing {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let dir = self.new_dir(rng);
        let has_index = rng.random_bool(0.15);
        let forms = self.dir_forms(rng, &dir, has_index);
        em.content(rng, &forms, PageKind::Listing);
        // Its files: versions of a package, documents; each its own content.
        let package = slug(rng, 1..=2);
        let ext = pick(
            rng,
            &[".tar.gz", ".zip", ".txt", ".pdf", ".html"],
            ".tar.gz",
        );
        let (major, mut minor) = (rng.random_range(0..5), rng.random_range(0..9));
        let mut previous = None;
        for _ in 0..rng.random_range(1..=5) {
            minor += 1;
            let file = format!("{}/{dir}/{package}-{major}.{minor}{ext}", self.root);
            let forms = forms_of(vec![(UrlParts::new(file), None)]);
            previous = Some(match &previous {
                Some(p) => em.sibling(rng, p, &forms, PageKind::Doc),
                None => em.content(rng, &forms, PageKind::Doc),
            });
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let dir = self.new_dir(rng);
        forms_of(vec![(
            UrlParts::new(format!("{}/{dir}/{}.txt", self.root, word(rng))),
            None,
        )])
    }

    fn variant(&self) -> String {
        format!(
            "directory-listing:{}{}",
            self.root,
            if self.old_style { "+old-style" } else { "" }
        )
    }
}
