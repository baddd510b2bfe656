//! Mirror sets in the sidecar, end to end through real gRPC clients: the mirror-group corpus is
//! streamed to Ingest with each origin's server address, relearned twice (a pair goes live on
//! its second confirming pass), then canonicalized: alias URLs answer DUPLICATE after their
//! canonical site's, enqueue URLs stay real URLs, hard negatives never fold; an operator's pin
//! and forbid win over detection and survive a restart; the same evidence changes nothing.

use std::collections::{HashMap, HashSet};

use undust::canon::rules::MirrorSet;
use undust::config::Knobs;
use undust::corpus::{generate_mirrors, MirrorCorpus, MirrorCorpusConfig};
use undust::learn::eval::measure_across_hosts;
use undust::learn::LabelledUrl;
use undust::pb::{
    DecideMirrorRequest, Decision, ExplainRequest, GetRulesRequest, ListHostsRequest,
    ListMirrorsRequest, ListMirrorsResponse, MirrorDecision, ObservedPage,
};

use crate::support::{canonicalize_all, relearn, AdminConnection, TestServer};

fn knobs() -> Knobs {
    // Relearning (and so mirror detection) only when asked.
    Knobs {
        relearn_min_new_samples: Some(1_000_000),
        relearn_interval_secs: Some(86_400),
        ..Knobs::default()
    }
}

pub(crate) async fn ingest(server: &TestServer, corpus: &MirrorCorpus) {
    ingest_into(server.ingest().await, corpus).await;
}

/// [`ingest`] through any ingest client.
async fn ingest_into(
    mut client: undust::pb::ingest_client::IngestClient<tonic::transport::Channel>,
    corpus: &MirrorCorpus,
) {
    let pages: Vec<ObservedPage> = corpus
        .hosts
        .iter()
        .flat_map(|host| {
            host.pages.iter().map(|page| ObservedPage {
                url: page.url.clone(),
                http_status: 200,
                content_type: "text/html".into(),
                body: page.html.clone().into_bytes(),
                server_ip: host.ip.to_string(),
                ..ObservedPage::default()
            })
        })
        .collect();
    let total = pages.len() as u64;
    let summary = client
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.rejected, 0, "{:?}", summary.rejections);
    assert_eq!(summary.accepted, total);
}

pub(crate) async fn mirrors(admin: &mut AdminConnection) -> ListMirrorsResponse {
    admin
        .list_mirrors(ListMirrorsRequest {})
        .await
        .expect("list mirrors")
        .into_inner()
}

pub(crate) fn live_sets(list: &ListMirrorsResponse) -> Vec<MirrorSet> {
    serde_json::from_str(&list.mirrors_json).expect("mirror sets JSON")
}

pub(crate) async fn decide(
    admin: &mut AdminConnection,
    decision: MirrorDecision,
    canonical: &str,
    alias: &str,
) {
    admin
        .decide_mirror(DecideMirrorRequest {
            decision: decision as i32,
            canonical: canonical.into(),
            alias: alias.into(),
        })
        .await
        .expect("decide mirror");
}

/// The URL of a page the corpus serves on an alias site (under its folder, if any).
pub(crate) fn alias_page_url<'c>(
    corpus: &'c MirrorCorpus,
    site: &undust::canon::rules::MirrorSite,
) -> &'c str {
    corpus
        .hosts
        .iter()
        .find(|h| h.origin == site.origin)
        .and_then(|h| h.pages.iter().find(|p| p.url.starts_with(&site.display())))
        .map(|p| p.url.as_str())
        .expect("an alias page")
}

