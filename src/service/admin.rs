//! The `Admin` gRPC service: operators' surface, on its own (loopback by default) listener.
//!
//! | call | role | what |
//! |---|---|---|
//! | `Relearn` | write | relearn one host or all; returns a job id; joins a running job |
//! | `GetRelearnJob` | read | a job's state and per-host outcome |
//! | `GetRules` | read | a host's live rule set, its versions, and its JSON |
//! | `ListHosts` | read | hosts with per-host counts, paged |
//! | `Explain` | read | static steps, matched rule and node, final form, seen or not |
//! | `GetStats` | read | totals since start |
//! | `RollbackRules` | write | put a previous rule set version of a host live again |
//! | `ListMirrors` | read | live mirror sets with evidence, pairs on probation, pins and forbids |
//! | `DecideMirror` | write | pin, forbid or clear an alias of a mirror set (persisted) |
//!
//! Every call is authenticated ([`super::auth`]), logged and counted (`undust_admin_calls_total`);
//! refusals are throttled per peer and logged at most ten times a minute
//! (`undust_admin_refusals_not_logged_total` counts the rest).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tonic::{Request, Response, Status};

use super::auth::{AuthThrottle, Role, Tokens};
use super::learning::Learning;
use super::rules_pb::site_rule_to_pb;
use super::state::Sidecar;
use crate::canon::seen::{key_of, Seen};
use crate::pb;
use crate::pb::admin_server::Admin as AdminRpc;
use crate::pb::{
    DecideMirrorRequest, ExplainRequest, ExplainResponse, ExplainStep, GetRelearnJobRequest,
    GetRulesRequest, GetRulesResponse, GetStatsRequest, GetStatsResponse, HostSummary,
    ListHostsRequest, ListHostsResponse, ListMirrorsRequest, ListMirrorsResponse, RelearnJob,
    RelearnRequest, RelearnResponse, RollbackRulesRequest, RollbackRulesResponse, RulesView,
};
use crate::store::Store;
use crate::telemetry;

/// Default and largest `ListHosts` page.
const DEFAULT_PAGE_SIZE: usize = 100;
const MAX_PAGE_SIZE: usize = 1_000;

/// The Admin service.
pub struct AdminService {
    sidecar: Arc<Sidecar>,
    learning: Arc<Learning>,
    /// The store, for the damage it reported at start.
    store: Arc<Store>,
    tokens: Tokens,
    /// Failed authentications per peer, and how often refusals are logged.
    throttle: AuthThrottle,
}

impl AdminService {
    pub fn new(
        sidecar: Arc<Sidecar>,
        learning: Arc<Learning>,
        store: Arc<Store>,
        tokens: Tokens,
    ) -> Self {
        AdminService {
            sidecar,
            learning,
            store,
            tokens,
            throttle: AuthThrottle::default(),
        }
    }

    /// Authenticates, runs and accounts for one call.
    async fn call<T, R, F>(
        &self,
        method: &'static str,
        role: Role,
        request: Request<T>,
        handler: impl FnOnce(T) -> F,
    ) -> Result<Response<R>, Status>
    where
        F: std::future::Future<Output = Result<R, Status>>,
    {
        let peer = request.remote_addr();
        let now = std::time::Instant::now();
        let peer_ip = peer.map(|addr| addr.ip());
        let refused = match self.throttle.check(peer_ip, now) {
            Err(wait) => Some((
                "throttled",
                Status::unauthenticated(format!(
                    "too many failed authentications from this address; retry in {} ms",
                    wait.as_millis().max(1)
                )),
            )),
            Ok(()) => match self.tokens.authorize(&request, role) {
                Ok(_) => None,
                Err(status) if status.code() == tonic::Code::PermissionDenied => {
                    Some(("denied", status))
                }
                Err(status) => {
                    self.throttle.failed(peer_ip, now);
                    Some(("unauthenticated", status))
                }
            },
        };
        if let Some((outcome, status)) = refused {
            metrics::counter!(telemetry::ADMIN_CALLS, "method" => method, "outcome" => outcome)
                .increment(1);
            match self.throttle.may_log(now) {
                Some(0) => tracing::warn!(method, ?peer, outcome, "admin call refused"),
                Some(suppressed) => tracing::warn!(
                    method,
                    ?peer,
                    outcome,
                    suppressed,
                    "admin call refused ({suppressed} refusals since the last line were not logged)"
                ),
                None => metrics::counter!(telemetry::ADMIN_REFUSALS_NOT_LOGGED).increment(1),
            }
            return Err(status);
        }
        let result = handler(request.into_inner()).await;
        let outcome = if result.is_ok() { "ok" } else { "error" };
        metrics::counter!(telemetry::ADMIN_CALLS, "method" => method, "outcome" => outcome)
            .increment(1);
        match &result {
            Ok(_) => tracing::info!(method, ?peer, "admin call"),
            Err(status) => {
                tracing::info!(method, ?peer, code = ?status.code(), message = status.message(), "admin call failed")
            }
        }
        result.map(Response::new)
    }

