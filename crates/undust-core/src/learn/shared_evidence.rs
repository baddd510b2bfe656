//! Evidence one host's sample shows too thinly, pooled with the other hosts of a crawl.
//!
//! A crawl meets many sites running one software, and the software fixes their URL schemes: every
//! NodeBB forum spells its default post order `?sort=oldest_to_newest`, every osCommerce shop
//! carries `osCsid`. With a fifth of a site fetched, both addresses of one page are rarely
//! fetched, so a small site's sample may show such a spelling in one or two duplicate clusters,
//! under the [`LearnConfig::min_support_clusters`](super::LearnConfig) a site rule asks. The paper
//! pools evidence across the clusters of one page type; this pools it across hosts: a site action
//! ([`SiteAction`], equal only when name, value and scope are equal) that passed every guard on a
//! host's own sample but its support count, with not one merge of different pages there, is
//! accepted when the hosts that measured it the same way bring its clusters to the threshold,
//! and no host's sample merged different pages with it.
//!
//! The learner only reads this; its callers record what each host's learning found
//! ([`Finding`], in [`super::LearnOutcome::findings`]): `undust learn` records every host's and
//! then learns again the hosts a pooled finding lifts, so the result does not depend on which
//! host finished first; the sidecar records after each relearn, and a host's next relearn reads
//! what the others recorded since.
//!
//! Bounded for any crawl: at most [`MAX_ACTIONS`] actions, each with the findings of at most
//! [`MAX_HOSTS_PER_ACTION`] hosts. A new finding replaces the host's earlier one on that action;
//! when an action's hosts are full, the least recently recorded host gives way, and when the
//! actions are full, the least recently recorded action does.

use parking_lot::Mutex;
use rustc_hash::{FxHashMap, FxHashSet};
use xxhash_rust::xxh3::xxh3_64;

use crate::canon::rules::SiteAction;

/// Actions held at most: a host records a few dozen, most of them shared by its software.
pub const MAX_ACTIONS: usize = 4096;
/// Hosts' findings held per action: more than enough to reach any support threshold, while a
/// contradiction among the most recent hosts still refuses the action.
pub const MAX_HOSTS_PER_ACTION: usize = 16;

/// What one host's learning measured of one site action, without a rule's support.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The action, as the learner tested it (after narrowing to a value or a scope).
    pub action: SiteAction,
    /// Duplicate clusters of the host's sample the action merged.
    pub clusters: u32,
    /// Whether the action merged samples of different clusters on this host.
    pub contradicted: bool,
}

/// One host's finding on an action, as held.
#[derive(Clone, Copy, Debug)]
struct HostFinding {
    host: u64,
    clusters: u32,
    contradicted: bool,
    recorded: u64,
}

#[derive(Default)]
struct Tally {
    hosts: Vec<HostFinding>,
    recorded: u64,
}

#[derive(Default)]
struct Inner {
    actions: FxHashMap<SiteAction, Tally>,
    /// A counter standing for time: the order findings were recorded in.
    clock: u64,
}

/// The findings of a crawl's hosts, shared between their learning runs. See the module docs.
#[derive(Default)]
pub struct SharedEvidence {
    inner: Mutex<Inner>,
}

/// The hosts [`SharedEvidence::lifted`] found.
pub struct Lifted {
    hosts: FxHashSet<u64>,
}

impl Lifted {
    /// Whether `host` is one of them.
    pub fn contains(&self, host: &str) -> bool {
        self.hosts.contains(&host_key(host))
    }
}

/// What the other hosts bring to one host's thin finding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pooled {
    /// Clusters the other hosts' samples showed the action merging, none contradicting it.
    pub clusters: u32,
    /// Hosts they came from.
    pub hosts: u32,
}

fn host_key(host: &str) -> u64 {
    xxh3_64(host.as_bytes())
}

impl SharedEvidence {
    /// An empty store.
    pub fn new() -> Self {
        SharedEvidence::default()
    }

    /// Records `host`'s findings, replacing what it recorded before on the same actions.
    pub fn record(&self, host: &str, findings: &[Finding]) {
        let host = host_key(host);
        let mut inner = self.inner.lock();
        for finding in findings {
            inner.clock += 1;
            let now = inner.clock;
            if !inner.actions.contains_key(&finding.action) && inner.actions.len() >= MAX_ACTIONS {
                // Linear in MAX_ACTIONS, once per new action on a full store: small beside
                // the learning run that produced the finding.
                let stalest = inner
                    .actions
                    .iter()
                    .min_by_key(|(_, tally)| tally.recorded)
                    .map(|(action, _)| action.clone());
                if let Some(stalest) = stalest {
                    inner.actions.remove(&stalest);
                }
            }
            let tally = inner.actions.entry(finding.action.clone()).or_default();
            tally.recorded = now;
            let held = HostFinding {
                host,
                clusters: finding.clusters,
                contradicted: finding.contradicted,
                recorded: now,
            };
            if let Some(old) = tally.hosts.iter_mut().find(|h| h.host == host) {
                *old = held;
            } else if tally.hosts.len() < MAX_HOSTS_PER_ACTION {
                tally.hosts.push(held);
            } else if let Some(stalest) = tally.hosts.iter_mut().min_by_key(|h| h.recorded) {
                *stalest = held;
            }
        }
    }

