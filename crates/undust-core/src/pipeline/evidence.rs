//! A host's evidence: accepted pages read once, observed into the host's template model, kept as
//! compact [`EvidencePage`]s, and turned into duplicate clusters and labelled URLs on demand.
//!
//! Both shells fingerprint the same way: every page a host sends is observed by its incremental
//! [`TemplateModel`] as it arrives ([`AnalyzedPage::observe_into`]), the page's evidence is offered
//! to the host's bounded reservoir ([`crate::ingest::sample`]), and clustering fingerprints the kept
//! pages' digests against the model as it stands then ([`cluster_pages`]).
//!
//! A page's canonical is the one its record declares (the crawler's field, an HTTP `Link` header),
//! else the one its HTML head declares ([`PageAnalysis::declared_canonical`]), resolved against the
//! URL the body came from and statically normalized. A redirected page's body and canonical belong
//! to its final URL ([`ClusterBuilder::add_fetch`]).
//!
//! A page's shortlink is the one its HTML head declares ([`PageAnalysis::declared_shortlink`]:
//! Drupal's `/node/N`, WordPress's `/?p=N`), resolved and normalized the same way, and given to
//! the cluster builder for the URL the content was recorded for
//! ([`ClusterBuilder::add_shortlink`]), after the fetch itself, so it passes the same guards as
//! canonicals. The sample's encoded layout is unchanged: the sidecar's store keeps the shortlink
//! in a part of the record after the sample, and the fleet's shared samples carry none (see
//! [`EvidencePage::shortlink`]).

use serde::{Deserialize, Serialize};

use super::accept::Evidence;
use crate::canon::normalize::StaticNormalizer;
use crate::cluster::{ClusterBuilder, ClusterConfig, Clustering, PageEvidence};
use crate::content::{self, ContentConfig, Fingerprint, PageAnalysis, PageDigest, TemplateModel};
use crate::ingest::pages::UrlEvidence;
use crate::learn::LabelledUrl;

/// What is kept of one page as evidence: its URL evidence and content digest, never its body.
///
/// The sidecar stores it with postcard, which is not self-describing: fields cannot be added,
/// removed or reordered without breaking the decoding of stored samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidencePage {
    /// The URL fetched (statically normalized).
    pub url: String,
    /// Where the fetch ended after redirects, when elsewhere (statically normalized).
    pub final_url: Option<String>,
    /// The canonical the record declares, else the one the HTML head declares (normalized).
    pub rel_canonical: Option<String>,
    /// The page's content digest (pagelets with identities and simhash contributions).
    pub digest: PageDigest,
    /// The shortlink the HTML head declares (normalized). Not part of this struct's encoded
    /// layout (postcard has no optional trailing fields, and stored records and the fleet's
    /// shared samples must keep decoding): the sidecar's store keeps it in a part of its own
    /// after the sample, and a sample shared by a fleet peer has none (its canonical and
    /// redirect evidence still count).
    #[serde(skip)]
    pub shortlink: Option<String>,
}

impl EvidencePage {
    /// Bytes this page holds in memory (the struct, its strings and its digest's heap parts, as
    /// the allocator takes them: see [`crate::heap`]).
    pub fn held_bytes(&self) -> usize {
        use crate::heap::alloc_bytes;
        let urls = alloc_bytes(self.url.capacity())
            + self
                .final_url
                .as_ref()
                .map_or(0, |u| alloc_bytes(u.capacity()))
            + self
                .rel_canonical
                .as_ref()
                .map_or(0, |u| alloc_bytes(u.capacity()))
            + self
                .shortlink
                .as_ref()
                .map_or(0, |u| alloc_bytes(u.capacity()));
        std::mem::size_of::<EvidencePage>() + urls + self.digest.held_bytes()
    }
}

/// An accepted page read once: its analysis (for the template model) and its URL evidence.
#[derive(Debug, Clone)]
pub struct AnalyzedPage {
    /// The host it is evidence for.
    pub host: String,
    /// The URL fetched (statically normalized).
    pub url: String,
    /// Where the fetch ended, when elsewhere (statically normalized).
    pub final_url: Option<String>,
    /// The canonical declared by the record, else by the HTML (normalized).
    pub rel_canonical: Option<String>,
    /// True when the canonical came from the page's HTML (the record declared none).
    pub canonical_from_html: bool,
    /// The shortlink the HTML declares (normalized).
    pub shortlink: Option<String>,
    /// The content analysis.
    pub analysis: PageAnalysis,
}

