//! Shared host summaries: every sidecar's mirror summaries, readable by whichever sidecar runs the
//! fleet's detection pass, so a mirror pair whose two hosts landed on different sidecars is found.
//!
//! A sidecar summarizes only the hosts it samples ([`crate::service::mirrors`]); a frontier that
//! shards hosts across sidecars by host hash puts most mirror pairs on two sidecars. After a
//! relearn recomputes a host's content marks, the sidecar's next detection pass (on any sidecar
//! one runs at the end of a relearn and every `--relearn-interval-secs`) first writes the host's
//! origins here, each in two forms (postcard, opaque to this module):
//!
//! - its signature ([`crate::mirrors::OriginSignature`], a few hundred bytes), which every pass
//!   reads whole to propose candidate pairs;
//! - its full summary ([`crate::mirrors::HostSummary`], bounded by the summaries' own
//!   [`crate::mirrors::SummaryLimits`]), which a pass reads only for the origins of the pairs it
//!   proposed.
//!
//! # Keys, bounds and ageing
//!
//! - `undust:ms:sig`: a hash, field = origin (`scheme://host[:port]`), value = its signature.
//! - `undust:ms:full`: a hash, field = origin, value = its full summary.
//! - `undust:ms:age`: a sorted set of origins scored by when (milliseconds since the epoch, the
//!   writer's clock) a sidecar last shared or still held them.
//!
//! One atomic script ([`SHARE_SCRIPT`]) writes both forms, refreshes the age of the origins the
//! sidecar still holds (whose marks did not change), and evicts: origins not refreshed within the
//! age bound (a host that left every sidecar's sample is refreshed by none), then, past the origin
//! bound, the least recently refreshed. The bound on origins is [`ORIGINS_PER_SAMPLED_HOST`]
//! times `--sample-max-hosts`, as the shared evidence's bound on hosts is `--sample-max-hosts`.
//!
//! # Cost
//!
//! Per origin in Redis: its signature (≤ ~350 bytes with the default sketch of 16 + 16 hashes)
//! plus its full summary (a sampled host of a few hundred pages and a few thousand paths: tens of
//! kilobytes; at most what [`crate::mirrors::SummaryLimits`] allows). Round trips per pass: one
//! share call per [`SHARE_CHUNK_BYTES`] of changed summaries, one `HSCAN` per
//! [`SCAN_COUNT`] signatures (100 at 50,000 origins), one `HMGET` per [`FETCH_CHUNK`] proposed
//! origins.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::Value;

use super::link::Link;
use super::FleetError;

/// Origins the fleet keeps summaries of, per host `--sample-max-hosts` allows: a host is usually
/// served over `http://` and `https://`, two origins.
pub const ORIGINS_PER_SAMPLED_HOST: usize = 2;

/// Most bytes of summaries sent in one script call (at least one summary is).
pub const SHARE_CHUNK_BYTES: usize = 256 << 10;

/// Signatures asked per `HSCAN` (a hint to Redis, which may answer a few more).
pub const SCAN_COUNT: usize = 500;

/// Full summaries asked per `HMGET`.
pub const FETCH_CHUNK: usize = 32;

/// Most stale origins one script call evicts (the rest go with the next call), so no call takes
/// long enough to hold up the seen-set's calls on the same connection.
const MAX_STALE_PER_CALL: usize = 1_000;

/// KEYS: signatures hash, summaries hash, age index. ARGV: max origins, now (ms), oldest kept
/// (ms), most stale evicted, number of shared origins `n`, then `n` triples `origin, signature,
/// summary`, then origins held still (only refreshed). Returns `{evicted, {missing...}}`: how many
/// origins were evicted, and the held origins Redis has no summary of (it restarted empty, was
/// flushed, or failed over to a replica that lost them), which the caller must share again.
const SHARE_SCRIPT: &str = r"
local max_origins = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local oldest = tonumber(ARGV[3])
local max_stale = tonumber(ARGV[4])
local shares = tonumber(ARGV[5])
local last = 5 + 3 * shares
for i = 6, last, 3 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
  redis.call('ZADD', KEYS[3], now, ARGV[i])
end
local missing = {}
for i = last + 1, #ARGV do
  if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then
    redis.call('ZADD', KEYS[3], now, ARGV[i])
  else
    missing[#missing + 1] = ARGV[i]
  end
end
local evicted = 0
local stale = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. oldest, 'LIMIT', 0, max_stale)
for j = 1, #stale do
  redis.call('ZREM', KEYS[3], stale[j])
  redis.call('HDEL', KEYS[1], stale[j])
  redis.call('HDEL', KEYS[2], stale[j])
  evicted = evicted + 1
end
local over = redis.call('ZCARD', KEYS[3]) - max_origins
if over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[3], over)
  for j = 1, #gone, 2 do
    redis.call('HDEL', KEYS[1], gone[j])
    redis.call('HDEL', KEYS[2], gone[j])
    evicted = evicted + 1
  end
end
return {evicted, missing}
";

// Under [`super::KEY_PREFIX`], as every key of the fleet.
const SIGNATURES_KEY: &str = "undust:ms:sig";
const SUMMARIES_KEY: &str = "undust:ms:full";
const AGE_KEY: &str = "undust:ms:age";

