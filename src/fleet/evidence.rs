//! Shared evidence: every sidecar's samples count for the host, whichever sidecar learns it.
//!
//! A sidecar that samples a page (it entered the host's local reservoir) also offers the page's
//! persisted sample form (the postcard `Sample` the store keeps: URL, final URL, rel=canonical and
//! the content digest, never the body) to [`SharedEvidence`]. After an ingest stream's samples are
//! durable locally, and before the stream is acknowledged, the queued samples go to Redis in one
//! script call ([`SHARE_SCRIPT`]), so pages an ingest call acknowledged on one sidecar are evidence
//! for a relearn asked on any other. The learner of a host reads them back with one `HVALS`.
//!
//! # Keys, bound and eviction
//!
//! - `undust:ev:p:<host>`: a hash, field = the 64-bit hash of the page's URL (8 bytes), value =
//!   the sample. One URL, one sample: a page fetched again replaces its earlier sample, on
//!   whichever sidecar it was fetched.
//! - `undust:ev:o:<host>`: a sorted set of the same fields scored by a fleet-wide sequence
//!   (`undust:ev:seq`): the order samples arrived in.
//! - `undust:ev:hosts`: a sorted set of hosts scored by the sequence of their last sample.
//!
//! A host keeps its newest `--fleet-evidence-per-host` samples (default
//! [`DEFAULT_EVIDENCE_PER_HOST`]): when a write takes it over, the oldest samples are dropped
//! (`ZPOPMIN`, then `HDEL`), in the same atomic script. At most `--sample-max-hosts` hosts keep
//! evidence: beyond it the host whose last sample is oldest loses all of its. Newest-first (not a
//! uniform reservoir as locally) because the fleet's evidence should follow what the site serves
//! now, and because it needs no coordination between sidecars beyond Redis's own atomicity.
//!
//! # Degraded
//!
//! While Redis is unreachable, samples wait in a local queue of at most [`QUEUE_LIMIT`] (oldest
//! dropped and counted) and go with the next ingest stream's acknowledgement after the link is
//! back. The local sample keeps every page either way: only the other sidecars' view lags.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

use super::link::Link;
use super::{FleetError, KEY_PREFIX};
use crate::telemetry;

/// Samples a host keeps in Redis unless `--fleet-evidence-per-host` says otherwise.
pub const DEFAULT_EVIDENCE_PER_HOST: usize = 2_000;

/// Samples waiting for Redis at most (while it is unreachable); beyond it the oldest are dropped.
pub const QUEUE_LIMIT: usize = 100_000;

/// Most samples sent in one script call.
const SHARE_CHUNK: usize = 500;

/// KEYS: hosts index, sequence counter. ARGV: per-host bound, max hosts, key prefix, then
/// `host, field, sample` triples. Returns the samples evicted to stay within the bounds.
const SHARE_SCRIPT: &str = r"
local bound = tonumber(ARGV[1])
local max_hosts = tonumber(ARGV[2])
local prefix = ARGV[3]
local evicted = 0
for i = 4, #ARGV, 3 do
  local host, field, sample = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local seq = redis.call('INCR', KEYS[2])
  local pages, order = prefix .. 'p:' .. host, prefix .. 'o:' .. host
  redis.call('HSET', pages, field, sample)
  redis.call('ZADD', order, seq, field)
  redis.call('ZADD', KEYS[1], seq, host)
  local over = redis.call('ZCARD', order) - bound
  if over > 0 then
    local old = redis.call('ZPOPMIN', order, over)
    for j = 1, #old, 2 do
      redis.call('HDEL', pages, old[j])
      evicted = evicted + 1
    end
  end
end
local hosts_over = redis.call('ZCARD', KEYS[1]) - max_hosts
if hosts_over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[1], hosts_over)
  for j = 1, #gone, 2 do
    evicted = evicted + redis.call('HLEN', prefix .. 'p:' .. gone[j])
    redis.call('DEL', prefix .. 'p:' .. gone[j], prefix .. 'o:' .. gone[j])
  end
end
return evicted
";

fn evidence_prefix() -> String {
    format!("{KEY_PREFIX}ev:")
}

/// The key of a host's shared samples.
pub fn pages_key(host: &str) -> String {
    format!("{}p:{host}", evidence_prefix())
}

