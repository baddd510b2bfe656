//! A host's evidence as the sidecar holds it: each accepted page observed into the host's template
//! model and its [`EvidencePage`] offered to the host's reservoir, bounded per host and globally;
//! every change made durable in one store transaction before the ingest stream that caused it is
//! acknowledged.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{sample_record, Learning};
use crate::content::TemplateModel;
use crate::ingest::sample::{Decision, SampleBytes};
use crate::mirrors::PageLinks;
use crate::pipeline::{AnalyzedPage, EvidencePage};
use crate::store::{SampleBatch, StoreError, StoredSample};
use crate::telemetry;

/// One sampled page: its store id and its evidence. Stored with postcard, which encodes a nested
/// struct exactly as its fields inline, so samples stored before the evidence type existed
/// (`id, url, final_url, rel_canonical, digest`) still decode.
///
/// The evidence is shared (`Arc`): a relearn takes the host's samples out of the sampler's lock
/// by reference instead of copying every digest (a copy of each sample's vectors was about 2% of
/// the sidecar's CPU under ingest load, BENCHMARKS.md stop 28). The `Arc` is written and read as
/// the evidence itself, so the stored bytes are the same.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Sample {
    pub(super) id: u64,
    #[serde(with = "shared_evidence")]
    pub(super) page: Arc<EvidencePage>,
}

/// Serde for [`Sample::page`]: the shared evidence encoded as the evidence itself.
mod shared_evidence {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::pipeline::EvidencePage;

    pub(super) fn serialize<S: Serializer>(
        page: &Arc<EvidencePage>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        page.as_ref().serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Arc<EvidencePage>, D::Error> {
        EvidencePage::deserialize(deserializer).map(Arc::new)
    }
}

/// How a sampled page was fetched, for mirror detection after a restart: stored after the
/// page's [`Sample`] in the same record, so the host summaries (the fetched URL, the server
/// address, the page's out-links bounded as [`crate::service::mirrors`] bounds them) are rebuilt
/// from the store at start instead of waiting for pages to arrive again. Postcard ignores bytes
/// after a value, so a record with these facts still decodes as a bare `Sample` (the fleet's
/// shared evidence, older readers), and a record written before them simply has none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FetchFacts {
    /// The URL the body came from, when a redirect ended elsewhere.
    served_from: Option<String>,
    server_ip: Option<std::net::IpAddr>,
    /// [`PageLinks::hashed`].
    links: Vec<u64>,
    /// [`PageLinks::hosts`].
    link_hosts: Vec<(String, u32)>,
}

impl FetchFacts {
    /// The facts of a page fetched from `served_from` (its URL unless redirected) at `server_ip`.
    pub fn new(
        page_url: &str,
        served_from: &url::Url,
        server_ip: Option<std::net::IpAddr>,
        links: PageLinks,
    ) -> FetchFacts {
        FetchFacts {
            served_from: (served_from.as_str() != page_url).then(|| served_from.to_string()),
            server_ip,
            links: links.hashed,
            link_hosts: links.hosts,
        }
    }
}

/// Largest per-thread encoding buffer kept between samples: a huge page's record does not leave
/// every ingest thread holding its size.
const RECORD_SCRATCH_KEPT_BYTES: usize = 256 << 10;

thread_local! {
    /// Where this thread encodes sample records: into a buffer that keeps its capacity from one
    /// sample to the next, instead of a vector grown from empty, then copied out once at its
    /// exact size.
    static RECORD_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Postcard output appended to a vector (a sample's fetch facts, after the sample), with short
/// writes made byte by byte: the facts are mostly varints of a few bytes each, written as slices,
/// and a copy of a few bytes through `memcpy` costs more than the bytes themselves.
struct AppendFlavor<'a>(&'a mut Vec<u8>);

/// Writes of at most this many bytes are made byte by byte.
const BYTEWISE_WRITE_BYTES: usize = 8;

impl postcard::ser_flavors::Flavor for AppendFlavor<'_> {
    type Output = ();

    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        self.0.push(byte);
        Ok(())
    }

    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        if data.len() <= BYTEWISE_WRITE_BYTES {
            self.0.reserve(data.len());
            for &byte in data {
                self.0.push(byte);
            }
        } else {
            self.0.extend_from_slice(data);
        }
        Ok(())
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
}

