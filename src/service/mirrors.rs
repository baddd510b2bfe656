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
//!   of the URL-string techniques). Off the hot path's cost: a [`BatchSample`] keeps at most
//!   [`URLS_PER_BATCH`] URLs of a batch, spread over it, and none at all while no host is
//!   summarized (one relaxed load per batch); only URLs of hosts already summarized are
//!   observed, and only when the summaries' lock is free at once (a busy detection pass makes
//!   the batch skip, never wait).
//! - Ingest, again: the out-links of a fetched page of a watched host (the `<a href>` links the
//!   page analysis found, resolved against the page's URL or `<base href>`), in summary form
//!   ([`PageLinks`]), kept by page URL until the host's next relearn observes them with the
//!   page's content mark (the summaries keep a page's links with its marks): the *conn* and
//!   host-graph techniques then have the out-links the offline commands read from the pages.
//!   At most [`LINKS_PER_PAGE`] links of a page and [`LINKED_PAGES_PER_HOST`] pages of a host
//!   wait; a relearn drops those of pages no longer in the host's sample.
//! - The store, at start: a sampled page's fetched URL, server address and out-links are stored
//!   with its sample (`FetchFacts` in [`crate::service::learning`]'s samples) and observed here
//!   again when the samples are restored, so after a restart (even a `kill -9`) the next relearn
//!   has the *conn* evidence and address of every sampled page without waiting for pages to
//!   arrive again. The paths Canonicalize added are not stored: they come back with the traffic.
//!
//! Per origin the summaries' own bounds apply ([`crate::mirrors::SummaryLimits`]).
//!
//! In a fleet, the hosts whose marks a relearn replaced are remembered until the next detection
//! pass shares their summaries with the other sidecars ([`crate::fleet::summaries`]), and a pass
//! runs on this sidecar's summaries joined with the fleet's it fetched
//! ([`MirrorWatch::detect_with`]): a copy of the local summaries is taken under the lock, so
//! ingest and Canonicalize wait only for the copy, and the pass holds the copy plus the fetched
//! summaries for as long as it runs.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use rustc_hash::{FxHashMap, FxHashSet};
use url::Url;

use crate::content::Fingerprint;
use crate::mirrors::{
    detect, ContentMark, Detection, HostSummaries, HostSummary, MirrorConfig, OriginSignature,
    PageLinks,
};
use crate::pipeline::EvidencePage;

/// Most URLs of one Canonicalize batch observed into the summaries.
pub const URLS_PER_BATCH: usize = 64;

/// Most out-links of one fetched page kept (the first ones, in document order: copies of one
/// page list them in the same order, so mirrors keep the same ones).
pub const LINKS_PER_PAGE: usize = 100;

/// Most fetched pages of one host whose out-links wait for the host's next relearn.
pub const LINKED_PAGES_PER_HOST: usize = 256;

/// The sidecar's host summaries (see the module docs).
#[derive(Default)]
pub struct MirrorWatch {
    summaries: Mutex<HostSummaries>,
    /// Origins summarized, as of the last change: Canonicalize reads it without the lock to
    /// skip sampling while nothing is watched.
    origins: AtomicUsize,
    /// Out-links of watched hosts' fetched pages: host → page URL (as its sample records it)
    /// → links. Locked after `summaries` when both are held.
    links: Mutex<FxHashMap<String, FxHashMap<String, PageLinks>>>,
    /// Hosts whose content marks a relearn replaced since their summaries were last shared with
    /// the fleet (bounded by the summarized hosts: a forgotten host leaves it).
    unshared: Mutex<FxHashSet<String>>,
}

/// The spread sample of one Canonicalize batch's URLs (statically normalized) kept for the
/// summaries: every `stride`-th URL, at most [`URLS_PER_BATCH`]; none when no host was
/// summarized as the batch began.
pub struct BatchSample {
    /// 0 when nothing is watched.
    stride: usize,
    urls: Vec<Url>,
}

impl BatchSample {
    /// The URL at `index` of the batch: kept when it falls on the stride and room is left. It is
    /// made (by `url`) only then: most URLs of a batch are never parsed (the fast path of static
    /// normalization), and only the kept ones need to be.
    pub fn offer(&mut self, index: usize, url: impl FnOnce() -> Option<Url>) {
        if self.stride != 0 && index.is_multiple_of(self.stride) && self.urls.len() < URLS_PER_BATCH
        {
            self.urls.extend(url());
        }
    }

