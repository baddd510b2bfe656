//! Drupal: a node is `/node/N`, the same through the front controller without clean URLs
//! (`/index.php?q=node/N`, `/?q=node/N`) and under its path alias (pathauto patterns such as
//! `/articles/title`, `/blog/2019/05/title`, `/content/title`). Taxonomy terms likewise
//! (`/taxonomy/term/N` ≡ `?q=taxonomy/term/N` ≡ `/tags/word`). Distinct: comment pages and
//! listing pages (`?page=N`, zero-based), other nodes.
//!
//! On sites that declare canonicals, pages say what Drupal 8+ writes in their head: the path
//! alias as `rel=canonical` (with the page's `?page=N`) and the entity's system path as
//! `rel=shortlink` (`/node/N`, `/taxonomy/term/N`, never with `?page=`: the shortlink is the
//! entity's, not the listing page's). Pathauto keeps aliases unique by suffixing a repeated name
//! (`/tags/word-0`); the generated terms' aliases are not suffixed, so a term whose name another
//! term shares declares its system path as canonical and no shortlink, as a term without an
//! alias does.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug};
use crate::corpus::PageKind;

pub(super) struct Drupal {
    base: String,
    /// Pathauto pattern prefix for nodes (`/articles`, `/blog/{y}/{m}`, `/content`).
    node_alias: &'static str,
    term_alias: &'static str,
    /// Whether `/index.php?q=` (true) or `/?q=` (false) is the unclean form.
    index_php: bool,
    rules: [usize; 3],
    terms: Vec<(u32, String)>,
    listed: HashSet<usize>,
    next_nid: u64,
    year: u32,
    used: HashSet<String>,
}

impl Drupal {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let node_alias = pick(
            rng,
            &["/articles", "/blog", "/content", "/news", "/stories"],
            "/content",
        );
        let term_alias = pick(rng, &["/tags", "/topics", "/category"], "/tags");
        let mut d = Drupal {
            base: base.to_string(),
            node_alias,
            term_alias,
            index_php: rng.random_bool(0.5),
            rules: [0; 3],
            terms: (0..rng.random_range(3..=12))
                .map(|i| (i + 1, slug(rng, 1..=2)))
                .collect(),
            listed: HashSet::new(),
            next_nid: rng.random_range(1..30_000),
            year: rng.random_range(2010..=2024),
            used: HashSet::new(),
        };
        let node = UrlParts::new(format!("{base}/node/{{nid}}"));
        d.rules = [
            alias_rule(
                em,
                &d.unclean("node/{nid}"),
                &node,
                "node through the front controller without clean URLs",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}{node_alias}/{{title}}")),
                &node,
                "node under its path alias",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}{term_alias}/{{term}}")),
                &UrlParts::new(format!("{base}/taxonomy/term/{{tid}}")),
                "taxonomy term under its path alias",
            ),
        ];
        if rng.random_bool(0.5) {
            add_tracking(em, rng, 2);
        }
        d
    }

    fn unclean(&self, q: &str) -> UrlParts {
        let script = if self.index_php { "/index.php" } else { "/" };
        UrlParts::new(format!("{}{script}", self.base)).q("q", q)
    }

    fn alias(&self, title: &str) -> String {
        if self.node_alias == "/blog" {
            format!("{}{}/{}/{title}", self.base, self.node_alias, self.year)
        } else {
            format!("{}{}/{title}", self.base, self.node_alias)
        }
    }

    fn node_forms(&self, nid: u64, title: &str, page: u32) -> Vec<Form> {
        let with_page = |p: UrlParts| {
            if page > 0 {
                p.q("page", page.to_string())
            } else {
                p
            }
        };
        forms_of(vec![
            (
                with_page(UrlParts::new(format!("{}/node/{nid}", self.base))),
                None,
            ),
            (
                with_page(self.unclean(&format!("node/{nid}"))),
                Some(self.rules[0]),
            ),
            (
                with_page(UrlParts::new(self.alias(title))),
                Some(self.rules[1]),
            ),
        ])
    }

    fn term_forms(&self, t: usize, page: u32) -> Vec<Form> {
        let (tid, name) = &self.terms[t];
        let with_page = |p: UrlParts| {
            if page > 0 {
                p.q("page", page.to_string())
            } else {
                p
            }
        };
        forms_of(vec![
            (
                with_page(UrlParts::new(format!("{}/taxonomy/term/{tid}", self.base))),
                None,
            ),
            (
                with_page(self.unclean(&format!("taxonomy/term/{tid}"))),
                Some(self.rules[0]),
            ),
            (
                with_page(UrlParts::new(format!(
                    "{}{}/{name}",
                    self.base, self.term_alias
                ))),
                Some(self.rules[2]),
            ),
        ])
    }

    fn new_node(&mut self, rng: &mut ChaCha8Rng) -> (u64, String) {
        self.next_nid += rng.random_range(1..12);
        if rng.random_bool(0.05) {
            self.year += 1;
        }
        let mut s = slug(rng, 2..=6);
        if !self.used.insert(s.clone()) {
            s = format!("{s}-{}", self.used.len());
            self.used.insert(s.clone());
        }
        (self.next_nid, s)
    }
}

