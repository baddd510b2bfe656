//! The per-site URL emitter: turns logical contents into crawled URLs with DUST decorations
//! (irrelevant parameters, alias layouts, case changes, parameter order) while keeping the ground
//! truth consistent (one content per URL, unique URLs, hard negatives and examples only between
//! URLs that really are in the crawl).
//!
//! Site generators (`sites.rs`) describe *what* exists (contents, their equivalent layouts and
//! their meaningful siblings); this module decides *which* URLs of each content the crawl saw.

use std::collections::HashMap;

use xxhash_rust::xxh3::{xxh3_64, Xxh3DefaultBuilder};

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{DustRule, ExpectedDust, NoiseKind, PageKind, SyntheticPage};

/// Hashed URL → content id (keys are already hashes; xxh3 re-mixes them cheaply).
type UrlIndex = HashMap<u64, u64, Xxh3DefaultBuilder>;

/// Examples kept per expected rule.
const MAX_EXAMPLES: usize = 3;

/// A URL without scheme and host: a path starting with `/` and query pairs in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UrlParts {
    pub path: String,
    pub query: Vec<(String, String)>,
}

impl UrlParts {
    pub fn new(path: impl Into<String>) -> Self {
        UrlParts {
            path: path.into(),
            query: Vec::new(),
        }
    }

    /// Appends a query pair.
    pub fn q(mut self, key: &str, value: impl Into<String>) -> Self {
        self.query.push((key.to_string(), value.into()));
        self
    }
}

/// One equivalent layout of a content; `rule` is the expected-DUST entry that explains why it
/// equals the content's first form (None for the first form itself).
#[derive(Debug, Clone)]
pub(crate) struct Form {
    pub parts: UrlParts,
    pub rule: Option<usize>,
}

/// Where an irrelevant parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExtraPlace {
    /// `?name=value` appended to the query.
    Query,
    /// `;name=value` appended to the path.
    PathParam,
    /// `/(S(value))` prepended to the path (ASP.NET cookieless session).
    PathPrefix,
}

/// An irrelevant URL decoration of the site (session id, tracking parameter).
#[derive(Debug, Clone)]
pub(crate) struct Extra {
    pub rule: usize,
    pub name: String,
    pub place: ExtraPlace,
    /// Probability that a crawled URL carries it.
    pub prob: f64,
    /// The values seen on this site (sessions are reused across pages, like real visitors).
    pub values: Vec<String>,
}

/// How a path's letters are cased in one URL (only on case-insensitive sites).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Case {
    Original,
    Lower,
    Upper,
    /// First letter of every segment uppercased, the rest lowercased.
    Capitalized,
}

/// The DUST choices of one URL of a content.
#[derive(Debug, Clone)]
pub(crate) struct Decoration {
    pub form: usize,
    /// (index into `Emitter::extras`, index into its values).
    pub extras: Vec<(usize, usize)>,
    pub case: Case,
    pub reorder: bool,
}

impl Decoration {
    pub fn plain(form: usize) -> Self {
        Decoration {
            form,
            extras: Vec::new(),
            case: Case::Original,
            reorder: false,
        }
    }
}

/// What `Emitter::content` produced: its first crawled URL (with the decoration that built it,
/// so siblings can be built alike for hard negatives).
#[derive(Debug, Clone)]
pub(crate) struct Emitted {
    pub first: Option<(Decoration, String)>,
}

/// The pages of one item in order (a thread's pages): the first emitted as a content, each
/// later one as a sibling of the page before it (a distinct page, and a hard negative).
#[derive(Default)]
pub(crate) struct PageChain {
    first: Option<Emitted>,
    previous: Option<Emitted>,
}

impl PageChain {
    /// Emits the next page with `forms`.
    pub fn push(&mut self, em: &mut Emitter, rng: &mut ChaCha8Rng, forms: &[Form], kind: PageKind) {
        let emitted = match &self.previous {
            None => em.content(rng, forms, kind),
            Some(previous) => em.sibling(rng, previous, forms, kind),
        };
        if self.first.is_none() {
            self.first = Some(emitted.clone());
        }
        self.previous = Some(emitted);
    }