    /// What hosts other than `host` showed of `action`: `None` when none showed it merging a
    /// duplicate, or when one showed it merging different pages.
    pub fn pooled(&self, host: &str, action: &SiteAction) -> Option<Pooled> {
        let host = host_key(host);
        let inner = self.inner.lock();
        let tally = inner.actions.get(action)?;
        let mut pooled = Pooled::default();
        for other in tally.hosts.iter().filter(|h| h.host != host) {
            if other.contradicted {
                return None;
            }
            if other.clusters > 0 {
                pooled.clusters += other.clusters;
                pooled.hosts += 1;
            }
        }
        (pooled.hosts > 0).then_some(pooled)
    }

    /// The hosts whose recorded thin findings (fewer clusters than `min_support_clusters`,
    /// uncontradicted) the other hosts bring to `min_support_clusters`: learning them again
    /// beside the others may accept those. One pass over what is held, however many hosts ask.
    pub fn lifted(&self, min_support_clusters: u32) -> Lifted {
        let inner = self.inner.lock();
        let mut hosts = FxHashSet::default();
        for tally in inner.actions.values() {
            if tally.hosts.iter().any(|h| h.contradicted) {
                continue;
            }
            let clusters: u32 = tally.hosts.iter().map(|h| h.clusters).sum();
            if clusters < min_support_clusters {
                continue;
            }
            for own in &tally.hosts {
                // Lifted by the others alone: the host's own clusters fell short.
                if own.clusters > 0 && own.clusters < min_support_clusters {
                    hosts.insert(own.host);
                }
            }
        }
        Lifted { hosts }
    }

    /// Actions held.
    pub fn len(&self) -> usize {
        self.inner.lock().actions.len()
    }

