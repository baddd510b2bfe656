//! The seen-set's persistence: keys recorded by Canonicalize are journaled in memory and appended
//! to the store every [`SEEN_FLUSH_INTERVAL`], and at once when an answer waits for them (the
//! default `--seen-durability commit`: see [`crate::service::durable`]). The persisted log is
//! compacted when it grows past twice the live set.

use std::time::Duration;

use super::Learning;
use crate::store::StoreError;
use crate::telemetry;

/// How often recorded seen-set keys are appended to the store.
pub const SEEN_FLUSH_INTERVAL: Duration = Duration::from_millis(100);

impl Learning {
    /// Refills the seen-set from the store; the number of keys read.
    pub(super) fn restore_seen(&self) -> Result<u64, StoreError> {
        let seen = &self.sidecar.seen;
        self.store.load_seen(|key| seen.restore(key))
    }

    /// Appends journaled seen-set keys to the store, compacting the log when it outgrew the set.
    pub(super) fn flush_seen(&self) {
        let seen = &self.sidecar.seen;
        let durable = &self.sidecar.durable;
        let (keys, drain) = durable.drain(seen);
        match self.store.append_seen(&keys) {
            Ok(()) => durable.made_durable(drain),
            Err(err) => {
                tracing::error!(%err, keys = keys.len(), "seen-set keys could not be persisted; retrying with the next flush");
                durable.failed(keys);
            }
        }
        let live = seen.len();
        if self.store.seen_keys() > live.saturating_mul(2).saturating_add(100_000) {
            let compacted = match seen.keys() {
                Some(keys) => self.store.rewrite_seen(&keys),
                None => self
                    .store
                    .trim_seen(self.sidecar.config.seen_set.max_entries),
            };
            if let Err(err) = compacted {
                tracing::error!(%err, "seen-set log compaction failed");
            }
        }
        metrics::gauge!(telemetry::SEEN_SET_ENTRIES).set(live as f64);
        metrics::counter!(telemetry::SEEN_SET_EVICTIONS).absolute(seen.evictions());
    }
}