    fn explain(&self, request: ExplainRequest) -> Result<ExplainResponse, Status> {
        let sidecar = &self.sidecar;
        let explanation = match sidecar.canonicalizer.explain(&request.url) {
            Ok(explanation) => explanation,
            Err(reason) => {
                return Ok(ExplainResponse {
                    input: request.url,
                    invalid_reason: reason.to_string(),
                    ..ExplainResponse::default()
                })
            }
        };
        let seen = sidecar
            .seen
            .check(key_of(&explanation.canonical), false, None)
            == Seen::Duplicate;
        let host = explanation
            .rules
            .as_ref()
            .map(|rules| rules.host().to_owned())
            .unwrap_or_default();
        let site_rules = explanation
            .matched
            .iter()
            .flat_map(|m| &m.site_rules)
            .map(|(id, action)| {
                let learned = self.learning.live_site_rule(&host, id);
                match learned {
                    Some(rule) => pb::SiteRule {
                        action: action.clone(),
                        ..site_rule_to_pb(&rule)
                    },
                    None => pb::SiteRule {
                        id: id.clone(),
                        action: action.clone(),
                        ..Default::default()
                    },
                }
            })
            .collect();
        let rule = explanation
            .matched
            .as_ref()
            .and_then(|m| m.rule.as_ref())
            .map(|matched| {
                let learned = self.learning.live_rule(&host, matched.rule_index);
                pb::Rule {
                    id: matched.rule_id.clone(),
                    source_pattern: matched.source_pattern.clone(),
                    target_pattern: matched.target_pattern.clone(),
                    operations: matched.operations.clone(),
                    support: learned.as_ref().map_or(0, |rule| rule.support),
                    false_positive_rate: learned
                        .as_ref()
                        .map_or(0.0, |rule| rule.false_positive_rate),
                }
            });
        let mirror = match (&explanation.mirror_set, &explanation.mirror) {
            (Some(set_id), Some(folded)) => {
                url::Url::parse(&explanation.static_result).ok().map(|url| {
                    let table = sidecar.canonicalizer.mirrors();
                    super::learning::mirrors::mirror_fold(&table, set_id, &url, folded)
                })
            }
            _ => None,
        };
        Ok(ExplainResponse {
            input: request.url,
            mirror,
            static_result: explanation.static_result,
            static_steps: explanation
                .static_steps
                .into_iter()
                .map(|step| ExplainStep {
                    step: step.step.to_owned(),
                    result: step.result,
                })
                .collect(),
            rule,
            canonical: explanation.canonical,
            rules_version: explanation
                .rules
                .as_ref()
                .map_or(0, |rules| rules.version()),
            seen,
            site_rules,
            alias: explanation
                .matched
                .as_ref()
                .and_then(|m| m.alias.as_ref())
                .map(super::rules_pb::alias_to_pb),
            invalid_reason: String::new(),
        })
    }

    fn stats(&self) -> GetStatsResponse {
        let sidecar = &self.sidecar;
        let totals = &sidecar.totals;
        let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
        let damage = self.store.damage();
        GetStatsResponse {
            urls_canonicalized: load(&totals.urls_canonicalized),
            urls_changed_static: load(&totals.urls_changed_static),
            urls_changed_learned: load(&totals.urls_changed_learned),
            duplicates_suppressed: load(&totals.duplicates_suppressed),
            urls_invalid: load(&totals.urls_invalid),
            estimated_bytes_saved: load(&totals.estimated_bytes_saved),
            seen_set_entries: sidecar.seen.len(),
            seen_set_mode: sidecar.seen.mode_name().to_owned(),
            pages_observed: load(&totals.pages_observed),
            samples: self.learning.sample_count(),
            hosts: sidecar.hosts.len().max(self.learning.host_count()) as u64,
            hosts_with_rules: sidecar.canonicalizer.rules().len() as u64,
            relearn_runs: load(&totals.relearn_runs),
            relearn_failures: load(&totals.relearn_failures),
            uptime_seconds: sidecar.started.elapsed().as_secs(),
            store_damaged: damage.is_some(),
            store_moved_to: damage
                .map(|damage| damage.moved_to.display().to_string())
                .unwrap_or_default(),
            store_damaged_tables: damage
                .map(|damage| damage.tables.iter().map(|t| (*t).to_owned()).collect())
                .unwrap_or_default(),
            store_values_skipped: self.store.skipped(),
        }
    }