    /// URLs kept.
    pub fn len(&self) -> usize {
        self.urls.len()
    }

    /// Whether no URL was kept.
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }
}

impl MirrorWatch {
    /// A fetched page of a host the sampler keeps, with the address it was fetched from.
    pub fn observe_fetch(&self, url: &Url, ip: Option<IpAddr>) {
        let mut summaries = self.summaries.lock();
        summaries.observe_url(url);
        if let Some(ip) = ip {
            summaries.observe_ip(url, ip);
        }
        self.origins.store(summaries.len(), Ordering::Relaxed);
    }

    /// The out-links of a fetched page of a watched host, in summary form
    /// (`PageLinks::of(served_from, base, links, LINKS_PER_PAGE)`): `page` is the page's URL as
    /// its sample records it, `served_from` the URL its body came from. Ignored for a host that
    /// is not watched, and past the bounds (see the module docs).
    pub fn observe_links(&self, page: &str, served_from: &Url, links: PageLinks) {
        let Some(host) = served_from.host_str() else {
            return;
        };
        // Held while the links go in, so a host forgotten meanwhile leaves none behind.
        let summaries = self.summaries.lock();
        if !summaries.has_host(host) {
            return;
        }
        let mut all = self.links.lock();
        let pages = all.entry(host.to_owned()).or_default();
        if pages.len() < LINKED_PAGES_PER_HOST || pages.contains_key(page) {
            pages.insert(page.to_owned(), links);
        }
    }

    /// The sample a Canonicalize batch of `len` URLs fills (see [`BatchSample`]).
    pub fn batch_sample(&self, len: usize) -> BatchSample {
        let stride = if self.origins.load(Ordering::Relaxed) == 0 {
            0
        } else {
            len.div_ceil(URLS_PER_BATCH).max(1)
        };
        BatchSample {
            stride,
            urls: Vec::new(),
        }
    }