    /// The first page, once one was emitted.
    pub fn first(self) -> Option<Emitted> {
        self.first
    }
}

/// Inverse-CDF sampler of a truncated Zipf law on `1..=n`: how many URLs a content has.
#[derive(Debug, Clone)]
pub(crate) struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    pub fn new(n: usize, exponent: f64) -> Self {
        let n = n.max(1);
        let mut cdf = Vec::with_capacity(n);
        let mut total = 0.0;
        for k in 1..=n {
            total += (k as f64).powf(-exponent);
            cdf.push(total);
        }
        for c in &mut cdf {
            *c /= total;
        }
        Zipf { cdf }
    }

    pub fn sample(&self, rng: &mut ChaCha8Rng) -> usize {
        let u: f64 = rng.random();
        self.cdf.partition_point(|&c| c < u) + 1
    }
}

/// Outcome of adding one URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Added {
    New,
    /// The URL was already crawled for the same content.
    Present,
    /// Not added: full, or the URL (or its case-folded form) belongs to another content.
    Refused,
}

/// Accumulates one site's pages and ground truth.
pub(crate) struct Emitter {
    pub origin: String,
    site_base: u64,
    next_local: u64,
    pub pages: Vec<SyntheticPage>,
    /// 64-bit hash of each crawled URL → its content id. A hash collision can only make the
    /// emitter skip a URL (treated as already present), never give one URL two contents.
    by_url: UrlIndex,
    /// Case-folded path + query → content, on case-insensitive sites.
    by_folded: Option<UrlIndex>,
    /// The plain URL of each form a content was emitted under (case-folded as `by_folded`
    /// folds) → that content. A decorated URL (a tracker, a highlight, another case) names
    /// the resource its plain URL names, so a content whose plain form another content owns
    /// is refused that form, decorated or not.
    by_plain: UrlIndex,
    pub hard_negatives: Vec<(String, String)>,
    pub rules: Vec<ExpectedDust>,
    pub extras: Vec<Extra>,
    case_rule: Option<usize>,
    case_prob: f64,
    /// Query keys and values are case-insensitive too (IIS/ASP.NET with a case-insensitive
    /// database collation), not only the path.
    case_query: bool,
    order_rule: Option<usize>,
    order_prob: f64,
    /// Weight of the first form against 1 for each other form.
    first_form_weight: f64,
    pub cap: usize,
    zipf: Zipf,
    /// False on no-DUST sites: one URL per content, first form only, no decorations.
    pub dust: bool,
    /// The site declares `rel=canonical` on its pages.
    pub declares_canonical: bool,
    /// The site answers alias layouts with a redirect to the first layout.
    pub redirects_aliases: bool,
    /// The canonical URL of the content being emitted (when the site declares canonicals).
    current_canonical: Option<String>,
    /// The shortlink the pages of the content being emitted declare (when the site declares
    /// canonicals and its software writes shortlinks).
    current_shortlink: Option<String>,
    /// What the next content declares, when the site's software says more than "its first
    /// form": the form its `rel=canonical` names and its `rel=shortlink` (see
    /// [`Emitter::declare_next`]).
    next_declared: Option<(usize, Option<String>)>,
    /// The first query pair names the page and must stay first (Piwigo's `?/category/5`,
    /// a path written as the query string): varying the order moves only the pairs after it.
    pub first_query_pair_fixed: bool,
}

