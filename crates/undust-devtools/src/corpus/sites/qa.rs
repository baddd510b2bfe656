//! Q&A sites (Stack Exchange style): a question is `/questions/N/slug`, `/questions/N` and the
//! share link `/q/N` (with the sharer's id, `/q/N/U`); `?answertab=votes` is the default order
//! spelled out. Distinct: another order (`answertab=active`, `oldest`), answer pages (`page=2`),
//! tag listings by tab and page. User profiles: `/users/N/name` ≡ `/users/N`.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::{pick, slug, word};
use crate::corpus::PageKind;

pub(super) struct QAndA {
    base: String,
    rules: [usize; 4],
    tags: Vec<String>,
    listed: std::collections::HashSet<usize>,
    next_id: u64,
}

impl QAndA {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let canon = UrlParts::new(format!("{base}/questions/{{id}}/{{slug}}"));
        let rules = [
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/questions/{{id}}")),
                &canon,
                "question without its slug",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/q/{{id}}")),
                &canon,
                "short share link",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{base}/q/{{id}}/{{user}}")),
                &canon,
                "share link with the sharer's id",
            ),
            alias_rule(
                em,
                &canon.clone().q("answertab", "votes"),
                &canon,
                "the default answer order spelled out",
            ),
        ];
        QAndA {
            base: base.to_string(),
            rules,
            tags: (0..rng.random_range(4..=20))
                .map(|_| word(rng).to_string())
                .collect(),
            listed: Default::default(),
            next_id: rng.random_range(1_000..9_000_000),
        }
    }

    fn question_forms(
        &self,
        rng: &mut ChaCha8Rng,
        id: u64,
        s: &str,
        tail: Option<(&str, String)>,
    ) -> Vec<Form> {
        let b = &self.base;
        let with = |p: UrlParts| match &tail {
            Some((k, v)) => p.q(k, v.clone()),
            None => p,
        };
        if tail.is_some() {
            return forms_of(vec![
                (with(UrlParts::new(format!("{b}/questions/{id}/{s}"))), None),
                (
                    with(UrlParts::new(format!("{b}/questions/{id}"))),
                    Some(self.rules[0]),
                ),
            ]);
        }
        let user = rng.random_range(1..2_000_000);
        forms_of(vec![
            (UrlParts::new(format!("{b}/questions/{id}/{s}")), None),
            (
                UrlParts::new(format!("{b}/questions/{id}")),
                Some(self.rules[0]),
            ),
            (UrlParts::new(format!("{b}/q/{id}")), Some(self.rules[1])),
            (
                UrlParts::new(format!("{b}/q/{id}/{user}")),
                Some(self.rules[2]),
            ),
            (
                UrlParts::new(format!("{b}/questions/{id}/{s}")).q("answertab", "votes"),
                Some(self.rules[3]),
            ),
        ])
    }

    fn tag_forms(&self, t: usize, tab: &str, page: u32) -> Vec<Form> {
        let mut p = UrlParts::new(format!("{}/questions/tagged/{}", self.base, self.tags[t]));
        if !tab.is_empty() {
            p = p.q("tab", tab);
        }
        if page > 1 {
            p = p.q("page", page.to_string());
        }
        forms_of(vec![(p, None)])
    }
}

impl Section for QAndA {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        if rng.random_bool(0.08) && self.listed.len() < self.tags.len() {
            let t = rng.random_range(0..self.tags.len());
            if self.listed.insert(t) {
                let first = em.content(rng, &self.tag_forms(t, "", 1), PageKind::Listing);
                let tab = pick(rng, &["Votes", "Active", "Unanswered", "Frequent"], "Votes");
                em.sibling(rng, &first, &self.tag_forms(t, tab, 1), PageKind::Listing);
                for page in 2..=rng.random_range(1..=4) {
                    em.sibling(rng, &first, &self.tag_forms(t, "", page), PageKind::Listing);
                }
                return;
            }
        }
        self.next_id += rng.random_range(1..200);
        let id = self.next_id;
        let s = slug(rng, 3..=8);
        let forms = self.question_forms(rng, id, &s, None);
        let first = em.content(rng, &forms, PageKind::Thread);
        if rng.random_bool(0.25) {
            let order = pick(rng, &["active", "oldest", "modifieddesc"], "active").to_string();
            let forms = self.question_forms(rng, id, &s, Some(("answertab", order)));
            em.sibling(rng, &first, &forms, PageKind::Thread);
        }
        if rng.random_bool(0.1) {
            let forms = self.question_forms(rng, id, &s, Some(("page", "2".to_string())));
            em.sibling(rng, &first, &forms, PageKind::Thread);
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let id = self.next_id + rng.random_range(10_000_000..20_000_000);
        let s = slug(rng, 3..=3);
        self.question_forms(rng, id, &s, None)
    }

    fn variant(&self) -> String {
        "q-and-a".to_string()
    }
}