impl Drupal {
    /// Index of the path alias among a node's or a term's forms.
    const ALIAS_FORM: usize = 2;

    /// Declares what the next node page's head says: its alias canonical, `/node/N` its
    /// shortlink.
    fn declare_node(&self, em: &mut Emitter, nid: u64, title: &str) {
        let system = self.node_forms(nid, title, 0);
        em.declare_next(Drupal::ALIAS_FORM, Some((system.as_slice(), 0)));
    }

    /// Declares what the next page of term `t` says: its alias canonical and
    /// `/taxonomy/term/N` its shortlink, when the term's alias is its own.
    fn declare_term(&self, em: &mut Emitter, t: usize) {
        let name = &self.terms[t].1;
        let own_alias = self.terms.iter().filter(|(_, n)| n == name).count() == 1;
        if own_alias {
            let system = self.term_forms(t, 0);
            em.declare_next(Drupal::ALIAS_FORM, Some((system.as_slice(), 0)));
        } else {
            em.declare_next(0, None);
        }
    }
}

impl Section for Drupal {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.1) && self.listed.len() < self.terms.len() {
            let t = rng.random_range(0..self.terms.len());
            if self.listed.insert(t) {
                self.declare_term(em, t);
                let first = em.content(rng, &self.term_forms(t, 0), PageKind::Listing);
                for page in 1..rng.random_range(1..=5) {
                    self.declare_term(em, t);
                    em.sibling(rng, &first, &self.term_forms(t, page), PageKind::Listing);
                }
                return;
            }
        }
        let (nid, title) = self.new_node(rng);
        self.declare_node(em, nid, &title);
        let node = em.content(rng, &self.node_forms(nid, &title, 0), PageKind::Article);
        if rng.random_bool(0.2) {
            for page in 1..rng.random_range(2..=4) {
                self.declare_node(em, nid, &title);
                em.sibling(
                    rng,
                    &node,
                    &self.node_forms(nid, &title, page),
                    PageKind::Listing,
                );
            }
        }
        if rng.random_bool(0.15) {
            let (nid, title) = self.new_node(rng);
            self.declare_node(em, nid, &title);
            em.sibling(
                rng,
                &node,
                &self.node_forms(nid, &title, 0),
                PageKind::Article,
            );
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let (nid, title) = self.new_node(rng);
        self.node_forms(nid, &title, 0)
    }

    fn variant(&self) -> String {
        format!(
            "drupal:{}{}",
            self.node_alias,
            if self.index_php { "+index.php" } else { "+q" }
        )
    }
}
