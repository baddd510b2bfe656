//! Learner behaviour on hand-built labelled sites: each site kind has true duplicates the
//! learner must find and hard negatives (URLs that look alike but show different pages) it must
//! never merge. Rules are learned from a seeded half of the pages and applied to all URLs.

use std::collections::{BTreeMap, BTreeSet};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use undust::canon::engine::HostRules;
use undust::learn::eval::{canonicalize, measure, split_training};
use undust::learn::{learn_host, LabelledUrl, LearnConfig, Strategy};
use url::Url;

use crate::support::learned_site::{learn_generated, truth, LearnedSite};

struct Site {
    host: &'static str,
    urls: Vec<LabelledUrl>,
    negatives: Vec<(String, String)>,
}

struct Builder {
    host: &'static str,
    urls: Vec<LabelledUrl>,
    negatives: Vec<(String, String)>,
    next: u64,
    rng: SmallRng,
}

impl Builder {
    fn new(host: &'static str, seed: u64) -> Self {
        Builder {
            host,
            urls: Vec::new(),
            negatives: Vec::new(),
            next: 0,
            rng: SmallRng::seed_from_u64(seed),
        }
    }
    fn page(&mut self, variants: &[String]) -> u64 {
        self.next += 1;
        for v in variants {
            self.urls.push(LabelledUrl {
                url: format!("http://{}{}", self.host, v),
                cluster: self.next,
            });
        }
        self.next
    }
    fn sid(&mut self) -> String {
        format!("{:012x}", self.rng.random::<u64>() & 0xffff_ffff_ffff)
    }
    fn negative(&mut self, a: &str, b: &str) {
        self.negatives.push((
            format!("http://{}{a}", self.host),
            format!("http://{}{b}", self.host),
        ));
    }
    fn done(self) -> Site {
        Site {
            host: self.host,
            urls: self.urls,
            negatives: self.negatives,
        }
    }
}

fn session_site() -> Site {
    let mut b = Builder::new("shop-sessions.example", 1);
    for id in 0..150 {
        let n = 1 + id % 3;
        let mut v = vec![format!("/item.php?id={id}")];
        for _ in 0..n {
            let s = b.sid();
            v.push(format!("/item.php?id={id}&sid={s}"));
        }
        b.page(&v);
    }
    for cat in ["books", "music", "toys", "games", "tools"] {
        for page in 1..=8 {
            let s = b.sid();
            b.page(&[
                format!("/list.php?cat={cat}&page={page}"),
                format!("/list.php?cat={cat}&page={page}&sid={s}"),
            ]);
        }
        b.negative(
            &format!("/list.php?cat={cat}&page=1"),
            &format!("/list.php?cat={cat}&page=2"),
        );
    }
    b.done()
}

fn tracking_site() -> Site {
    let mut b = Builder::new("news-tracking.example", 2);
    let sources = ["home", "rss", "mail", "social", "related", "top"];
    for id in 0..200 {
        let mut v = vec![format!("/article/{id}")];
        for _ in 0..2 {
            let src = sources[b.rng.random_range(0..sources.len())];
            v.push(format!("/article/{id}?from={src}"));
        }
        b.page(&v);
        if id % 4 == 0 {
            // Translations are different pages.
            b.page(&[format!("/article/{id}?lang=de")]);
            b.page(&[format!("/article/{id}?lang=fr")]);
            b.negative(
                &format!("/article/{id}?lang=de"),
                &format!("/article/{id}?lang=fr"),
            );
        }
    }
    b.done()
}

fn alias_site() -> Site {
    let mut b = Builder::new("alias-store.example", 3);
    for id in 0..200 {
        b.page(&[format!("/product/{id}"), format!("/p.php?id={id}")]);
        if id % 5 == 0 {
            for color in ["red", "blue", "green"] {
                b.page(&[
                    format!("/product/{id}?color={color}"),
                    format!("/p.php?id={id}&color={color}"),
                ]);
            }
            b.negative(
                &format!("/product/{id}?color=red"),
                &format!("/product/{id}?color=blue"),
            );
            b.negative(
                &format!("/p.php?id={id}&color=red"),
                &format!("/product/{id}?color=green"),
            );
        }
    }
    b.done()
}

/// Ids inside slugs: `/threads/{id}-{slug}` is `/showthread.php?t={id}` (the slug may carry
/// other numbers after the id), `/products/{slug}-{id}.html` is `/item.php?id={id}` (numbers
/// before the id). Second pages and different threads stay apart.
fn slug_site() -> Site {
    const WORDS: [&str; 8] = [
        "radio", "quick", "top-10", "health", "world", "2024", "culture", "guide",
    ];
    let mut b = Builder::new("slug-forum.example", 7);
    let slug = |b: &mut Builder| {
        let n = 2 + b.rng.random_range(0..2usize);
        (0..n)
            .map(|_| WORDS[b.rng.random_range(0..WORDS.len())])
            .collect::<Vec<_>>()
            .join("-")
    };
    for id in 40..200u32 {
        let t = slug(&mut b);
        b.page(&[
            format!("/threads/{id}-{t}"),
            format!("/showthread.php?t={id}"),
        ]);
        if id % 4 == 0 {
            b.page(&[
                format!("/threads/{id}-{t}/page2"),
                format!("/showthread.php?t={id}&page=2"),
            ]);
            b.negative(
                &format!("/threads/{id}-{t}/page2"),
                &format!("/threads/{id}-{t}"),
            );
            b.negative(
                &format!("/threads/{id}-{t}/page2"),
                &format!("/showthread.php?t={id}"),
            );
        }
        b.negative(
            &format!("/threads/{id}-{t}"),
            &format!("/threads/{}-{t}", id + 1000),
        );
        let p = slug(&mut b);
        b.page(&[
            format!("/products/{p}-{id}.html"),
            format!("/item.php?id={id}"),
        ]);
        b.negative(
            &format!("/products/{p}-{id}.html"),
            &format!("/item.php?id={}", id + 1),
        );
    }
    b.done()
}

fn mirror_site() -> Site {
    let mut b = Builder::new("docs-mirrors.example", 4);
    for doc in 0..120 {
        let m: Vec<String> = ["mirror-eu", "mirror-us", "mirror-asia"]
            .iter()
            .map(|m| format!("/{m}/docs/page{doc}.html"))
            .collect();
        b.page(&m);
        // Versioned documentation: v1 and v2 of a page differ.
        if doc % 3 == 0 {
            b.page(&[format!("/v1/docs/page{doc}.html")]);
            b.page(&[format!("/v2/docs/page{doc}.html")]);
            b.negative(
                &format!("/v1/docs/page{doc}.html"),
                &format!("/v2/docs/page{doc}.html"),
            );
        }
    }
    b.done()
}

fn case_site() -> Site {
    let mut b = Builder::new("wiki-case.example", 5);
    for id in 0..180 {
        let name = format!("Topic{id}X");
        b.page(&[
            format!("/wiki/{name}"),
            format!("/wiki/{}", name.to_lowercase()),
        ]);
        if id % 4 == 0 {
            for rev in 1..=3 {
                b.page(&[format!("/wiki/{name}?rev={}", 100 + rev)]);
            }
            b.negative(
                &format!("/wiki/{name}?rev=101"),
                &format!("/wiki/{name}?rev=102"),
            );
        }
    }
    b.done()
}

fn default_document_site() -> Site {
    let mut b = Builder::new("dirs-default.example", 6);
    for d in 0..150 {
        b.page(&[format!("/section{d}/"), format!("/section{d}/index.html")]);
        b.page(&[format!("/section{d}/about.html")]);
        b.negative(&format!("/section{d}/"), &format!("/section{d}/about.html"));
        if d % 3 == 0 {
            for sort in ["price", "name", "date"] {
                b.page(&[format!("/section{d}/list?sort={sort}")]);
            }
            b.negative(
                &format!("/section{d}/list?sort=price"),
                &format!("/section{d}/list?sort=name"),
            );
        }
    }
    b.done()
}

struct Outcome {
    ops: Vec<String>,
    compression: f64,
    best: f64,
    fpr: f64,
}

fn run(site: &Site, strategy: Strategy, seed: u64) -> Outcome {
    let train = split_training(&site.urls, 0.5, seed, usize::MAX);
    let config = LearnConfig::default().with_strategy(strategy);
    let out = learn_host(site.host, &train, &config).unwrap();
    let engine = HostRules::compile(&out.rules).unwrap();
    for (a, b) in &site.negatives {
        let (ca, cb) = (canonicalize(&engine, a), canonicalize(&engine, b));
        assert_ne!(
            ca, cb,
            "{}: hard negative merged: {a} and {b}\n{:#?}",
            site.host, out.rules
        );
    }
    // Idempotence: the canonical form of every URL is a fixpoint.
    for u in &site.urls {
        let c = canonicalize(&engine, &u.url);
        assert_eq!(
            canonicalize(&engine, &c),
            c,
            "{} not idempotent via {}",
            u.url,
            c
        );
        assert!(Url::parse(&c).is_ok());
    }
    let m = measure(&site.urls, |u| canonicalize(&engine, u));
    Outcome {
        ops: out
            .rules
            .site_rules
            .iter()
            .map(|r| r.action.to_string())
            .chain(
                out.rules
                    .rules
                    .iter()
                    .flat_map(|r| r.operations.iter().map(ToString::to_string)),
            )
            .collect(),
        compression: m.compression_rate(),
        best: m.best_compression_rate(),
        fpr: m.false_positive_rate(),
    }
}