impl Emitter {
    pub fn new(origin: String, site_index: usize, cap: usize, zipf: Zipf, dust: bool) -> Self {
        Emitter {
            origin,
            // Content ids: site in the high bits so ids are unique across the corpus.
            site_base: (site_index as u64 + 1) << 40,
            next_local: 0,
            pages: Vec::with_capacity(cap.min(1 << 20)),
            by_url: UrlIndex::with_capacity_and_hasher(cap.min(1 << 20), Xxh3DefaultBuilder),
            by_folded: None,
            by_plain: UrlIndex::default(),
            hard_negatives: Vec::new(),
            rules: Vec::new(),
            extras: Vec::new(),
            case_rule: None,
            case_prob: 0.0,
            case_query: false,
            order_rule: None,
            order_prob: 0.0,
            first_form_weight: 3.0,
            cap,
            zipf,
            dust,
            declares_canonical: false,
            redirects_aliases: false,
            current_canonical: None,
            current_shortlink: None,
            next_declared: None,
            first_query_pair_fixed: false,
        }
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_full(&self) -> bool {
        self.pages.len() >= self.cap
    }

    /// A fresh content id.
    pub fn new_id(&mut self) -> u64 {
        self.next_local += 1;
        self.site_base | self.next_local
    }

    /// Registers an expected-DUST rule and returns its index (for `Form::rule`, `Extra::rule`).
    pub fn rule(&mut self, rule: DustRule, description: String) -> usize {
        if let Some(i) = self.rules.iter().position(|r| r.rule == rule) {
            return i;
        }
        self.rules.push(ExpectedDust {
            rule,
            description,
            examples: Vec::new(),
        });
        self.rules.len() - 1
    }

    /// Adds an irrelevant decoration (registers its rule).
    pub fn add_extra(&mut self, rule: DustRule, description: String, mut extra: Extra) {
        extra.rule = self.rule(rule, description);
        if extra.values.is_empty() {
            extra.values.push("1".to_string());
        }
        self.extras.push(extra);
    }

    /// Makes paths case-insensitive: a share `prob` of URLs get another casing.
    pub fn set_case_insensitive(&mut self, prob: f64) {
        self.case_rule = Some(self.rule(
            DustRule::CaseInsensitivePath,
            "the server treats paths case-insensitively".to_string(),
        ));
        self.case_prob = prob;
        self.by_folded = Some(UrlIndex::default());
    }

    /// Makes paths, query keys and query values case-insensitive (IIS with a case-insensitive
    /// database): a share `prob` of URLs get another casing of all three.
    pub fn set_case_insensitive_query(&mut self, prob: f64) {
        self.case_rule = Some(self.rule(
            DustRule::CaseInsensitiveQuery,
            "the server treats paths, query keys and query values case-insensitively".to_string(),
        ));
        self.case_prob = prob;
        self.case_query = true;
        self.by_folded = Some(UrlIndex::default());
    }

    /// Lets a share `prob` of URLs list their query parameters in reverse order.
    pub fn set_query_order(&mut self, prob: f64) {
        self.order_rule = Some(self.rule(
            DustRule::QueryOrder,
            "query parameters appear in varying order".to_string(),
        ));
        self.order_prob = prob;
    }

    pub fn set_first_form_weight(&mut self, w: f64) {
        self.first_form_weight = w.max(0.1);
    }

    /// Builds the absolute URL of `forms[d.form]` decorated by `d`.
    pub fn build(&self, forms: &[Form], d: &Decoration) -> String {
        let Some(form) = forms.get(d.form).or(forms.first()) else {
            return self.origin.clone() + "/";
        };
        let mut path = apply_case(&form.parts.path, d.case);
        let cased: Vec<(String, String)>;
        let mut query: Vec<(&str, &str)> = if self.case_query && d.case != Case::Original {
            cased = form
                .parts
                .query
                .iter()
                .map(|(k, v)| (apply_case(k, d.case), apply_case(v, d.case)))
                .collect();
            cased
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect()
        } else {
            form.parts
                .query
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect()
        };
        let mut prefix = String::new();
        for &(e, v) in &d.extras {
            let Some(extra) = self.extras.get(e) else {
                continue;
            };
            let value = extra.values.get(v).map_or("", String::as_str);
            match extra.place {
                ExtraPlace::Query => query.push((extra.name.as_str(), value)),
                ExtraPlace::PathParam => {
                    path.push(';');
                    path.push_str(&extra.name);
                    path.push('=');
                    path.push_str(value);
                }
                ExtraPlace::PathPrefix => {
                    prefix.push_str("/(S(");
                    prefix.push_str(value);
                    prefix.push_str("))");
                }
            }
        }
        if d.reorder {
            if self.first_query_pair_fixed && !query.is_empty() {
                query[1..].reverse();
            } else {
                query.reverse();
            }
        }
        let mut url = String::with_capacity(self.origin.len() + prefix.len() + path.len() + 32);
        url.push_str(&self.origin);
        url.push_str(&prefix);
        url.push_str(&path);
        for (i, (k, v)) in query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(k);
            // A key without a value (`showthread.php?123-title`) is written bare.
            if !v.is_empty() {
                url.push('=');
                url.push_str(v);
            }
        }
        url
    }

