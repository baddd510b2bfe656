//! Rule publication: versioned rule sets per host, shared by the fleet.
//!
//! A learner publishes a host's rule set (an opaque encoded body) under its lease's fencing token.
//! [`PUBLISH_SCRIPT`] checks, atomically, that no newer token has published for the host and that
//! the lease is not held by another token, then stores the body with the next version in
//! `undust:rules:<host>`, bumps the fleet's publication counter `undust:rules:epoch` and records
//! the host in `undust:rules:log` (a sorted set scored by epoch, one member per host: bounded by
//! the host count). Every sidecar polls with [`RuleBoard::changes_since`] every
//! `--fleet-rules-poll-ms`: one `EVALSHA` that returns nothing when the epoch did not move, and
//! otherwise the rule sets published since the last epoch it saw. A published set is therefore
//! served fleet-wide within one poll interval plus one round trip (500 ms + a few ms by default;
//! measured in BENCHMARKS.md).

use std::sync::Arc;
use std::time::Duration;

use redis::Value;
use tokio::sync::watch;

use super::lease::{lease_key, Lease};
use super::link::Link;
use super::{FleetError, KEY_PREFIX};
use crate::telemetry;

/// KEYS: rules hash, epoch counter, log, lease. ARGV: token, body, host, least version.
/// Returns `{1, version, epoch}` or `{0, newer token}` when fenced.
const PUBLISH_SCRIPT: &str = r"
local token = tonumber(ARGV[1])
local stored = tonumber(redis.call('HGET', KEYS[1], 'token') or '0')
if token < stored then return {0, stored} end
local holder = redis.call('GET', KEYS[4])
if holder then
  local held = tonumber(string.match(holder, '^(%d+):') or '0')
  if held ~= token then return {0, held} end
end
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0') + 1
local least = tonumber(ARGV[4])
if least > version then version = least end
redis.call('HSET', KEYS[1], 'version', version, 'token', ARGV[1], 'body', ARGV[2])
local epoch = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[3], epoch, ARGV[3])
return {1, version, epoch}
";