async fn explain_mirror(admin: &mut AdminConnection, url: &str) -> Option<undust::pb::MirrorFold> {
    admin
        .explain(ExplainRequest { url: url.into() })
        .await
        .expect("explain")
        .into_inner()
        .mirror
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirror_sets_are_detected_served_decided_and_restored() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_with(Some(data.path()), knobs()).await;
    let corpus = generate_mirrors(&MirrorCorpusConfig::new(7, 4, 40));
    ingest(&server, &corpus).await;
    let mut admin = server.admin().await;

    // First pass: pairs confirmed once, none live yet.
    relearn(&mut admin, "", true).await;
    let first = mirrors(&mut admin).await;
    assert_eq!(first.passes, 1);
    assert!(!first.candidates.is_empty(), "detection confirmed pairs");
    assert!(first
        .candidates
        .iter()
        .all(|c| !c.live && c.confirmed_passes == 1));
    assert!(live_sets(&first).is_empty(), "nothing live after one pass");

    // Second pass, same evidence: live.
    relearn(&mut admin, "", true).await;
    let second = mirrors(&mut admin).await;
    let sets = live_sets(&second);
    assert!(!sets.is_empty());
    // Hard negatives never share a set; every pair in a set is a true mirror pair.
    let set_of: HashMap<&str, usize> = sets
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            std::iter::once(s.canonical.origin.as_str())
                .chain(s.aliases.iter().map(|a| a.site.origin.as_str()))
                .map(move |o| (o, i))
        })
        .collect();
    for (a, b) in &corpus.negative_pairs {
        assert!(
            !set_of.contains_key(a.as_str()) || set_of.get(a.as_str()) != set_of.get(b.as_str()),
            "hard negative in one mirror set: {a} {b}"
        );
    }
    for s in &sets {
        for alias in &s.aliases {
            let (x, y) = (s.canonical.origin.clone(), alias.site.origin.clone());
            let pair = (x.clone().min(y.clone()), x.max(y));
            assert!(
                corpus.mirror_pairs.contains(&pair),
                "not a mirror: {pair:?}"
            );
            let evidence = alias.evidence.as_ref().expect("evidence");
            assert!(evidence.matching_pages > 0 && !evidence.techniques.is_empty());
        }
    }

    // Canonicalize, recording: canonical sites first, then everything else.
    let canonical_origins: HashSet<&str> =
        sets.iter().map(|s| s.canonical.origin.as_str()).collect();
    let mut ordered: Vec<(&str, &undust::corpus::MirrorPage)> = corpus
        .hosts
        .iter()
        .flat_map(|h| h.pages.iter().map(move |p| (h.origin.as_str(), p)))
        .collect();
    ordered.sort_by_key(|(origin, _)| !canonical_origins.contains(origin));
    let urls: Vec<String> = ordered.iter().map(|(_, p)| p.url.clone()).collect();
    let real: HashSet<&str> = urls.iter().map(String::as_str).collect();
    let mut client = server.canonicalizer().await;
    let results = canonicalize_all(&mut client, &urls, false).await;
    let mut alias_duplicates = 0usize;
    let mut alias_urls = 0usize;
    for ((origin, _), result) in ordered.iter().zip(&results) {
        assert!(
            real.contains(result.enqueue_url.as_str()),
            "enqueue URL is not a real URL: {}",
            result.enqueue_url
        );
        if set_of.contains_key(origin) && !canonical_origins.contains(origin) {
            alias_urls += 1;
            alias_duplicates += usize::from(result.decision == Decision::Duplicate as i32);
        }
    }
    eprintln!("{alias_duplicates} of {alias_urls} alias URLs answered DUPLICATE");
    assert!(alias_urls > 0);
    assert!(
        alias_duplicates as f64 >= 0.8 * alias_urls as f64,
        "{alias_duplicates} of {alias_urls}"
    );
    // Across hosts: at least 90% of the best compression, no form joins different content.
    let labelled: Vec<LabelledUrl> = ordered
        .iter()
        .map(|(_, p)| LabelledUrl {
            url: p.url.clone(),
            cluster: p.content_id,
        })
        .collect();
    let forms: HashMap<&str, &str> = urls
        .iter()
        .zip(&results)
        .map(|(u, r)| (u.as_str(), r.canonical.as_str()))
        .collect();
    let m = measure_across_hosts(&labelled, |u| forms[u].to_owned());
    let (got, best) = (
        m.pooled.compression_rate(),
        m.pooled.best_compression_rate(),
    );
    eprintln!("served compression {got:.3} of best {best:.3}");
    assert_eq!(
        m.false_spanning_forms, 0,
        "a canonical form joins different content"
    );
    assert!(got >= 0.9 * best, "compression {got:.3} < 90% of {best:.3}");

    // Visible: Explain, ListHosts, GetRules.
    let set = &sets[0];
    let alias = &set.aliases[0];
    let alias_url = alias_page_url(&corpus, &alias.site);
    let fold = explain_mirror(&mut admin, alias_url).await.expect("folded");
    assert_eq!(fold.set_id, set.id);
    assert_eq!(fold.alias_site, alias.site.display());
    assert!(
        fold.matching_pages > 0 && !fold.techniques.is_empty(),
        "{fold:?}"
    );
    assert!(fold.canonical_url.starts_with(&set.canonical.origin));
    let alias_host = url::Url::parse(&alias.site.origin)
        .unwrap()
        .host_str()
        .unwrap()
        .to_owned();
    let hosts = admin
        .list_hosts(ListHostsRequest {
            page_size: 1000,
            page_token: String::new(),
        })
        .await
        .expect("hosts")
        .into_inner()
        .hosts;
    let listed = hosts
        .iter()
        .find(|h| h.host == alias_host)
        .expect("alias host listed");
    assert!(
        !listed.mirror_set.is_empty() && !listed.mirror_canonical.is_empty(),
        "{listed:?}"
    );
    let rules = admin
        .get_rules(GetRulesRequest {
            host: alias_host.clone(),
            ..Default::default()
        })
        .await
        .expect("rules")
        .into_inner();
    assert!(
        rules.rules_json.contains("\"mirrors\""),
        "{}",
        rules.rules_json
    );

    // The same evidence again changes nothing, however often (Canonicalize has fed the
    // summaries more URLs meanwhile: the live canonical sites stay).
    for _ in 0..3 {
        relearn(&mut admin, "", true).await;
        assert_eq!(mirrors(&mut admin).await.mirrors_json, second.mirrors_json);
    }

    // Operator: forbid a live alias, pin a site detection never saw.
    let canonical = set.canonical.display();
    decide(
        &mut admin,
        MirrorDecision::Forbid,
        &canonical,
        &alias.site.display(),
    )
    .await;
    decide(
        &mut admin,
        MirrorDecision::Pin,
        &canonical,
        "http://old-copy.example",
    )
    .await;
    let pinned_url = "http://old-copy.example/about.html";
    let check_decisions = |fold_alias: Option<undust::pb::MirrorFold>,
                           fold_pinned: Option<undust::pb::MirrorFold>| {
        assert!(
            fold_alias.is_none(),
            "a forbidden alias still folds: {fold_alias:?}"
        );
        let pinned = fold_pinned.expect("the pinned alias folds");
        assert!(pinned.pinned);
        assert_eq!(
            pinned.canonical_url,
            format!("{}/about.html", set.canonical.display())
        );
    };
    check_decisions(
        explain_mirror(&mut admin, alias_url).await,
        explain_mirror(&mut admin, pinned_url).await,
    );
    // Detection does not undo them.
    relearn(&mut admin, "", true).await;
    check_decisions(
        explain_mirror(&mut admin, alias_url).await,
        explain_mirror(&mut admin, pinned_url).await,
    );
    let before_restart = mirrors(&mut admin).await;
    // Restart on the same data: the book, decisions and live sets come back.
    server.stop().await;
    let server = TestServer::start_with(Some(data.path()), knobs()).await;
    let mut admin = server.admin().await;
    let after = mirrors(&mut admin).await;
    assert_eq!(after.mirrors_json, before_restart.mirrors_json);
    assert_eq!(after.decisions_json, before_restart.decisions_json);
    assert_eq!(after.passes, before_restart.passes);
    check_decisions(
        explain_mirror(&mut admin, alias_url).await,
        explain_mirror(&mut admin, pinned_url).await,
    );
    // Another live alias still answers DUPLICATE after the restart (its canonical form was
    // recorded before it).
    let other = live_sets(&after)
        .into_iter()
        .flat_map(|s| s.aliases.into_iter().filter(|a| !a.pinned))
        .find(|a| a.site != alias.site)
        .expect("another live alias");
    let other_urls: Vec<String> = ordered
        .iter()
        .filter(|(o, p)| *o == other.site.origin && p.url.starts_with(&other.site.display()))
        .map(|(_, p)| p.url.clone())
        .collect();
    let mut client = server.canonicalizer().await;
    let again = canonicalize_all(&mut client, &other_urls, true).await;
    let dup = again
        .iter()
        .filter(|r| r.decision == Decision::Duplicate as i32)
        .count();
    assert!(
        dup as f64 >= 0.8 * other_urls.len() as f64,
        "{dup} of {}",
        other_urls.len()
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_relearns_and_publishes_mirror_sets_on_its_own() {
    let server = TestServer::start_with(
        None,
        Knobs {
            relearn_interval_secs: Some(1),
            ..Knobs::default()
        },
    )
    .await;
    let corpus = generate_mirrors(&MirrorCorpusConfig::new(8, 2, 30));
    ingest(&server, &corpus).await;
    let mut admin = server.admin().await;
    // Polled, bounded: scheduled relearns give the marks, periodic passes confirm them twice.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let list = loop {
        let list = mirrors(&mut admin).await;
        if !live_sets(&list).is_empty() {
            break list;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no mirror set went live within 60 s: {list:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!(list.passes >= 2, "{list:?}");
    for s in live_sets(&list) {
        for alias in &s.aliases {
            let (x, y) = (s.canonical.origin.clone(), alias.site.origin.clone());
            assert!(corpus
                .mirror_pairs
                .contains(&(x.clone().min(y.clone()), x.max(y))));
        }
    }
    server.stop().await;
}

/// Out-links: ingest keeps the `<a href>` links of sampled pages until the relearn observes the
/// pages' content marks, so *conn* (the *paths* pairs whose common pages link alike) has the
/// hosts' out-links in the sidecar as it has offline, and its evidence is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_links_of_ingested_pages_give_conn_evidence() {
    let server = TestServer::start_with(None, knobs()).await;
    let corpus = generate_mirrors(&MirrorCorpusConfig::new(7, 4, 40));
    ingest(&server, &corpus).await;
    let mut admin = server.admin().await;
    relearn(&mut admin, "", true).await;
    relearn(&mut admin, "", true).await;
    let sets = live_sets(&mirrors(&mut admin).await);
    assert!(!sets.is_empty());
    let with_conn: Vec<(&MirrorSet, &undust::canon::rules::MirrorAlias)> = sets
        .iter()
        .flat_map(|s| s.aliases.iter().map(move |a| (s, a)))
        .filter(|(_, a)| {
            a.evidence
                .as_ref()
                .is_some_and(|e| e.techniques.iter().any(|t| t == "conn"))
        })
        .collect();
    let aliases: usize = sets.iter().map(|s| s.aliases.len()).sum();
    eprintln!(
        "{} of {aliases} live aliases with conn evidence",
        with_conn.len()
    );
    assert!(
        !with_conn.is_empty(),
        "no live alias has conn evidence: {sets:?}"
    );
    // Every pair conn keeps is a true mirror pair (conn only filters, content confirms).
    for (set, alias) in &with_conn {
        let (x, y) = (set.canonical.origin.clone(), alias.site.origin.clone());
        assert!(corpus
            .mirror_pairs
            .contains(&(x.clone().min(y.clone()), x.max(y))));
    }
    let (set, alias) = with_conn[0];
    let fold = explain_mirror(&mut admin, alias_page_url(&corpus, &alias.site))
        .await
        .expect("folded");
    assert_eq!(fold.set_id, set.id);
    assert!(fold.techniques.iter().any(|t| t == "conn"), "{fold:?}");
}

/// Out-links survive a restart: they are stored with the samples, so a sidecar killed with -9
/// and started again on its data directory has its mirror summaries (fetched URLs, server
/// addresses, out-links) back, and its relearns find the mirror sets with *conn* evidence before
/// any page arrives again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_links_survive_kill_9_and_give_conn_evidence_after_the_restart() {
    let data = tempfile::tempdir().expect("tempdir");
    let corpus = generate_mirrors(&MirrorCorpusConfig::new(7, 4, 40));
    let sidecar = crate::crash::Sidecar::spawn(data.path()).await;
    // Acknowledged: the samples (and what is stored with them) are durable.
    ingest_into(sidecar.ingest().await, &corpus).await;
    sidecar.kill9();

    let sidecar = crate::crash::Sidecar::spawn(data.path()).await;
    let mut admin = sidecar.admin().await;
    relearn(&mut admin, "", true).await;
    relearn(&mut admin, "", true).await;
    let sets = live_sets(&mirrors(&mut admin).await);
    let with_conn: Vec<(String, String)> = sets
        .iter()
        .flat_map(|s| {
            s.aliases
                .iter()
                .filter(|a| {
                    a.evidence
                        .as_ref()
                        .is_some_and(|e| e.techniques.iter().any(|t| t == "conn"))
                })
                .map(move |a| (s.canonical.origin.clone(), a.site.origin.clone()))
        })
        .collect();
    assert!(
        !with_conn.is_empty(),
        "no live alias has conn evidence after the restart: {sets:?}"
    );
    for (x, y) in with_conn {
        assert!(corpus
            .mirror_pairs
            .contains(&(x.clone().min(y.clone()), x.max(y))));
    }
    sidecar.kill9();
}