    /// Adds one URL of content `id`.
    #[cfg(test)]
    pub fn add(&mut self, url: String, id: u64, kind: PageKind) -> Added {
        self.add_labelled(url, id, id, kind, None, None)
    }

    /// Adds the URL `d` builds from `forms` for content `id`, returning it. On sites that
    /// redirect alias layouts, a URL in an alias form records where the fetch ended: the first
    /// form with the same decorations.
    pub fn add_decorated(
        &mut self,
        forms: &[Form],
        d: &Decoration,
        id: u64,
        kind: PageKind,
    ) -> (Added, String) {
        let url = self.build(forms, d);
        if !self.claim_plain_form(forms, d.form, id) {
            return (Added::Refused, url);
        }
        let is_alias = d.form != 0 && forms.get(d.form).is_some_and(|f| f.rule.is_some());
        let final_url = (self.redirects_aliases && is_alias).then(|| {
            let mut to = d.clone();
            to.form = 0;
            self.build(forms, &to)
        });
        (
            self.add_labelled(url.clone(), id, id, kind, None, final_url),
            url,
        )
    }

    /// Claims the plain URL of every form of content `id` as it is created, so the forms two
    /// contents share belong to the first of them, whichever of its forms it emits.
    fn claim_plain_forms(&mut self, forms: &[Form], id: u64) {
        for form in 0..forms.len() {
            self.claim_plain_form(forms, form, id);
        }
    }

    /// Claims the plain URL of `forms[form]` for content `id`; false when another content
    /// owns it. Without this, two contents given one address by a generator (two sections
    /// drawn with one name) would each keep the decorated URLs the other had not taken, and
    /// a correct merge of them would be scored false.
    fn claim_plain_form(&mut self, forms: &[Form], form: usize, id: u64) -> bool {
        let plain = self.build(forms, &Decoration::plain(form));
        let identity = match &self.by_folded {
            None => plain,
            Some(_) => fold_as_server(&plain, self.origin.len(), self.case_query),
        };
        *self
            .by_plain
            .entry(xxh3_64(identity.as_bytes()))
            .or_insert(id)
            == id
    }

    /// Adds one URL with all its attributes.
    pub fn add_labelled(
        &mut self,
        url: String,
        id: u64,
        label: u64,
        kind: PageKind,
        noise: Option<NoiseKind>,
        final_url: Option<String>,
    ) -> Added {
        let key = xxh3_64(url.as_bytes());
        if let Some(&existing) = self.by_url.get(&key) {
            return if existing == id {
                Added::Present
            } else {
                Added::Refused
            };
        }
        if self.is_full() {
            return Added::Refused;
        }
        if let Some(folded_index) = &mut self.by_folded {
            // On a case-insensitive server two URLs that differ only in path case are one
            // resource: never let them denote different contents.
            let folded = fold_as_server(&url, self.origin.len(), self.case_query);
            let folded_key = xxh3_64(folded.as_bytes());
            match folded_index.get(&folded_key) {
                Some(&existing) if existing != id => return Added::Refused,
                Some(_) => {}
                None => {
                    folded_index.insert(folded_key, id);
                }
            }
        }
        self.by_url.insert(key, id);
        let (canonical, shortlink) = if noise.is_none() {
            (
                self.current_canonical.clone(),
                self.current_shortlink.clone(),
            )
        } else {
            (None, None)
        };
        self.pages.push(SyntheticPage {
            url,
            content_id: id,
            label,
            kind,
            noise,
            canonical,
            shortlink,
            final_url,
        });
        Added::New
    }