    fn list_hosts(&self, request: ListHostsRequest) -> Result<ListHostsResponse, Status> {
        let page_size = match request.page_size {
            0 => DEFAULT_PAGE_SIZE,
            n if n as usize > MAX_PAGE_SIZE => {
                return Err(Status::invalid_argument(format!(
                    "page_size {n} exceeds the limit of {MAX_PAGE_SIZE}"
                )))
            }
            n => n as usize,
        };
        // Hosts known from canonicalization or from ingest, sorted so pages are stable; the page
        // token is the last host of the previous page.
        let mut names: Vec<String> = self
            .sidecar
            .hosts
            .iter()
            .map(|entry| entry.key().clone())
            .collect();
        names.extend(self.learning.host_names());
        names.sort_unstable();
        names.dedup();
        let start = if request.page_token.is_empty() {
            0
        } else {
            names.partition_point(|name| name.as_str() <= request.page_token.as_str())
        };
        let page: Vec<&String> = names[start..].iter().take(page_size).collect();
        let next_page_token = if start + page.len() < names.len() {
            page.last().map(|name| (*name).clone()).unwrap_or_default()
        } else {
            String::new()
        };
        let hosts = page
            .into_iter()
            .map(|name| self.host_summary(name))
            .collect();
        Ok(ListHostsResponse {
            hosts,
            next_page_token,
        })
    }

    fn host_summary(&self, name: &str) -> HostSummary {
        let counters = self
            .sidecar
            .hosts
            .get(name)
            .map(|entry| Arc::clone(entry.value()));
        let rules = self.sidecar.canonicalizer.rules().get(name);
        let learned = self.learning.host_summary(name);
        let (mirror_set, mirror_canonical) =
            self.learning.mirror_set_of_host(name).unwrap_or_default();
        let load = |f: fn(&super::state::HostCounters) -> &std::sync::atomic::AtomicU64| {
            counters
                .as_deref()
                .map_or(0, |c| f(c).load(Ordering::Relaxed))
        };
        HostSummary {
            host: name.to_owned(),
            samples: learned.samples,
            clusters: learned.clusters,
            rules: rules.as_ref().map_or(0, |rules| rules.len() as u32),
            rules_version: rules.as_ref().map_or(0, |rules| rules.version()),
            urls_canonicalized: load(|c| &c.urls_canonicalized),
            duplicates_suppressed: load(|c| &c.duplicates_suppressed),
            avg_page_bytes: counters
                .as_deref()
                .and_then(|c| c.avg_page_bytes())
                .unwrap_or(0),
            last_learned_unix_ms: learned.last_learned_unix_ms,
            pages_observed: load(|c| &c.pages_observed),
            mirror_set,
            mirror_canonical,
        }
    }
}

#[tonic::async_trait]
impl AdminRpc for AdminService {
    async fn relearn(
        &self,
        request: Request<RelearnRequest>,
    ) -> Result<Response<RelearnResponse>, Status> {
        self.call("Relearn", Role::Write, request, |request| {
            self.learning.relearn(request)
        })
        .await
    }

    async fn get_relearn_job(
        &self,
        request: Request<GetRelearnJobRequest>,
    ) -> Result<Response<RelearnJob>, Status> {
        self.call("GetRelearnJob", Role::Read, request, |request| async move {
            self.learning
                .job(&request.job_id)
                .ok_or_else(|| Status::not_found(format!("no relearn job {:?}", request.job_id)))
        })
        .await
    }

    async fn get_rules(
        &self,
        request: Request<GetRulesRequest>,
    ) -> Result<Response<GetRulesResponse>, Status> {
        self.call("GetRules", Role::Read, request, |request| async move {
            let view = RulesView::try_from(request.view).map_err(|_| {
                Status::invalid_argument(format!("unknown rules view {}", request.view))
            })?;
            self.learning.get_rules(&request.host, view)
        })
        .await
    }

    async fn list_hosts(
        &self,
        request: Request<ListHostsRequest>,
    ) -> Result<Response<ListHostsResponse>, Status> {
        self.call("ListHosts", Role::Read, request, |request| async move {
            self.list_hosts(request)
        })
        .await
    }

    async fn explain(
        &self,
        request: Request<ExplainRequest>,
    ) -> Result<Response<ExplainResponse>, Status> {
        self.call("Explain", Role::Read, request, |request| async move {
            self.explain(request)
        })
        .await
    }

    async fn get_stats(
        &self,
        request: Request<GetStatsRequest>,
    ) -> Result<Response<GetStatsResponse>, Status> {
        self.call("GetStats", Role::Read, request, |_| async move {
            Ok(self.stats())
        })
        .await
    }

    async fn rollback_rules(
        &self,
        request: Request<RollbackRulesRequest>,
    ) -> Result<Response<RollbackRulesResponse>, Status> {
        self.call(
            "RollbackRules",
            Role::Write,
            request,
            |request| async move {
                self.learning
                    .rollback_rules(&request.host, request.to_version)
                    .await
            },
        )
        .await
    }

    async fn list_mirrors(
        &self,
        request: Request<ListMirrorsRequest>,
    ) -> Result<Response<ListMirrorsResponse>, Status> {
        self.call("ListMirrors", Role::Read, request, |_| async move {
            self.learning.list_mirrors()
        })
        .await
    }

    async fn decide_mirror(
        &self,
        request: Request<DecideMirrorRequest>,
    ) -> Result<Response<ListMirrorsResponse>, Status> {
        self.call("DecideMirror", Role::Write, request, |request| async move {
            self.learning.decide_mirror_anywhere(request).await
        })
        .await
    }
}