/// One origin's summary on its way to Redis.
#[derive(Debug, Clone)]
pub struct SharedOrigin {
    pub origin: String,
    pub signature: Vec<u8>,
    pub summary: Vec<u8>,
}

/// What a [`SharedSummaries::share`] did besides writing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Shared {
    /// Origins evicted (aged out or past the bound).
    pub evicted: u64,
    /// Origins passed as held whose summaries Redis no longer has: to be shared again whole.
    pub missing: Vec<String>,
}

/// The fleet's host summaries, as one sidecar writes and reads them.
pub struct SharedSummaries {
    link: Arc<Link>,
    max_origins: usize,
    share: redis::Script,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}

impl SharedSummaries {
    pub fn new(link: Arc<Link>, max_origins: usize) -> SharedSummaries {
        SharedSummaries {
            link,
            max_origins: max_origins.max(1),
            share: redis::Script::new(SHARE_SCRIPT),
        }
    }

    /// Origins the fleet keeps summaries of at most.
    pub fn max_origins(&self) -> usize {
        self.max_origins
    }

    /// Writes `shared` (origins whose summaries changed), refreshes `held` (origins this sidecar
    /// still summarizes, unchanged), and evicts origins not refreshed within `max_age` and past
    /// the bound. On failure, what was not sent is the caller's to send again.
    pub async fn share(
        &self,
        shared: &[SharedOrigin],
        held: &[String],
        max_age: Duration,
    ) -> Result<Shared, FleetError> {
        let now = now_ms();
        let oldest = now.saturating_sub(max_age.as_millis() as u64);
        let mut outcome = Shared::default();
        let mut rest = shared;
        // Refreshes go with the first call; an empty share still refreshes and evicts.
        let mut held = Some(held);
        while !rest.is_empty() || held.is_some() {
            let mut take = 0;
            let mut bytes = 0;
            while take < rest.len() && (take == 0 || bytes < SHARE_CHUNK_BYTES) {
                bytes += rest[take].signature.len() + rest[take].summary.len();
                take += 1;
            }
            let (chunk, after) = rest.split_at(take);
            let mut invocation = self.share.key(SIGNATURES_KEY);
            invocation
                .key(SUMMARIES_KEY)
                .key(AGE_KEY)
                .arg(self.max_origins)
                .arg(now)
                .arg(oldest)
                .arg(MAX_STALE_PER_CALL)
                .arg(chunk.len());
            for origin in chunk {
                invocation
                    .arg(&origin.origin)
                    .arg(&origin.signature[..])
                    .arg(&origin.summary[..]);
            }
            for origin in held.take().unwrap_or_default() {
                invocation.arg(origin);
            }
            let (evicted, missing): (u64, Vec<String>) = self
                .link
                .call(
                    |mut connection| async move { invocation.invoke_async(&mut connection).await },
                )
                .await?;
            outcome.evicted += evicted;
            outcome.missing.extend(missing);
            rest = after;
        }
        Ok(outcome)
    }

    /// Every signature the fleet holds, `(origin, signature)`, at most `max` of them (one
    /// `HSCAN` per [`SCAN_COUNT`]).
    pub async fn signatures(&self, max: usize) -> Result<Vec<(String, Vec<u8>)>, FleetError> {
        let mut out = Vec::new();
        let mut cursor: u64 = 0;
        // A bounded number of round trips even if the hash grows while it is scanned.
        let most_calls = max / SCAN_COUNT + 2;
        for _ in 0..most_calls {
            let (next, page): (u64, Vec<(String, Vec<u8>)>) = self
                .link
                .call(|mut connection| async move {
                    redis::cmd("HSCAN")
                        .arg(SIGNATURES_KEY)
                        .arg(cursor)
                        .arg("COUNT")
                        .arg(SCAN_COUNT)
                        .query_async(&mut connection)
                        .await
                })
                .await?;
            out.extend(page);
            if next == 0 || out.len() >= max {
                break;
            }
            cursor = next;
        }
        // HSCAN may return a field twice when the hash is rehashed meanwhile.
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out.dedup_by(|a, b| a.0 == b.0);
        out.truncate(max);
        Ok(out)
    }

    /// The full summaries of `origins` that the fleet holds, `(origin, summary)` (one `HMGET`
    /// per [`FETCH_CHUNK`]); stops early, with what it has, once `max_bytes` are read.
    pub async fn summaries(
        &self,
        origins: &[String],
        max_bytes: usize,
    ) -> Result<Vec<(String, Vec<u8>)>, FleetError> {
        let mut out = Vec::new();
        let mut bytes = 0;
        for chunk in origins.chunks(FETCH_CHUNK) {
            if bytes >= max_bytes {
                break;
            }
            let fields = chunk.to_vec();
            let values: Vec<Value> = self
                .link
                .call(|mut connection| async move {
                    redis::cmd("HMGET")
                        .arg(SUMMARIES_KEY)
                        .arg(fields)
                        .query_async(&mut connection)
                        .await
                })
                .await?;
            for (origin, value) in chunk.iter().zip(values) {
                if let Value::BulkString(summary) = value {
                    bytes += summary.len();
                    out.push((origin.clone(), summary));
                }
            }
        }
        Ok(out)
    }
}