    /// A batch's sample, observed for hosts already summarized; skipped when the summaries are
    /// busy.
    pub fn observe_batch(&self, sample: BatchSample) {
        if sample.urls.is_empty() {
            return;
        }
        let Some(mut summaries) = self.summaries.try_lock() else {
            return;
        };
        for url in &sample.urls {
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
        samples: &[std::sync::Arc<EvidencePage>],
        prints: &[(Option<String>, Fingerprint)],
    ) {
        let mut summaries = self.summaries.lock();
        if !summaries.has_host(host) {
            return;
        }
        summaries.clear_pages(host);
        let mut all = self.links.lock();
        let mut links = all.remove(host).unwrap_or_default();
        let none = PageLinks::default();
        for (page, (at, print)) in samples.iter().zip(prints) {
            let Some(url) = at.as_deref().and_then(|at| Url::parse(at).ok()) else {
                continue;
            };
            if url.host_str() != Some(host) {
                continue;
            }
            summaries.observe_page_linked(
                &url,
                ContentMark::from_fingerprint(print),
                links.get(&page.url).unwrap_or(&none),
            );
        }
        // Links of pages that left the sample will not be asked for again.
        let sampled: rustc_hash::FxHashSet<&str> =
            samples.iter().map(|page| page.url.as_str()).collect();
        links.retain(|page, _| sampled.contains(page.as_str()));
        if !links.is_empty() {
            all.insert(host.to_owned(), links);
        }
        self.unshared.lock().insert(host.to_owned());
    }

    /// Drops a host the sampler no longer keeps.
    pub fn forget_host(&self, host: &str) {
        let mut summaries = self.summaries.lock();
        summaries.remove_host(host);
        self.origins.store(summaries.len(), Ordering::Relaxed);
        self.links.lock().remove(host);
        self.unshared.lock().remove(host);
    }

    /// The summaries of the hosts whose marks changed since they were last shared (forgetting
    /// that they changed: a caller whose share fails gives the hosts back with
    /// [`MirrorWatch::unshared_again`]), and the origins of every other host summarized here.
    pub fn take_unshared(&self) -> (Vec<HostSummary>, Vec<String>) {
        let summaries = self.summaries.lock();
        let hosts = std::mem::take(&mut *self.unshared.lock());
        let mut changed = Vec::new();
        let mut held = Vec::new();
        for summary in summaries.hosts() {
            if hosts.contains(&summary.host) {
                changed.push(summary.clone());
            } else {
                held.push(summary.origin.clone());
            }
        }
        (changed, held)
    }

    /// Hosts whose summaries a failed share did not send: shared with the next pass's.
    pub fn unshared_again(&self, hosts: impl IntoIterator<Item = String>) {
        let summaries = self.summaries.lock();
        let mut unshared = self.unshared.lock();
        unshared.extend(hosts.into_iter().filter(|host| summaries.has_host(host)));
    }

    /// Hosts of `origins` (summarized here) whose summaries the fleet lost: shared again, whole,
    /// with the next share.
    pub fn origins_unshared_again(&self, origins: &[String]) {
        let summaries = self.summaries.lock();
        let mut unshared = self.unshared.lock();
        unshared.extend(
            origins
                .iter()
                .filter_map(|origin| summaries.get(origin))
                .map(|summary| summary.host.clone()),
        );
    }

    /// Signatures of every origin summarized here (`k` sketch entries each).
    pub fn signatures(&self, k: usize) -> Vec<OriginSignature> {
        let summaries = self.summaries.lock();
        summaries
            .hosts()
            .iter()
            .map(|summary| OriginSignature::of(summary, k))
            .collect()
    }

    /// Runs detection on this sidecar's summaries joined with `fleet`'s (other sidecars'
    /// summaries; those of an origin summarized here are left out, the local one is newer for
    /// this sidecar). Blocking; the local summaries are copied under the lock, then released.
    pub fn detect_with(&self, fleet: Vec<HostSummary>, config: &MirrorConfig) -> Detection {
        if fleet.is_empty() {
            return self.detect(config);
        }
        let mut union = self.summaries.lock().clone();
        for summary in fleet {
            if union.get(&summary.origin).is_none() {
                union.insert(summary);
            }
        }
        detect(&union, config)
    }

    /// Runs detection on the summaries as they are. Blocking; holds the summaries meanwhile
    /// (ingest waits, Canonicalize skips its sample).
    pub fn detect(&self, config: &MirrorConfig) -> Detection {
        detect(&self.summaries.lock(), config)
    }

    /// Whether `origin` (`scheme://host[:port]`) is summarized here.
    pub fn has_origin(&self, origin: &str) -> bool {
        self.summaries.lock().get(origin).is_some()
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
        let sampled = |batch: &[Url]| {
            let mut sample = watch.batch_sample(batch.len());
            for (i, url) in batch.iter().enumerate() {
                sample.offer(i, || Some(url.clone()));
            }
            sample
        };
        let early = sampled(&[url("http://a.org/x")]);
        assert!(
            early.is_empty(),
            "nothing is copied while no host is watched"
        );
        watch.observe_batch(early);
        assert_eq!(watch.origins(), 0, "no host is summarized before a fetch");
        watch.observe_fetch(&url("http://a.org/1"), "10.0.0.1".parse().ok());
        let batch: Vec<Url> = (0..1000)
            .map(|i| url(&format!("http://a.org/p{i}")))
            .chain([url("http://b.org/1")])
            .collect();
        let sample = sampled(&batch);
        assert!(sample.len() <= URLS_PER_BATCH);
        watch.observe_batch(sample);
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
        assert!(
            sampled(&batch).is_empty(),
            "nothing is copied once the last host is forgotten"
        );
    }

    fn page(text: &str) -> EvidencePage {
        EvidencePage {
            url: text.into(),
            final_url: None,
            rel_canonical: None,
            digest: Default::default(),
            shortlink: None,
        }
    }

    fn print(simhash: u64) -> Fingerprint {
        Fingerprint {
            simhash,
            exact: simhash,
            tokens: 200,
            strength: crate::content::Strength::Strong,
        }
    }

    #[test]
    fn out_links_of_watched_pages_reach_the_summaries_with_their_marks() {
        let watch = MirrorWatch::default();
        let links = |at: &str| {
            let at = url(at);
            PageLinks::of(
                &at,
                &at,
                ["/b.html", "c.html", "https://other.org/", "mailto:x@a.org"],
                LINKS_PER_PAGE,
            )
        };
        // Not watched yet: ignored.
        watch.observe_links(
            "http://a.org/x/1.html",
            &url("http://a.org/x/1.html"),
            links("http://a.org/x/1.html"),
        );
        assert!(watch.links.lock().is_empty());
        watch.observe_fetch(&url("http://a.org/x/1.html"), None);
        let one = "http://a.org/x/1.html";
        let two = "http://a.org/x/2.html";
        watch.observe_links(one, &url(one), links(one));
        watch.observe_links(two, &url(two), links(two));
        // A relearn whose sample holds only the first page.
        watch.observe_marks(
            "a.org",
            &[page(one).into()],
            &[(Some(one.into()), print(7))],
        );
        {
            let summaries = watch.summaries.lock();
            let a = summaries.get("http://a.org").unwrap();
            let linked = &a.pages["/x/1.html"];
            assert_eq!(linked.links.len(), 3, "{linked:?}");
            assert_eq!(a.link_hosts.get("other.org"), Some(&1));
        }
        let kept: Vec<String> = watch.links.lock()["a.org"].keys().cloned().collect();
        assert_eq!(kept, [one], "links of pages out of the sample are dropped");
        // Marks computed again keep the links.
        watch.observe_marks(
            "a.org",
            &[page(one).into()],
            &[(Some(one.into()), print(7))],
        );
        assert_eq!(
            watch.summaries.lock().get("http://a.org").unwrap().pages["/x/1.html"]
                .links
                .len(),
            3
        );
        // Bounded per host.
        for i in 0..2 * LINKED_PAGES_PER_HOST {
            let p = format!("http://a.org/p{i}");
            watch.observe_links(&p, &url(&p), links(&p));
        }
        assert_eq!(watch.links.lock()["a.org"].len(), LINKED_PAGES_PER_HOST);
        watch.forget_host("a.org");
        assert!(watch.links.lock().is_empty());
    }

    #[test]
    fn relearned_hosts_wait_to_be_shared_until_taken_and_a_failed_share_gives_them_back() {
        let watch = MirrorWatch::default();
        let one = "http://a.org/1.html";
        watch.observe_fetch(&url(one), None);
        watch.observe_fetch(&url("http://b.org/1.html"), None);
        let (changed, held) = watch.take_unshared();
        assert!(changed.is_empty(), "no relearn yet");
        assert_eq!(held.len(), 2);
        watch.observe_marks(
            "a.org",
            &[page(one).into()],
            &[(Some(one.into()), print(7))],
        );
        let (changed, held) = watch.take_unshared();
        let origins: Vec<&str> = changed.iter().map(|s| s.origin.as_str()).collect();
        assert_eq!(
            (origins, held),
            (vec!["http://a.org"], vec!["http://b.org".to_owned()])
        );
        assert_eq!(changed[0].pages.len(), 1, "shared with its marks");
        assert!(watch.take_unshared().0.is_empty(), "taken once");
        watch.unshared_again(["a.org".to_owned(), "gone.org".to_owned()]);
        assert_eq!(
            watch.take_unshared().0.len(),
            1,
            "a host not summarized is not given back"
        );
        watch.observe_marks(
            "a.org",
            &[page(one).into()],
            &[(Some(one.into()), print(7))],
        );
        watch.forget_host("a.org");
        assert!(
            watch.take_unshared().0.is_empty(),
            "a forgotten host is not shared"
        );
    }

    #[test]
    fn detection_joins_the_fleets_summaries_and_keeps_the_local_one_of_an_origin() {
        let watch = MirrorWatch::default();
        let here: Vec<String> = (0..8)
            .map(|i| format!("http://www.site.org/p{i}.html"))
            .collect();
        // Distinct contents, far apart in simhash distance.
        let content = |i: usize| print(1 + (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for at in &here {
            watch.observe_fetch(&url(at), None);
        }
        let samples: Vec<std::sync::Arc<EvidencePage>> =
            here.iter().map(|at| page(at).into()).collect();
        let prints: Vec<(Option<String>, Fingerprint)> = here
            .iter()
            .enumerate()
            .map(|(i, at)| (Some(at.clone()), content(i)))
            .collect();
        watch.observe_marks("www.site.org", &samples, &prints);
        let mut fleet = HostSummaries::default();
        for i in 0..8 {
            let there = url(&format!("http://site.org/p{i}.html"));
            fleet.observe_page(&there, ContentMark::from_fingerprint(&content(i)), []);
        }
        // Another sidecar's copy of an origin summarized here is left out.
        fleet.observe_url(&url("http://www.site.org/elsewhere"));
        let config = MirrorConfig::default();
        assert!(watch.detect(&config).sets.is_empty(), "one site alone");
        let detection = watch.detect_with(fleet.hosts().to_vec(), &config);
        assert_eq!(detection.sets.len(), 1, "{:?}", detection.confirmed);
        let local = watch.summaries.lock();
        assert_eq!(local.len(), 1, "the local summaries are unchanged");
        let site = local.get("http://www.site.org").unwrap();
        assert!(!site.paths.contains("/elsewhere"));
    }
}
