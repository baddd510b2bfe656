//! The fleet's shared seen-set: one logical set of canonical-form keys in Redis.
//!
//! # Encoding (why ≤ 16 bytes per URL)
//!
//! A key ([`crate::canon::seen::key_of`], 64 bits) goes into bucket `key >> (64 - bits)`, stored
//! as the member `key as i64` of a Redis set. Sets of integers below `set-max-intset-entries`
//! (512 by default) are *intsets*: sorted arrays of 8-byte integers, no per-member object. The
//! bucket count is chosen from `--seen-set-max-entries` so a full bucket holds at most 512
//! members over its two generations (each ≤ 256), so buckets stay intsets with the default Redis
//! configuration, and the ~80 bytes of each Redis key (dict entry, key name, object header) are
//! shared by hundreds of URLs. Measured: see BENCHMARKS.md ("Fleet").
//!
//! # Bound and eviction (the local exact mode's, per bucket)
//!
//! Each bucket has a current (`:c`) and a previous (`:p`) generation. When the current one
//! exceeds its share of the limit it replaces the previous one (one `RENAME`), and a key found in
//! the previous generation is copied forward, so keys still being discovered survive; a key
//! forgotten makes an old URL NEW again (a re-crawl), never a new URL DUPLICATE. The geometry
//! (bucket bits, generation limit) is fleet-wide: the first sidecar writes it to `undust:meta` and
//! every later one adopts it, whatever its own `--seen-set-max-entries`. Bloom mode is not offered
//! in Redis: the exact encoding already costs less than the local exact set.
//!
//! # One round trip, atomic
//!
//! A batch is one `EVALSHA` of [`SEEN_SCRIPT`] with the bucket and member of every key. Redis runs
//! a script alone, so two sidecars racing on one URL get exactly one NEW. Keys this sidecar already
//! recorded are answered DUPLICATE from the local seen-set without asking Redis (everything in the
//! local set was recorded in Redis too, or is waiting in the replay buffer).
//!
//! # Degraded
//!
//! While Redis is unreachable, keys are checked and recorded in the local seen-set only, and the
//! keys answered NEW are kept (up to [`PENDING_LIMIT`]) to be replayed into Redis on reconnection.
//! Answers given meanwhile can be wrong in one direction: a URL another sidecar already enqueued is
//! answered NEW here (enqueued twice). A URL is never answered DUPLICATE by mistake.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use redis::aio::MultiplexedConnection;

use super::link::Link;
use super::{FleetError, KEY_PREFIX};
use crate::canon::seen::{Seen, SeenSet, SeenSetConfig};
use crate::telemetry;

/// Keys recorded while degraded that are kept for replay (8 bytes each: 8 MB). Beyond it, the
/// oldest are dropped and counted; those URLs may then be enqueued again by another sidecar.
pub const PENDING_LIMIT: usize = 1_000_000;

/// Most keys replayed in one script call.
const REPLAY_CHUNK: usize = 10_000;

/// Members a full bucket holds over both generations; below Redis's default
/// `set-max-intset-entries` (512), so buckets stay compact intsets.
const BUCKET_MEMBERS: u64 = 512;

/// The fleet-wide geometry key.
const META_KEY: &str = "undust:meta";

/// Check-and-insert for a batch. ARGV: key prefix, generation limit, record (`1`/`0`), then pairs
/// of bucket and member. Returns the flags (`1` NEW, `0` DUPLICATE, in order) as one string and
/// the generations rotated. One `SADD` answers a duplicate; a new key costs a `SCARD` and a look
/// in the previous generation too.
pub const SEEN_SCRIPT: &str = r"
local prefix = ARGV[1]
local limit = tonumber(ARGV[2])
local record = ARGV[3] == '1'
local flags = {}
local rotated = 0
local n = 0
for i = 4, #ARGV, 2 do
  local cur = prefix .. ARGV[i] .. ':c'
  local prev = prefix .. ARGV[i] .. ':p'
  local member = ARGV[i + 1]
  local new = '0'
  if record then
    if redis.call('SADD', cur, member) == 1 then
      if redis.call('SCARD', cur) > limit then
        redis.call('SREM', cur, member)
        redis.call('RENAME', cur, prev)
        redis.call('SADD', cur, member)
        rotated = rotated + 1
      end
      if redis.call('SISMEMBER', prev, member) == 0 then new = '1' end
    end
  elseif redis.call('SISMEMBER', cur, member) == 0 and redis.call('SISMEMBER', prev, member) == 0 then
    new = '1'
  end
  n = n + 1
  flags[n] = new
