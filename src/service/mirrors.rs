//! What the sidecar tells mirror detection: host summaries ([`crate::mirrors::HostSummaries`])
//! fed from the three places that see a host.
//!
//! - Ingest: the server address a fetch reports (`ObservedPage.server_ip`) and the fetched URL,
//!   for hosts the sampler keeps ([`MirrorWatch::observe_fetch`]). A host enters the summaries
//!   only this way, so the summaries hold at most the sampler's hosts and each is dropped when
//!   the sampler evicts it ([`MirrorWatch::forget_host`]).
//! - Relearn: the content marks of a host's sampled pages, from the fingerprints the relearn
//!   computes against the host's template model anyway ([`crate::pipeline::cluster_pages`]); a
//!   host's marks are replaced whole at each relearn, so they always match its current sample
//!   and model ([`MirrorWatch::observe_marks`]).
//! - Canonicalize: the URLs a host's pages link to before any of them is fetched (the path sets
//!   of the URL-string techniques). Off the hot path's cost: at most [`URLS_PER_BATCH`] URLs of
//!   a batch, spread over it, only of hosts already summarized, and only when the summaries'
//!   lock is free at once (a busy detection pass makes the batch skip, never wait).
//!
//! Per origin the summaries' own bounds apply ([`crate::mirrors::SummaryLimits`]).

use std::net::IpAddr;

use parking_lot::Mutex;
use url::Url;

use crate::content::Fingerprint;
use crate::mirrors::{detect, ContentMark, Detection, HostSummaries, MirrorConfig};
use crate::pipeline::EvidencePage;

/// Most URLs of one Canonicalize batch observed into the summaries.
pub const URLS_PER_BATCH: usize = 64;

/// The sidecar's host summaries (see the module docs).
#[derive(Default)]
pub struct MirrorWatch {
    summaries: Mutex<HostSummaries>,
}

impl MirrorWatch {
    /// A fetched page of a host the sampler keeps, with the address it was fetched from.
    pub fn observe_fetch(&self, url: &Url, ip: Option<IpAddr>) {
        let mut summaries = self.summaries.lock();
        summaries.observe_url(url);
        if let Some(ip) = ip {
            summaries.observe_ip(url, ip);
        }
    }

    /// A Canonicalize batch's URLs (statically normalized): a spread sample of them, for hosts
    /// already summarized; skipped when the summaries are busy.
    pub fn observe_batch<'a>(&self, urls: impl ExactSizeIterator<Item = &'a Url>) {
        let len = urls.len();
        if len == 0 {
            return;
        }
        let Some(mut summaries) = self.summaries.try_lock() else {
            return;
        };
        if summaries.is_empty() {
            return;
        }
        let stride = len.div_ceil(URLS_PER_BATCH).max(1);
        for url in urls.step_by(stride) {
            if url.host_str().is_some_and(|host| summaries.has_host(host)) {
                summaries.observe_url(url);
            }
        }
    }

    /// Replaces the content marks of `host`'s pages with those a relearn just computed:
    /// `prints` are [`crate::pipeline::HostClusters::fingerprints`], in sample order. A page
    /// whose content was recorded for another host's URL (a redirect away) gives no mark.
    pub fn observe_marks(
        &self,
        host: &str,
        samples: &[EvidencePage],
        prints: &[(Option<String>, Fingerprint)],
    ) {
        let mut summaries = self.summaries.lock();
        if !summaries.has_host(host) {
            return;
        }
        summaries.clear_pages(host);
        for (_page, (at, print)) in samples.iter().zip(prints) {
            let Some(url) = at.as_deref().and_then(|at| Url::parse(at).ok()) else {
                continue;
            };
            if url.host_str() != Some(host) {
                continue;
            }
            summaries.observe_page(
                &url,
                ContentMark::from_fingerprint(print),
                std::iter::empty::<&str>(),
            );
        }
    }

    /// Drops a host the sampler no longer keeps.
    pub fn forget_host(&self, host: &str) {
        self.summaries.lock().remove_host(host);
    }

    /// Runs detection on the summaries as they are. Blocking; holds the summaries meanwhile
    /// (ingest waits, Canonicalize skips its sample).
    pub fn detect(&self, config: &MirrorConfig) -> Detection {
        detect(&self.summaries.lock(), config)
    }

    /// Origins summarized.
    pub fn origins(&self) -> usize {
        self.summaries.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn canonicalize_feeds_only_summarized_hosts_and_eviction_drops_them() {
        let watch = MirrorWatch::default();
        watch.observe_batch([url("http://a.org/x")].iter());
        assert_eq!(watch.origins(), 0, "no host is summarized before a fetch");
        watch.observe_fetch(&url("http://a.org/1"), "10.0.0.1".parse().ok());
        let batch: Vec<Url> = (0..1000)
            .map(|i| url(&format!("http://a.org/p{i}")))
            .chain([url("http://b.org/1")])
            .collect();
        watch.observe_batch(batch.iter());
        {
            let summaries = watch.summaries.lock();
            let a = summaries.get("http://a.org").unwrap();
            assert_eq!(a.ip, "10.0.0.1".parse().ok());
            assert!(
                (URLS_PER_BATCH - 2..=URLS_PER_BATCH + 1).contains(&a.paths.len()),
                "{} paths",
                a.paths.len()
            );
            assert!(summaries.get("http://b.org").is_none());
        }
        watch.forget_host("a.org");
        assert_eq!(watch.origins(), 0);
    }
}
