//! The evaluation protocol of Lei et al. (section 3, equations 1-3; section 6).
//!
//! For a canonicalization function over labelled URLs of one host:
//!
//! - compression rate `1 - N_norm / N_ori` (eq. 1), with `N` counting distinct URLs before and
//!   distinct canonical forms after;
//! - dup-reduction rate `1 - (1 - C/N_norm) / (1 - C/N_ori)` (eq. 2), `C` the number of
//!   duplicate clusters (content does not change with normalization, so `C_norm = C_ori`);
//!   defined as 0 when the URLs hold no duplicates;
//! - false-positive rate `N_fpp / N_supp` (eq. 3): among pairs of URLs with the same canonical
//!   form (support pairs), those of different clusters.
//!
//! Micro averages pool the counts of all hosts; macro averages average per-host rates (hosts
//! with no support pairs count as fpr 0). [`evaluate`] runs the protocol of section 6.1: per
//! host, a seeded share of the *pages* (duplicate clusters, all their URLs together; default
//! 20%) is the training set, rules are learned with each strategy and applied to all URLs.
//! The host's alias table is learned after its rules, as `undust learn` and the sidecar learn
//! it ([`crate::learn::aliases`]), from the declared pairs of the training share only: a pair's
//! two URLs are one page's, so they fall in the same share.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use url::Url;

use super::aliases::learn_aliases;
use super::shared_evidence::learn_beside_each_other;
use super::{learn_host_with, LabelledUrl, LearnConfig, LearnError, Strategy};
use crate::canon::engine::HostRules;
use crate::canon::normalize::StaticNormalizer;
use crate::canon::rules::HostRuleSet;
use crate::cluster::DeclaredPair;

/// Counts of one host under one canonicalization.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    /// Distinct URLs (`N_ori`).
    pub urls: u64,
    /// Distinct canonical forms (`N_norm`).
    pub canonical: u64,
    /// Duplicate clusters (`C`).
    pub clusters: u64,
    /// Support pairs.
    pub support_pairs: u64,
    /// False-positive pairs.
    pub false_positive_pairs: u64,
}

pub(crate) fn pairs(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

impl Metrics {
    /// Eq. 1.
    pub fn compression_rate(&self) -> f64 {
        if self.urls == 0 {
            0.0
        } else {
            1.0 - self.canonical as f64 / self.urls as f64
        }
    }

    /// The best compression any function could reach without false positives:
    /// `1 - C / N_ori`.
    pub fn best_compression_rate(&self) -> f64 {
        if self.urls == 0 {
            0.0
        } else {
            1.0 - self.clusters as f64 / self.urls as f64
        }
    }

    /// Eq. 2.
    pub fn dup_reduction_rate(&self) -> f64 {
        if self.urls == 0 || self.canonical == 0 {
            return 0.0;
        }
        let before = 1.0 - self.clusters as f64 / self.urls as f64;
        if before <= 0.0 {
            return 0.0;
        }
        let after = (1.0 - self.clusters as f64 / self.canonical as f64).max(0.0);
        1.0 - after / before
    }

    /// Eq. 3.
    pub fn false_positive_rate(&self) -> f64 {
        if self.support_pairs == 0 {
            0.0
        } else {
            self.false_positive_pairs as f64 / self.support_pairs as f64
        }
    }

    /// Sum of counts (micro averaging).
    pub fn add(&mut self, o: &Metrics) {
        self.urls += o.urls;
        self.canonical += o.canonical;
        self.clusters += o.clusters;
        self.support_pairs += o.support_pairs;
        self.false_positive_pairs += o.false_positive_pairs;
    }
}

/// Measures `canon` over labelled URLs (duplicates of a URL string are counted once, first
/// label wins).
pub fn measure(urls: &[LabelledUrl], mut canon: impl FnMut(&str) -> String) -> Metrics {
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    let mut groups: FxHashMap<String, Vec<u64>> = FxHashMap::default();
    let mut clusters: FxHashSet<u64> = FxHashSet::default();
    for u in urls {
        if !seen.insert(u.url.as_str()) {
            continue;
        }
        clusters.insert(u.cluster);
        groups.entry(canon(&u.url)).or_default().push(u.cluster);
    }
    let mut m = Metrics {
        urls: seen.len() as u64,
        canonical: groups.len() as u64,
        clusters: clusters.len() as u64,
        ..Metrics::default()
    };
    for mut g in groups.into_values() {
        let n = g.len() as u64;
        if n < 2 {
            continue;
        }
        g.sort_unstable();
        let mut same = 0;
        let mut i = 0;
        while i < g.len() {
            let j = g[i..].iter().take_while(|&&c| c == g[i]).count();
            same += pairs(j as u64);
            i += j;
        }
        m.support_pairs += pairs(n);
        m.false_positive_pairs += pairs(n) - same;
    }
    m
}

/// Measures of a canonicalization across hosts: the counts of [`measure`] over the URLs of all
/// hosts together (so a canonical form may span hosts), and the canonical forms that do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossHostMetrics {
    /// Eq. 1–3 counts over all hosts' URLs pooled.
    pub pooled: Metrics,
    /// Canonical forms whose URLs come from more than one host.
    pub spanning_forms: u64,
    /// Spanning forms that join URLs of different clusters: a false positive across hosts.
    pub false_spanning_forms: u64,
}

