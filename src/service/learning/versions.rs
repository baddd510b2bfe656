//! Rule versions per host: the last [`KEPT_VERSIONS`] rule sets, which one is live, putting a new
//! one live (durably first), rollback, and the reads the admin API makes of them.
//!
//! Memory holds a host's live set and the numbers of its kept versions; the sets of the other
//! versions live in the store only, read back when a rollback asks for one. A host's rule set can
//! be megabytes (an alias table), and a sidecar may keep rules for a million hosts: a rollback is
//! rare, and one store read then is cheap beside holding every host's old versions for it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tonic::Status;

use super::Learning;
use crate::canon::engine::HostRules;
use crate::canon::rules::{HostRuleSet, Rule, RuleFile, SiteRule};
use crate::pb::{GetRulesResponse, RollbackRulesResponse, RulesView};
use crate::pipeline::RelearnError;
use crate::store::{unix_ms, StoreError};

/// Rule set versions kept per host for rollback (the live one included).
pub const KEPT_VERSIONS: usize = 5;

/// What memory holds of a host's rule versions: the live set, and the versions the store keeps.
#[derive(Debug, Default)]
pub(super) struct RuleHistory {
    live: Option<Arc<HostRuleSet>>,
    /// Version numbers kept, newest first (the live one included).
    kept: Vec<u64>,
}

impl RuleHistory {
    fn live_set(&self) -> Option<&Arc<HostRuleSet>> {
        self.live.as_ref()
    }

    /// Whether the host was ever given a rule set.
    pub(super) fn has_versions(&self) -> bool {
        !self.kept.is_empty()
    }

    fn newest_version(&self) -> u64 {
        self.kept.iter().copied().max().unwrap_or(0)
    }
}

/// A host's rule versions as the store keeps them (JSON): the live version and the kept sets,
/// newest first.
#[derive(Debug, Default, Serialize, Deserialize)]
struct StoredHistory {
    live: u64,
    versions: Vec<HostRuleSet>,
}

impl StoredHistory {
    /// Puts `set` live as the newest version, forgetting versions beyond [`KEPT_VERSIONS`].
    fn push_live(&mut self, set: HostRuleSet) {
        self.live = set.version;
        self.versions.insert(0, set);
        self.versions.truncate(KEPT_VERSIONS);
    }

    /// What memory keeps of it.
    fn into_memory(self) -> RuleHistory {
        let kept = self.versions.iter().map(|set| set.version).collect();
        let live = self
            .versions
            .into_iter()
            .find(|set| set.version == self.live)
            .map(Arc::new);
        RuleHistory { live, kept }
    }
}

impl Learning {
    /// Restores every host's rule history and puts its live set live.
    pub(super) fn restore_rules(&self) -> Result<(), StoreError> {
        self.store.load_rules(|host, bytes| {
            let stored: StoredHistory = match serde_json::from_slice(bytes) {
                Ok(stored) => stored,
                Err(err) => {
                    self.store.count_undecodable("rules", &host, &err);
                    return;
                }
            };
            let history = stored.into_memory();
            if let Some(set) = history.live_set() {
                match HostRules::compile(set) {
                    Ok(rules) => {
                        self.sidecar
                            .canonicalizer
                            .rules()
                            .swap(host, Arc::new(rules));
                    }
                    Err(err) => self.store.count_undecodable("rules", &host, &err),
                }
            }
            let state = self.host_state(host);
            let mut state = state.lock();
            state.last_learned_unix_ms = history.live_set().map_or(0, |set| set.learned_at_unix_ms);
            state.history = history;
        })?;
        Ok(())
    }

    /// A host's stored rule versions (none when it has none, or when its row does not decode: a
    /// new version then starts the history again, as a restart would).
    fn stored_history(&self, host: &str) -> Result<StoredHistory, StoreError> {
        let Some(bytes) = self.store.host_rules(host)? else {
            return Ok(StoredHistory::default());
        };
        Ok(serde_json::from_slice(&bytes).unwrap_or_else(|err| {
            self.store.count_undecodable("rules", &host, &err);
            StoredHistory::default()
        }))
    }