fn check(site: Site, expect_ops: &[&str], min_share_of_best: f64) {
    for strategy in [Strategy::Graph, Strategy::Naive] {
        for seed in [1, 2] {
            let o = run(&site, strategy, seed);
            if strategy == Strategy::Graph {
                // An expected operation may name alternatives (`a | b`): one mapping can be
                // learned by either of two mechanisms.
                for e in expect_ops {
                    assert!(
                        e.split(" | ")
                            .any(|alt| o.ops.iter().any(|op| op.starts_with(alt))),
                        "{}: no `{e}` in {:?}",
                        site.host,
                        o.ops
                    );
                }
                assert!(
                    o.compression >= min_share_of_best * o.best,
                    "{}: compression {:.3} of best {:.3}",
                    site.host,
                    o.compression,
                    o.best
                );
            }
            assert_eq!(o.fpr, 0.0, "{} {strategy:?}: false positives", site.host);
        }
    }
}

#[test]
fn session_ids_are_ignored_but_pagination_kept() {
    check(session_site(), &["ignore query:sid"], 0.9);
}

#[test]
fn tracking_parameter_ignored_but_language_kept() {
    check(tracking_site(), &["ignore query:from"], 0.9);
}

#[test]
fn id_alias_between_path_and_query_but_colours_kept() {
    // The pattern tree's key replacement, or the site rule that moves the id from the query
    // into the path (`learn::site`'s query-value-to-path action).
    check(alias_site(), &["replace | /p.php?id=V -> /product/V"], 0.8);
}

#[test]
fn ids_extracted_from_slugs_but_pages_and_threads_kept() {
    check(
        slug_site(),
        &[
            // Or the site rules that move the id into the path and drop the title beside it,
            // tested as a bundle (`learn::site`).
            "replace query:t <- first_number(path_1) | /showthread.php?t=V -> /threads/V",
            "replace query:id <- last_number(path_1)",
        ],
        0.8,
    );
}

#[test]
fn mirrors_merged_but_versions_kept() {
    check(mirror_site(), &["path_0: "], 0.8);
}

#[test]
fn case_insensitive_paths_but_revisions_kept() {
    check(case_site(), &["lower-case the path"], 0.8);
}

#[test]
fn default_documents_but_sort_orders_kept() {
    check(
        default_document_site(),
        &["strip the default document"],
        0.8,
    );
}

/// Print copies of articles are duplicates; comment pages are not. The samples hold several
/// comment pages but never one next to its own article, so no group contradicts ignoring the
/// last segment: what keeps `/comments` apart is that a frequent value of a discarded key must
/// itself be shown irrelevant.
#[test]
fn print_copies_merged_but_unproven_comment_pages_kept() {
    let mut b = Builder::new("articles.example", 12);
    for a in 0..200 {
        let article = format!("/news/story-{a}.html");
        match a % 5 {
            0 | 1 => {
                b.page(&[article.clone(), format!("{article}/print")]);
            }
            2 => {
                b.page(&[format!("/news/story-{a}.html/comments")]);
                b.negative(&article, &format!("{article}/comments"));
            }
            _ => {
                b.page(std::slice::from_ref(&article));
            }
        }
    }
    let site = b.done();
    let out = learn_host(site.host, &site.urls, &LearnConfig::default()).unwrap();
    let engine = HostRules::compile(&out.rules).unwrap();
    for (a, c) in &site.negatives {
        assert_ne!(
            canonicalize(&engine, a),
            canonicalize(&engine, c),
            "{:#?}",
            out.rules
        );
    }
    assert_eq!(
        canonicalize(&engine, "http://articles.example/news/story-7.html/print"),
        "http://articles.example/news/story-7.html",
        "{:#?}",
        out.rules
    );
}

#[test]
fn noisy_cluster_does_not_merge_a_whole_key() {
    // One bad cluster merges pages 1..5 of a listing; everything else says pages differ.
    let mut b = Builder::new("noisy.example", 9);
    b.page(
        &(1..=5)
            .map(|p| format!("/list?page={p}"))
            .collect::<Vec<_>>(),
    );
    for cat in 0..60 {
        for p in 1..=5 {
            b.page(&[format!("/list?cat={cat}&page={p}")]);
        }
    }
    let site = b.done();
    let out = learn_host(site.host, &site.urls, &LearnConfig::default()).unwrap();
    assert!(out.rules.rules.is_empty(), "{:#?}", out.rules);
    assert!(out.rules.site_rules.is_empty(), "{:#?}", out.rules);
}

#[test]
fn rule_file_reads_as_documented() {
    let site = session_site();
    let out = learn_host(site.host, &site.urls, &LearnConfig::default()).unwrap();
    let file = undust::canon::rules::RuleFile::new(vec![out.rules.clone()]);
    let text = file.to_json_pretty().unwrap();
    let back = undust::canon::rules::RuleFile::from_json(&text).unwrap();
    assert_eq!(back.hosts[0], out.rules);
    // The session id is a host-wide property: one site rule, written as documented, with its
    // evidence.
    assert!(
        text.contains("\"op\": \"ignore_param\",\n          \"name\": \"sid\""),
        "{text}"
    );
    let sid = &out.rules.site_rules[0];
    assert_eq!(sid.id, "shop-sessions.example#s1");
    assert!(sid.support_clusters >= 3 && sid.false_positive_rate == 0.0);
    let engine = HostRules::compile(&out.rules).unwrap();
    let u = Url::parse("http://shop-sessions.example/item.php?id=7&sid=abc123").unwrap();
    let explained = engine.explain(&u).unwrap();
    assert_eq!(
        explained.canonical,
        "http://shop-sessions.example/item.php?id=7"
    );
    assert_eq!(
        explained.site_rules,
        [(
            "shop-sessions.example#s1".to_owned(),
            "ignore query:sid on every URL".to_owned()
        )]
    );
}

