//! The fleet's mirror table: one versioned, fenced record of mirror sets shared by every sidecar.
//!
//! Mirror sets fold one host's URLs into another's canonical forms, and the seen-set is shared,
//! so every sidecar of a fleet must fold the same aliases to the same canonical site, or the
//! shared seen-set holds both forms and the frontier fetches duplicates across hosts. The
//! sidecar's whole mirror book (pair streaks, the operator's pins and forbids, the live sets) is
//! therefore published as one opaque body in the hash `undust:mirrors` (`version`, `token`,
//! `body`), changed only under the lease [`MIRRORS_LEASE`] (`undust:lease:@mirrors`, the same
//! expiring leases with fencing tokens as a host's learning, see [`super::lease`]):
//! [`PUBLISH_SCRIPT`] refuses, atomically, a body published under a token older than the stored
//! one or than the lease's current holder, so a paused or dead publisher cannot overwrite a newer
//! table. Every sidecar polls the version every `--fleet-rules-poll-ms` (one script call that
//! returns the body only when the version moved) and swaps the table in whole.
//!
//! `@` cannot start a host name, so the lease never collides with a host's learning lease.

use std::sync::Arc;

use redis::Value;

use super::lease::{lease_key, Lease};
use super::link::Link;
use super::{FleetError, KEY_PREFIX};
use crate::telemetry;

/// The lease "host" under which the fleet's mirror table is changed.
pub const MIRRORS_LEASE: &str = "@mirrors";

/// KEYS: mirrors hash, lease. ARGV: token, body, least version. Returns `{1, version}` or
/// `{0, newer token}`.
const PUBLISH_SCRIPT: &str = r"
local token = tonumber(ARGV[1])
local stored = tonumber(redis.call('HGET', KEYS[1], 'token') or '0')
if token < stored then return {0, stored} end
local holder = redis.call('GET', KEYS[2])
if holder then
  local held = tonumber(string.match(holder, '^(%d+):') or '0')
  if held ~= token then return {0, held} end
end
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0') + 1
local least = tonumber(ARGV[3])
if least > version then version = least end
redis.call('HSET', KEYS[1], 'version', version, 'token', ARGV[1], 'body', ARGV[2])
return {1, version}
";

/// KEYS: mirrors hash. ARGV: the version the caller has. Returns `{version}` when it did not
/// move past it, else `{version, body}`.
const NEWER_SCRIPT: &str = r"
local fields = redis.call('HMGET', KEYS[1], 'version', 'body')
local version = tonumber(fields[1] or '0')
if version <= tonumber(ARGV[1]) or not fields[2] then return {version} end
return {version, fields[2]}
";

fn mirrors_key() -> String {
    format!("{KEY_PREFIX}mirrors")
}

/// A published mirror table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedMirrors {
    pub version: u64,
    pub body: Vec<u8>,
}

/// What became of a publication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MirrorsOutcome {
    /// Stored as `version`; every sidecar picks it up at its next poll.
    Published { version: u64 },
    /// Refused: a lease with a newer token (`newer`) published or holds the table.
    Fenced { newer: u64 },
}

/// The fleet's mirror table, as one sidecar reads and writes it.
pub struct MirrorBoard {
    link: Arc<Link>,
    publish: redis::Script,
    newer: redis::Script,
}

impl MirrorBoard {
    pub fn new(link: Arc<Link>) -> MirrorBoard {
        MirrorBoard {
            link,
            publish: redis::Script::new(PUBLISH_SCRIPT),
            newer: redis::Script::new(NEWER_SCRIPT),
        }
    }

    /// Publishes `body` as the fleet's mirror table under `lease` (taken on [`MIRRORS_LEASE`]),
    /// as a version at least `least_version` (past every version the publisher has seen, even
    /// when Redis lost its table).
    pub async fn publish(
        &self,
        lease: &Lease,
        body: &[u8],
        least_version: u64,
    ) -> Result<MirrorsOutcome, FleetError> {
        let (key, lease_key, token) = (mirrors_key(), lease_key(&lease.host), lease.token);
        let answer: Vec<u64> = self
            .link
            .call(|mut connection| async move {
                self.publish
                    .key(key)
                    .key(lease_key)
                    .arg(token)
                    .arg(body)
                    .arg(least_version)
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        match answer.as_slice() {
            [1, version] => {
                metrics::counter!(telemetry::FLEET_MIRRORS_PUBLISHED, "outcome" => "published")
                    .increment(1);
                Ok(MirrorsOutcome::Published { version: *version })
            }
            [0, newer] => {
                metrics::counter!(telemetry::FLEET_MIRRORS_PUBLISHED, "outcome" => "fenced")
                    .increment(1);
                Ok(MirrorsOutcome::Fenced { newer: *newer })
            }
            other => Err(FleetError::Protocol(format!(
                "the mirror publish script answered {other:?}"
            ))),
        }
    }

    /// The published table when its version is past `version` (`None` when it is not, or when
    /// nothing was ever published).
    pub async fn newer_than(&self, version: u64) -> Result<Option<PublishedMirrors>, FleetError> {
        let key = mirrors_key();
        let answer: Vec<Value> = self
            .link
            .call(|mut connection| async move {
                self.newer
                    .key(key)
                    .arg(version)
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        match answer.as_slice() {
            [_] => Ok(None),
            [published, body] => Ok(Some(PublishedMirrors {
                version: super::rules::as_u64(published)?,
                body: super::rules::as_bytes(body)?,
            })),
            other => Err(FleetError::Protocol(format!(
                "the mirror poll script answered {other:?}"
            ))),
        }
    }
}