end
return {table.concat(flags), rotated}
";

/// How keys map to buckets, agreed fleet-wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Buckets are `2^bits`.
    pub bits: u32,
    /// Members a bucket's current generation holds before it rotates.
    pub generation_limit: u64,
}

impl Geometry {
    /// The geometry for a bound: enough buckets that each holds at most [`BUCKET_MEMBERS`].
    pub fn for_entries(max_entries: u64) -> Geometry {
        let buckets = max_entries
            .div_ceil(BUCKET_MEMBERS)
            .next_power_of_two()
            .max(16);
        let bits = buckets.trailing_zeros().min(32);
        Geometry {
            bits,
            generation_limit: (max_entries >> bits).div_ceil(2).max(1),
        }
    }

    fn bucket(self, key: u64) -> u64 {
        key >> (64 - self.bits)
    }
}

/// The shared seen-set of one sidecar.
pub struct SharedSeen {
    link: Arc<Link>,
    script: redis::Script,
    geometry: RwLock<Geometry>,
    prefix: String,
    /// Keys answered NEW while degraded, replayed on reconnection.
    pending: Mutex<Vec<u64>>,
    rotations: AtomicU64,
    pending_dropped: AtomicU64,
}

impl SharedSeen {
    pub fn new(link: Arc<Link>, config: &SeenSetConfig) -> SharedSeen {
        SharedSeen {
            link,
            script: redis::Script::new(SEEN_SCRIPT),
            geometry: RwLock::new(Geometry::for_entries(config.max_entries)),
            prefix: format!("{KEY_PREFIX}s:"),
            pending: Mutex::new(Vec::new()),
            rotations: AtomicU64::new(0),
            pending_dropped: AtomicU64::new(0),
        }
    }

    /// The geometry in use.
    pub fn geometry(&self) -> Geometry {
        *self.geometry.read()
    }

    /// Keys waiting to be replayed into Redis.
    pub fn pending(&self) -> usize {
        self.pending.lock().len()
    }

    /// Bucket generations rotated by this sidecar's calls.
    pub fn rotations(&self) -> u64 {
        self.rotations.load(Ordering::Relaxed)
    }

    /// Answers a batch of keys in order. `first` gives, per key, the URL to remember as first
    /// occurrence when it is NEW (see [`SeenSet::check`]). `record` false is a dry run: nothing is
    /// recorded anywhere.
    pub async fn check_batch(
        &self,
        local: &SeenSet,
        keys: &[u64],
        first: &[Option<&str>],
        record: bool,
    ) -> Vec<Seen> {
        let mut answers = vec![Seen::Duplicate; keys.len()];
        let ask: Vec<usize> = (0..keys.len())
            .filter(|&i| local.check(keys[i], false, None) == Seen::New)
            .collect();
        if ask.is_empty() {
            return answers;
        }
        let asked: Vec<u64> = ask.iter().map(|&i| keys[i]).collect();
        let first_of = |i: usize| first.get(i).copied().flatten();
        match self.remote(None, &asked, record).await {
            Ok(flags) => {
                for (&i, new) in ask.iter().zip(flags) {
                    answers[i] = if new { Seen::New } else { Seen::Duplicate };
                    if record {
                        local.check(keys[i], true, if new { first_of(i) } else { None });
                    }
                }
            }
            Err(err) => {
                if !matches!(err, FleetError::Degraded) {
                    tracing::debug!(%err, "shared seen-set call failed; answering from local state");
                }
                metrics::counter!(telemetry::FLEET_LOCAL_ANSWERS).increment(ask.len() as u64);
                let mut recorded = Vec::new();
                for &i in &ask {
                    answers[i] = local.check(keys[i], record, first_of(i));
                    if record && answers[i] == Seen::New {
                        recorded.push(keys[i]);
                    }
                }
                self.keep_for_replay(recorded);
            }
        }
        answers
    }

    /// Runs the script for `keys` on `connection` (or the link's own), returning NEW flags.
    async fn remote(
        &self,
        connection: Option<MultiplexedConnection>,
        keys: &[u64],
        record: bool,
    ) -> Result<Vec<bool>, FleetError> {
        let geometry = self.geometry();
        let mut invocation = self.script.prepare_invoke();
        invocation
            .arg(&self.prefix)
            .arg(geometry.generation_limit)
            .arg(if record { "1" } else { "0" });
        for &key in keys {
            invocation.arg(geometry.bucket(key)).arg(key as i64);
        }
        let call = |mut connection: MultiplexedConnection| async move {
            invocation
                .invoke_async::<(Vec<u8>, u64)>(&mut connection)
                .await
        };
        let (flags, rotated) = match connection {
            Some(connection) => self.link.call_on(connection, call).await?,
            None => self.link.call(call).await?,
        };
        if flags.len() != keys.len() {
            return Err(FleetError::Protocol(format!(
                "the seen-set script answered {} flags for {} keys",
                flags.len(),
                keys.len()
            )));
        }
        if rotated > 0 {
            self.rotations.fetch_add(rotated, Ordering::Relaxed);
            metrics::counter!(telemetry::FLEET_SEEN_ROTATIONS).increment(rotated);
        }
        Ok(flags.into_iter().map(|flag| flag == b'1').collect())
    }