/// [`measure`] across hosts: `urls` of many hosts, clusters labelled across hosts (equal labels
/// on two hosts mean equal content), one canonicalization for all.
pub fn measure_across_hosts(
    urls: &[LabelledUrl],
    mut canon: impl FnMut(&str) -> String,
) -> CrossHostMetrics {
    let mut forms: FxHashMap<String, (FxHashSet<String>, FxHashSet<u64>)> = FxHashMap::default();
    let mut memo: FxHashMap<&str, String> = FxHashMap::default();
    for u in urls {
        if memo.contains_key(u.url.as_str()) {
            continue;
        }
        let c = canon(&u.url);
        memo.insert(u.url.as_str(), c.clone());
        let host = Url::parse(&u.url)
            .ok()
            .and_then(|x| x.host_str().map(str::to_owned))
            .unwrap_or_default();
        let e = forms.entry(c).or_default();
        e.0.insert(host);
        e.1.insert(u.cluster);
    }
    let pooled = measure(urls, |u| {
        memo.get(u).cloned().unwrap_or_else(|| u.to_owned())
    });
    let mut out = CrossHostMetrics {
        pooled,
        ..CrossHostMetrics::default()
    };
    for (hosts, clusters) in forms.values() {
        if hosts.len() > 1 {
            out.spanning_forms += 1;
            out.false_spanning_forms += u64::from(clusters.len() > 1);
        }
    }
    out
}

/// Micro and macro averages over hosts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Averages {
    /// Pooled compression rate.
    pub micro_compression: f64,
    /// Mean per-host compression rate.
    pub macro_compression: f64,
    /// Pooled dup-reduction rate.
    pub micro_dup_reduction: f64,
    /// Mean per-host dup-reduction rate.
    pub macro_dup_reduction: f64,
    /// Pooled false-positive rate.
    pub micro_fpr: f64,
    /// Mean per-host false-positive rate.
    pub macro_fpr: f64,
    /// Pooled best achievable compression `1 - C/N`.
    pub micro_best_compression: f64,
}

/// Averages per-host metrics.
pub fn average(per_host: &[Metrics]) -> Averages {
    let mut total = Metrics::default();
    for m in per_host {
        total.add(m);
    }
    let n = per_host.len().max(1) as f64;
    let mean = |f: fn(&Metrics) -> f64| per_host.iter().map(f).sum::<f64>() / n;
    Averages {
        micro_compression: total.compression_rate(),
        macro_compression: mean(Metrics::compression_rate),
        micro_dup_reduction: total.dup_reduction_rate(),
        macro_dup_reduction: mean(Metrics::dup_reduction_rate),
        micro_fpr: total.false_positive_rate(),
        macro_fpr: mean(Metrics::false_positive_rate),
        micro_best_compression: total.best_compression_rate(),
    }
}

/// One family's (kind of site's) figures: its hosts' counts pooled (micro) and averaged (macro).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FamilyRow {
    /// Family name, as given for each host.
    pub family: String,
    /// Hosts of this family.
    pub hosts: usize,
    /// Pooled counts of its hosts.
    pub total: Metrics,
    /// Micro and macro averages over its hosts.
    pub averages: Averages,
}