    /// Durably replaces a host's stored rule versions.
    fn store_history(&self, host: &str, stored: &StoredHistory) -> Result<(), StoreError> {
        let bytes =
            serde_json::to_vec(stored).map_err(|err| StoreError::Encode(err.to_string()))?;
        self.store.put_rules(host, &bytes)
    }

    /// Stamps a checked rule set with the next version, stores the history, then swaps the set
    /// live; the version on success.
    pub(super) fn put_live(
        &self,
        host: &str,
        set: &mut HostRuleSet,
        compiled: HostRules,
    ) -> Result<u64, RelearnError> {
        let state = self.host_state(host);
        let mut state = state.lock();
        set.version = state.history.newest_version() + 1;
        set.learned_at_unix_ms = unix_ms();
        set.host = host.to_owned();
        // The stamp changes the version the engine reports; the rules are those checked.
        let rules = HostRules::compile(set).unwrap_or(compiled);
        let store_error = |err: StoreError| RelearnError::Store(err.to_string());
        let mut stored = self.stored_history(host).map_err(store_error)?;
        stored.push_live(set.clone());
        self.store_history(host, &stored).map_err(store_error)?;
        self.sidecar
            .canonicalizer
            .rules()
            .swap(host, Arc::new(rules));
        state.history = stored.into_memory();
        Ok(set.version)
    }

    /// Reads a host's live rule set.
    fn with_live_set<T>(
        &self,
        host: &str,
        read: impl FnOnce(&HostRuleSet) -> Option<T>,
    ) -> Option<T> {
        let state = self
            .hosts
            .get(host)
            .map(|entry| Arc::clone(entry.value()))?;
        let state = state.lock();
        state.history.live_set().and_then(|set| read(set))
    }

    /// A rule of a host's live rule set, by index (for Explain's support and false-positive rate).
    pub fn live_rule(&self, host: &str, index: usize) -> Option<Rule> {
        self.with_live_set(host, |set| set.rules.get(index).cloned())
    }

    /// A site rule of a host's live rule set, by id (for Explain's support and false-positive
    /// rate).
    pub fn live_site_rule(&self, host: &str, id: &str) -> Option<SiteRule> {
        self.with_live_set(host, |set| {
            set.site_rules.iter().find(|r| r.id == id).cloned()
        })
    }

    /// The GetRules call: the forms of the live rule set `view` asks for. The rule file is
    /// serialized only when asked, and outside the host's lock: a table of 20,000 aliases is
    /// megabytes of JSON, and relearning and Explain wait on that lock.
    pub fn get_rules(&self, host: &str, view: RulesView) -> Result<GetRulesResponse, Status> {
        let structured = view != RulesView::RuleFile;
        let file = view != RulesView::Structured;
        // The rule file carries the live mirror sets with a site on the host too.
        let mirrors = self.mirror_sets_of_host(host);
        let file_json = |sets: Vec<HostRuleSet>| {
            serde_json::to_string_pretty(&RuleFile::new(sets).with_mirrors(mirrors.clone()))
                .map_err(|err| Status::internal(err.to_string()))
        };
        let state = self.hosts.get(host).map(|entry| Arc::clone(entry.value()));
        let live = state.and_then(|state| {
            let state = state.lock();
            let history = &state.history;
            let live = Arc::clone(history.live_set()?);
            let previous: Vec<u64> = history
                .kept
                .iter()
                .copied()
                .filter(|version| *version != live.version)
                .collect();
            Some((live, previous))
        });
        let Some((live, previous_versions)) = live else {
            return Ok(GetRulesResponse {
                host: host.to_owned(),
                rules_json: if file && !mirrors.is_empty() {
                    file_json(Vec::new())?
                } else {
                    String::new()
                },
                ..GetRulesResponse::default()
            });
        };
        let mut response = GetRulesResponse {
            host: host.to_owned(),
            version: live.version,
            learned_at_unix_ms: live.learned_at_unix_ms,
            previous_versions,
            ..GetRulesResponse::default()
        };
        if structured {
            response.site_rules = live
                .site_rules
                .iter()
                .map(crate::service::rules_pb::site_rule_to_pb)
                .collect();
            response.rules = live
                .rules
                .iter()
                .map(crate::service::rules_pb::rule_to_pb)
                .collect();
            response.aliases = live
                .aliases
                .iter()
                .map(crate::service::rules_pb::alias_to_pb)
                .collect();
        }
        if file {
            response.rules_json = file_json(vec![HostRuleSet::clone(&live)])?;
        }
        Ok(response)
    }