/// A sample's stored record (the sample, then its fetch facts when there are any: see
/// [`FetchFacts`]) and the length of its first part, the bare sample the fleet shares. The sample
/// is written by [`sample_record`] (postcard's bytes, without serde's per-lane calls); facts that
/// cannot be encoded are left out.
fn encode_record(sample: &Sample, facts: Option<&FetchFacts>) -> (Vec<u8>, usize) {
    RECORD_SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        scratch.clear();
        sample_record::append_sample(&mut scratch, sample);
        let bare = scratch.len();
        if let Some(facts) = facts {
            if postcard::serialize_with_flavor(facts, AppendFlavor(&mut scratch)).is_err() {
                scratch.truncate(bare);
            } else if let Some(shortlink) = &sample.page.shortlink {
                // The third part: the page's declared shortlink (see `decode_record`).
                let with_facts = scratch.len();
                let part = Some(shortlink.as_str());
                if postcard::serialize_with_flavor(&part, AppendFlavor(&mut scratch)).is_err() {
                    scratch.truncate(with_facts);
                }
            }
        }
        let record = (scratch.to_vec(), bare);
        if scratch.capacity() > RECORD_SCRATCH_KEPT_BYTES {
            *scratch = Vec::new();
        }
        record
    })
}

/// A stored sample record: the sample and, when recorded, its fetch facts, then the shortlink
/// its page declared (`EvidencePage::shortlink`, which the bare sample's layout cannot hold).
/// Each part is optional at the end of the record: a record written before a part existed has
/// none, and a reader that knows fewer parts ignores the bytes after the ones it knows (postcard
/// reads a value and leaves what follows). The fleet shares the bare sample only, so a peer's
/// samples carry no shortlink.
fn decode_record(payload: &[u8]) -> Result<(Sample, Option<FetchFacts>), postcard::Error> {
    let (mut sample, rest) = postcard::take_from_bytes::<Sample>(payload)?;
    if rest.is_empty() {
        return Ok((sample, None));
    }
    // Facts that do not decode cost the page its mirror summary and its shortlink, not its
    // sample.
    let Ok((facts, rest)) = postcard::take_from_bytes::<FetchFacts>(rest) else {
        return Ok((sample, None));
    };
    if let Ok(Some(shortlink)) = postcard::from_bytes::<Option<String>>(rest) {
        if let Some(page) = Arc::get_mut(&mut sample.page) {
            page.shortlink = Some(shortlink);
        }
    }
    Ok((sample, Some(facts)))
}

/// Bytes a sample costs besides its evidence: its slot in the reservoir's vector (the vector
/// doubles as it grows, so a slot is counted twice) and its entry in the reservoir's URL-key
/// table (16 bytes and a control byte, at most 7/8 of the buckets full, up to twice as many
/// buckets after growing).
///
/// The slot is counted as it was when it held the evidence inline (an id and the evidence, twice),
/// so budgets evict exactly the samples they did: that over-counts the slot, which now holds an id
/// and a pointer, by more than the shared evidence's own block costs (the evidence, counted again
/// by [`EvidencePage::held_bytes`], and the `Arc`'s two counts).
const SAMPLE_SLOT_BYTES: usize =
    2 * (std::mem::size_of::<u64>() + std::mem::size_of::<EvidencePage>()) + 2 * 8 * (16 + 1) / 7;

/// Bytes every sampled host costs besides its samples and its template model: the sampler's
/// entry (the reservoir, the host's name twice, its places in the by-bytes and by-last-offer
/// indexes), the learning state's entry (the per-host map's slot, the shared, locked
/// [`super::HostLearning`] and the host's name), the per-host counters and the mirror summary a
/// fetched page of the host starts. The names' bytes are counted with the host
/// ([`host_bytes`]); the summaries' paths and pages, which grow with the URLs seen, are not
/// counted (see BENCHMARKS.md, "Memory per host and per sample").
pub(super) const HOST_ENTRY_BYTES: usize = 1_024;

/// What the learning loop holds for `host` beside its samples and [`HOST_ENTRY_BYTES`]: its
/// template model and its name's copies.
fn host_bytes(host: &str, template: &TemplateModel) -> usize {
    template.held_bytes() + 6 * crate::heap::alloc_bytes(host.len())
}