impl FamilyRow {
    /// Compression reached as a share of the best achievable (micro); 1 when nothing can be
    /// compressed.
    pub fn share_of_best(&self) -> f64 {
        let best = self.total.best_compression_rate();
        if best <= 0.0 {
            1.0
        } else {
            self.total.compression_rate() / best
        }
    }
}

/// Groups per-host metrics by family (`family_of[i]` is host `i`'s family), in order of first
/// appearance. Hosts beyond `family_of` are left out.
pub fn by_family(per_host: &[Metrics], family_of: &[&str]) -> Vec<FamilyRow> {
    let mut order: Vec<&str> = Vec::new();
    let mut groups: FxHashMap<&str, Vec<Metrics>> = FxHashMap::default();
    for (m, f) in per_host.iter().zip(family_of) {
        if !groups.contains_key(f) {
            order.push(f);
        }
        groups.entry(f).or_default().push(*m);
    }
    order
        .into_iter()
        .map(|f| {
            let members = groups.remove(f).unwrap_or_default();
            let mut total = Metrics::default();
            for m in &members {
                total.add(m);
            }
            FamilyRow {
                family: f.to_owned(),
                hosts: members.len(),
                total,
                averages: average(&members),
            }
        })
        .collect()
}

/// Labelled URLs of one host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSamples {
    /// Host name.
    pub host: String,
    /// Its URLs as crawled (before static normalization) with cluster ids.
    pub urls: Vec<LabelledUrl>,
    /// The declared pairs (canonical, shortlink, redirect) the host's clustering applied; empty
    /// when the input declares none (cluster files, crawl indexes).
    #[serde(skip)]
    pub declared: Vec<DeclaredPair>,
}

/// Protocol settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalConfig {
    /// Share of each host's pages used for training (default 0.2).
    pub train_fraction: f64,
    /// Most training URLs per host (the paper: 100,000).
    pub max_train_urls: usize,
    /// Split seed.
    pub seed: u64,
    /// Learner configuration (its strategy is overridden per row).
    pub learn: LearnConfig,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            train_fraction: 0.2,
            max_train_urls: 100_000,
            seed: 0,
            learn: LearnConfig::default(),
        }
    }
}

/// What a row of the table measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// Static normalization alone.
    StaticOnly,
    /// Learned rules, graph selection.
    Graph,
    /// Learned rules, naive selection.
    Naive,
    /// A rule file learned elsewhere (another crawl, an earlier one), applied to every URL as
    /// `undust canonicalize --rules` applies it: no training split.
    RuleFile,
}

/// One row of the evaluation table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalRow {
    /// Method.
    pub method: Method,
    /// Per-host metrics, in host order.
    pub per_host: Vec<Metrics>,
    /// Averages.
    pub averages: Averages,
    /// Deployed rules over all hosts.
    pub rules: usize,
}

/// The seeded training split: each cluster goes to training with probability
/// `fraction`, with all its URLs; at most `max` URLs.
pub fn split_training(
    urls: &[LabelledUrl],
    fraction: f64,
    seed: u64,
    max: usize,
) -> Vec<LabelledUrl> {
    let mut chosen: FxHashMap<u64, bool> = FxHashMap::default();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut clusters: Vec<u64> = urls.iter().map(|u| u.cluster).collect();
    clusters.sort_unstable();
    clusters.dedup();
    for c in clusters {
        chosen.insert(c, rng.random_bool(fraction.clamp(0.0, 1.0)));
    }
    urls.iter()
        .filter(|u| chosen.get(&u.cluster).copied().unwrap_or(false))
        .take(max)
        .cloned()
        .collect()
}

/// Canonical form of `url` under compiled rules (the URL itself when no rule applies or it
/// does not parse).
pub fn canonicalize(rules: &HostRules, url: &str) -> String {
    match Url::parse(url) {
        Ok(u) => rules
            .apply(&u)
            .map_or_else(|| u.to_string(), |r| r.canonical),
        Err(_) => url.to_owned(),
    }
}

/// The declared pairs whose two URLs (statically normalized) are in the training share, in
/// their static forms.
fn declared_in(
    declared: &[DeclaredPair],
    train: &[LabelledUrl],
    statically: impl Fn(&str) -> String,
) -> Vec<DeclaredPair> {
    if declared.is_empty() {
        return Vec::new();
    }
    let trained: FxHashSet<&str> = train.iter().map(|l| l.url.as_str()).collect();
    declared
        .iter()
        .filter_map(|pair| {
            let (from, to) = (statically(&pair.from), statically(&pair.to));
            (trained.contains(from.as_str()) && trained.contains(to.as_str())).then_some(
                DeclaredPair {
                    from,
                    to,
                    declaration: pair.declaration,
                },
            )
        })
        .collect()
}