    /// A random decoration for a content with `n_forms` forms.
    pub fn random_decoration(&self, rng: &mut ChaCha8Rng, n_forms: usize) -> Decoration {
        if !self.dust {
            return Decoration::plain(0);
        }
        let form = if n_forms <= 1 {
            0
        } else {
            let total = self.first_form_weight + (n_forms - 1) as f64;
            let x = rng.random::<f64>() * total;
            if x < self.first_form_weight {
                0
            } else {
                (1 + ((x - self.first_form_weight) as usize)).min(n_forms - 1)
            }
        };
        let mut extras = Vec::new();
        for (i, e) in self.extras.iter().enumerate() {
            if rng.random_bool(e.prob.clamp(0.0, 1.0)) {
                extras.push((i, rng.random_range(0..e.values.len().max(1))));
            }
        }
        let case = if self.case_rule.is_some() && rng.random_bool(self.case_prob.clamp(0.0, 1.0)) {
            match rng.random_range(0..3) {
                0 => Case::Lower,
                1 => Case::Upper,
                _ => Case::Capitalized,
            }
        } else {
            Case::Original
        };
        let reorder = self.order_rule.is_some() && rng.random_bool(self.order_prob.clamp(0.0, 1.0));
        Decoration {
            form,
            extras,
            case,
            reorder,
        }
    }

    /// Emits one content with `forms` (equivalent layouts): a Zipf-distributed number of distinct
    /// crawled URLs, plus example pairs for expected rules that still lack them.
    pub fn content(&mut self, rng: &mut ChaCha8Rng, forms: &[Form], kind: PageKind) -> Emitted {
        let id = self.new_id();
        self.claim_plain_forms(forms, id);
        self.set_canonical(forms);
        let k = if self.dust { self.zipf.sample(rng) } else { 1 };
        let first = self.variants(rng, id, forms, kind, k, None);
        if self.dust {
            self.examples(rng, id, forms, kind);
        }
        Emitted { first }
    }

    /// Emits a meaningful sibling of `of` (next page, other colour, other version, ...): its first
    /// URL is built with the same decoration as `of`'s first URL, and the pair is recorded as a
    /// hard negative.
    pub fn sibling(
        &mut self,
        rng: &mut ChaCha8Rng,
        of: &Emitted,
        forms: &[Form],
        kind: PageKind,
    ) -> Emitted {
        let id = self.new_id();
        self.claim_plain_forms(forms, id);
        self.set_canonical(forms);
        let mut first = None;
        if let Some((d, url_a)) = &of.first {
            // Equal URLs would mean the sibling is no different in this layout: no pair then.
            if self.build(forms, d) != *url_a {
                let (added, url_b) = self.add_decorated(forms, d, id, kind);
                if added != Added::Refused {
                    self.hard_negatives.push((url_a.clone(), url_b.clone()));
                    first = Some((d.clone(), url_b));
                }
            }
        }
        let k = if self.dust { self.zipf.sample(rng) } else { 1 };
        let more = k.saturating_sub(usize::from(first.is_some()));
        let other = self.variants(rng, id, forms, kind, more, None);
        if self.dust {
            self.examples(rng, id, forms, kind);
        }
        Emitted {
            first: first.or(other),
        }
    }

    /// Sets the `rel=canonical` target of the content about to be emitted: its first form, plain,
    /// unless [`Emitter::declare_next`] named another; and its shortlink, if one was named.
    fn set_canonical(&mut self, forms: &[Form]) {
        let (form, shortlink) = self.next_declared.take().unwrap_or((0, None));
        self.current_canonical = self
            .declares_canonical
            .then(|| self.build(forms, &Decoration::plain(form)));
        self.current_shortlink = shortlink.filter(|_| self.declares_canonical);
    }

    /// What the next content emitted ([`Emitter::content`], [`Emitter::sibling`]) declares, on
    /// sites that declare canonicals: `rel=canonical` names its form `canonical_form` (plain)
    /// instead of its first, and its pages carry `rel=shortlink` to `shortlink`'s form (plain),
    /// when given. For software whose canonical is not its system path: Drupal names the path
    /// alias canonical and `/node/N` the shortlink. Draws nothing from the site's random stream,
    /// so the crawl's URLs do not change.
    pub fn declare_next(&mut self, canonical_form: usize, shortlink: Option<(&[Form], usize)>) {
        let shortlink = shortlink.map(|(forms, form)| self.build(forms, &Decoration::plain(form)));
        self.next_declared = Some((canonical_form, shortlink));
    }