/// Per-site outcome on a generated corpus: metrics against the ground truth, merged hard
/// negatives.
fn corpus_run(
    seed: u64,
    noise: undust::corpus::NoiseConfig,
    verbose: bool,
    with_static: bool,
) -> (undust::learn::eval::Metrics, usize, usize) {
    use undust::canon::normalize::{StaticConfig, StaticNormalizer};
    use undust::corpus::{generate, CorpusConfig};
    let normalizer = StaticNormalizer::new(StaticConfig::default()).unwrap();
    // The pipeline: static normalization first (when asked), then the learned rules.
    let stat = |u: &str| -> String {
        if with_static {
            normalizer
                .normalize(u)
                .map_or_else(|_| u.to_owned(), |x| x.to_string())
        } else {
            u.to_owned()
        }
    };
    let corpus = generate(
        &CorpusConfig::new(seed, 1)
            .with_pages(1500, 5000)
            .with_noise(noise),
    );
    let mut total = undust::learn::eval::Metrics::default();
    let mut merged_negatives = 0;
    let mut negatives = 0;
    for site in &corpus.sites {
        // Learn from observed labels (noise included), score against content ids.
        let observed: Vec<LabelledUrl> = site
            .pages
            .iter()
            .map(|p| LabelledUrl {
                url: p.url.clone(),
                cluster: p.label,
            })
            .collect();
        let truth: Vec<LabelledUrl> = site
            .pages
            .iter()
            .map(|p| LabelledUrl {
                url: p.url.clone(),
                cluster: p.content_id,
            })
            .collect();
        let train = split_training(&observed, 0.2, seed, 100_000);
        let out = learn_host(&site.host, &train, &LearnConfig::default()).unwrap();
        let engine = HostRules::compile(&out.rules).unwrap();
        let m = measure(&truth, |u| {
            let c = canonicalize(&engine, &stat(u));
            assert_eq!(
                canonicalize(&engine, &c),
                c,
                "{u}: canonical form is not a fixpoint"
            );
            c
        });
        total.add(&m);
        let mut merged_here = Vec::new();
        for (a, b) in &site.hard_negatives {
            negatives += 1;
            if canonicalize(&engine, &stat(a)) == canonicalize(&engine, &stat(b)) {
                merged_negatives += 1;
                merged_here.push((a.clone(), b.clone()));
            }
        }
        if verbose {
            eprintln!(
                "seed {seed} {:>16} {:>5} urls: compression {:.3} / best {:.3}, fpr {:.4}, rules {}, negatives merged {:?}",
                site.kind.name(),
                m.urls,
                m.compression_rate(),
                m.best_compression_rate(),
                m.false_positive_rate(),
                out.rules.rules.len(),
                merged_here.first()
            );
            if std::env::var("LEARN_DEBUG").is_ok() {
                eprintln!("    {:?}", out.report);
                crate::support::learned_site::print_unmerged(
                    site,
                    |u| canonicalize(&engine, u),
                    4,
                    "    ",
                );
                for e in &site.expected {
                    eprintln!("    expected: {e:?}");
                }
            }
            if !merged_here.is_empty()
                || m.false_positive_rate() > 0.002
                || std::env::var("LEARN_DEBUG").is_ok()
            {
                for r in &out.rules.site_rules {
                    eprintln!(
                        "    site: {} (support {}, clusters {}, fpr {:.4})",
                        r.action, r.support, r.support_clusters, r.false_positive_rate
                    );
                }
                for r in &out.rules.rules {
                    eprintln!(
                        "    {} -> {}  [{}]",
                        r.source_pattern,
                        r.target_pattern,
                        r.operations
                            .iter()
                            .map(|o| o.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
        }
    }
    (total, merged_negatives, negatives)
}

/// Share of the best achievable compression the pipeline (static normalization, then learned
/// rules) must reach corpus-wide: the brief's target. Measured on seeds 11, 12, 13 with site
/// rules: 0.97, 0.93, 0.91 (0.87, 0.71, 0.89 with pattern rules alone).
const MIN_SHARE_OF_BEST: f64 = 0.85;

/// The corpus-wide quality bar on several seeds: micro-averaged compression against the best
/// achievable, false-positive rate at most 0.2% of support pairs, learning from a 20% training
/// split, and no hard negative merged.
#[test]
fn corpus_quality_on_several_seeds() {
    for seed in [11, 12, 13] {
        let (m, merged, negatives) = corpus_run(seed, Default::default(), true, true);
        eprintln!(
            "seed {seed}: micro compression {:.3} of best {:.3} ({:.0}%), fpr {:.5}, {merged}/{negatives} negatives merged",
            m.compression_rate(),
            m.best_compression_rate(),
            100.0 * m.compression_rate() / m.best_compression_rate(),
            m.false_positive_rate()
        );
        assert!(negatives > 0);
        assert_eq!(merged, 0, "seed {seed}: hard negatives merged");
        assert!(
            m.compression_rate() >= MIN_SHARE_OF_BEST * m.best_compression_rate(),
            "seed {seed}: compression {:.3} < {MIN_SHARE_OF_BEST} of best {:.3}",
            m.compression_rate(),
            m.best_compression_rate()
        );
        assert!(
            m.false_positive_rate() <= 0.002,
            "seed {seed}: fpr {:.5}",
            m.false_positive_rate()
        );
    }
}

/// Label noise (pages served another page's content, soft-404s merged into one label) must not
/// make the learner merge hard negatives or raise the false-positive rate above 0.2%.
#[test]
fn corpus_quality_under_label_noise() {
    let noise = undust::corpus::NoiseConfig {
        soft_404_share: 0.02,
        wrong_merge_share: 0.02,
    };
    let (m, merged, _) = corpus_run(21, noise, false, false);
    assert_eq!(merged, 0, "hard negatives merged under noise");
    assert!(
        m.false_positive_rate() <= 0.002,
        "fpr {:.5} under noise",
        m.false_positive_rate()
    );
    assert!(m.compression_rate() > 0.5 * m.best_compression_rate());
}

/// The paper's protocol (Table 4 / Figures 11-12): static-only, graph and naive rows over a
/// generated corpus, 20% of pages for training.
#[test]
fn evaluation_table_graph_and_naive() {
    use undust::corpus::{generate, CorpusConfig};
    use undust::learn::eval::{evaluate, EvalConfig, HostSamples, Method};
    let corpus = generate(&CorpusConfig::new(31, 1).with_pages(800, 2500));
    let hosts: Vec<HostSamples> = corpus
        .sites
        .iter()
        .map(|s| HostSamples {
            host: s.host.clone(),
            urls: s
                .pages
                .iter()
                .map(|p| LabelledUrl {
                    url: p.url.clone(),
                    cluster: p.content_id,
                })
                .collect(),
            declared: Vec::new(),
        })
        .collect();
    let normalizer = undust::canon::normalize::StaticNormalizer::new(
        undust::canon::normalize::StaticConfig::default(),
    )
    .unwrap();
    let rows = evaluate(
        &hosts,
        &EvalConfig {
            seed: 31,
            ..EvalConfig::default()
        },
        &normalizer,
    )
    .unwrap();
    assert_eq!(
        rows.iter().map(|r| r.method).collect::<Vec<_>>(),
        [Method::StaticOnly, Method::Graph, Method::Naive]
    );
    for r in &rows {
        eprintln!(
            "{:?}: rules {}, compression micro {:.3} macro {:.3}, dup-reduction micro {:.3} macro {:.3}, fpr micro {:.5} (best {:.3})",
            r.method,
            r.rules,
            r.averages.micro_compression,
            r.averages.macro_compression,
            r.averages.micro_dup_reduction,
            r.averages.macro_dup_reduction,
            r.averages.micro_fpr,
            r.averages.micro_best_compression
        );
        assert_eq!(r.per_host.len(), hosts.len());
        assert!(r.averages.micro_fpr <= 0.002);
    }
    // Every row is measured on the crawled URLs: static normalization removes some DUST on its
    // own (tracking parameters, session ids it knows), the learned rules much more.
    let (stat, graph, naive) = (&rows[0].averages, &rows[1].averages, &rows[2].averages);
    assert!(stat.micro_compression > 0.0);
    assert!(graph.micro_compression > 0.85 * graph.micro_best_compression);
    assert!(graph.micro_compression > 1.5 * stat.micro_compression);
    assert!(naive.micro_compression > 1.5 * stat.micro_compression);
}

/// Seeds of the family runs: each generates one site of every family asked for.
const FAMILY_SEEDS: [u64; 3] = [41, 42, 43];

/// The seed one family's site is generated from in the run of `run_seed`: a function of the
/// family's name, not of its place in a list, so adding, moving or removing a family leaves
/// every other family's sites as they were.
pub(crate) fn family_seed(run_seed: u64, kind: undust::corpus::SiteKind) -> u64 {
    run_seed ^ xxhash_rust::xxh3::xxh3_64(kind.name().as_bytes())
}

/// Learns on each generated site of `kinds` (one per seed in [`FAMILY_SEEDS`]) exactly as
/// `corpus_run` does (defaults, static normalization, 20% of the clusters for training) and
/// returns the per-family rows (pooled over seeds), the corpus-wide micro totals, and the
/// hard negatives merged per family.
fn family_run(
    kinds: &[undust::corpus::SiteKind],
    label: &str,
) -> (
    Vec<undust::learn::eval::FamilyRow>,
    undust::learn::eval::Metrics,
    BTreeMap<&'static str, usize>,
) {
    family_run_on(kinds, label, &FAMILY_SEEDS)
}

/// [`family_run`] on the sites generated with `seeds`.
fn family_run_on(
    kinds: &[undust::corpus::SiteKind],
    label: &str,
    seeds: &[u64],
) -> (
    Vec<undust::learn::eval::FamilyRow>,
    undust::learn::eval::Metrics,
    BTreeMap<&'static str, usize>,
) {
    use undust::learn::eval::{by_family, Metrics};
    let mut per_host = Vec::new();
    let mut families = Vec::new();
    let mut merged: BTreeMap<&'static str, usize> = BTreeMap::new();
    let verbose = std::env::var("LEARN_DEBUG").is_ok();
    for &seed in seeds {
        let sites = kinds
            .iter()
            .flat_map(|&kind| learn_generated(kind, family_seed(seed, kind), seed));
        for LearnedSite { site, rules } in sites {
            let repeated = repeated_site_rules(&rules.outcome.rules);
            assert!(
                repeated.is_empty(),
                "seed {seed} {}: site rules written twice: {repeated:?}",
                site.host
            );
            let m = measure(&truth(&site), |u| rules.canonical(u));
            let mut merged_here = Vec::new();
            for (a, b) in &site.hard_negatives {
                if rules.canonical(a) == rules.canonical(b) {
                    *merged.entry(site.kind.name()).or_default() += 1;
                    merged_here.push((a, b));
                }
            }
            eprintln!(
                "{label} seed {seed} {:>18} {:<40} {:>5} urls: compression {:.3} / best {:.3}, fpr {:.4}, merged negatives {:?}",
                site.kind.name(),
                site.variant,
                m.urls,
                m.compression_rate(),
                m.best_compression_rate(),
                m.false_positive_rate(),
                merged_here.first()
            );
            if verbose {
                for r in &rules.outcome.rules.site_rules {
                    eprintln!("    site: {}", r.action);
                }
                for r in &rules.outcome.rules.rules {
                    let fenced: Vec<String> = r.not_files.iter().map(|k| k.to_string()).collect();
                    eprintln!(
                        "    {} -> {}{}",
                        r.source_pattern,
                        r.target_pattern,
                        if fenced.is_empty() {
                            String::new()
                        } else {
                            format!("   ({} not a file)", fenced.join(", "))
                        }
                    );
                }
                // Which of the site's documented DUST forms the rules reach (by its examples).
                for e in &site.expected {
                    let reached = e
                        .examples
                        .iter()
                        .filter(|(a, b)| rules.canonical(a) == rules.canonical(b))
                        .count();
                    eprintln!(
                        "    expected {}/{}: {}",
                        reached,
                        e.examples.len(),
                        e.description
                    );
                }
                crate::support::learned_site::print_unmerged(
                    &site,
                    |u| rules.canonical(u),
                    3,
                    "    ",
                );
                crate::support::learned_site::print_false_merges(
                    &site,
                    |u| rules.canonical(u),
                    3,
                    "    ",
                );
            }
            per_host.push(m);
            families.push(site.kind.name());
        }
    }
    let rows = by_family(&per_host, &families);
    let mut total = Metrics::default();
    for m in &per_host {
        total.add(m);
    }
    eprintln!("| family | hosts | URLs | compression / best (micro) | share of best | fpr |");
    eprintln!("|---|---|---|---|---|---|");
    for r in &rows {
        eprintln!(
            "| {} | {} | {} | {:.3} / {:.3} | {:.0}% | {:.5} |",
            r.family,
            r.hosts,
            r.total.urls,
            r.total.compression_rate(),
            r.total.best_compression_rate(),
            100.0 * r.share_of_best(),
            r.total.false_positive_rate()
        );
    }
    let macro_share =
        rows.iter().map(|r| r.share_of_best()).sum::<f64>() / rows.len().max(1) as f64;
    eprintln!(
        "| {label}: micro | {} | {} | {:.3} / {:.3} | {:.0}% (macro over families {:.0}%) | {:.5} |",
        per_host.len(),
        total.urls,
        total.compression_rate(),
        total.best_compression_rate(),
        100.0 * total.compression_rate() / total.best_compression_rate(),
        100.0 * macro_share,
        total.false_positive_rate()
    );
    (rows, total, merged)
}

/// Measured share of the best achievable compression on the first seven tuning families (micro),
/// with the learner of this branch: 0.94 (0.92 before ids at the end of slugs moved to short links, 0.91
/// before parameters dropped only beside another, 80% before the case-insensitive query and
/// shape pooling). A floor against regressions, not a target.
const TUNING_SHARE_FLOOR: f64 = 0.93;
/// False-positive rate (micro) on the tuning families: 0 since phpBB's `f` is dropped only
/// beside the topic id `t` (0.0044 before, all of it `f` dropped site-wide while it names the
/// forum on `viewforum.php` listings the 20% sample hardly shows). The ceiling.
const TUNING_FPR_CEILING: f64 = 0.001;

/// Families added to the tuning set later, each with its share of best as a floor. XenForo was
/// written as a held-out family and measured at 12% before any learner change; ids written with
/// their titles (`threads/a-title.123/`) and routes written as the query string
/// (`index.php?threads/...`) were then built on it (51%), so it moved to the tuning set.
/// OpenCart and Plone were written as held-out families at stop 22 and broke the
/// no-false-merge guarantee there (fpr 0.0030 and 0.043); page types named by a front
/// controller's route and by a file's extension were then built on them (stop 23, fpr 0 on
/// both), so they moved to the tuning set too, each with a floor a little under its share
/// pooled over the seeds at its tuning position (0.96 and 0.38; Plone's documents lose their
/// `/view` rule on folders of hosts that hold files, QUALITY.md stop 23).
/// Since stop 24 a family's sites are seeded by its name ([`family_seed`]), so every family's
/// sites changed once: OpenCart's include a host with SEO URLs (0.87 pooled, 0.54 on that
/// host: a product under its categories' keywords), Plone's measure 0.33; their floors were
/// re-measured on the new sites, XenForo's (0.51) held. Stop 25: a rule shown on documents
/// only has its `*` fenced off files (`Rule::not_files`) instead of being refused where files
/// sit beside the documents, so Plone's documents keep their `/view` rule: 0.33 -> 0.70.
/// Stop 29: a default view's tail is refused only where it stands for another page of its item
/// (`P/page-3`, a number), not beside another name of the view (`P/folder_listing`), an alias
/// elsewhere (`/resolveuid/…`) or a view of a file, so Plone learns `/view` site-wide: 0.70 ->
/// 0.92 (0.92 and 0.93 on the fresh draws).
const LATER_TUNING_FLOORS: [(&str, f64); 3] =
    [("xenforo", 0.50), ("opencart", 0.86), ("plone", 0.88)];

/// The tuning families (constants may be chosen on them): no hard negative merged, and today's
/// figures held as floors.
#[test]
fn tuning_families_quality() {
    let (rows, total, merged) = family_run(&undust::corpus::SiteKind::TUNING_FAMILIES, "tuning");
    assert!(
        merged.is_empty(),
        "hard negatives merged on the tuning families: {merged:?}"
    );
    let mut first_seven = undust::learn::eval::Metrics::default();
    for r in &rows {
        match LATER_TUNING_FLOORS.iter().find(|(f, _)| *f == r.family) {
            Some((family, floor)) => assert!(
                r.share_of_best() >= *floor,
                "{family}: share of best {:.3} < {floor}",
                r.share_of_best()
            ),
            None => first_seven.add(&r.total),
        }
    }
    let share = first_seven.compression_rate() / first_seven.best_compression_rate();
    assert!(
        share >= TUNING_SHARE_FLOOR,
        "tuning micro share of best (first seven families) {share:.3}"
    );
    assert!(
        total.false_positive_rate() <= TUNING_FPR_CEILING,
        "fpr {:.5}",
        total.false_positive_rate()
    );
}

/// Measured share of the best achievable compression on the first six held-out families
/// (micro): 0.935 with Discourse's post addresses read as the page holding the post
/// (`/t/slug/N/25` ≡ `/t/slug/N?page=2`, `SiteAction::PostToPage`; stop 26); 0.889 with vBulletin's friendly query (`showthread.php?N-title` ≡ `?t=N`) keyed
/// (stop 25); 0.866 on the sites seeded by each family's name (stop 24; the earlier figures were
/// measured on the sites of their places in the set); 0.893 with parameters dropped at their
/// default value only (Q&A's `answertab=votes`, the default answer order, beside the other
/// orders; stop 24); 0.875 with site actions learned as bundles (vBulletin's `showthread.php?t=N` ≡
/// `/threads/N-title`: an id moved into a segment that writes it with a title; stop 23);
/// 0.849 with a slug before an id dropped from the item's views too (0.835 before, at
/// stop 21; 0.659 before ids moving from a query value into the path and slugs beside ids;
/// 0.669 before the page-type guards, which gave up Q&A rules that merged tag listings: fpr
/// 0.00093 -> 0). A floor against regressions.
const HELD_OUT_SHARE_FLOOR: f64 = 0.92;
/// The families added to the held-out set later, each with the share it had when first
/// measured, before any learner change that followed: a floor per family. DokuWiki and Joomla
/// at stop 20; Bugzilla at stop 22; SMF (0.761), Gitea (0.406) and Piwigo (0.049) at stop 23,
/// as generated at their places in this set once OpenCart and Plone, held out at stop 22, moved
/// to the tuning set (`LATER_TUNING_FLOORS`): a family's sites depend on its place in the set,
/// and at the places they first had (after Plone) the same learner gives 0.678, 0.757 (with
/// false merges) and 0.348 (QUALITY.md, stop 23). Joomla raised at stop 23
/// (0.47 -> 0.60, measured 0.65, each seed above 0.50): its non-SEF addresses are joined by a
/// bundle of site actions (`catid` and `Itemid` dropped beside the article, the alias dropped
/// from `id=N:alias`).
/// Stop 24: a family's sites are seeded by its name ([`family_seed`]), not by its place, so
/// every family's sites changed once and the floors were re-measured on them: DokuWiki's new
/// sites write namespaces as folders (`useslash`) on two hosts of three, 0.80 until page ids
/// moved into the path learned `:` as `/` (0.988); SMF 0.70 (0.75 on the old sites); the others
/// held theirs. Piwigo raised at stop 24 (0.04 -> 0.80, measured 0.821): its paths written as the query
/// string are read as segments (`SiteAction::QueryPath`).
/// SMF and Gitea raised at stop 24 (segments: `index.php/topic,N.S.html` read as
/// `index.php?topic=N.S` and `topic=N` completed to `topic=N.0`; the home's `/src/{default}`
/// tail dropped): SMF 0.69 -> 0.86 (measured 0.88 on the sites seeded by its name), Gitea
/// 0.40 -> 0.41. Gitea raised again at stop 24 (valuedefaults: parameters dropped at their
/// default value only, `page=1`, and case folded in the owner's and the repository's segments
/// only): 0.41 -> 0.68, measured 0.89 on the sites seeded by its name, fpr 0. Gitea raised at
/// stop 25 to 0.86 (0.89 measured at stops 24 and 25, 0.90 on the fresh draw).
/// Stop 26: MyBB, PrestaShop and NodeBB added, measured with the learner as it was (no change
/// made for them): NodeBB 0.767 (0.720 on seeds 50 to 55); MyBB and PrestaShop merge pages they
/// must not, so they have no floor yet and are listed in [`GUARANTEES_NOT_MET_YET`].
/// PrestaShop's false merge was fixed later in stop 26 (a number beside an id is a second id,
/// not a title: fpr 0 on seeds 41 to 55) and it got its floor: 0.74 (measured 0.756; 0.73 and
/// 0.81 on the fresh draws).
/// Stop 27: MyBB's last false merge (one number read as a forum and its page) fixed; fpr 0 on
/// seeds 41 to 55, floor 0.60 (measured 0.615; 0.66 and 0.69 on the fresh draws).
/// Stop 28: MyBB raised to 0.78 (measured 0.806; 0.76 and 0.73 on the fresh draws): two
/// numbers of one segment read as a pair (`thread-N-page-M.html` is `tid=N&page=M`), one-value
/// templates learned from numbers read numbers only, a number read out of one shared spelling
/// no evidence for another, and a template's query views need no evidence of their own.
/// Stop 38: TYPO3, Discuz! X3 and osCommerce 2.x added, measured with the learner as it was (no
/// change made for them): TYPO3 0.480 on seeds 41 to 43 (floor 0.47); Discuz! and osCommerce
/// merge pages they must not, so they have no floor yet and are listed in
/// [`GUARANTEES_NOT_MET_YET`].
/// Stop 39: osCommerce keeps the guarantees on seeds 41 to 55 (its `cPath` and
/// `manufacturers_id` merges fixed, see [`GUARANTEES_NOT_MET_YET`]) and gets its floor: 0.63
/// (measured 0.641; 0.77 and 0.73 on the fresh draws).
/// Stop 43: TYPO3 raised to 0.60 (measured 0.609; 0.71 and 0.64 on the fresh draws): a path's
/// suffix and the query's order are learned for the whole host when nothing contradicts them.
/// Stop 44: osCommerce raised to 0.88 (measured 0.913; 0.95 and 0.92 on the fresh draws): an id
/// written after an unread title and a marker (Ultimate SEO URLs' `a-name-p-5.html`) is read as
/// its query form, and `cPath`'s category paths count as ids beside the product.
/// Stop 51: osCommerce raised to 0.95 (measured 0.972; 0.98 and 0.96 on the fresh draws): the
/// parameters search-engine safe URLs write as path pairs after a script
/// (`product_info.php/cPath/3_10/products_id/5`) are read as the query the script takes.
/// Stop 52: Gitea raised to 0.92 (measured 0.936, 0.89 before; 93% on the fresh draws 41–55): a
/// commit's abbreviated id shown beside its full one is read as the full id for every
/// repository (`SiteAction::AbbreviatedHash`).
const LATER_HELD_OUT_FLOORS: [(&str, f64); 11] = [
    ("dokuwiki", 0.98),
    ("joomla", 0.60),
    ("bugzilla", 0.96),
    ("smf", 0.86),
    ("gitea", 0.92),
    ("piwigo", 0.80),
    ("nodebb", 0.76),
    ("prestashop", 0.74),
    ("mybb", 0.78),
    ("typo3", 0.60),
    ("oscommerce", 0.95),
];

/// Held-out families on which the learner does not keep the no-false-merge guarantee yet, with
/// why. Their false merges are asserted away in
/// `held_out_families_reach_the_generality_target` (ignored until met), not here, so that this
/// test keeps guarding every other family; each stays listed until the learner is fixed.
/// None now. Gitea was listed at stop 23 (fpr 0.064 at its first run): a path lower-cased
/// site-wide because owner and repository names are case-insensitive merged files whose git
/// paths differ only in case, and `state` dropped site-wide because `state=open` is the issue
/// list's default merged the closed issues' list with the open ones'. Stop 24 folds case in the
/// segments that showed it and drops a parameter at the one value its duplicates showed
/// (`gitea_defaults_are_dropped_at_their_values_and_case_folded_before_the_files`, fpr 0 on
/// Gitea hosts of eight seeds). (OpenCart and Plone were listed here at stop 22; stop 23 fixed
/// them and made them tuning families.)
/// Stop 26, two families added and measured before any learner change (QUALITY.md, stop 26):
/// - MyBB: `ignore query:action beside query:tid` (and a tree rule dropping `action=lastpost`)
///   is learned from one-page threads, where the last post's link is page 1; on longer threads
///   `showthread.php?tid=N&action=lastpost` opens the last page, which the rule merges with
///   page 1 (fpr 0.028 on seeds 41 to 43, all three hosts); on the seed-43 host a tree rule
///   `/forums/* -> /forums/forumdisplay.php?fid=*&page=*` reads both `thread-N.html` and
///   `thread-N-lastpost.html` as one forum listing. (Seeds 44 to 49 show `pid` dropped beside
///   `tid` and the same tree rule merging a forum's page 1 and page 2.)
/// - PrestaShop 1.7 (fixed later in stop 26, no longer listed): `/cat/N-title -> /cat/N` read
///   everything after the product id as its name, also the combination 1.7 writes after the id
///   (`/cat/12-45-name.html`), so every combination of a product was merged (fpr 0.048 on the
///   seed-41 host).
///
/// Later in stop 26 the tail and parameter checks (`Proof::strays_from_duplicates`, the site
/// rules' `param_strays`) removed MyBB's `action=lastpost` merges on seeds 41 and 42; the
/// seed-43 tree rule that writes one number as a forum and a page is still learned.
/// Stop 27: both numbers of one value are read only where it holds two (`Extract::splits`),
/// and MyBB keeps the guarantees on seeds 41 to 55; none was exempt until stop 38.
/// Stop 38, three families added and measured before any learner change (QUALITY.md, stop 38):
/// - Discuz! X3 (fpr 0.034 on seeds 41 to 43, every host, as first measured): a tree rule
///   writes a post's redirect (`forum.php?mod=redirect&goto=findpost&ptid=T&pid=M`) or the
///   last post's (`goto=lastpost&tid=T`) as the thread's first page (`mod=viewthread&tid=T`),
///   learned from one-page threads, where both are page 1; on longer threads they open a later
///   page, the same trap as MyBB's `action=lastpost` at stop 26, now in a tree rule that
///   renames the script's `mod` value and the id's key. Later in stop 38 the stray check reads
///   the page the rule writes (`Proofer::view_strays`), and those rules are refused where the
///   sample shows a later page (fpr 0.0028; 0.0094 and 0.018 on the fresh draws). Left:
///   `ignore query:action beside query:tid` merges a long thread's printable view (the first
///   100 posts, a page of its own, in no cluster with another URL, so no sample can show it
///   apart) with page 1, and on one host a post's link written as the last post's. Stop 40
///   refuses the last: the number a rule drops beside a view named by a word (`pid` beside
///   `goto=findpost`) names the position that view opens at, so writing it as `goto=lastpost`
///   trades a position for a view (fpr 0.015 -> 0 on the seed-53 host).
/// - osCommerce 2.x (fpr 0.028 on the seed-42 host, with Ultimate SEO URLs and "add cPath"):
///   `cPath` is dropped on every URL, learned from product links (`name-p-N.html?cPath=3_10`,
///   where it only sets the breadcrumb); on `index.php` it chooses the category, so every
///   listing is merged with the front page. Where products carry `products_id` the learner
///   scopes it beside that key (seeds 41 and 43); here the product id is in the path.
///   Fixed in stop 39, with the other osCommerce merges of seeds 44 to 55, and no longer
///   listed: a tree rule shown on slugs alone guards the page types its `*` covers
///   (`index.php`), a number read beside one type word (`-p-`) is no evidence for another
///   (`-pr-`, the reviews), a parameter whose value a duplicate writes in its path (`-c-13_23`)
///   is not dropped for every URL, and a number shown only beside another parameter
///   (`manufacturers_id` beside `products_id`) is dropped only beside it.
const GUARANTEES_NOT_MET_YET: [&str; 1] = ["discuz"];

/// On the held-out families the guarantees hold: no hard negative merged and a false-positive
/// rate of 0 on every family (measured 0 on each; the ceiling is 0.1% of support
/// pairs, micro), except the families of [`GUARANTEES_NOT_MET_YET`]; and today's shares as
/// floors. (OpenCart and Plone, the two held-out families that broke the guarantee at stop 22,
/// were exempted here until stop 23 fixed them; they are tuning families since,
/// `LATER_TUNING_FLOORS`.)
#[test]
fn held_out_families_keep_the_guarantees() {
    let held_out = undust::corpus::SiteKind::HELD_OUT_FAMILIES;
    for family in GUARANTEES_NOT_MET_YET {
        assert!(
            held_out.iter().any(|k| k.name() == family),
            "{family} is not held out"
        );
    }
    let (rows, _, merged) = family_run(&held_out, "held-out");
    let guarded = |family: &str| !GUARANTEES_NOT_MET_YET.contains(&family);
    let merged_guarded: Vec<_> = merged.iter().filter(|(f, _)| guarded(f)).collect();
    assert!(
        merged_guarded.is_empty(),
        "hard negatives merged on the held-out families: {merged_guarded:?}"
    );
    let mut guarded_total = undust::learn::eval::Metrics::default();
    for r in rows.iter().filter(|r| guarded(&r.family)) {
        guarded_total.add(&r.total);
        // Each family on its own: a bad family must not hide behind the others' support pairs.
        assert!(
            r.total.false_positive_rate() == 0.0,
            "{}: fpr {:.5}",
            r.family,
            r.total.false_positive_rate()
        );
    }
    assert!(
        guarded_total.false_positive_rate() <= 0.001,
        "fpr {:.5}",
        guarded_total.false_positive_rate()
    );
    let mut first_six = undust::learn::eval::Metrics::default();
    for r in &rows {
        match LATER_HELD_OUT_FLOORS.iter().find(|(f, _)| *f == r.family) {
            Some((family, floor)) => assert!(
                r.share_of_best() >= *floor,
                "{family}: share of best {:.3} < {floor}",
                r.share_of_best()
            ),
            // A family exempt from the guarantees has no floor and is none of the first six.
            None if guarded(&r.family) => first_six.add(&r.total),
            None => {}
        }
    }
    let share = first_six.compression_rate() / first_six.best_compression_rate();
    assert!(
        share >= HELD_OUT_SHARE_FLOOR,
        "held-out micro share of best (first six families) {share:.3}"
    );
}

/// Piwigo generated alone, share of the best achievable compression pooled over
/// [`PIWIGO_SEEDS`] (each mixed with the family's name, [`family_seed`]): 0.825 measured at
/// stop 24 (nine hosts writing `?/`, three the path itself); its held-out sites were at 0.05
/// before their query strings were read as paths (QUALITY.md, stop 24 querypath).
const PIWIGO_ALONE_FLOOR: f64 = 0.80;
/// Seeds of [`a_generated_piwigo_host_is_learned_from_its_query_string_paths`]: enough sites
/// that both spellings of Piwigo's paths are drawn (`?/`, and the path itself on a quarter of
/// the hosts).
const PIWIGO_SEEDS: [u64; 12] = [41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52];

/// Piwigo's pages are paths written as the query string (`picture.php?/123/category/5-name`):
/// read as parameters, every page is one key of its own and nothing is learned (0.017 of a
/// best 0.346 at stop 23). Generated alone (its sites differ from those at its place in the
/// held-out set), on sites that write `?/` and sites that write the path itself: the learner
/// reads the query's path as segments (`SiteAction::QueryPath`) and learns the scheme's DUST
/// on them, without merging a hard negative.
#[test]
fn a_generated_piwigo_host_is_learned_from_its_query_string_paths() {
    use undust::corpus::{generate, CorpusConfig, SiteKind};
    let spellings: BTreeSet<bool> = PIWIGO_SEEDS
        .iter()
        .flat_map(|&seed| {
            generate(
                &CorpusConfig::new(family_seed(seed, SiteKind::Piwigo), 1)
                    .with_kinds(&[SiteKind::Piwigo])
                    .with_pages(1500, 5000),
            )
            .sites
        })
        .map(|site| site.variant.contains("?/"))
        .collect();
    assert_eq!(spellings.len(), 2, "both spellings drawn: {spellings:?}");
    let (rows, total, merged) = family_run_on(&[SiteKind::Piwigo], "piwigo", &PIWIGO_SEEDS);
    assert!(merged.is_empty(), "hard negatives merged: {merged:?}");
    assert_eq!(rows.len(), 1);
    assert_eq!(total.false_positive_rate(), 0.0);
    let share = total.compression_rate() / total.best_compression_rate();
    assert!(
        share >= PIWIGO_ALONE_FLOOR,
        "piwigo alone: share of best {share:.3}"
    );
}

/// A canonical form is an address the site serves: a default Piwigo (`question_mark_in_urls`
/// on) routes `picture.php?/123/category/5` and not `picture.php/123/category/5`, and one
/// configured for path-info the other way round. On the generated Piwigo hosts of half of
/// [`PIWIGO_SEEDS`], whichever spelling each host writes, no URL's canonical form is in the
/// spelling it does not serve (`SiteAction::QueryPath`'s `written_back`; QUALITY.md, "Stop 25
/// (lead): a canonical form the site serves"). Before the write-back every `?/` host's photos
/// were canonical in the path-info spelling.
#[test]
fn a_generated_piwigo_host_is_canonical_in_the_spelling_it_serves() {
    use undust::corpus::SiteKind;
    let kind = SiteKind::Piwigo;
    let mut checked = (0, 0);
    for &seed in &PIWIGO_SEEDS[..6] {
        for LearnedSite { site, rules } in learn_generated(kind, family_seed(seed, kind), seed) {
            let query_spelling = site.variant.contains("?/");
            let unserved = if query_spelling { ".php/" } else { ".php?/" };
            for page in &site.pages {
                let canonical = rules.canonical(&page.url);
                assert!(
                    !canonical.contains(unserved),
                    "seed {seed} {}: {} is canonical as {canonical}",
                    site.variant,
                    page.url
                );
            }
            if query_spelling {
                checked.0 += 1;
            } else {
                checked.1 += 1;
            }
        }
    }
    assert!(checked.0 >= 2, "hosts writing `?/`: {}", checked.0);
}

/// Generality, the target: on families never used to choose a constant, learning with
/// the defaults reaches 90% of the best achievable compression (micro) and 75% in every family,
/// with no hard negative merged and a false-positive rate of at most 0.1% in every family.
/// Not met yet (stop 23: SMF, Gitea and Piwigo added, OpenCart and Plone moved to tuning;
/// QUALITY.md has the figures; Drupal, Joomla, SMF and Piwigo under 75%, Gitea lower-cases
/// case-sensitive file paths and drops `state`): Drupal's path aliases
/// (`/articles/title` ≡ `/node/5`) and Joomla 4's id-less routes are beyond URL rules
/// (QUALITY.md, stop 22). Discourse's post links, which open the page holding the post, are
/// read as that page since stop 26 (`SiteAction::PostToPage`). Run with `cargo test --test it -- --ignored held_out` to see where it
/// stands.
#[test]
#[ignore = "generality target not met yet: see QUALITY.md, stop 23, all branches merged"]
fn held_out_families_reach_the_generality_target() {
    let (rows, total, merged) =
        family_run(&undust::corpus::SiteKind::HELD_OUT_FAMILIES, "held-out");
    for r in &rows {
        assert!(
            r.total.false_positive_rate() <= 0.001,
            "{}: fpr {:.5}",
            r.family,
            r.total.false_positive_rate()
        );
    }
    assert!(merged.is_empty(), "hard negatives merged: {merged:?}");
    let share = total.compression_rate() / total.best_compression_rate();
    assert!(
        share >= 0.90,
        "held-out micro share of best {share:.3} < 0.90"
    );
    for r in &rows {
        assert!(
            r.share_of_best() >= 0.75,
            "{}: share of best {:.3} < 0.75",
            r.family,
            r.share_of_best()
        );
    }
}

/// The Q&A false merge (held-out family, seeds 41 and 42): a slug-dropping rule learned on
/// question ids (`/questions/N/slug` ≡ `/questions/N`) has `*` for the id, which also matches
/// `/questions/tagged/T`. Training shows only two tag listings (too few clusters for the tree
/// to give `tagged` a node of its own, and one false pair is under the rule's 1% fpr), so the
/// rule qualifies; the learner must fence off the page type it never saw merged: tag listings
/// unseen in training stay apart while questions still lose their slugs.
#[test]
fn rule_learned_on_ids_does_not_reach_a_page_type_among_them() {
    let host = "qa.example";
    let mut train = Vec::new();
    for id in 0..150u64 {
        let n = 1000 + 7 * id;
        for u in [
            format!("/questions/{n}/title-of-{id}"),
            format!("/questions/{n}"),
        ] {
            train.push(LabelledUrl {
                url: format!("http://{host}{u}"),
                cluster: id,
            });
        }
    }
    for (i, tag) in ["rust", "grpc"].iter().enumerate() {
        train.push(LabelledUrl {
            url: format!("http://{host}/questions/tagged/{tag}"),
            cluster: 1000 + i as u64,
        });
    }
    let out = learn_host(host, &train, &LearnConfig::default()).unwrap();
    let engine = HostRules::compile(&out.rules).unwrap();
    let c = |p: &str| canonicalize(&engine, &format!("http://{host}{p}"));
    assert_eq!(
        c("/questions/5000/another-title"),
        c("/questions/5000"),
        "{:#?}",
        out.rules
    );
    assert_ne!(
        c("/questions/tagged/redis"),
        c("/questions/tagged/tokio"),
        "{:#?}",
        out.rules
    );
}

/// Discuz!'s last-post link (`forum.php?mod=redirect&goto=lastpost&tid=T`) opens a thread's
/// last page: its first page on a one-page thread, a later page on a longer one. A tree rule
/// writing it as the thread (`mod=viewthread&tid=T`) is shown right on every one-page thread
/// and wrong on longer threads only where both of their pages are sampled; the last page's
/// cluster alone (the link beside `mod=viewthread&tid=T&page=2`) already shows the link
/// standing for another page than the one the rule writes, so the rule is refused (stop 38:
/// the check read the page without the view from the source, where the rule also renames the
/// script's `mod`, and so never saw it).
#[test]
fn a_last_post_link_is_not_written_as_the_thread_where_it_opened_a_later_page() {
    let host = "bbs.example";
    let mut train = Vec::new();
    let mut push = |path: String, cluster: u64| {
        train.push(LabelledUrl {
            url: format!("http://{host}/forum.php?{path}"),
            cluster,
        })
    };
    for t in 0..200u64 {
        let tid = 5_000 + 3 * t;
        if t % 5 == 0 {
            // A two-page thread: the link opens page 2 (page 1 not sampled).
            push(format!("mod=viewthread&tid={tid}&page=2"), t);
            push(format!("mod=redirect&goto=lastpost&tid={tid}"), t);
        } else {
            push(format!("mod=viewthread&tid={tid}"), t);
            push(format!("mod=redirect&goto=lastpost&tid={tid}"), t);
        }
    }
    let out = learn_host(host, &train, &LearnConfig::default()).unwrap();
    let engine = HostRules::compile(&out.rules).unwrap();
    let c = |p: &str| canonicalize(&engine, &format!("http://{host}/forum.php?{p}"));
    assert_ne!(
        c("mod=redirect&goto=lastpost&tid=90001"),
        c("mod=viewthread&tid=90001"),
        "{:#?}",
        out.rules
    );
}

/// `undust eval --families` reports each family beside the micro and macro rows, and names the
/// line of a malformed families file.
#[test]
fn eval_cli_reports_per_family() {
    use std::io::Write;
    use undust::corpus::{generate, CorpusConfig, SiteKind};
    let dir = tempfile::tempdir().unwrap();
    let corpus = generate(
        &CorpusConfig::new(5, 1)
            .with_kinds(&[
                SiteKind::Drupal,
                SiteKind::QAndA,
                SiteKind::Sphinx,
                SiteKind::Bugzilla,
                SiteKind::OpenCart,
                SiteKind::Plone,
            ])
            .with_pages(300, 300),
    );
    let clusters = dir.path().join("clusters.jsonl");
    let families = dir.path().join("families.tsv");
    let mut out = std::fs::File::create(&clusters).unwrap();
    let mut fam = std::fs::File::create(&families).unwrap();
    writeln!(fam, "# host\tfamily").unwrap();
    for site in &corpus.sites {
        // Every family's host is named but Sphinx's, which is left unnamed.
        if site.kind != SiteKind::Sphinx {
            writeln!(fam, "{}\t{}", site.host, site.kind).unwrap();
        }
        for p in &site.pages {
            let line = serde_json::json!({"url": p.url, "cluster": p.content_id});
            writeln!(out, "{line}").unwrap();
        }
    }
    drop((out, fam));
    let run = |families: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
            .args(["eval", "--clusters"])
            .arg(&clusters)
            .arg("--families")
            .arg(families)
            .output()
            .unwrap()
    };
    let output = run(&families);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("tree + graph by family:"), "{text}");
    if std::env::var("LEARN_DEBUG").is_ok() {
        eprintln!("{text}");
    }
    for family in [
        "drupal", "q-and-a", "bugzilla", "opencart", "plone", "other",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(family) && l.contains('%')),
            "{family} missing: {text}"
        );
    }
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&bad, "a.example\tforum\nno tab here\n").unwrap();
    let output = run(&bad);
    assert_eq!(output.status.code(), Some(64));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("line 2"), "{err}");
}

