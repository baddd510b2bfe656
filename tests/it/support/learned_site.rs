//! A generated site learned the way every family test learns it (`learn.rs`'s family runs and
//! Gitea test, `learn_shapes.rs`): one corpus of one family, a seeded 20% training split of the
//! clusters, statically normalized, learned with the defaults; canonical forms are static
//! normalization followed by the learned rules. One place, so the tests cannot drift apart in
//! how they learn.

use std::collections::BTreeMap;
use std::process::Command;

use undust::canon::engine::HostRules;
use undust::canon::normalize::{StaticConfig, StaticNormalizer};
use undust::canon::rules::RuleFile;
use undust::corpus::{generate, write_jsonl, Corpus, CorpusConfig, Site, SiteKind};
use undust::learn::eval::{canonicalize, split_training};
use undust::learn::{learn_host, LabelledUrl, LearnConfig, LearnOutcome};

/// Fewest and most pages of a generated site.
const PAGES: (usize, usize) = (1500, 5000);
/// Share of a site's clusters whose pages are trained on.
const TRAINING_SHARE: f64 = 0.2;
/// Most URLs trained on.
const TRAINING_MAX: usize = 100_000;

/// What was learned on one site, and how its URLs are canonicalized with it.
pub struct LearnedRules {
    pub outcome: LearnOutcome,
    pub engine: HostRules,
    normalizer: StaticNormalizer,
}

impl LearnedRules {
    /// `url` statically normalized (as it is when it does not normalize).
    pub fn static_form(&self, url: &str) -> String {
        static_form(&self.normalizer, url)
    }

    /// `url` statically normalized, then through the learned rules.
    pub fn canonical(&self, url: &str) -> String {
        canonicalize(&self.engine, &self.static_form(url))
    }
}

/// One generated site and what was learned on it.
pub struct LearnedSite {
    pub site: Site,
    pub rules: LearnedRules,
}

/// The sites generated for `kind` with `corpus_seed` (one per family), each learned from the
/// training split drawn with `split_seed`.
pub fn learn_generated(kind: SiteKind, corpus_seed: u64, split_seed: u64) -> Vec<LearnedSite> {
    let corpus = generate(
        &CorpusConfig::new(corpus_seed, 1)
            .with_kinds(&[kind])
            .with_pages(PAGES.0, PAGES.1),
    );
    corpus
        .sites
        .into_iter()
        .map(|site| {
            let rules = learn_site(&site, split_seed);
            LearnedSite { site, rules }
        })
        .collect()
}

/// The first site generated for `kind` with `seed` (corpus and split alike).
pub fn learn_generated_one(kind: SiteKind, seed: u64) -> LearnedSite {
    learn_generated(kind, seed, seed)
        .into_iter()
        .next()
        .expect("a corpus of one family generates a host")
}

fn learn_site(site: &Site, split_seed: u64) -> LearnedRules {
    let normalizer = StaticNormalizer::new(StaticConfig::default()).expect("default config");
    let observed: Vec<LabelledUrl> = site
        .pages
        .iter()
        .map(|p| LabelledUrl {
            url: p.url.clone(),
            cluster: p.label,
        })
        .collect();
    let train: Vec<LabelledUrl> =
        split_training(&observed, TRAINING_SHARE, split_seed, TRAINING_MAX)
            .into_iter()
            .map(|l| LabelledUrl {
                url: static_form(&normalizer, &l.url),
                cluster: l.cluster,
            })
            .collect();
    let outcome = learn_host(&site.host, &train, &LearnConfig::default()).expect("learn");
    let engine = HostRules::compile(&outcome.rules).expect("learned rules compile");
    LearnedRules {
        outcome,
        engine,
        normalizer,
    }
}

fn static_form(normalizer: &StaticNormalizer, url: &str) -> String {
    normalizer
        .normalize(url)
        .map_or_else(|_| url.to_owned(), |normal| normal.to_string())
}

/// Prints up to `limit` contents whose pages `canonical` leaves under more than one form (the
/// compression missed), each as its set of forms, under `indent`: the rest of what a
/// `LEARN_DEBUG` run shows of a host. `LEARN_DEBUG_UNMERGED=N` asks for N instead (every
/// content, to sort the misses by kind).
pub fn print_unmerged(site: &Site, canonical: impl Fn(&str) -> String, limit: usize, indent: &str) {
    let limit = std::env::var("LEARN_DEBUG_UNMERGED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(limit);
    let mut forms: BTreeMap<u64, std::collections::BTreeSet<String>> = BTreeMap::new();
    for p in &site.pages {
        forms
            .entry(p.content_id)
            .or_default()
            .insert(canonical(&p.url));
    }
    for f in forms.values().filter(|f| f.len() > 1).take(limit) {
        eprintln!("{indent}unmerged: {f:?}");
    }
}

/// Prints up to `limit` forms `canonical` gives to pages of different contents (false merges),
/// each with one URL per content, under `indent`: what a `LEARN_DEBUG` run shows of a host.
pub fn print_false_merges(
    site: &Site,
    canonical: impl Fn(&str) -> String,
    limit: usize,
    indent: &str,
) {
    let mut by_form: BTreeMap<String, BTreeMap<u64, &str>> = BTreeMap::new();
    for p in &site.pages {
        by_form
            .entry(canonical(&p.url))
            .or_default()
            .insert(p.content_id, p.url.as_str());
    }
    for (form, ids) in by_form.iter().filter(|(_, ids)| ids.len() > 1).take(limit) {
        eprintln!(
            "{indent}false merge into {form}: {:?}",
            ids.values().collect::<Vec<_>>()
        );
    }
}

/// The site's URLs labelled with their true content (what a canonicalization is scored on).
pub fn truth(site: &Site) -> Vec<LabelledUrl> {
    site.pages
        .iter()
        .map(|p| LabelledUrl {
            url: p.url.clone(),
            cluster: p.content_id,
        })
        .collect()
}

/// `undust learn --pages` on the corpus's JSON lines: the rule file it wrote.
pub fn learn_from_pages(corpus: &Corpus) -> RuleFile {
    let dir = tempfile::tempdir().expect("tempdir");
    let crawl = dir.path().join("crawl.jsonl");
    let rules = dir.path().join("rules.json");
    let mut out = Vec::new();
    write_jsonl(corpus, &mut out).expect("export");
    std::fs::write(&crawl, out).expect("write crawl");
    let output = Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(["learn", "--pages"])
        .arg(&crawl)
        .arg("--out")
        .arg(&rules)
        .output()
        .expect("run undust learn");
    assert!(
        output.status.success(),
        "undust learn failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    RuleFile::from_json(&std::fs::read_to_string(&rules).expect("rule file")).expect("loads")
}

/// Whether the sampled crawl fetched `url`: about one URL in five, chosen by a hash of the URL
/// (FNV-1a) so the choice does not follow the generator's order.
pub fn fetched_in_a_fifth(url: &str) -> bool {
    let hash = url.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % 5 == 0
}