    /// Forgets the canonical target (before emitting pages that are not contents of the site).
    pub fn clear_canonical(&mut self) {
        self.current_canonical = None;
        self.current_shortlink = None;
        self.next_declared = None;
    }

    /// How many distinct URLs random decorations can give a content with `n_forms` forms
    /// (saturating; reordering and casing counted as at most doubling/quadrupling).
    fn distinct_decorations(&self, n_forms: usize) -> usize {
        let mut n = n_forms.max(1);
        for e in &self.extras {
            n = n.saturating_mul(e.values.len().saturating_add(1));
        }
        if self.case_rule.is_some() {
            n = n.saturating_mul(4);
        }
        if self.order_rule.is_some() {
            n = n.saturating_mul(2);
        }
        n
    }

    /// Adds up to `k` distinct URLs of content `id`; returns the first one added.
    fn variants(
        &mut self,
        rng: &mut ChaCha8Rng,
        id: u64,
        forms: &[Form],
        kind: PageKind,
        k: usize,
        mut first: Option<(Decoration, String)>,
    ) -> Option<(Decoration, String)> {
        let mut produced = 0;
        // A content cannot have more URLs than distinct decorations; asking for more would only
        // burn attempts on repeats. Attempts stay bounded either way.
        let k = k.min(self.distinct_decorations(forms.len()));
        for _ in 0..k.saturating_mul(2).saturating_add(4) {
            if produced >= k || self.is_full() {
                break;
            }
            let d = self.random_decoration(rng, forms.len());
            let (added, url) = self.add_decorated(forms, &d, id, kind);
            if added == Added::New {
                produced += 1;
                if first.is_none() {
                    first = Some((d, url));
                }
            }
        }
        first
    }

    /// For every rule with fewer than `MAX_EXAMPLES` examples, sometimes (always for the first)
    /// adds a pair of URLs of content `id` that differ only by that rule.
    fn examples(&mut self, rng: &mut ChaCha8Rng, id: u64, forms: &[Form], kind: PageKind) {
        for r in 0..self.rules.len() {
            let have = self.rules[r].examples.len();
            if have >= MAX_EXAMPLES || self.len() + 2 > self.cap {
                continue;
            }
            if have > 0 && !rng.random_bool(0.2) {
                continue;
            }
            let Some((a, b)) = self.example_pair(rng, r, forms) else {
                continue;
            };
            let (added_a, ua) = self.add_decorated(forms, &a, id, kind);
            if added_a == Added::Refused {
                continue;
            }
            let (added_b, ub) = self.add_decorated(forms, &b, id, kind);
            if added_b != Added::Refused && ua != ub {
                self.rules[r].examples.push((ua, ub));
            }
        }
    }

    /// Two decorations that differ only by rule `r`, if this content can show it.
    fn example_pair(
        &self,
        rng: &mut ChaCha8Rng,
        r: usize,
        forms: &[Form],
    ) -> Option<(Decoration, Decoration)> {
        if let Some(f) = forms.iter().position(|f| f.rule == Some(r)) {
            return Some((Decoration::plain(0), Decoration::plain(f)));
        }
        if let Some(e) = self.extras.iter().position(|e| e.rule == r) {
            let form = rng.random_range(0..forms.len().max(1));
            let mut with = Decoration::plain(form);
            with.extras
                .push((e, rng.random_range(0..self.extras[e].values.len().max(1))));
            return Some((Decoration::plain(form), with));
        }
        if self.case_rule == Some(r) {
            let mut changed = Decoration::plain(0);
            changed.case = if rng.random_bool(0.5) {
                Case::Lower
            } else {
                Case::Upper
            };
            return Some((Decoration::plain(0), changed));
        }
        if self.order_rule == Some(r) {
            // Needs two query parameters: the form with most, plus every query extra.
            let form = (0..forms.len()).max_by_key(|&i| forms[i].parts.query.len())?;
            let mut d = Decoration::plain(form);
            for (i, e) in self.extras.iter().enumerate() {
                if e.place == ExtraPlace::Query {
                    d.extras.push((i, 0));
                }
            }
            let n_query = forms[form].parts.query.len() + d.extras.len();
            if n_query < 2 {
                return None;
            }
            let mut reordered = d.clone();
            reordered.reorder = true;
            return Some((d, reordered));
        }
        None
    }
}