impl SampleBytes for Sample {
    fn sample_bytes(&self) -> usize {
        SAMPLE_SLOT_BYTES + self.page.held_bytes()
    }

    /// One URL, one sample: a page fetched again (or resent by a retrying client) replaces its
    /// earlier sample.
    fn sample_key(&self) -> Option<u64> {
        Some(xxhash_rust::xxh3::xxh3_64(self.page.url.as_bytes()))
    }
}

/// Per-host figures for ListHosts.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostLearningSummary {
    pub samples: u64,
    pub clusters: u64,
    pub last_learned_unix_ms: i64,
}

impl Learning {
    /// Restores stored template models and samples; a host without a trusted model rebuilds it
    /// from its samples.
    pub(super) fn restore_samples(&self) -> Result<(), StoreError> {
        let mut templates: HashMap<String, TemplateModel> = HashMap::new();
        for (host, bytes) in self.store.load_templates()? {
            match postcard::from_bytes::<TemplateModel>(&bytes) {
                Ok(model) => {
                    templates.insert(host, model);
                }
                Err(err) => self.store.count_undecodable("template", &host, &err),
            }
        }
        let mut max_id = 0;
        let mut sampler = self.sampler.lock();
        let mut orphans = SampleBatch::default();
        let mut gone_hosts = Vec::new();
        let mut fetches: HashMap<(String, u64), (String, FetchFacts)> = HashMap::new();
        for StoredSample { host, id, payload } in self.store.load_samples()? {
            let sample: Sample = match decode_record(&payload) {
                Ok((sample, facts)) => {
                    if let Some(facts) = facts {
                        fetches.insert((host.clone(), id), (sample.page.url.clone(), facts));
                    }
                    sample
                }
                Err(err) => {
                    self.store
                        .count_undecodable("sample", &(host.as_str(), id), &err);
                    continue;
                }
            };
            max_id = max_id.max(id);
            let state = self.host_state(&host);
            let held_for_host = match templates.get(&host) {
                Some(model) => host_bytes(&host, model),
                None => {
                    // No trusted model: rebuild it from the samples themselves.
                    let mut state = state.lock();
                    state.template.observe_digest(&sample.page.digest);
                    host_bytes(&host, &state.template)
                }
            };
            let offer = sampler.offer_with_host_bytes(&host, sample, held_for_host);
            // A budget smaller than when the samples were written: hosts may give way.
            gone_hosts.extend(offer.evicted_hosts);
            // Bounds may have shrunk since the samples were written; drop what no longer fits.
            for (evicted_host, evicted) in offer.evicted {
                orphans.delete.push((evicted_host, evicted.id));
            }
            if let Some(returned) = offer.returned {
                orphans.delete.push((host.clone(), returned.id));
            }
        }
        // The fetch facts of the samples kept, for the mirror summaries.
        let kept_fetches: Vec<(String, FetchFacts)> = fetches
            .into_iter()
            .filter(|((host, id), _)| {
                sampler
                    .samples(host)
                    .is_some_and(|samples| samples.iter().any(|sample| sample.id == *id))
            })
            .map(|(_, fetch)| fetch)
            .collect();
        drop(sampler);
        for (page_url, facts) in kept_fetches {
            self.restore_fetch(&page_url, facts);
        }
        for (host, model) in templates {
            self.host_state(&host).lock().template = model;
        }
        for host in gone_hosts {
            if self.sampler.lock().samples(&host).is_none() {
                self.forget_sampled_host(&host);
            }
        }
        self.next_sample_id.store(max_id + 1, Ordering::Relaxed);
        self.store.apply_samples(&orphans)
    }

    /// A fetched page's mirror summary as ingest gave it, from its stored fetch facts.
    fn restore_fetch(&self, page_url: &str, facts: FetchFacts) {
        let Ok(url) = url::Url::parse(page_url) else {
            return;
        };
        let served_from = facts
            .served_from
            .as_deref()
            .and_then(|at| url::Url::parse(at).ok())
            .unwrap_or_else(|| url.clone());
        self.observe_fetch(&url, facts.server_ip);
        let links = PageLinks {
            hashed: facts.links,
            hosts: facts.link_hosts,
        };
        self.sidecar
            .mirrors
            .observe_links(page_url, &served_from, links);
    }

