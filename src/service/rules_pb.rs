//! Learned rules as protobuf messages (admin `GetRules` and `Explain`).

use crate::canon::rules::{Alias, Rule, SiteRule};
use crate::pb;

/// One rule as the admin API shows it; operations are their human-readable form.
pub fn rule_to_pb(rule: &Rule) -> pb::Rule {
    pb::Rule {
        id: rule.id.clone(),
        source_pattern: rule.source_pattern.clone(),
        target_pattern: rule.target_pattern.clone(),
        operations: rule.operations.iter().map(ToString::to_string).collect(),
        support: rule.support,
        false_positive_rate: rule.false_positive_rate,
    }
}

/// One site rule as the admin API shows it.
pub fn site_rule_to_pb(rule: &SiteRule) -> pb::SiteRule {
    pb::SiteRule {
        id: rule.id.clone(),
        action: rule.action.to_string(),
        support: rule.support,
        false_positive_rate: rule.false_positive_rate,
        support_clusters: rule.support_clusters,
        pooled_clusters: rule.pooled.map_or(0, |p| p.clusters),
        pooled_hosts: rule.pooled.map_or(0, |p| p.hosts),
    }
}

/// One declared alias as the admin API shows it.
pub fn alias_to_pb(alias: &Alias) -> pb::DeclaredAlias {
    pb::DeclaredAlias {
        from: alias.from.clone(),
        to: alias.to.clone(),
    }
}