/// Rule sets learned from the hand-made sites above: the material generated rule files are made
/// of (patterns and operations as the learner writes them).
fn learned_rule_sets() -> &'static [undust::canon::rules::HostRuleSet] {
    static SETS: std::sync::OnceLock<Vec<undust::canon::rules::HostRuleSet>> =
        std::sync::OnceLock::new();
    SETS.get_or_init(|| {
        [
            session_site(),
            tracking_site(),
            alias_site(),
            slug_site(),
            mirror_site(),
            case_site(),
            default_document_site(),
        ]
        .iter()
        .map(|site| {
            learn_host(site.host, &site.urls, &LearnConfig::default())
                .expect("learn")
                .rules
        })
        .collect()
    })
}

/// A valid rule file: some of the learned rule sets, with their free figures (versions, times,
/// support, false-positive rates as the learner computes them, pairs over pairs) varied.
fn rule_file_strategy() -> impl proptest::strategy::Strategy<Value = undust::canon::rules::RuleFile>
{
    use proptest::prelude::*;
    let sets = learned_rule_sets().len();
    proptest::collection::vec(
        (
            0..sets,
            any::<u64>(),
            any::<i64>(),
            any::<u64>(),
            (0u64..10_000, 1u64..10_000),
        ),
        0..6,
    )
    .prop_map(|picks| {
        let hosts = picks
            .into_iter()
            .map(|(index, version, learned_at, support, (bad, pairs))| {
                let mut set = learned_rule_sets()[index].clone();
                set.version = version;
                set.learned_at_unix_ms = learned_at;
                for rule in &mut set.rules {
                    rule.support = support;
                    rule.support_clusters = support / 2;
                    rule.false_positive_rate = bad.min(pairs) as f64 / pairs as f64;
                }
                for rule in &mut set.site_rules {
                    rule.support = support;
                    rule.false_positive_rate = bad.min(pairs) as f64 / pairs as f64;
                    // Some rules accepted on support other hosts lent.
                    rule.pooled =
                        (support % 2 == 1).then_some(undust::canon::rules::PooledSupport {
                            clusters: support / 2,
                            hosts: support % 16,
                        });
                }
                set
            })
            .collect();
        undust::canon::rules::RuleFile::new(hosts)
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        crate::support::proptest_cases(128)
    ))]

    /// serialize(load(x)) == x for generated valid files, and load(serialize(f)) == f; every
    /// truncation of a file, a wrong format marker or version, and a broken pattern are errors.
    #[test]
    fn proptest_rule_files_round_trip_and_mutations_are_refused(
        file in rule_file_strategy(),
        cut in 0.0f64..1.0,
    ) {
        use undust::canon::rules::RuleFile;
        let text = file.to_json_pretty().expect("serialize");
        let loaded = RuleFile::from_json(&text).expect("a written file loads");
        proptest::prop_assert_eq!(&loaded, &file);
        proptest::prop_assert_eq!(loaded.to_json_pretty().expect("serialize"), text.clone());

        let mut end = ((text.len() as f64) * cut) as usize;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        proptest::prop_assert!(RuleFile::from_json(&text[..end]).is_err(), "prefix of {} bytes loaded", end);
        let marker = text.replacen("\"format\": \"", "\"format\": \"x", 1);
        proptest::prop_assert!(RuleFile::from_json(&marker).is_err());
        let mut versioned = file.clone();
        versioned.version += 1;
        proptest::prop_assert!(RuleFile::from_json(&versioned.to_json_pretty().expect("serialize")).is_err());
        if let Some(rule) = file.hosts.iter().flat_map(|set| &set.rules).next() {
            let broken = text.replacen(
                &format!("\"source_pattern\": {}", serde_json::to_string(&rule.source_pattern).expect("json")),
                "\"source_pattern\": \"not a pattern\"",
                1,
            );
            proptest::prop_assert!(RuleFile::from_json(&broken).is_err(), "a broken pattern loaded");
        }
    }
}

