//! Event calendars (The Events Calendar for WordPress and alike): an event is `/event/slug/`,
//! `/?tribe_events=slug` and `/event/slug` (no slash); the calendar's default view `/events/`
//! is `/events/list/`. Distinct: each day view (`/events/YYYY-MM-DD/`), each month
//! (`/events/month/YYYY-MM/`), list pages (`/events/list/page/N/`), the instances of a
//! recurring event (`/event/slug/YYYY-MM-DD/`), and the iCal export (`?ical=1`).

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{add_tracking, alias_rule, forms_of, Section};
use crate::corpus::emit::{Emitter, Form, UrlParts};
use crate::corpus::words::slug;
use crate::corpus::PageKind;

pub(super) struct Calendar {
    base: String,
    single: &'static str,
    plural: &'static str,
    rules: [usize; 3],
    date: (u32, u32, u32),
    views: HashSet<String>,
    used: HashSet<String>,
}

impl Calendar {
    pub(super) fn new(em: &mut Emitter, rng: &mut ChaCha8Rng, base: &str) -> Self {
        let (single, plural) = *[
            ("event", "events"),
            ("veranstaltung", "veranstaltungen"),
            ("evenement", "evenements"),
        ]
        .get(if rng.random_bool(0.7) {
            0
        } else {
            rng.random_range(1..3)
        })
        .unwrap_or(&("event", "events"));
        let b = base;
        let event = UrlParts::new(format!("{b}/{single}/{{slug}}/"));
        let rules = [
            alias_rule(
                em,
                &UrlParts::new(format!("{b}/")).q("tribe_events", "{slug}"),
                &event,
                "event by query `tribe_events`",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{b}/{single}/{{slug}}")),
                &event,
                "event without trailing slash",
            ),
            alias_rule(
                em,
                &UrlParts::new(format!("{b}/{plural}/list/")),
                &UrlParts::new(format!("{b}/{plural}/")),
                "the default list view spelled out",
            ),
        ];
        if rng.random_bool(0.5) {
            add_tracking(em, rng, 1);
        }
        Calendar {
            base: base.to_string(),
            single,
            plural,
            rules,
            date: (
                rng.random_range(2015..=2025),
                rng.random_range(1..=12),
                rng.random_range(1..=28),
            ),
            views: HashSet::new(),
            used: HashSet::new(),
        }
    }

    fn event_forms(&self, s: &str, instance: Option<String>, ical: bool) -> Vec<Form> {
        let b = &self.base;
        let single = self.single;
        if let Some(day) = instance {
            return forms_of(vec![(
                UrlParts::new(format!("{b}/{single}/{s}/{day}/")),
                None,
            )]);
        }
        let tail = |p: UrlParts| if ical { p.q("ical", "1") } else { p };
        forms_of(vec![
            (tail(UrlParts::new(format!("{b}/{single}/{s}/"))), None),
            (
                tail(UrlParts::new(format!("{b}/")).q("tribe_events", s)),
                Some(self.rules[0]),
            ),
            (
                tail(UrlParts::new(format!("{b}/{single}/{s}"))),
                Some(self.rules[1]),
            ),
        ])
    }

    fn day(&self) -> String {
        let (y, m, d) = self.date;
        format!("{y}-{m:02}-{d:02}")
    }

    fn advance(&mut self, rng: &mut ChaCha8Rng) {
        let (y, m, d) = &mut self.date;
        *d += rng.random_range(0..3);
        if *d > 28 {
            *d = 1;
            *m += 1;
        }
        if *m > 12 {
            *m = 1;
            *y += 1;
        }
    }

    /// Calendar views: the default list, day and month views and list pages.
    fn views(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        let b = &self.base;
        let p = self.plural;
        if self.views.insert("list".to_string()) {
            let first = em.content(
                rng,
                &forms_of(vec![
                    (UrlParts::new(format!("{b}/{p}/")), None),
                    (UrlParts::new(format!("{b}/{p}/list/")), Some(self.rules[2])),
                ]),
                PageKind::Listing,
            );
            for page in 2..=rng.random_range(2..=5) {
                let f = forms_of(vec![(
                    UrlParts::new(format!("{b}/{p}/list/page/{page}/")),
                    None,
                )]);
                em.sibling(rng, &first, &f, PageKind::Listing);
            }
            return;
        }
        let day = self.day();
        let (y, m, _) = self.date;
        let month = format!("{y}-{m:02}");
        let view = if rng.random_bool(0.6) {
            format!("{b}/{p}/{day}/")
        } else {
            format!("{b}/{p}/month/{month}/")
        };
        if self.views.insert(view.clone()) {
            em.content(
                rng,
                &forms_of(vec![(UrlParts::new(view), None)]),
                PageKind::Listing,
            );
        }
    }
}

impl Section for Calendar {
    fn entity(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng) {
        self.advance(rng);
        if rng.random_bool(0.2) {
            self.views(em, rng);
            return;
        }
        let mut s = slug(rng, 2..=5);
        if !self.used.insert(s.clone()) {
            s = format!("{s}-{}", self.used.len());
            self.used.insert(s.clone());
        }
        let first = em.content(rng, &self.event_forms(&s, None, false), PageKind::Article);
        if rng.random_bool(0.2) {
            em.sibling(
                rng,
                &first,
                &self.event_forms(&s, None, true),
                PageKind::Doc,
            );
        }
        if rng.random_bool(0.2) {
            let mut days = HashSet::new();
            for _ in 0..rng.random_range(1..=4) {
                self.advance(rng);
                let day = self.day();
                // Each instance is its own day: one URL path, one content.
                if !days.insert(day.clone()) {
                    continue;
                }
                em.sibling(
                    rng,
                    &first,
                    &self.event_forms(&s, Some(day), false),
                    PageKind::Article,
                );
            }
        }
    }

    fn phantom(&mut self, rng: &mut ChaCha8Rng) -> Vec<Form> {
        let s = format!("{}-{}", slug(rng, 2..=2), rng.random_range(100..100_000));
        self.event_forms(&s, None, false)
    }

    fn variant(&self) -> String {
        format!("event-calendar:{}", self.single)
    }
}