    /// The RollbackRules call.
    pub fn rollback(&self, host: &str, to_version: u64) -> Result<RollbackRulesResponse, Status> {
        let Some(state) = self.hosts.get(host).map(|entry| Arc::clone(entry.value())) else {
            return Err(Status::not_found(format!(
                "host {host:?} has no rule versions"
            )));
        };
        let mut state = state.lock();
        let mut stored = self.stored_history(host).map_err(unavailable)?;
        let live = stored.live;
        let set = rollback_target(&stored, host, to_version)?;
        let target = set.version;
        let rules = HostRules::compile(set)
            .map_err(|err| Status::internal(format!("version {target} does not compile: {err}")))?;
        stored.live = target;
        self.store_history(host, &stored)
            .map_err(|err| Status::unavailable(format!("rollback not stored: {err}")))?;
        self.sidecar
            .canonicalizer
            .rules()
            .swap(host, Arc::new(rules));
        state.history = stored.into_memory();
        // The gauges lock every host's state, this one included.
        drop(state);
        tracing::info!(host, from = live, to = target, "rules rolled back");
        self.publish_gauges();
        Ok(RollbackRulesResponse {
            host: host.to_owned(),
            version: target,
        })
    }

    /// The rule set a rollback of `host` to `to_version` (0: the version before the live one)
    /// puts live.
    pub(super) fn rollback_set(&self, host: &str, to_version: u64) -> Result<HostRuleSet, Status> {
        let Some(state) = self.hosts.get(host).map(|entry| Arc::clone(entry.value())) else {
            return Err(Status::not_found(format!(
                "host {host:?} has no rule versions"
            )));
        };
        let _state = state.lock();
        let stored = self.stored_history(host).map_err(unavailable)?;
        rollback_target(&stored, host, to_version).cloned()
    }

    /// The newest rule version a host has here (0: none).
    pub(super) fn newest_version(&self, host: &str) -> u64 {
        self.hosts
            .get(host)
            .map_or(0, |entry| entry.value().lock().history.newest_version())
    }

    /// Puts a rule set of a version newer than every version the host has here live: stored with
    /// the history first, then swapped live (the path of every rule set a fleet publishes, on the
    /// sidecar that learned it and on every other). `false` when the host already has this version
    /// or a newer one, so a set is put live once however often it arrives.
    pub(super) fn adopt(&self, host: &str, set: HostRuleSet) -> Result<bool, RelearnError> {
        let rules = HostRules::compile(&set)
            .map_err(|err| RelearnError::DoesNotCompile(err.to_string()))?;
        let state = self.host_state(host);
        let mut state = state.lock();
        if set.version <= state.history.newest_version() {
            return Ok(false);
        }
        let store_error = |err: StoreError| RelearnError::Store(err.to_string());
        let mut stored = self.stored_history(host).map_err(store_error)?;
        stored.push_live(set);
        self.store_history(host, &stored).map_err(store_error)?;
        self.sidecar
            .canonicalizer
            .rules()
            .swap(host, Arc::new(rules));
        let history = stored.into_memory();
        state.last_learned_unix_ms = history.live_set().map_or(0, |set| set.learned_at_unix_ms);
        state.history = history;
        Ok(true)
    }
}

/// A stored history the sidecar could not read, as a gRPC status.
fn unavailable(err: StoreError) -> Status {
    Status::unavailable(format!("rule versions could not be read: {err}"))
}