/// Gitea's false merges came from two rules too wide for their evidence: `state` dropped at
/// every value because `state=open` (the issue list's default) was the one value the sample
/// showed merged, and the whole path lower-cased because owners and repositories are found in
/// any case, which merged files whose git paths differ only in case (`xt_DSCP.h`,
/// `xt_dscp.h`). Learned on generated Gitea hosts alone at several seeds (other sites than in
/// the held-out set, where a family's sites depend on its place): no hard negative merged and
/// a false-positive rate of 0 on every host, no rule dropping `state` or `page` at every value
/// nor lower-casing the whole path, and the defaults dropped at their values where a host
/// showed them (the list's `state=open` and `page=1`, the pager's filters).
#[test]
fn gitea_defaults_are_dropped_at_their_values_and_case_folded_before_the_files() {
    use undust::canon::rules::SiteAction;
    use undust::corpus::SiteKind;
    let mut value_defaults = 0;
    for seed in 41..=48u64 {
        for LearnedSite { site, rules } in learn_generated(SiteKind::Gitea, seed, seed) {
            let out = &rules.outcome;
            let actions: Vec<&SiteAction> =
                out.rules.site_rules.iter().map(|r| &r.action).collect();
            for a in &actions {
                assert!(
                    !matches!(
                        a,
                        SiteAction::LowercasePath | SiteAction::LowercasePathAndQuery
                    ),
                    "seed {seed}: {a}"
                );
                assert!(
                    !matches!(a, SiteAction::IgnoreParam { name, .. } if name == "state" || name == "page"),
                    "seed {seed}: {a}"
                );
            }
            value_defaults += actions
                .iter()
                .filter(|a| matches!(a, SiteAction::IgnoreParamValue { .. }))
                .count();
            let m = measure(&truth(&site), |u| rules.canonical(u));
            assert_eq!(m.false_positive_rate(), 0.0, "seed {seed}: {actions:?}");
            for (a, b) in &site.hard_negatives {
                assert_ne!(
                    rules.canonical(a),
                    rules.canonical(b),
                    "seed {seed}: {actions:?}"
                );
            }
        }
    }
    assert!(
        value_defaults >= 4,
        "defaults dropped at their values: {value_defaults}"
    );
}