/// Runs the protocol: rows for static-only, graph and naive.
///
/// Every row is measured on the URLs as crawled: static normalization alone, and static
/// normalization followed by the rules learned (from the statically normalized training split)
/// with each strategy. A URL static normalization rejects stays as it is.
pub fn evaluate(
    hosts: &[HostSamples],
    config: &EvalConfig,
    normalizer: &StaticNormalizer,
) -> Result<Vec<EvalRow>, LearnError> {
    let statically = |u: &str| -> String {
        normalizer
            .normalize(u)
            .map_or_else(|_| u.to_owned(), String::from)
    };
    let mut rows = vec![EvalRow {
        method: Method::StaticOnly,
        per_host: hosts.iter().map(|h| measure(&h.urls, statically)).collect(),
        averages: Averages::default(),
        rules: 0,
    }];
    for (method, strategy) in [
        (Method::Graph, Strategy::Graph),
        (Method::Naive, Strategy::Naive),
    ] {
        let learn = config.learn.clone().with_strategy(strategy);
        let mut per_host = Vec::with_capacity(hosts.len());
        let mut rules = 0;
        let trains: Vec<Vec<LabelledUrl>> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                split_training(
                    &h.urls,
                    config.train_fraction,
                    config.seed ^ (i as u64).wrapping_mul(0x9e37),
                    config.max_train_urls,
                )
                .into_iter()
                .map(|l| LabelledUrl {
                    url: statically(&l.url),
                    cluster: l.cluster,
                })
                .collect()
            })
            .collect();
        // As `undust learn` learns them: beside each other (`super::shared_evidence`).
        let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
        let learned = learn_beside_each_other(&names, learn.min_support_clusters, |i, read| {
            match learn_host_with(&hosts[i].host, &trains[i], &learn, Some(read)) {
                Ok(mut outcome) => {
                    let findings = std::mem::take(&mut outcome.findings);
                    (Ok(outcome.rules), findings)
                }
                Err(err) => (Err(err), Vec::new()),
            }
        });
        for ((h, train), learned) in hosts.iter().zip(&trains).zip(learned) {
            let mut set = learned?;
            set.host.clone_from(&h.host);
            rules += set.len();
            let compile = |set: &HostRuleSet| {
                HostRules::compile(set).map_err(|e| {
                    LearnError::InvalidConfig(format!("learned rules do not compile: {e}"))
                })
            };
            let mut engine = compile(&set)?;
            let declared = declared_in(&h.declared, train, statically);
            set.aliases = learn_aliases(&h.host, &engine, &declared);
            if !set.aliases.is_empty() {
                engine = compile(&set)?;
            }
            per_host.push(measure(&h.urls, |u| canonicalize(&engine, &statically(u))));
        }
        rows.push(EvalRow {
            method,
            per_host,
            averages: Averages::default(),
            rules,
        });
    }
    for r in &mut rows {
        r.averages = average(&r.per_host);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lu(url: &str, cluster: u64) -> LabelledUrl {
        LabelledUrl {
            url: url.into(),
            cluster,
        }
    }

    #[test]
    fn equations_1_to_3() {
        let urls = [
            lu("http://h/a?s=1", 1),
            lu("http://h/a?s=2", 1),
            lu("http://h/a?s=3", 1),
            lu("http://h/b?s=1", 2),
            lu("http://h/c", 3),
        ];
        // Drop the query: a, a, a, b, c -> 3 forms; no false positive.
        let m = measure(&urls, |u| u.split('?').next().unwrap().to_owned());
        assert_eq!((m.urls, m.canonical, m.clusters), (5, 3, 3));
        assert!((m.compression_rate() - 0.4).abs() < 1e-12);
        assert!((m.dup_reduction_rate() - 1.0).abs() < 1e-12);
        assert_eq!((m.support_pairs, m.false_positive_pairs), (3, 0));
        // Map everything to one form: 10 pairs, 3 same-cluster.
        let m = measure(&urls, |_| "x".into());
        assert_eq!((m.support_pairs, m.false_positive_pairs), (10, 7));
        assert!((m.false_positive_rate() - 0.7).abs() < 1e-12);
        // Identity: nothing merged.
        let m = measure(&urls, |u| u.to_owned());
        assert_eq!(m.compression_rate(), 0.0);
        assert_eq!(m.dup_reduction_rate(), 0.0);
    }

    #[test]
    fn micro_and_macro_differ_by_weighting() {
        let a = Metrics {
            urls: 100,
            canonical: 50,
            clusters: 50,
            support_pairs: 0,
            false_positive_pairs: 0,
        };
        let b = Metrics {
            urls: 10,
            canonical: 10,
            clusters: 5,
            support_pairs: 0,
            false_positive_pairs: 0,
        };
        let avg = average(&[a, b]);
        assert!((avg.micro_compression - (1.0 - 60.0 / 110.0)).abs() < 1e-12);
        assert!((avg.macro_compression - 0.25).abs() < 1e-12);
    }

    #[test]
    fn families_pool_their_hosts() {
        let m = |urls, canonical, clusters| Metrics {
            urls,
            canonical,
            clusters,
            support_pairs: 0,
            false_positive_pairs: 0,
        };
        let rows = by_family(
            &[m(10, 5, 5), m(10, 10, 5), m(4, 2, 2)],
            &["wiki", "shop", "wiki"],
        );
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].family.as_str(), rows[0].hosts), ("wiki", 2));
        assert_eq!(rows[0].total, m(14, 7, 7));
        assert!((rows[0].share_of_best() - 1.0).abs() < 1e-12);
        assert_eq!(rows[1].share_of_best(), 0.0);
    }

    /// A site whose entities' id URLs and speaking paths share no pattern: the rows gain only
    /// by the alias table, learned from the training share's declarations alone.
    #[test]
    fn the_rows_learn_the_alias_table_of_the_training_share() {
        let title = |mut i: usize| {
            let mut letters = String::new();
            loop {
                letters.push(char::from(b'a' + (i % 26) as u8));
                i /= 26;
                if i == 0 {
                    return letters;
                }
            }
        };
        let entities = 200;
        let mut urls = Vec::new();
        let mut declared = Vec::new();
        for i in 0..entities {
            let (id, path) = (
                format!("http://cms.test/node/{i}"),
                format!("http://cms.test/articles/story-{}", title(i)),
            );
            urls.push(lu(&id, i as u64));
            urls.push(lu(&path, i as u64));
            declared.push(DeclaredPair {
                from: id,
                to: path,
                declaration: crate::cluster::Declaration::Shortlink,
            });
        }
        let normalizer = StaticNormalizer::new(Default::default()).expect("config");
        let run = |declared: &[DeclaredPair], train_fraction| {
            let host = HostSamples {
                host: "cms.test".into(),
                urls: urls.clone(),
                declared: declared.to_vec(),
            };
            let config = EvalConfig {
                train_fraction,
                seed: 3,
                ..EvalConfig::default()
            };
            let rows = evaluate(&[host], &config, &normalizer).expect("evaluates");
            assert_eq!(rows[1].method, Method::Graph);
            rows[1].per_host[0]
        };
        // Without declarations no rule relates the two spellings.
        assert_eq!(run(&[], 1.0).canonical, 2 * entities as u64);
        // Every page trained: every pair joined, none falsely.
        let all = run(&declared, 1.0);
        assert_eq!(
            (all.canonical, all.false_positive_pairs),
            (entities as u64, 0)
        );
        // A fifth trained: the pairs of the trained pages only.
        let fifth = run(&declared, 0.2);
        let joined = 2 * entities as u64 - fifth.canonical;
        assert!(joined > 20 && joined < 70, "{fifth:?}");
        assert_eq!(fifth.false_positive_pairs, 0);
    }

    #[test]
    fn split_keeps_pages_whole_and_is_seeded() {
        let urls: Vec<LabelledUrl> = (0..1000)
            .map(|i| lu(&format!("http://h/{i}"), i / 4))
            .collect();
        let a = split_training(&urls, 0.2, 7, usize::MAX);
        assert_eq!(a, split_training(&urls, 0.2, 7, usize::MAX));
        assert!(a.len() > 100 && a.len() < 300, "{}", a.len());
        assert_eq!(a.len() % 4, 0, "whole clusters");
    }
}