/// KEYS: epoch counter, log. ARGV: last epoch seen, rules key prefix. Returns `{epoch}` when
/// nothing changed, else `{epoch, host, version, token, body, ...}`.
const CHANGES_SCRIPT: &str = r"
local epoch = tonumber(redis.call('GET', KEYS[1]) or '0')
if epoch <= tonumber(ARGV[1]) then return {epoch} end
local out = {epoch}
for _, host in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf')) do
  local fields = redis.call('HMGET', ARGV[2] .. host, 'version', 'token', 'body')
  if fields[1] and fields[3] then
    out[#out + 1] = host
    out[#out + 1] = fields[1]
    out[#out + 1] = fields[2]
    out[#out + 1] = fields[3]
  end
end
return out
";

const EPOCH_KEY: &str = "undust:rules:epoch";
const LOG_KEY: &str = "undust:rules:log";

fn rules_prefix() -> String {
    format!("{KEY_PREFIX}rules:")
}

/// A rule set as published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedRules {
    pub host: String,
    pub version: u64,
    /// The fencing token it was published under.
    pub token: u64,
    pub body: Vec<u8>,
}

/// What became of a publication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublishOutcome {
    /// Stored as `version`; every sidecar picks it up at its next poll.
    Published { version: u64, epoch: u64 },
    /// Refused: a lease with a newer token (`newer`) published or holds the host.
    Fenced { newer: u64 },
}

/// The fleet's rule sets, as one sidecar sees them.
pub struct RuleBoard {
    link: Arc<Link>,
    publish: redis::Script,
    changes: redis::Script,
}

impl RuleBoard {
    pub fn new(link: Arc<Link>) -> RuleBoard {
        RuleBoard {
            link,
            publish: redis::Script::new(PUBLISH_SCRIPT),
            changes: redis::Script::new(CHANGES_SCRIPT),
        }
    }

    /// Publishes a host's rule set under `lease`, as a version at least `least_version`.
    pub async fn publish(
        &self,
        lease: &Lease,
        body: &[u8],
        least_version: u64,
    ) -> Result<PublishOutcome, FleetError> {
        let rules_key = format!("{}{}", rules_prefix(), lease.host);
        let lease_key = lease_key(&lease.host);
        let (token, host) = (lease.token, lease.host.clone());
        let answer: Vec<u64> = self
            .link
            .call(|mut connection| async move {
                self.publish
                    .key(rules_key)
                    .key(EPOCH_KEY)
                    .key(LOG_KEY)
                    .key(lease_key)
                    .arg(token)
                    .arg(body)
                    .arg(host)
                    .arg(least_version)
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        match answer.as_slice() {
            [1, version, epoch] => {
                metrics::counter!(telemetry::FLEET_RULES_PUBLISHED, "outcome" => "published")
                    .increment(1);
                Ok(PublishOutcome::Published {
                    version: *version,
                    epoch: *epoch,
                })
            }
            [0, newer] => {
                metrics::counter!(telemetry::FLEET_RULES_PUBLISHED, "outcome" => "fenced")
                    .increment(1);
                Ok(PublishOutcome::Fenced { newer: *newer })
            }
            other => Err(FleetError::Protocol(format!(
                "the publish script answered {other:?}"
            ))),
        }
    }

    /// The rule sets published after `epoch`, and the epoch they bring the caller to.
    pub async fn changes_since(
        &self,
        epoch: u64,
    ) -> Result<(u64, Vec<PublishedRules>), FleetError> {
        let prefix = rules_prefix();
        let answer: Vec<Value> = self
            .link
            .call(|mut connection| async move {
                self.changes
                    .key(EPOCH_KEY)
                    .key(LOG_KEY)
                    .arg(epoch)
                    .arg(prefix)
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        let mut fields = answer.into_iter();
        let latest = match fields.next() {
            Some(value) => as_u64(&value)?,
            None => {
                return Err(FleetError::Protocol(
                    "the changes script answered nothing".into(),
                ))
            }
        };
        let mut published = Vec::new();
        let rest: Vec<Value> = fields.collect();
        for entry in rest.chunks(4) {
            let [host, version, token, body] = entry else {
                return Err(FleetError::Protocol("a truncated rule set entry".into()));
            };
            published.push(PublishedRules {
                host: String::from_utf8_lossy(&as_bytes(host)?).into_owned(),
                version: as_u64(version)?,
                token: as_u64(token)?,
                body: as_bytes(body)?,
            });
        }
        Ok((latest, published))
    }
}

impl RuleBoard {
    /// Polls for published rule sets every `poll` until `stop` turns true, handing each to
    /// `apply` (which puts it live). A poll that fails (Redis unreachable) is retried at the next
    /// tick from the same epoch, so nothing published meanwhile is missed.
    pub async fn follow(
        &self,
        poll: Duration,
        mut stop: watch::Receiver<bool>,
        apply: impl Fn(PublishedRules),
    ) {
        let mut epoch = 0u64;
        let mut ticker = tokio::time::interval(poll);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticker.tick() => {}
                _ = stop.wait_for(|stop| *stop) => return,
            }
            if !self.link.is_connected() {
                continue;
            }
            match self.changes_since(epoch).await {
                Ok((latest, published)) => {
                    for rules in published {
                        metrics::counter!(telemetry::FLEET_RULES_RECEIVED).increment(1);
                        apply(rules);
                    }
                    epoch = latest;
                }
                Err(err) => tracing::debug!(%err, "polling the fleet's rule sets failed"),
            }
        }
    }
}

pub(super) fn as_bytes(value: &Value) -> Result<Vec<u8>, FleetError> {
    match value {
        Value::BulkString(bytes) => Ok(bytes.clone()),
        Value::SimpleString(text) => Ok(text.as_bytes().to_vec()),
        other => Err(FleetError::Protocol(format!(
            "expected a string, got {other:?}"
        ))),
    }
}

pub(super) fn as_u64(value: &Value) -> Result<u64, FleetError> {
    match value {
        Value::Int(number) => u64::try_from(*number)
            .map_err(|_| FleetError::Protocol(format!("negative number {number}"))),
        other => String::from_utf8_lossy(&as_bytes(other)?)
            .parse()
            .map_err(|_| FleetError::Protocol(format!("expected a number, got {other:?}"))),
    }
}