/// The Plone host of seed 46 (a fresh draw nobody tuned on, seeded by the family's name as
/// [`family_run`] does): at stop 24 tree rules for Zope's acquisition and views
/// (`/exact-column/* -> /under-across/exact-column/*` and its `/view` twin) reached an image,
/// whose bare URL is its bytes and `/view` a page about it (`x.jpg` ≡ `x.jpg/view`, fpr 0.098),
/// because the guard counted a file kind only where two clusters showed it at that segment.
/// A rule's `*` that becomes or stops being the last segment now matches no value that names a
/// file unless its merges showed files there, whatever the sample holds of them.
#[test]
fn a_generated_plone_host_keeps_its_files_apart_from_their_views() {
    use undust::corpus::SiteKind;
    let (rows, total, merged) = family_run_on(&[SiteKind::Plone], "plone", &[46]);
    assert_eq!(rows.len(), 1);
    assert!(merged.is_empty(), "hard negatives merged: {merged:?}");
    assert_eq!(
        total.false_positive_rate(),
        0.0,
        "a file merged with a page about it"
    );
}

/// Joomla hosts that write ids in their menu routes (`/index.php/news/1607-a-title`, the
/// "ids" variants of seeds 45, 46 and 51: two seeds of the first fresh draw, where the rule
/// was developed, and one of the second, which was not used for any choice): the routes the
/// sample shows are read as the article's query form (`SiteAction::RoutedIdToQuery`), and the
/// hosts reach nearly all of their best without a false merge. Before the action the three
/// stood at 0.445, 0.125 and 0.117 of their best 0.613, 0.396 and 0.380 (QUALITY.md, "Stop
/// 25 (lead): ids in menu routes").
#[test]
fn joomla_articles_under_menu_routes_meet_their_query_form() {
    use undust::canon::rules::SiteAction;
    use undust::corpus::SiteKind;
    let kind = SiteKind::Joomla;
    for seed in [45, 46, 51] {
        for LearnedSite { site, rules } in learn_generated(kind, family_seed(seed, kind), seed) {
            assert!(
                site.variant.contains("ids"),
                "seed {seed}: {}",
                site.variant
            );
            let routed = rules
                .outcome
                .rules
                .site_rules
                .iter()
                .any(|r| matches!(r.action, SiteAction::RoutedIdToQuery { .. }));
            assert!(routed, "seed {seed}: no routed id learned");
            let m = measure(&truth(&site), |u| rules.canonical(u));
            let share = m.compression_rate() / m.best_compression_rate();
            assert_eq!(m.false_positive_rate(), 0.0, "seed {seed}");
            assert!(share >= 0.9, "seed {seed}: share of best {share:.3}");
            for (a, b) in &site.hard_negatives {
                assert_ne!(rules.canonical(a), rules.canonical(b), "seed {seed}");
            }
        }
    }
}