/// The set a rollback to `to_version` (0: the newest before the live one) puts live.
fn rollback_target<'a>(
    history: &'a StoredHistory,
    host: &str,
    to_version: u64,
) -> Result<&'a HostRuleSet, Status> {
    let live = history.live;
    let target = if to_version == 0 {
        history
            .versions
            .iter()
            .map(|set| set.version)
            .filter(|version| *version < live)
            .max()
            .ok_or_else(|| {
                Status::failed_precondition(format!("host {host:?} has no version before {live}"))
            })?
    } else {
        to_version
    };
    history
        .versions
        .iter()
        .find(|set| set.version == target)
        .ok_or_else(|| {
            let kept: Vec<u64> = history.versions.iter().map(|set| set.version).collect();
            Status::not_found(format!(
                "host {host:?} keeps versions {kept:?}, not {target}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Knobs;
    use crate::service::learning::learning_for_tests;

    const HOST: &str = "shop.example";

    fn learning_on(dir: &std::path::Path) -> Arc<Learning> {
        learning_for_tests(Knobs {
            data_dir: Some(dir.to_owned()),
            ..Knobs::default()
        })
    }

    /// A rule set that drops query parameter `p{n}`: each version rewrites URLs its own way.
    fn set_dropping(n: u64) -> HostRuleSet {
        serde_json::from_value(serde_json::json!({
            "host": HOST,
            "version": 0,
            "learned_at_unix_ms": 0,
            "site_rules": [{
                "id": format!("{HOST}#s{n}"),
                "op": "ignore_param",
                "name": format!("p{n}"),
                "support": 3,
                "support_clusters": 3,
                "false_positive_rate": 0.0,
            }],
            "rules": [],
        }))
        .expect("rule set")
    }

    fn put(learning: &Learning, n: u64) -> u64 {
        let mut set = set_dropping(n);
        let compiled = HostRules::compile(&set).expect("compiles");
        learning
            .put_live(HOST, &mut set, compiled)
            .expect("put live")
    }

    /// The version of the rules the engine applies to the host, and which parameter they drop.
    fn applied(learning: &Learning) -> (u64, String) {
        let rules = learning
            .sidecar
            .canonicalizer
            .rules()
            .get(HOST)
            .expect("rules live");
        let url = url::Url::parse("http://shop.example/item?p1=a&p2=b&p3=c&p4=d&p5=e&p6=f&p7=g")
            .expect("url");
        let rewritten = rules.apply(&url).map(|r| r.canonical).unwrap_or_default();
        (rules.version(), rewritten)
    }

    #[test]
    fn memory_holds_the_live_set_and_a_rollback_reads_older_ones_from_the_store() {
        let dir = tempfile::tempdir().expect("tempdir");
        let learning = learning_on(dir.path());
        for n in 1..=7 {
            assert_eq!(put(&learning, n), n);
        }
        let (version, url) = applied(&learning);
        assert_eq!(version, 7);
        assert!(!url.contains("p7=") && url.contains("p6="), "{url}");
        {
            let state = learning.host_state(HOST);
            let state = state.lock();
            assert_eq!(state.history.kept, vec![7, 6, 5, 4, 3]);
            assert_eq!(state.history.live_set().map(|set| set.version), Some(7));
        }

        // Version 5's set is read back from the store, put live, and is what the engine applies.
        assert_eq!(learning.rollback(HOST, 5).expect("rollback").version, 5);
        let (version, url) = applied(&learning);
        assert_eq!(version, 5);
        assert!(!url.contains("p5=") && url.contains("p7="), "{url}");
        let rules = learning
            .get_rules(HOST, RulesView::Structured)
            .expect("rules");
        assert_eq!(rules.version, 5);
        assert_eq!(rules.previous_versions, vec![7, 6, 4, 3]);
        assert_eq!(rules.site_rules[0].id, format!("{HOST}#s5"));
        let gone = learning
            .rollback(HOST, 2)
            .expect_err("version 2 is no longer kept");
        assert_eq!(gone.code(), tonic::Code::NotFound);
        assert!(
            gone.message().contains("[7, 6, 5, 4, 3]"),
            "{}",
            gone.message()
        );

        // After a restart: version 5 live, the rest still in the store, the next version is 8.
        drop(learning);
        let learning = learning_on(dir.path());
        assert_eq!(applied(&learning).0, 5);
        assert_eq!(learning.rollback(HOST, 0).expect("rollback").version, 4);
        let (_, url) = applied(&learning);
        assert!(!url.contains("p4=") && url.contains("p5="), "{url}");
        assert_eq!(put(&learning, 8), 8);
        let state = learning.host_state(HOST);
        assert_eq!(state.lock().history.kept, vec![8, 7, 6, 5, 4]);
    }
}
