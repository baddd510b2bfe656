//! Learning leases: one sidecar learns a host at a time, and a paused or dead learner is fenced.
//!
//! A lease is the Redis key `undust:lease:<host>`, set only when absent, with an expiry
//! (`--fleet-lease-secs`); its value is `<token>:<node>`, where the token comes from one fleet-wide
//! `INCR` counter, so a later lease always carries a larger token. The learner renews the lease
//! while it works and deletes it when done (both only if it still holds it). A learner killed with
//! -9 simply stops renewing: the key expires and another sidecar may learn the host. A learner
//! paused past its expiry still holds an old token, and publishing a rule set checks the token
//! atomically ([`super::rules`]), so it cannot overwrite the newer learner's rules.

use std::sync::Arc;
use std::time::Duration;

use super::link::Link;
use super::{FleetError, KEY_PREFIX};
use crate::telemetry;

/// Takes the lease if nobody holds it. KEYS: lease, fence counter. ARGV: node, expiry in ms.
/// Returns the new token, or 0 when the lease is held.
const ACQUIRE_SCRIPT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token .. ':' .. ARGV[1], 'PX', ARGV[2])
return token
";

/// Extends the lease if still held with this value. KEYS: lease. ARGV: value, expiry in ms.
const RENEW_SCRIPT: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
";

/// Deletes the lease if still held with this value. KEYS: lease. ARGV: value.
const RELEASE_SCRIPT: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

/// A held lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub host: String,
    /// The fencing token: larger than every earlier lease's of the fleet.
    pub token: u64,
    value: String,
}

/// The key of a host's lease.
pub fn lease_key(host: &str) -> String {
    format!("{KEY_PREFIX}lease:{host}")
}

/// The fleet-wide fencing token counter.
pub const FENCE_KEY: &str = "undust:fence";

/// Leases of one sidecar.
pub struct Leases {
    link: Arc<Link>,
    ttl: Duration,
    /// Names this sidecar in lease values (for operators reading Redis).
    node: String,
    acquire: redis::Script,
    renew: redis::Script,
    release: redis::Script,
}

impl Leases {
    pub fn new(link: Arc<Link>, ttl: Duration) -> Leases {
        Leases {
            link,
            ttl,
            node: format!("{}-{:016x}", std::process::id(), rand::random::<u64>()),
            acquire: redis::Script::new(ACQUIRE_SCRIPT),
            renew: redis::Script::new(RENEW_SCRIPT),
            release: redis::Script::new(RELEASE_SCRIPT),
        }
    }

    /// How long a lease lasts without renewal.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// Takes the host's lease; `None` when another sidecar holds it.
    pub async fn acquire(&self, host: &str) -> Result<Option<Lease>, FleetError> {
        let key = lease_key(host);
        let (node, ttl) = (self.node.clone(), self.ttl_ms());
        let token: u64 = self
            .link
            .call(|mut connection| async move {
                self.acquire
                    .key(key)
                    .key(FENCE_KEY)
                    .arg(node)
                    .arg(ttl)
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        if token == 0 {
            metrics::counter!(telemetry::FLEET_LEASES, "outcome" => "held_elsewhere").increment(1);
            return Ok(None);
        }
        metrics::counter!(telemetry::FLEET_LEASES, "outcome" => "acquired").increment(1);
        Ok(Some(Lease {
            host: host.to_owned(),
            token,
            value: format!("{token}:{}", self.node),
        }))
    }

    /// Extends a lease; `false` when it was lost (expired, maybe taken by another sidecar).
    pub async fn renew(&self, lease: &Lease) -> Result<bool, FleetError> {
        let (key, value, ttl) = (lease_key(&lease.host), lease.value.clone(), self.ttl_ms());
        let renewed: u64 = self
            .link
            .call(|mut connection| async move {
                self.renew
                    .key(key)
                    .arg(value)
                    .arg(ttl)
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        Ok(renewed == 1)
    }

    /// Gives a lease up so another sidecar need not wait for its expiry.
    pub async fn release(&self, lease: &Lease) -> Result<(), FleetError> {
        let (key, value) = (lease_key(&lease.host), lease.value.clone());
        let _: u64 = self
            .link
            .call(|mut connection| async move {
                self.release
                    .key(key)
                    .arg(value)
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        Ok(())
    }
}