/// Changes the letters of a path (not of path parameters or the query, which `build` adds later).
fn apply_case(path: &str, case: Case) -> String {
    match case {
        Case::Original => path.to_string(),
        Case::Lower => path.to_ascii_lowercase(),
        Case::Upper => path.to_ascii_uppercase(),
        Case::Capitalized => {
            let mut out = String::with_capacity(path.len());
            let mut start = true;
            for c in path.chars() {
                if start && c.is_ascii_alphabetic() {
                    out.push(c.to_ascii_uppercase());
                    start = false;
                } else {
                    out.push(c.to_ascii_lowercase());
                    if c == '/' {
                        start = true;
                    } else if c.is_ascii_alphanumeric() {
                        start = false;
                    }
                }
            }
            out
        }
    }
}

/// `url` as a case-insensitive server reads it: its path folded, and its query too when the
/// server folds that (`case_query`).
fn fold_as_server(url: &str, origin_len: usize, case_query: bool) -> String {
    if case_query {
        fold_all_case(url, origin_len)
    } else {
        fold_path_case(url, origin_len)
    }
}

/// The URL with its path (up to `?`) lowercased: the identity of a resource on a
/// case-insensitive server.
fn fold_path_case(url: &str, origin_len: usize) -> String {
    let end = url.find('?').unwrap_or(url.len());
    let start = origin_len.min(end);
    let mut key = String::with_capacity(url.len());
    key.push_str(&url[..start]);
    key.push_str(&url[start..end].to_ascii_lowercase());
    key.push_str(&url[end..]);
    key
}