    /// A fetched page as ingest observes it: into the host's template model and sample
    /// ([`Learning::observe`]), with its fetch facts stored with its sample, and into the mirror
    /// summaries (the fetch; the out-links when sampled). True when it was sampled.
    pub fn observe_fetched(
        &self,
        page: AnalyzedPage,
        fetched: &url::Url,
        served_from: &url::Url,
        server_ip: Option<std::net::IpAddr>,
        links: PageLinks,
    ) -> bool {
        let page_url = page.url.clone();
        let facts = FetchFacts::new(&page_url, served_from, server_ip, links);
        let sampled = self.observe_with(page, Some(&facts));
        self.observe_fetch(fetched, server_ip);
        if sampled {
            // The links stored with the sample, handed on rather than copied.
            let links = PageLinks {
                hashed: facts.links,
                hosts: facts.link_hosts,
            };
            self.sidecar
                .mirrors
                .observe_links(&page_url, served_from, links);
        }
        sampled
    }

    /// Observes one analysed page into its host's template model and offers its evidence to the
    /// host's sample; true when it was sampled.
    pub fn observe(&self, page: AnalyzedPage) -> bool {
        self.observe_with(page, None)
    }

    /// [`Learning::observe`], storing `facts` with the sample.
    fn observe_with(&self, page: AnalyzedPage, facts: Option<&FetchFacts>) -> bool {
        let host = page.host.clone();
        let state = self.host_state(&host);
        let (evidence, held_for_host) = {
            let mut state = state.lock();
            state.template_dirty = true;
            let evidence = page.observe_into(&mut state.template);
            (evidence, host_bytes(&host, &state.template))
        };
        let sample = Sample {
            id: self.next_sample_id.fetch_add(1, Ordering::Relaxed),
            page: Arc::new(evidence),
        };
        let id = sample.id;
        let url_key = sample.sample_key();
        // The store keeps the sample with its fetch facts; the fleet shares the sample alone
        // (the record's first part).
        let record = encode_record(&sample, facts);
        let (offer, held) = {
            let mut sampler = self.sampler.lock();
            let offer = sampler.offer_with_host_bytes(&host, sample, held_for_host);
            (offer, sampler.total_bytes())
        };
        metrics::gauge!(telemetry::SAMPLE_HELD_BYTES).set(held as f64);
        let kept = offer.kept();
        if offer.decision == Decision::HostRefused {
            metrics::counter!(telemetry::SAMPLE_HOSTS_REFUSED).increment(1);
            // The page was observed into a model for a host the sampler does not hold: the
            // model goes, or refused hosts would hold memory outside the budget.
            self.forget_sampled_host(&host);
        }
        metrics::counter!(telemetry::SAMPLE_HOSTS_REPLACED)
            .increment(offer.evicted_hosts.len() as u64);
        for gone in &offer.evicted_hosts {
            self.forget_sampled_host(gone);
        }
        let mut pending = self.pending.lock();
        if kept {
            let (payload, bare) = record;
            if let Some(url_key) = url_key {
                self.share_sample(&host, url_key, &payload[..bare]);
            }
            pending.put.push(StoredSample {
                host: host.clone(),
                id,
                payload,
            });
            // A refreshed page is new evidence too (its content may have changed).
            let mut state = state.lock();
            state.trigger.sampled(tokio::time::Instant::now());
            state.trigger_dirty = true;
        }
        let dropped = offer.evicted.len() as u64;
        for (evicted_host, evicted) in offer.evicted {
            pending.delete.push((evicted_host, evicted.id));
        }
        metrics::counter!(telemetry::SAMPLES_DROPPED).increment(dropped);
        kept
    }