/// Reads an accepted page's body once (CPU-bound): pagelets, template features, and the canonical
/// its HTML declares when its record declares none.
pub fn analyze(
    evidence: Evidence,
    normalizer: &StaticNormalizer,
    config: &ContentConfig,
) -> AnalyzedPage {
    let analysis = content::analyze(&evidence.body, config);
    let mut canonical_from_html = false;
    let served_from = evidence.final_url.as_ref().unwrap_or(&evidence.url);
    let shortlink = analysis
        .declared_shortlink(served_from)
        .and_then(|declared| normalizer.normalize(declared.as_str()).ok())
        .map(String::from);
    let rel_canonical = evidence.rel_canonical.or_else(|| {
        let declared = analysis.declared_canonical(served_from)?;
        let normalized = normalizer.normalize(declared.as_str()).ok()?;
        canonical_from_html = true;
        Some(normalized)
    });
    AnalyzedPage {
        host: evidence.host,
        url: String::from(evidence.url),
        final_url: evidence.final_url.map(String::from),
        rel_canonical: rel_canonical.map(String::from),
        canonical_from_html,
        shortlink,
        analysis,
    }
}

impl AnalyzedPage {
    /// Observes the page into its host's template model and keeps its evidence (the analysis's
    /// links are dropped here: the model has used them).
    pub fn observe_into(self, template: &mut TemplateModel) -> EvidencePage {
        template.observe_linked(&self.url, &self.analysis);
        EvidencePage {
            url: self.url,
            final_url: self.final_url,
            rel_canonical: self.rel_canonical,
            digest: self.analysis.digest,
            shortlink: self.shortlink,
        }
    }
}

/// A host's clusters and the fingerprint of each page.
#[derive(Debug)]
pub struct HostClusters {
    /// The clusters (URLs of other hosts may appear as redirect or canonical targets).
    pub clustering: Clustering,
    /// Per page, in page order: the URL its content was recorded for (the final URL of a redirected
    /// page; `None` when it was not recorded, see [`ClusterBuilder::add_fetch`]) and its fingerprint.
    pub fingerprints: Vec<(Option<String>, Fingerprint)>,
}

impl HostClusters {
    /// Clusters with more than one member.
    pub fn duplicate_clusters(&self) -> usize {
        self.clustering
            .clusters()
            .iter()
            .filter(|cluster| cluster.members.len() > 1)
            .count()
    }
}

/// Fingerprints a host's pages against its template model and clusters them on near-duplicate,
/// exact, redirect and canonical evidence, and on the host's URL evidence from records without
/// content (an archive's redirects, revisits and payload digests: [`super::url_evidence`]).
pub fn cluster_pages<'a>(
    pages: impl IntoIterator<Item = &'a EvidencePage>,
    url_evidence: &[UrlEvidence],
    template: &TemplateModel,
    config: &ContentConfig,
) -> HostClusters {
    let mut builder = ClusterBuilder::new(ClusterConfig::default());
    let fingerprints = pages
        .into_iter()
        .map(|page| {
            let print = content::fingerprint_digest(&page.digest, template, config);
            let at = builder.add_fetch(
                &page.url,
                page.final_url.as_deref(),
                page.rel_canonical.as_deref(),
                PageEvidence::from(&print),
            );
            if let (Some(content_url), Some(shortlink)) = (&at, &page.shortlink) {
                builder.add_shortlink(content_url, shortlink);
            }
            (at, print)
        })
        .collect();
    for evidence in url_evidence {
        builder.add_url_evidence(evidence);
    }
    HostClusters {
        clustering: builder.finish(),
        fingerprints,
    }
}

/// The learner's training set for `host`: its URLs with their cluster (URLs of other hosts, which
/// redirects and canonicals may bring in, are left out, and so are the Weak pages whose cluster
/// is no evidence: `Clustering::is_unresolved`), in URL order.
pub fn labelled(host: &str, clustering: &Clustering) -> Vec<LabelledUrl> {
    clustering
        .learning_assignments()
        .filter(|(url, _)| {
            url::Url::parse(url)
                .ok()
                .is_some_and(|u| u.host_str() == Some(host))
        })
        .map(|(url, cluster)| LabelledUrl {
            url: url.to_owned(),
            cluster,
        })
        .collect()
}
