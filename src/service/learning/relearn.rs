//! One host relearned: its sampled evidence through [`crate::pipeline`] (clusters, then rules
//! through the live-rule gate), the accepted set stored, then swapped live. Blocking: jobs run it
//! on a blocking thread.

use std::sync::Arc;

use super::Learning;
use crate::pb::{HostRelearn, JobState};
use crate::pipeline::{cluster_pages, labelled, learn_checked, Beside, RelearnError};

impl Learning {
    /// Learns one host from its samples and puts the result live.
    pub(super) fn relearn_host(&self, host: &str) -> Result<HostRelearn, RelearnError> {
        let state = self.host_state(host);
        // One relearn of a host at a time (two jobs may cover it).
        let relearn_lock = Arc::clone(&state.lock().relearn_lock);
        let _relearning = relearn_lock.lock();
        let samples = self.samples_of(host);
        let (template, new_at_start) = {
            let state = state.lock();
            (state.template.clone(), state.trigger.new_samples)
        };
        let outcome = self.learn_from(host, &samples, &template);
        let now = tokio::time::Instant::now();
        let (checked, clusters) = match outcome {
            Ok(learned) => learned,
            Err(error) => {
                let mut state = state.lock();
                state.trigger.failed(new_at_start, now);
                state.trigger_dirty = true;
                return Err(error);
            }
        };
        let mut set = checked.set;
        let version = self.put_live(host, &mut set, checked.compiled)?;
        let rule_count = set.len() as u32;
        let mut state = state.lock();
        state.trigger.learned(new_at_start, now);
        state.trigger_dirty = true;
        state.last_learned_unix_ms = set.learned_at_unix_ms;
        state.clusters = clusters;
        drop(state);
        tracing::info!(
            host,
            version,
            rules = rule_count,
            samples = samples.len(),
            clusters,
            "new rules live"
        );
        Ok(HostRelearn {
            host: host.to_owned(),
            state: JobState::Succeeded as i32,
            rules_version: version,
            rules: rule_count,
            samples: samples.len() as u64,
            clusters,
            error: String::new(),
        })
    }

    /// The pipeline on a host's samples: clusters against the current template model, then rules
    /// through the gate.
    pub(super) fn learn_from(
        &self,
        host: &str,
        samples: &[Arc<crate::pipeline::EvidencePage>],
        template: &crate::content::TemplateModel,
    ) -> Result<(crate::pipeline::CheckedRules, u64), RelearnError> {
        // Crawlers report pages; archive-only URL evidence (revisits, payload digests) comes to the
        // offline commands alone.
        let clusters = cluster_pages(
            samples.iter().map(|page| &**page),
            &[],
            template,
            &self.content,
        );
        // Mirror detection compares these same fingerprints across hosts.
        self.sidecar
            .mirrors
            .observe_marks(host, samples, &clusters.fingerprints);
        let duplicate_clusters = clusters.duplicate_clusters() as u64;
        let training = labelled(host, &clusters.clustering);
        let declared = clusters.clustering.declared();
        // Beside the hosts learned before it: what they recorded may make up this host's thin
        // evidence, and its own findings are recorded for the hosts learned after it.
        let mut findings = Vec::new();
        let checked = self.on_learn_threads(|| {
            let beside = Beside {
                read: &self.shared_evidence,
                findings: &mut findings,
            };
            learn_checked(
                host,
                &training,
                declared,
                &self.learn,
                &self.gate,
                Some(beside),
            )
        });
        self.shared_evidence.record(host, &findings);
        Ok((checked?, duplicate_clusters))
    }
}