/// Share of the best achievable compression on the generated Discourse hosts of
/// [`FAMILY_SEEDS`] (pooled): 0.997 measured with a post's address read as the page holding it
/// (`SiteAction::PostToPage`), 0.81 before (QUALITY.md, "Stop 26 (postpage)"). A floor
/// against regressions.
const DISCOURSE_POST_PAGES_FLOOR: f64 = 0.97;

/// Discourse opens a topic at post M (`/t/slug/N/M`) as the page of the topic that holds it:
/// `/t/slug/N` for posts 1 to 20, `/t/slug/N?page=2` for 21 to 40 (its topic view's canonical
/// path). On the Discourse hosts of [`FAMILY_SEEDS`] the learner bounds the page size from the
/// pairs its sample shows and reads post addresses as their pages, without merging a hard
/// negative (`?page=2` beside `?page=3`, another topic's pages): each host learns the action,
/// a post beyond the first page reaches its page, and the hosts pooled reach the floor.
#[test]
fn discourse_posts_open_the_page_holding_them() {
    use undust::canon::rules::SiteAction;
    use undust::corpus::SiteKind;
    let kind = SiteKind::Discourse;
    let (rows, total, merged) = family_run_on(&[kind], "discourse", &FAMILY_SEEDS);
    assert!(merged.is_empty(), "hard negatives merged: {merged:?}");
    assert_eq!(rows.len(), 1);
    assert_eq!(total.false_positive_rate(), 0.0);
    let share = total.compression_rate() / total.best_compression_rate();
    assert!(
        share >= DISCOURSE_POST_PAGES_FLOOR,
        "discourse: share of best {share:.3}"
    );
    for &seed in &FAMILY_SEEDS {
        for LearnedSite { site, rules } in learn_generated(kind, family_seed(seed, kind), seed) {
            let learned = rules
                .outcome
                .rules
                .site_rules
                .iter()
                .any(|r| matches!(r.action, SiteAction::PostToPage { .. }));
            assert!(learned, "seed {seed}: no post-to-page rule learned");
            // A post beyond the first page is canonical as its page: some address without a
            // page parameter gets one.
            let paged = site
                .pages
                .iter()
                .filter(|p| !p.url.contains("page=") && rules.canonical(&p.url).contains("page="))
                .count();
            assert!(
                paged > 0,
                "seed {seed}: no post read as a page beyond the first"
            );
        }
    }
}

