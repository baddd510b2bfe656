//! What the learner's unit tests share: labelled samples, a site-rule search run on them with a
//! canonicalizer of its actions, and a host's outputs in duplicate clusters for the candidate
//! searches that read them (`keyless_id`, `post_pages`, `routed_ids`, `segments`, `thin_tails`,
//! `site::vocabulary`).

use std::borrow::Cow;

use url::Url;

use super::config::LearnConfig;
use super::site::{learn, SmallClusters};
use super::LabelledUrl;
use crate::canon::rules::{SiteAction, SiteRewriter};

/// A sample's path and query, as the candidate searches read them.
pub(super) type Output = (Cow<'static, str>, Option<Cow<'static, str>>);

/// A labelled sample.
pub(super) fn lu(url: &str, cluster: u64) -> LabelledUrl {
    LabelledUrl {
        url: url.to_owned(),
        cluster,
    }
}

/// The site actions learned with the defaults and a canonicalizer with them.
pub(super) fn learned(samples: &[LabelledUrl]) -> (Vec<SiteAction>, impl Fn(&str) -> String) {
    let out = learn(samples, &LearnConfig::default());
    let actions: Vec<SiteAction> = out.rules.iter().map(|r| r.action.clone()).collect();
    let rw = SiteRewriter::new(actions.iter());
    let canon = move |u: &str| {
        let url = Url::parse(u).unwrap();
        rw.rewrite(&url).unwrap_or_else(|| url.to_string())
    };
    (actions, canon)
}

/// The output of a path with its query (`/a?b=1`).
pub(super) fn output(url: &str) -> Output {
    match url.split_once('?') {
        Some((p, q)) => (Cow::Owned(p.to_owned()), Some(Cow::Owned(q.to_owned()))),
        None => (Cow::Owned(url.to_owned()), None),
    }
}

/// Samples (one output per entry) in clusters given as groups of outputs.
pub(super) fn host(groups: &[&[&str]]) -> (Vec<Output>, SmallClusters) {
    let mut outputs = Vec::new();
    let mut clusters = SmallClusters::default();
    for (c, group) in groups.iter().enumerate() {
        for url in *group {
            clusters
                .entry(c as u64)
                .or_default()
                .push(outputs.len() as u32);
            outputs.push(output(url));
        }
    }
    (outputs, clusters)
}