    /// A host the sampler does not hold (it gave way to a new host or to the budget, or was
    /// refused): its template model, trigger and per-host counters go (per-host memory stays
    /// within what the sampler holds); its rule versions and counters stay, since its rules stay
    /// live.
    fn forget_sampled_host(&self, host: &str) {
        self.sidecar.mirrors.forget_host(host);
        let keeps_rules = self
            .hosts
            .get(host)
            .is_some_and(|state| state.lock().history.has_versions());
        if keeps_rules {
            if let Some(state) = self.hosts.get(host) {
                let mut state = state.lock();
                state.template = crate::content::TemplateModel::new(&self.content);
                state.template_dirty = true;
                state.trigger = super::scheduler::Trigger::default();
                state.trigger_dirty = true;
            }
        } else {
            self.hosts.remove(host);
            self.sidecar.forget_host(host);
            let mut pending = self.pending.lock();
            pending.forget_template(host);
            pending
                .delete_state
                .push(super::scheduler::trigger_key(host));
        }
    }

    /// A fetched page's URL and server address for mirror detection, when the sampler keeps its
    /// host (so mirror summaries are bounded by the sampled hosts and go with them).
    pub fn observe_fetch(&self, url: &url::Url, ip: Option<std::net::IpAddr>) {
        let Some(host) = url.host_str() else {
            return;
        };
        if self.sampler.lock().samples(host).is_some() {
            self.sidecar.mirrors.observe_fetch(url, ip);
        }
    }

    /// Makes every pending sample change durable (one transaction). Blocking.
    pub fn persist_samples(&self) -> Result<(), StoreError> {
        let _serial = self.persist_lock.lock();
        let mut batch = std::mem::take(&mut *self.pending.lock());
        let schedule = self.schedule_rows();
        batch.state.extend(schedule.rows.iter().cloned());
        for entry in &self.hosts {
            let mut state = entry.value().lock();
            if state.template_dirty {
                state.template_dirty = false;
                match postcard::to_allocvec(&state.template) {
                    Ok(bytes) => batch.templates.push((entry.key().clone(), bytes)),
                    Err(err) => {
                        tracing::error!(host = %entry.key(), %err, "template model not encodable")
                    }
                }
            }
        }
        // A sample added and evicted before this commit needs neither write.
        if !batch.delete.is_empty() {
            let deleted: HashSet<(&str, u64)> = batch
                .delete
                .iter()
                .map(|(host, id)| (host.as_str(), *id))
                .collect();
            batch
                .put
                .retain(|sample| !deleted.contains(&(sample.host.as_str(), sample.id)));
        }
        let result = self.store.apply_samples(&batch);
        if result.is_err() {
            // Keep the changes for the next attempt; the caller reports the failure.
            let mut pending = self.pending.lock();
            pending.put.append(&mut batch.put);
            pending.delete.append(&mut batch.delete);
            pending.delete_templates.append(&mut batch.delete_templates);
            pending.delete_state.append(&mut batch.delete_state);
            self.schedule_not_stored(&schedule);
        }
        self.publish_gauges();
        result
    }

    /// A host's sampled evidence pages (a copy: learning runs without holding the sampler).
    pub(super) fn samples_of(&self, host: &str) -> Vec<Arc<EvidencePage>> {
        self.sampler
            .lock()
            .samples(host)
            .map_or_else(Vec::new, |samples| {
                samples
                    .iter()
                    .map(|sample| Arc::clone(&sample.page))
                    .collect()
            })
    }

    /// Pages in a host's sample.
    pub(super) fn sample_count_of(&self, host: &str) -> usize {
        self.sampler.lock().samples(host).map_or(0, <[Sample]>::len)
    }

    /// Pages in all samples.
    pub fn sample_count(&self) -> u64 {
        let sampler = self.sampler.lock();
        sampler
            .hosts()
            .map(|host| sampler.samples(host).map_or(0, <[Sample]>::len) as u64)
            .sum()
    }

    /// Hosts with at least one sample, sorted.
    pub(super) fn sampled_hosts(&self) -> Vec<String> {
        let sampler = self.sampler.lock();
        let mut hosts: Vec<String> = sampler
            .hosts()
            .filter(|host| sampler.samples(host).is_some_and(|s| !s.is_empty()))
            .map(str::to_owned)
            .collect();
        hosts.sort_unstable();
        hosts
    }

