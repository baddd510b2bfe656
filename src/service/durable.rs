//! When a Canonicalize answer may be sent: after the canonical forms it recorded are durable.
//!
//! Recorded keys are journaled by the seen-set; the learning loop's seen log drains the journal and
//! appends it to the store in one transaction (fsync) — every [`SEEN_FLUSH_INTERVAL`] and, in the
//! default `commit` mode, as soon as a batch waits for it. A batch records its keys under a read
//! *gate*; a drain takes the gate for writing and numbers itself (its epoch), so a batch that
//! recorded keys under the gate when the drain count was `e` knows its keys are in drain `e + 1`
//! or an earlier one, and its answer waits until drain `e + 1` is durable. Batches that arrive
//! during a commit share the next one (group commit): one fsync covers every waiting batch.
//!
//! Modes (`--seen-durability`):
//! - `commit` (default): an acknowledged NEW is on disk; `kill -9` loses nothing acknowledged.
//!   Cost: the answer waits for one store commit (measured in BENCHMARKS.md).
//! - `interval`: answers at once; `kill -9` forgets the canonical forms recorded in the last
//!   [`SEEN_FLUSH_INTERVAL`] (they are answered NEW again after the restart: a repeated fetch,
//!   never a lost URL).
//!
//! A failed append keeps its keys for the next drain, so a later success never vouches for keys
//! that are not on disk; a batch still waiting after [`DURABLE_WAIT_LIMIT`] is answered UNAVAILABLE
//! (its URLs are recorded in memory and will be persisted by a later drain; the caller retries).
//!
//! [`SEEN_FLUSH_INTERVAL`]: crate::service::learning::SEEN_FLUSH_INTERVAL

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use tokio::sync::{watch, Notify};
use tonic::Status;

use crate::canon::seen::SeenSet;

/// Longest an answer waits for its keys to become durable.
pub const DURABLE_WAIT_LIMIT: Duration = Duration::from_secs(10);

/// What an acknowledged NEW promises (`--seen-durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SeenDurability {
    /// Answers wait until the recorded canonical forms are committed to the store.
    Commit,
    /// Answers at once; the last flush interval may be lost to a crash.
    Interval,
}

impl SeenDurability {
    /// The name used in flags and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            SeenDurability::Commit => "commit",
            SeenDurability::Interval => "interval",
        }
    }
}

/// The gate, the drain count and the durable mark (see the module docs).
pub struct DurableSeen {
    mode: SeenDurability,
    gate: RwLock<()>,
    /// Drains taken so far.
    drains: AtomicU64,
    /// The highest drain whose keys (and every earlier drain's) are durable.
    durable: watch::Sender<u64>,
    /// Keys of drains whose append failed, retried with the next drain.
    retry: Mutex<Vec<u64>>,
    /// Wakes the seen log early: a batch waits.
    wanted: Notify,
}

/// A batch's hold on the gate while it records keys.
pub struct Recording<'a> {
    _gate: RwLockReadGuard<'a, ()>,
    owner: &'a DurableSeen,
}

impl Recording<'_> {
    /// The drain that will hold (at the latest) the keys recorded under this hold.
    pub fn drain_to_wait_for(&self) -> u64 {
        self.owner.drains.load(Ordering::Acquire) + 1
    }
}

impl DurableSeen {
    pub fn new(mode: SeenDurability) -> Self {
        DurableSeen {
            mode,
            gate: RwLock::new(()),
            drains: AtomicU64::new(0),
            durable: watch::channel(0).0,
            retry: Mutex::new(Vec::new()),
            wanted: Notify::new(),
        }
    }

    /// The configured mode.
    pub fn mode(&self) -> SeenDurability {
        self.mode
    }

    /// Holds the gate while a batch records keys.
    pub fn recording(&self) -> Recording<'_> {
        Recording {
            _gate: self.gate.read(),
            owner: self,
        }
    }

    /// Waits until drain `drain` is durable (in `commit` mode; at once in `interval` mode).
    pub async fn wait(&self, drain: u64) -> Result<(), Status> {
        if self.mode == SeenDurability::Interval {
            return Ok(());
        }
        let mut durable = self.durable.subscribe();
        if *durable.borrow() >= drain {
            return Ok(());
        }
        self.wanted.notify_one();
        let reached = tokio::time::timeout(DURABLE_WAIT_LIMIT, async {
            durable.wait_for(|d| *d >= drain).await.is_ok()
        })
        .await;
        match reached {
            Ok(true) => Ok(()),
            _ => Err(Status::unavailable(
                "the recorded canonical forms could not be made durable in time (the store is \
                 failing or saturated); they are kept in memory: retry the batch",
            )),
        }
    }

    /// Resolves when a batch waits for a drain.
    pub async fn drain_wanted(&self) {
        self.wanted.notified().await;
    }

    /// Takes the journal (and the keys of failed appends) as drain number N; returns the keys and
    /// N. Blocking: call from the seen log's blocking thread.
    pub fn drain(&self, seen: &SeenSet) -> (Vec<u64>, u64) {
        let _exclusive = self.gate.write();
        let mut keys = std::mem::take(&mut *self.retry.lock());
        keys.append(&mut seen.drain_journal());
        let drain = self.drains.fetch_add(1, Ordering::AcqRel) + 1;
        (keys, drain)
    }

    /// Drain `drain` is durable.
    pub fn made_durable(&self, drain: u64) {
        self.durable.send_if_modified(|durable| {
            let newer = drain > *durable;
            if newer {
                *durable = drain;
            }
            newer
        });
    }

    /// Drain `drain`'s append failed: its keys go with the next drain.
    pub fn failed(&self, mut keys: Vec<u64>) {
        self.retry.lock().append(&mut keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::seen::{SeenSetConfig, SeenSetMode};

    fn seen() -> SeenSet {
        SeenSet::journaled(&SeenSetConfig {
            mode: SeenSetMode::Exact,
            max_entries: 10_000,
            bloom_fp_rate: 0.001,
            first_occurrence_cache: 100,
        })
    }

    #[tokio::test]
    async fn a_batch_waits_for_the_drain_that_holds_its_keys_and_a_failure_vouches_for_nothing() {
        let durable = DurableSeen::new(SeenDurability::Commit);
        let seen = seen();
        let target = {
            let recording = durable.recording();
            seen.check(42, true, None);
            recording.drain_to_wait_for()
        };
        assert_eq!(target, 1);
        let (keys, drain) = durable.drain(&seen);
        assert_eq!((keys, drain), (vec![42], 1));
        // The append failed: a later drain carries the key, and only its success releases.
        durable.failed(vec![42]);
        let waiting = tokio::time::timeout(Duration::from_millis(50), durable.wait(target)).await;
        assert!(waiting.is_err(), "not durable yet");
        let (keys, drain) = durable.drain(&seen);
        assert_eq!((keys, drain), (vec![42], 2));
        durable.made_durable(drain);
        durable.wait(target).await.expect("durable");
    }

    #[tokio::test]
    async fn interval_mode_answers_at_once() {
        let durable = DurableSeen::new(SeenDurability::Interval);
        durable.wait(100).await.expect("no wait");
    }
}
