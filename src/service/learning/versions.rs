//! Rule versions per host: the last [`KEPT_VERSIONS`] rule sets, which one is live, putting a new
//! one live (durably first), rollback, and the reads the admin API makes of them.

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

/// A host's rule versions, newest first, and which is live. Stored as JSON.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct RuleHistory {
    live: u64,
    versions: Vec<HostRuleSet>,
}

impl RuleHistory {
    fn live_set(&self) -> Option<&HostRuleSet> {
        self.versions.iter().find(|set| set.version == self.live)
    }

    /// Whether the host was ever given a rule set.
    pub(super) fn has_versions(&self) -> bool {
        !self.versions.is_empty()
    }

    fn newest_version(&self) -> u64 {
        self.versions
            .iter()
            .map(|set| set.version)
            .max()
            .unwrap_or(0)
    }
}

impl Learning {
    /// Restores every host's rule history and puts its live set live.
    pub(super) fn restore_rules(&self) -> Result<(), StoreError> {
        for (host, bytes) in self.store.load_rules()? {
            let history: RuleHistory = match serde_json::from_slice(&bytes) {
                Ok(history) => history,
                Err(err) => {
                    self.store.count_undecodable("rules", &host, &err);
                    continue;
                }
            };
            if let Some(set) = history.live_set() {
                match HostRules::compile(set) {
                    Ok(rules) => {
                        self.sidecar
                            .canonicalizer
                            .rules()
                            .swap(&host, Arc::new(rules));
                    }
                    Err(err) => self.store.count_undecodable("rules", &host, &err),
                }
            }
            let state = self.host_state(&host);
            let mut state = state.lock();
            state.last_learned_unix_ms = history.live_set().map_or(0, |set| set.learned_at_unix_ms);
            state.history = history;
        }
        Ok(())
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
        let mut history = state.history.clone();
        history.versions.insert(0, set.clone());
        history.live = set.version;
        history.versions.truncate(KEPT_VERSIONS);
        let bytes =
            serde_json::to_vec(&history).map_err(|err| RelearnError::Store(err.to_string()))?;
        self.store
            .put_rules(host, &bytes)
            .map_err(|err| RelearnError::Store(err.to_string()))?;
        self.sidecar
            .canonicalizer
            .rules()
            .swap(host, Arc::new(rules));
        state.history = history;
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
        state.history.live_set().and_then(read)
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
            let live = history.live_set()?.clone();
            let previous: Vec<u64> = history
                .versions
                .iter()
                .map(|set| set.version)
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
            response.rules_json = file_json(vec![live])?;
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
        let live = state.history.live;
        let set = rollback_target(&state.history, host, to_version)?;
        let target = set.version;
        let rules = HostRules::compile(&set)
            .map_err(|err| Status::internal(format!("version {target} does not compile: {err}")))?;
        let mut history = state.history.clone();
        history.live = target;
        let bytes =
            serde_json::to_vec(&history).map_err(|err| Status::internal(err.to_string()))?;
        self.store
            .put_rules(host, &bytes)
            .map_err(|err| Status::unavailable(format!("rollback not stored: {err}")))?;
        self.sidecar
            .canonicalizer
            .rules()
            .swap(host, Arc::new(rules));
        state.history = history;
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
        let state = state.lock();
        rollback_target(&state.history, host, to_version)
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
        let mut history = state.history.clone();
        history.live = set.version;
        history.versions.insert(0, set);
        history.versions.truncate(KEPT_VERSIONS);
        let bytes =
            serde_json::to_vec(&history).map_err(|err| RelearnError::Store(err.to_string()))?;
        self.store
            .put_rules(host, &bytes)
            .map_err(|err| RelearnError::Store(err.to_string()))?;
        self.sidecar
            .canonicalizer
            .rules()
            .swap(host, Arc::new(rules));
        state.last_learned_unix_ms = history.live_set().map_or(0, |set| set.learned_at_unix_ms);
        state.history = history;
        Ok(true)
    }
}

/// The version a rollback to `to_version` (0: the newest before the live one) puts live.
fn rollback_target(
    history: &RuleHistory,
    host: &str,
    to_version: u64,
) -> Result<HostRuleSet, Status> {
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
        .cloned()
        .ok_or_else(|| {
            let kept: Vec<u64> = history.versions.iter().map(|set| set.version).collect();
            Status::not_found(format!(
                "host {host:?} keeps versions {kept:?}, not {target}"
            ))
        })
}