    /// Per-host figures for ListHosts.
    pub fn host_summary(&self, host: &str) -> HostLearningSummary {
        let samples = self.sample_count_of(host) as u64;
        let Some(state) = self.hosts.get(host).map(|entry| entry.value().clone()) else {
            return HostLearningSummary {
                samples,
                ..HostLearningSummary::default()
            };
        };
        let state = state.lock();
        HostLearningSummary {
            samples,
            clusters: state.clusters,
            last_learned_unix_ms: state.last_learned_unix_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{self, ContentConfig};

    #[test]
    fn sample_records_with_and_without_fetch_facts_decode() {
        let sample = Sample {
            id: 7,
            page: Arc::new(EvidencePage {
                url: "http://a.org/x".into(),
                final_url: None,
                rel_canonical: Some("http://a.org/y".into()),
                digest: Default::default(),
                shortlink: None,
            }),
        };
        let bare = postcard::to_allocvec(&sample).unwrap();
        // A record stored before fetch facts existed.
        let (old, facts) = decode_record(&bare).unwrap();
        assert_eq!((old.id, old.page.url.as_str()), (7, "http://a.org/x"));
        assert_eq!(facts, None);
        let at = url::Url::parse("http://a.org/x").unwrap();
        let facts = FetchFacts::new(
            "http://a.org/x",
            &at,
            "10.0.0.1".parse().ok(),
            PageLinks::of(&at, &at, ["/b", "http://c.org/"], 100),
        );
        let mut record = bare.clone();
        record.extend(postcard::to_allocvec(&facts).unwrap());
        let (new, read) = decode_record(&record).unwrap();
        assert_eq!(new.page.rel_canonical, sample.page.rel_canonical);
        assert_eq!(read.as_ref(), Some(&facts));
        assert_eq!(facts.links.len(), 2);
        assert_eq!(facts.link_hosts, [("c.org".to_owned(), 1)]);
        // Readers of the bare sample (the fleet's evidence, older versions) skip the facts.
        let plain: Sample = postcard::from_bytes(&record).unwrap();
        assert_eq!(plain.page.url, sample.page.url);
        // Damaged facts cost the facts, not the sample.
        let mut damaged = bare;
        damaged.extend([0xff; 3]);
        let (kept, none) = decode_record(&damaged).unwrap();
        assert_eq!((kept.id, none), (7, None));
    }

    /// A page's declared shortlink survives its record (the store's, read back at a restart) as
    /// a third part after the fetch facts; the bare sample the fleet shares and the facts still
    /// decode as before for readers that do not know the part, and a record without it has none.
    #[test]
    fn a_records_shortlink_is_stored_after_its_fetch_facts() {
        let at = url::Url::parse("http://a.org/articles/a-title").unwrap();
        let facts = FetchFacts::new(
            at.as_str(),
            &at,
            "10.0.0.1".parse().ok(),
            PageLinks::of(&at, &at, ["/b"], 100),
        );
        let page = |shortlink: Option<&str>| Sample {
            id: 3,
            page: Arc::new(EvidencePage {
                url: at.to_string(),
                final_url: None,
                rel_canonical: None,
                digest: Default::default(),
                shortlink: shortlink.map(str::to_owned),
            }),
        };
        let declaring = page(Some("http://a.org/node/7"));
        let (record, bare_len) = encode_record(&declaring, Some(&facts));
        let (back, read) = decode_record(&record).unwrap();
        assert_eq!(back.page.shortlink.as_deref(), Some("http://a.org/node/7"));
        assert_eq!(read.as_ref(), Some(&facts));
        // Readers that know fewer parts: the bare sample, and the facts.
        let plain: Sample = postcard::from_bytes(&record).unwrap();
        assert_eq!(
            (plain.page.url.as_str(), plain.page.shortlink.as_deref()),
            (at.as_str(), None)
        );
        assert_eq!(
            postcard::from_bytes::<FetchFacts>(&record[bare_len..]).unwrap(),
            facts
        );
        // Without a shortlink, or without facts to follow, the record is as before.
        let (without, _) = encode_record(&page(None), Some(&facts));
        assert_eq!(decode_record(&without).unwrap().0.page.shortlink, None);
        assert_eq!(&record[..without.len()], &without[..]);
        let (alone, _) = encode_record(&declaring, None);
        assert_eq!(alone.len(), bare_len);
        // A damaged third part costs the shortlink only.
        let mut damaged = without;
        damaged.extend([0x01, 0xff]);
        let (kept, facts_kept) = decode_record(&damaged).unwrap();
        assert_eq!(
            (kept.page.shortlink.as_deref(), facts_kept),
            (None, Some(facts))
        );
    }

    /// A record encoded through the per-thread buffer is byte for byte postcard's own encoding of
    /// the sample followed by its facts, whatever was encoded on the thread before (a large
    /// record first, then a small one), and its first part is the bare sample the fleet shares.
    #[test]
    fn records_encoded_through_the_thread_buffer_are_postcards_own_bytes() {
        let at = url::Url::parse("http://a.org/x").unwrap();
        let facts = FetchFacts::new(
            "http://a.org/x",
            &at,
            "10.0.0.1".parse().ok(),
            PageLinks::of(&at, &at, ["/b", "http://c.org/"], 100),
        );
        // A large record first (a long URL: it outgrows the buffer kept between samples), then
        // records of shrinking size.
        for (i, (padding, paragraphs)) in
            [(300_000, 50), (2_000, 20), (0, 2)].into_iter().enumerate()
        {
            let html = format!(
                "<html><body><article>{}</article></body></html>",
                (0..paragraphs)
                    .map(|k| format!("<p>Paragraph w{k} with x{k} and y{k} words.</p>"))
                    .collect::<String>()
            );
            let sample = Sample {
                id: i as u64,
                page: Arc::new(EvidencePage {
                    url: format!("http://a.org/{i}?{}", "p".repeat(padding)),
                    final_url: None,
                    rel_canonical: None,
                    digest: content::analyze(html.as_bytes(), &ContentConfig::default()).digest,
                    shortlink: None,
                }),
            };
            let bare = postcard::to_allocvec(&sample).unwrap();
            let mut expected = bare.clone();
            expected.extend(postcard::to_allocvec(&facts).unwrap());
            let (record, bare_len) = encode_record(&sample, Some(&facts));
            if i == 0 {
                assert!(record.len() > RECORD_SCRATCH_KEPT_BYTES, "{}", record.len());
            }
            assert_eq!(record, expected, "sample {i}");
            assert_eq!(&record[..bare_len], &bare[..], "sample {i}");
            let (alone, alone_len) = encode_record(&sample, None);
            assert_eq!((alone, alone_len), (bare.clone(), bare.len()), "sample {i}");
        }
        assert!(
            RECORD_SCRATCH.with(|scratch| scratch.borrow().capacity()) <= RECORD_SCRATCH_KEPT_BYTES,
            "the buffer kept between samples is bounded"
        );
    }

    /// A page of host `host`: navigation, a sidebar, an article, a footer with a timestamp.
    fn page(host: usize, i: usize) -> AnalyzedPage {
        let nav: String = (0..10)
            .map(|k| format!("<a href=\"/section/{k}\">Section {k} of site {host}</a>"))
            .collect();
        let article: String = (0..5)
            .map(|p| {
                format!(
                    "<p>Story {i} of site {host}, paragraph {p}: {} and more words.</p>",
                    "text ".repeat(12 + (host + i * 7 + p) % 25)
                )
            })
            .collect();
        let html = format!(
            "<html><body><nav>{nav}</nav><div><aside><p>Sponsored line {} here.</p></aside>\
             <article>{article}</article></div><footer>Rendered {}</footer></body></html>",
            i % 7,
            1_700_000_000 + i
        );
        AnalyzedPage {
            host: format!("site{host}.example"),
            url: format!("http://site{host}.example/story/{i}"),
            final_url: None,
            rel_canonical: None,
            canonical_from_html: false,
            shortlink: None,
            analysis: content::analyze(html.as_bytes(), &ContentConfig::default()),
        }
    }

    /// Many hosts of a few pages under a small budget: what is held for them (samples, per-host
    /// entries, template models) stays within the budget, hosts give way to it, and no template
    /// model is kept for a host the sampler does not hold. Before the models were counted, every
    /// one of the 3,000 hosts kept its model (about 30 MiB here, whatever the budget).
    #[tokio::test]
    async fn many_hosts_under_a_small_budget_hold_no_more_than_the_budget() {
        use crate::config::Knobs;
        use crate::service::learning::learning_for_tests;

        let budget: usize = 2 << 20;
        let dir = tempfile::tempdir().expect("tempdir");
        let learning = learning_for_tests(Knobs {
            data_dir: Some(dir.path().join("store")),
            sample_budget_bytes: Some(budget as u64),
            ..Knobs::default()
        });
        let hosts = 3_000;
        for host in 0..hosts {
            for i in 0..3 {
                learning.observe(page(host, i));
            }
            if host % 500 == 499 {
                learning.persist_samples().expect("persist");
            }
        }
        let sampler = learning.sampler.lock();
        let held = sampler.total_bytes();
        assert!(held <= budget, "{held} bytes held, budget {budget}");
        let sampled = sampler.host_count();
        assert!(
            (50..hosts / 2).contains(&sampled),
            "{sampled} hosts sampled: the budget, not the crawl, bounds them"
        );
        assert!(sampler.stats().hosts_given_way_to_budget > 0);
        // Every model is of a sampled host, and everything counted is really in the budget.
        let mut models = 0;
        for entry in &learning.hosts {
            assert!(
                sampler.samples(entry.key()).is_some(),
                "{} keeps a model without samples",
                entry.key()
            );
            models += entry.value().lock().template.held_bytes();
        }
        let samples: usize = sampler.sample_bytes();
        assert!(
            models + samples <= held,
            "models {models} + samples {samples} are counted in {held}"
        );
        // The newest hosts are held: the least active gave way.
        assert!(sampler
            .samples(&format!("site{}.example", hosts - 1))
            .is_some());
        assert!(sampler.samples("site0.example").is_none());
    }

    /// The store keeps samples and template models in postcard, which is not self-describing:
    /// a serde attribute that skips fields would make them undecodable after a restart, and so
    /// would a change of the sample's shape.
    #[test]
    fn samples_and_template_models_survive_their_storage_encoding() {
        let config = ContentConfig {
            template_connectivity: true,
            ..ContentConfig::default()
        };
        let html = "<html><body><nav><a href=/a>a</a><a href=/b>b</a><a href=/c>c</a></nav>\
            <div><aside><p>Sponsored: a rotating line.</p></aside><article><p>One paragraph of \
            the article with enough words to matter.</p><p>A second paragraph, also with words.</p>\
            </article></div><footer>Page generated 2024-01-01</footer></body></html>";
        let mut model = TemplateModel::new(&config);
        let mut samples = Vec::new();
        for i in 0..5 {
            let analysis = content::analyze(html.as_bytes(), &config);
            let url = format!("http://example.com/{i}");
            model.observe_linked(&url, &analysis);
            samples.push(Sample {
                id: i,
                page: Arc::new(EvidencePage {
                    url,
                    final_url: None,
                    rel_canonical: Some("http://example.com/".into()),
                    digest: analysis.digest,
                    shortlink: None,
                }),
            });
        }
        assert!(
            samples[0]
                .page
                .digest
                .pagelets
                .iter()
                .any(|p| !p.blocks.is_empty()),
            "the page has blocks"
        );
        for sample in &samples {
            let bytes = postcard::to_allocvec(sample).expect("encode");
            let back: Sample = postcard::from_bytes(&bytes).expect("a stored sample decodes");
            assert_eq!(back.page, sample.page);
        }
        // The layout before samples held an EvidencePage: the same bytes.
        #[derive(Serialize)]
        struct FlatSample<'a> {
            id: u64,
            url: &'a str,
            final_url: Option<&'a str>,
            rel_canonical: Option<&'a str>,
            digest: &'a crate::content::PageDigest,
        }
        let first = &samples[0];
        let flat = postcard::to_allocvec(&FlatSample {
            id: first.id,
            url: &first.page.url,
            final_url: first.page.final_url.as_deref(),
            rel_canonical: first.page.rel_canonical.as_deref(),
            digest: &first.page.digest,
        })
        .expect("encode");
        assert_eq!(flat, postcard::to_allocvec(first).expect("encode"));
        let bytes = postcard::to_allocvec(&model).expect("encode");
        let back: TemplateModel = postcard::from_bytes(&bytes).expect("a stored model decodes");
        let digest = &samples[0].page.digest;
        assert_eq!(
            content::fingerprint_digest(digest, &back, &config),
            content::fingerprint_digest(digest, &model, &config)
        );
    }
}