    /// Whether no action is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Learns the hosts of one crawl beside each other: each once on its own sample, recording what
/// it found; then again, reading what the others recorded, each host whose thin findings they
/// lift ([`SharedEvidence::lifted`]). `learn(i, read)` learns host `hosts[i]` reading `read` and
/// gives its result and its findings. The result does not depend on the order hosts finish in:
/// the first runs read nothing, findings are recorded in host order, and the second runs read
/// what the first ones recorded. Hosts are learned on every core (rayon).
pub fn learn_beside_each_other<T: Send>(
    hosts: &[&str],
    min_support_clusters: u32,
    learn: impl Fn(usize, &SharedEvidence) -> (T, Vec<Finding>) + Sync,
) -> Vec<T> {
    use rayon::prelude::*;
    let alone = SharedEvidence::new();
    let first: Vec<(T, Vec<Finding>)> = (0..hosts.len())
        .into_par_iter()
        .map(|i| learn(i, &alone))
        .collect();
    let shared = SharedEvidence::new();
    for (host, (_, findings)) in hosts.iter().zip(&first) {
        shared.record(host, findings);
    }
    let lifted = shared.lifted(min_support_clusters);
    let lifted: Vec<usize> = (0..hosts.len())
        .filter(|&i| lifted.contains(hosts[i]))
        .collect();
    let again: Vec<(usize, T)> = lifted
        .into_par_iter()
        .map(|i| (i, learn(i, &shared).0))
        .collect();
    let mut results: Vec<T> = first.into_iter().map(|(result, _)| result).collect();
    for (i, result) in again {
        results[i] = result;
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::LabelledUrl;

    fn drop_value(name: &str, value: &str) -> SiteAction {
        SiteAction::IgnoreParamValue {
            name: name.into(),
            value: value.into(),
            beside: None,
        }
    }

    fn found(action: &SiteAction, clusters: u32, contradicted: bool) -> Finding {
        Finding {
            action: action.clone(),
            clusters,
            contradicted,
        }
    }

    #[test]
    fn other_hosts_pool_and_one_contradiction_refuses() {
        let sort = drop_value("sort", "oldest_to_newest");
        let shared = SharedEvidence::new();
        shared.record("a.example", &[found(&sort, 1, false)]);
        // A host's own finding is not pooled for it.
        assert_eq!(shared.pooled("a.example", &sort), None);
        shared.record("b.example", &[found(&sort, 2, false)]);
        assert_eq!(
            shared.pooled("a.example", &sort),
            Some(Pooled {
                clusters: 2,
                hosts: 1
            })
        );
        assert!(shared.lifted(3).contains("a.example"));
        assert!(!shared.lifted(4).contains("b.example"));
        shared.record("c.example", &[found(&sort, 0, true)]);
        assert_eq!(shared.pooled("a.example", &sort), None);
        assert!(!shared.lifted(3).contains("a.example"));
        // The contradicting host learns again and its sample now agrees: its finding replaces
        // the old one.
        shared.record("c.example", &[found(&sort, 1, false)]);
        assert_eq!(
            shared.pooled("a.example", &sort),
            Some(Pooled {
                clusters: 3,
                hosts: 2
            })
        );
    }

    /// A forum whose sample shows its default post order spelled out in `shown` clusters: topics
    /// in other orders are other pages (each its own cluster), and the default order
    /// (`sort=oldest_to_newest`) is the plain topic.
    fn forum(host: &str, shown: u64, default_is_another_page: bool) -> Vec<LabelledUrl> {
        let mut samples = Vec::new();
        let mut cluster = 0;
        let mut add = |url: String, cluster: u64| samples.push(LabelledUrl { url, cluster });
        let mut spelled = 0;
        for t in 0..80u64 {
            let topic = format!("http://{host}/topic/{}/title-{t}", 100 + t);
            cluster += 1;
            add(topic.clone(), cluster);
            if t % 2 == 0 {
                cluster += 1;
                add(format!("{topic}?sort=newest_to_oldest"), cluster);
            }
            if t % 3 == 0 {
                cluster += 1;
                add(format!("{topic}?sort=most_votes"), cluster);
            }
            // On topics the sample shows in no other order.
            if spelled < shown && t % 2 == 1 && t % 3 != 0 {
                spelled += 1;
                let same = if default_is_another_page {
                    cluster += 1;
                    cluster
                } else {
                    cluster
                };
                add(format!("{topic}?sort=oldest_to_newest"), same);
            }
        }
        samples
    }

    fn is_the_default_order(action: &SiteAction) -> bool {
        matches!(action, SiteAction::IgnoreParamValue { name, value, .. }
            if name == "sort" && value == "oldest_to_newest")
    }

    fn drops_the_default_order(outcome: &crate::learn::LearnOutcome) -> bool {
        outcome
            .rules
            .site_rules
            .iter()
            .any(|r| is_the_default_order(&r.action))
    }

    fn learned(hosts: &[(&str, Vec<LabelledUrl>)]) -> Vec<crate::learn::LearnOutcome> {
        let names: Vec<&str> = hosts.iter().map(|(h, _)| *h).collect();
        let config = crate::learn::LearnConfig::default();
        learn_beside_each_other(&names, config.min_support_clusters, |i, read| {
            let mut outcome =
                crate::learn::learn_host_with(hosts[i].0, &hosts[i].1, &config, Some(read))
                    .expect("learns");
            let findings = std::mem::take(&mut outcome.findings);
            (outcome, findings)
        })
    }

    #[test]
    fn a_spelling_each_forum_shows_once_is_learned_from_three_forums() {
        let alone = crate::learn::learn_host(
            "a.example",
            &forum("a.example", 1, false),
            &crate::learn::LearnConfig::default(),
        )
        .expect("learns");
        assert!(!drops_the_default_order(&alone), "one cluster is too thin");
        let three = [
            ("a.example", forum("a.example", 1, false)),
            ("b.example", forum("b.example", 1, false)),
            ("c.example", forum("c.example", 1, false)),
        ];
        for outcome in learned(&three) {
            assert!(
                drops_the_default_order(&outcome),
                "{:?}",
                outcome.rules.site_rules
            );
            // The rule says what the other two lent it; the rules the host showed on its own
            // say nothing was lent.
            for rule in &outcome.rules.site_rules {
                let expected = is_the_default_order(&rule.action).then_some(
                    crate::canon::rules::PooledSupport {
                        clusters: 2,
                        hosts: 2,
                    },
                );
                assert_eq!(rule.pooled, expected, "{rule:?}");
            }
        }
        // A fourth forum whose sample shows `oldest_to_newest` as another page refuses it to all.
        let mut four = three.to_vec();
        four.push(("d.example", forum("d.example", 4, true)));
        for outcome in learned(&four) {
            assert!(!drops_the_default_order(&outcome));
        }
    }

    #[test]
    fn the_store_stays_bounded_whatever_the_hosts_and_actions() {
        let shared = SharedEvidence::new();
        let sort = drop_value("sort", "oldest_to_newest");
        for h in 0..(MAX_HOSTS_PER_ACTION * 4) {
            shared.record(&format!("h{h}.example"), &[found(&sort, 1, false)]);
        }
        let pooled = shared.pooled("new.example", &sort).expect("pooled");
        assert_eq!(pooled.hosts as usize, MAX_HOSTS_PER_ACTION);
        for a in 0..(MAX_ACTIONS + 100) {
            shared.record(
                "many.example",
                &[found(&drop_value("p", &a.to_string()), 1, false)],
            );
        }
        assert_eq!(shared.len(), MAX_ACTIONS);
        // The stalest actions gave way, the newest are held.
        let newest = drop_value("p", &(MAX_ACTIONS + 99).to_string());
        assert!(shared.pooled("other.example", &newest).is_some());
        assert!(shared.pooled("other.example", &sort).is_none());
    }
}