/// The URL with everything after the origin lowercased: the identity of a resource on a server
/// whose paths, query keys and query values are all case-insensitive.
fn fold_all_case(url: &str, origin_len: usize) -> String {
    let start = origin_len.min(url.len());
    let mut key = String::with_capacity(url.len());
    key.push_str(&url[..start]);
    key.push_str(&url[start..].to_ascii_lowercase());
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn zipf_is_heavy_at_one_and_bounded() {
        let z = Zipf::new(20, 1.8);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let samples: Vec<usize> = (0..10_000).map(|_| z.sample(&mut rng)).collect();
        assert!(samples.iter().all(|&k| (1..=20).contains(&k)));
        let ones = samples.iter().filter(|&&k| k == 1).count();
        let big = samples.iter().filter(|&&k| k >= 10).count();
        assert!(ones > 5_000, "{ones}");
        assert!(big > 10 && big < 1_000, "{big}");
    }

    #[test]
    fn case_styles() {
        assert_eq!(
            apply_case("/Products/Widget-Pro", Case::Lower),
            "/products/widget-pro"
        );
        assert_eq!(
            apply_case("/products/widget-pro", Case::Capitalized),
            "/Products/Widget-pro"
        );
        assert_eq!(apply_case("/a/b", Case::Upper), "/A/B");
        assert_eq!(
            fold_path_case("http://h/A/B?X=Y", "http://h".len()),
            "http://h/a/b?X=Y"
        );
    }

    /// Adds a session id `sid=abc` as the site's first extra.
    fn add_session_id(em: &mut Emitter) {
        em.add_extra(
            DustRule::IgnoreQueryKey { key: "sid".into() },
            "sid".into(),
            Extra {
                rule: 0,
                name: "sid".into(),
                place: ExtraPlace::Query,
                prob: 0.5,
                values: vec!["abc".into()],
            },
        );
    }

    #[test]
    fn build_places_extras() {
        let mut em = Emitter::new("http://h".into(), 0, 100, Zipf::new(3, 2.0), true);
        add_session_id(&mut em);
        em.add_extra(
            DustRule::IgnorePathParameter {
                name: "jsessionid".into(),
            },
            "j".into(),
            Extra {
                rule: 0,
                name: "jsessionid".into(),
                place: ExtraPlace::PathParam,
                prob: 0.5,
                values: vec!["XY".into()],
            },
        );
        let forms = [Form {
            parts: UrlParts::new("/t").q("t", "5"),
            rule: None,
        }];
        let d = Decoration {
            form: 0,
            extras: vec![(0, 0), (1, 0)],
            case: Case::Original,
            reorder: true,
        };
        assert_eq!(em.build(&forms, &d), "http://h/t;jsessionid=XY?sid=abc&t=5");
    }

    #[test]
    fn a_fixed_first_query_pair_stays_first_when_the_order_varies() {
        let mut em = Emitter::new("http://h".into(), 0, 100, Zipf::new(3, 2.0), true);
        let forms = [Form {
            parts: UrlParts::new("/index.php")
                .q("/category/5", "")
                .q("a", "1")
                .q("b", "2"),
            rule: None,
        }];
        let mut d = Decoration::plain(0);
        d.reorder = true;
        assert_eq!(
            em.build(&forms, &d),
            "http://h/index.php?b=2&a=1&/category/5"
        );
        em.first_query_pair_fixed = true;
        assert_eq!(
            em.build(&forms, &d),
            "http://h/index.php?/category/5&b=2&a=1"
        );
    }

    #[test]
    fn a_decorated_address_belongs_to_the_content_owning_it_plain() {
        let mut em = Emitter::new("http://h".into(), 0, 10, Zipf::new(3, 2.0), true);
        em.set_case_insensitive(0.5);
        add_session_id(&mut em);
        // Two contents a generator gave one folder, the second spelled in another case.
        let first = [Form {
            parts: UrlParts::new("/Opinion/"),
            rule: None,
        }];
        let second = [Form {
            parts: UrlParts::new("/opinion/"),
            rule: None,
        }];
        let tracked = Decoration {
            form: 0,
            extras: vec![(0, 0)],
            case: Case::Original,
            reorder: false,
        };
        let (a, b) = (em.new_id(), em.new_id());
        assert_eq!(
            em.add_decorated(&first, &tracked, a, PageKind::Listing).0,
            Added::New
        );
        // Neither the plain URL, which `a` never emitted, nor a decoration of it is `b`'s.
        let plain = Decoration::plain(0);
        assert_eq!(
            em.add_decorated(&second, &plain, b, PageKind::Listing).0,
            Added::Refused
        );
        let mut upper = tracked.clone();
        upper.case = Case::Upper;
        assert_eq!(
            em.add_decorated(&second, &upper, b, PageKind::Listing).0,
            Added::Refused
        );
        assert_eq!(
            em.add_decorated(&first, &plain, a, PageKind::Listing).0,
            Added::New
        );
        // A content owns every form it was created with, emitted or not: a namespace's start
        // page drawn twice keeps its script form for the first, whichever came to emit it.
        let canonical = Form {
            parts: UrlParts::new("/change/start"),
            rule: None,
        };
        let script = Form {
            parts: UrlParts::new("/doku.php").q("id", "change:start"),
            rule: Some(0),
        };
        let (c, d) = (em.new_id(), em.new_id());
        em.claim_plain_forms(&[canonical.clone(), script.clone()], c);
        em.claim_plain_forms(&[canonical, script.clone()], d);
        assert_eq!(
            em.add_decorated(&[script], &plain, d, PageKind::Article).0,
            Added::Refused
        );
    }

    #[test]
    fn urls_never_denote_two_contents() {
        let mut em = Emitter::new("http://h".into(), 0, 10, Zipf::new(3, 2.0), true);
        em.set_case_insensitive(0.5);
        let a = em.new_id();
        let b = em.new_id();
        assert_eq!(
            em.add("http://h/A".into(), a, PageKind::Article),
            Added::New
        );
        assert_eq!(
            em.add("http://h/A".into(), a, PageKind::Article),
            Added::Present
        );
        assert_eq!(
            em.add("http://h/A".into(), b, PageKind::Article),
            Added::Refused
        );
        assert_eq!(
            em.add("http://h/a".into(), b, PageKind::Article),
            Added::Refused
        );
        assert_eq!(
            em.add("http://h/a".into(), a, PageKind::Article),
            Added::New
        );
    }
}