/// Two false merges found on draws outside [`FAMILY_SEEDS`] and on its MyBB host, each fixed
/// by a general mechanism, stay fixed:
/// - Plone, seed 55 (a tuning family): `/fr/*/*/*` -> `/fr/*/*` was learned from one last
///   segment shown irrelevant (`view`) and merged every item of a folder one level deeper
///   with its folder; one value shown is no evidence for every value
///   (`KeyEvidence::unshown_values_reached`).
/// - MyBB, seed 43 (held out): `/forums/*` -> `forumdisplay.php?fid=*&page=*` reads the first
///   and the last number of `forum-55-page-2.html` and wrote `thread-13077.html` as
///   `fid=13077&page=13077`, merging the thread with its last post; both numbers of one value
///   are read only where the value holds two (`Extract::splits`).
#[test]
fn false_merges_of_later_draws_stay_fixed() {
    use undust::corpus::SiteKind;
    for (kind, seed) in [(SiteKind::Plone, 55), (SiteKind::MyBb, 43)] {
        let (_, total, merged) = family_run_on(&[kind], "fixed", &[seed]);
        assert!(merged.is_empty(), "{kind:?} seed {seed}: {merged:?}");
        assert_eq!(
            total.false_positive_rate(),
            0.0,
            "{kind:?} seed {seed}: pages merged"
        );
        assert!(total.compression_rate() > 0.0, "{kind:?} seed {seed}");
    }
}

/// Site rules a host's rule set names twice (each once).
fn repeated_site_rules(rules: &undust::canon::rules::HostRuleSet) -> Vec<String> {
    let actions = &rules.site_rules;
    let mut repeated: Vec<String> = actions
        .iter()
        .enumerate()
        .filter(|(i, r)| actions[..*i].iter().any(|s| s.action == r.action))
        .map(|(_, r)| r.action.to_string())
        .collect();
    repeated.dedup();
    repeated
}

/// MyBB's archive template writes `showthread.php?mode=linear&tid=N`, and `mode=linear` was
/// accepted alone before the bundle that needs it beside the template: the bundle must not
/// write it again (the engine would run it twice on every URL). Seed 49 wrote it twice before.
#[test]
fn a_site_rule_already_accepted_is_not_written_again_by_a_bundle() {
    use undust::corpus::SiteKind;
    let seed = 49;
    let sites = learn_generated(SiteKind::MyBb, family_seed(seed, SiteKind::MyBb), seed);
    assert!(!sites.is_empty());
    for LearnedSite { site, rules } in &sites {
        let repeated = repeated_site_rules(&rules.outcome.rules);
        assert!(repeated.is_empty(), "{}: {repeated:?}", site.host);
        assert!(
            !rules.outcome.rules.site_rules.is_empty(),
            "{}: no site rule learned",
            site.host
        );
    }
}

/// The documented DUST form of a generated site's vocabulary (`description`), and how many of
/// its examples the rules learned on the site's 20% sample reach.
fn vocabulary_reached(
    kind: undust::corpus::SiteKind,
    description: &str,
    seeds: &[u64],
) -> (usize, usize, usize) {
    use undust::canon::rules::SiteAction;
    let (mut vocabularies, mut reached, mut examples) = (0, 0, 0);
    for &seed in seeds {
        for LearnedSite { site, rules } in learn_generated(kind, family_seed(seed, kind), seed) {
            vocabularies += rules
                .outcome
                .rules
                .site_rules
                .iter()
                .filter(|r| matches!(r.action, SiteAction::Vocabulary { .. }))
                .count();
            let m = measure(&truth(&site), |u| rules.canonical(u));
            assert_eq!(m.false_positive_rate(), 0.0, "seed {seed} {}", site.variant);
            for (a, b) in &site.hard_negatives {
                assert_ne!(
                    rules.canonical(a),
                    rules.canonical(b),
                    "seed {seed} {}",
                    site.variant
                );
            }
            for e in site
                .expected
                .iter()
                .filter(|e| e.description == description)
            {
                examples += e.examples.len();
                reached += e
                    .examples
                    .iter()
                    .filter(|(a, b)| rules.canonical(a) == rules.canonical(b))
                    .count();
            }
        }
    }
    (vocabularies, reached, examples)
}

/// A host's small vocabularies (`SiteAction::Vocabulary`): Joomla's menu items
/// (`/index.php?Itemid=106` is the menu item's route, its pages' `limitstart` the route's
/// `start`) and Drupal's taxonomy terms (`/taxonomy/term/5` is `/category/a-name`) are learned
/// from the clusters that show both addresses of a name, and reach the listings of the names
/// the sample shows; on WordPress, whose 20% samples show too few category archives
/// (`/?cat=3` ≡ `/category/news/`) for a table, nothing is merged that differs. No host learns
/// a table of its pages' own aliases (Drupal's nodes, WordPress's `?p=N`), and no host merges
/// a hard negative. Before the vocabularies neither form was reached on any of these hosts
/// (QUALITY.md, "Stop 25, all branches merged").
#[test]
fn menu_items_and_terms_are_learned_as_vocabularies() {
    use undust::corpus::SiteKind;
    let (joomla, reached, _) = vocabulary_reached(
        SiteKind::Joomla,
        "category blog by its menu item id",
        &FAMILY_SEEDS,
    );
    assert!(
        joomla >= 1 && reached >= 2,
        "joomla: {joomla} tables, {reached} reached"
    );
    let (drupal, reached, _) = vocabulary_reached(
        SiteKind::Drupal,
        "taxonomy term under its path alias",
        &FAMILY_SEEDS,
    );
    assert!(
        drupal >= 2 && reached >= 3,
        "drupal: {drupal} tables, {reached} reached"
    );
    // Guarantees only: no table, no false merge.
    vocabulary_reached(
        SiteKind::WordPress,
        "category archive by id `?cat=`",
        &FAMILY_SEEDS,
    );
}

/// The family runs on families and draws chosen by hand, to measure a learner change before and
/// after (QUALITY.md's per-stop tables): `UNDUST_FAMILIES=drupal,joomla UNDUST_SEEDS=41,42,43
/// cargo test --release --test it -- --ignored families_on_chosen_draws --nocapture`. Without
/// `UNDUST_FAMILIES` every family runs, without `UNDUST_SEEDS` the draws of [`FAMILY_SEEDS`].
/// Stops 28 to 33 ran the same thing as an uncommitted `scratch_lead`.
#[test]
#[ignore = "a measurement run by hand (QUALITY.md): several minutes for every family"]
fn families_on_chosen_draws() {
    let kinds: Vec<undust::corpus::SiteKind> = match std::env::var("UNDUST_FAMILIES") {
        Ok(names) => {
            let names: Vec<&str> = names.split(',').map(str::trim).collect();
            for name in &names {
                assert!(
                    undust::corpus::SiteKind::FAMILIES
                        .iter()
                        .any(|k| k.name() == *name),
                    "UNDUST_FAMILIES: no family is named {name:?}"
                );
            }
            undust::corpus::SiteKind::FAMILIES
                .iter()
                .copied()
                .filter(|k| names.contains(&k.name()))
                .collect()
        }
        Err(_) => undust::corpus::SiteKind::FAMILIES.to_vec(),
    };
    let seeds: Vec<u64> = match std::env::var("UNDUST_SEEDS") {
        Ok(seeds) => seeds
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("UNDUST_SEEDS: {s:?} is not a number"))
            })
            .collect(),
        Err(_) => FAMILY_SEEDS.to_vec(),
    };
    family_run_on(&kinds, "chosen", &seeds);
}