    fn keep_for_replay(&self, mut keys: Vec<u64>) {
        if keys.is_empty() {
            return;
        }
        let mut pending = self.pending.lock();
        pending.append(&mut keys);
        if pending.len() > PENDING_LIMIT {
            let excess = pending.len() - PENDING_LIMIT;
            pending.drain(..excess);
            self.pending_dropped
                .fetch_add(excess as u64, Ordering::Relaxed);
            metrics::counter!(telemetry::FLEET_REPLAY_DROPPED).increment(excess as u64);
        }
        metrics::gauge!(telemetry::FLEET_REPLAY_PENDING).set(pending.len() as f64);
    }

    /// Agrees on the fleet-wide geometry: the first sidecar's is written, later ones adopt it.
    pub async fn sync_geometry(&self, connection: MultiplexedConnection) -> Result<(), FleetError> {
        let mine = self.geometry();
        let (bits, limit): (Option<u32>, Option<u64>) = self
            .link
            .call_on(connection, |mut connection| async move {
                redis::pipe()
                    .hset_nx(META_KEY, "seen_bucket_bits", mine.bits)
                    .ignore()
                    .hset_nx(META_KEY, "seen_generation_limit", mine.generation_limit)
                    .ignore()
                    .hget(META_KEY, "seen_bucket_bits")
                    .hget(META_KEY, "seen_generation_limit")
                    .query_async(&mut connection)
                    .await
            })
            .await?;
        let (Some(bits), Some(generation_limit)) = (bits, limit) else {
            return Err(FleetError::Protocol(format!(
                "{META_KEY} has no seen-set geometry"
            )));
        };
        if !(4..=32).contains(&bits) || generation_limit == 0 {
            return Err(FleetError::Protocol(format!(
                "{META_KEY} holds an invalid geometry ({bits} bucket bits, generation limit \
                 {generation_limit})"
            )));
        }
        let fleet = Geometry {
            bits,
            generation_limit,
        };
        if fleet != mine {
            tracing::info!(?fleet, ?mine, "adopting the fleet's seen-set geometry");
        }
        *self.geometry.write() = fleet;
        Ok(())
    }

    /// Replays the keys recorded while degraded into Redis, on `connection`. Keys not replayed
    /// (Redis failed again) stay pending.
    pub async fn replay(&self, connection: MultiplexedConnection) -> Result<u64, FleetError> {
        let mut replayed = 0u64;
        loop {
            let chunk: Vec<u64> = {
                let mut pending = self.pending.lock();
                let take = pending.len().min(REPLAY_CHUNK);
                pending.drain(..take).collect()
            };
            if chunk.is_empty() {
                metrics::gauge!(telemetry::FLEET_REPLAY_PENDING).set(0.0);
                return Ok(replayed);
            }
            if let Err(err) = self.remote(Some(connection.clone()), &chunk, true).await {
                let mut pending = self.pending.lock();
                let newer = std::mem::replace(&mut *pending, chunk);
                pending.extend(newer);
                return Err(err);
            }
            replayed += chunk.len() as u64;
            metrics::counter!(telemetry::FLEET_REPLAYED).increment(chunk.len() as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_keeps_full_buckets_within_an_intset() {
        for max in [1_000u64, 10_000_000, 20_000_000, 10_000_000_000] {
            let geometry = Geometry::for_entries(max);
            let share = max >> geometry.bits;
            assert!(share <= BUCKET_MEMBERS, "{max}: {share} per bucket");
            assert!(geometry.generation_limit * 2 <= BUCKET_MEMBERS + 1, "{max}");
            // Every key lands in a bucket of the range.
            assert!(geometry.bucket(u64::MAX) < 1 << geometry.bits);
        }
        let geometry = Geometry::for_entries(10_000_000);
        assert_eq!(geometry.bits, 15);
        assert_eq!(geometry.generation_limit, 153);
    }
}