const HOSTS_KEY: &str = "undust:ev:hosts";
const SEQUENCE_KEY: &str = "undust:ev:seq";

/// One sample on its way to Redis.
#[derive(Debug, Clone)]
struct Shared {
    host: String,
    url_key: u64,
    sample: Vec<u8>,
}

/// The fleet's samples, as one sidecar writes and reads them.
pub struct SharedEvidence {
    link: Arc<Link>,
    per_host: usize,
    max_hosts: usize,
    queue: Mutex<VecDeque<Shared>>,
    /// Serializes flushes, so samples of one URL reach Redis in the order they were sampled.
    flushing: tokio::sync::Mutex<()>,
    share: redis::Script,
}

impl SharedEvidence {
    pub fn new(link: Arc<Link>, per_host: usize, max_hosts: usize) -> SharedEvidence {
        SharedEvidence {
            link,
            per_host: per_host.max(1),
            max_hosts: max_hosts.max(1),
            queue: Mutex::new(VecDeque::new()),
            flushing: tokio::sync::Mutex::new(()),
            share: redis::Script::new(SHARE_SCRIPT),
        }
    }

    /// Samples a host keeps in Redis.
    pub fn per_host(&self) -> usize {
        self.per_host
    }

    /// Queues a sample (`url_key`: the hash of its URL) for the next [`SharedEvidence::flush`].
    pub fn offer(&self, host: &str, url_key: u64, sample: Vec<u8>) {
        let mut queue = self.queue.lock();
        if queue.len() >= QUEUE_LIMIT {
            queue.pop_front();
            metrics::counter!(telemetry::FLEET_EVIDENCE, "outcome" => "dropped").increment(1);
        }
        queue.push_back(Shared {
            host: host.to_owned(),
            url_key,
            sample,
        });
    }

    /// Samples waiting for Redis.
    pub fn queued(&self) -> usize {
        self.queue.lock().len()
    }

    /// Sends every queued sample to Redis; the number sent. On failure the samples not sent stay
    /// queued (in order) for the next flush.
    pub async fn flush(&self) -> Result<usize, FleetError> {
        let _serial = self.flushing.lock().await;
        let mut sent = 0;
        loop {
            let chunk: Vec<Shared> = {
                let mut queue = self.queue.lock();
                let take = queue.len().min(SHARE_CHUNK);
                queue.drain(..take).collect()
            };
            if chunk.is_empty() {
                return Ok(sent);
            }
            match self.send(&chunk).await {
                Ok(evicted) => {
                    sent += chunk.len();
                    metrics::counter!(telemetry::FLEET_EVIDENCE, "outcome" => "shared")
                        .increment(chunk.len() as u64);
                    metrics::counter!(telemetry::FLEET_EVIDENCE, "outcome" => "evicted")
                        .increment(evicted);
                }
                Err(err) => {
                    let mut queue = self.queue.lock();
                    for shared in chunk.into_iter().rev() {
                        queue.push_front(shared);
                    }
                    while queue.len() > QUEUE_LIMIT {
                        queue.pop_front();
                        metrics::counter!(telemetry::FLEET_EVIDENCE, "outcome" => "dropped")
                            .increment(1);
                    }
                    return Err(err);
                }
            }
        }
    }

    async fn send(&self, chunk: &[Shared]) -> Result<u64, FleetError> {
        let mut invocation = self.share.key(HOSTS_KEY);
        invocation
            .key(SEQUENCE_KEY)
            .arg(self.per_host)
            .arg(self.max_hosts)
            .arg(evidence_prefix());
        for shared in chunk {
            invocation
                .arg(&shared.host)
                .arg(&shared.url_key.to_le_bytes()[..])
                .arg(&shared.sample[..]);
        }
        self.link
            .call(|mut connection| async move { invocation.invoke_async(&mut connection).await })
            .await
    }

    /// Every sample the fleet holds for `host` (in no particular order).
    pub async fn fetch(&self, host: &str) -> Result<Vec<Vec<u8>>, FleetError> {
        let key = pages_key(host);
        self.link
            .call(|mut connection| async move {
                redis::cmd("HVALS")
                    .arg(key)
                    .query_async(&mut connection)
                    .await
            })
            .await
    }
}
