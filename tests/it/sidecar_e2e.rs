//! End to end through real gRPC clients: a generated multi-site crawl is streamed to Ingest, rules
//! are relearned on demand, the crawl's URLs are canonicalized (duplicates suppressed, hard
//! negatives kept apart), and a restart on the same data directory gives the same answers; pages
//! whose canonical is only in their HTML are clustered with it, before and after a restart; and
//! pages whose shortlink is only in their HTML make it an alias of theirs, before and after one.

use std::collections::{HashMap, HashSet};

use undust::config::Knobs;
use undust::corpus::{self, CorpusConfig, SiteKind};
use undust::pb::{
    Decision, ExplainRequest, GetRulesRequest, GetStatsRequest, JobState, ObservedPage,
    RollbackRulesRequest,
};

use crate::support::{canonicalize_all, observed_pages, prose, relearn, TestServer};

fn test_corpus(seed: u64) -> corpus::Corpus {
    corpus::generate(
        &CorpusConfig::new(seed, 1)
            .with_kinds(&[SiteKind::Forum, SiteKind::Shop, SiteKind::News])
            .with_pages(250, 400),
    )
}

async fn stream_pages(server: &TestServer, corpus: &corpus::Corpus) -> u64 {
    let mut ingest = server.ingest().await;
    let pages: Vec<ObservedPage> = corpus.sites.iter().flat_map(observed_pages).collect();
    let summary = ingest
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.rejected, 0, "{:?}", summary.rejections);
    summary.sampled
}

/// Every URL of the corpus, site by site.
fn corpus_urls(corpus: &corpus::Corpus) -> Vec<String> {
    corpus
        .sites
        .iter()
        .flat_map(|s| s.pages.iter().map(|p| p.url.clone()))
        .collect()
}

/// Canonical form of every corpus URL (dry run: records nothing).
async fn canonical_forms(
    server: &TestServer,
    corpus: &corpus::Corpus,
) -> HashMap<String, (String, i32)> {
    let mut client = server.canonicalizer().await;
    let urls = corpus_urls(corpus);
    let results = canonicalize_all(&mut client, &urls, true).await;
    let forms: HashMap<String, (String, i32)> = urls
        .into_iter()
        .zip(results)
        .map(|(url, result)| (url, (result.canonical, result.decision)))
        .collect();
    forms
}

/// Knobs relearning only when asked, so a test controls when rules change.
fn relearn_when_asked() -> Knobs {
    Knobs {
        relearn_min_new_samples: Some(1_000_000),
        relearn_interval_secs: Some(86_400),
        ..Knobs::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn learned_rules_suppress_duplicates_never_negatives_and_survive_a_restart() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_with(Some(data.path()), relearn_when_asked()).await;
    let corpus = test_corpus(11);
    let sampled = stream_pages(&server, &corpus).await;
    assert_eq!(
        sampled as usize,
        corpus.total_pages(),
        "every page fits the default sample"
    );

    let mut admin = server.admin().await;
    let job = relearn(&mut admin, "", true).await.job.expect("job");
    assert_eq!(job.hosts.len(), corpus.sites.len());
    for host in &job.hosts {
        assert_eq!(host.state, JobState::Succeeded as i32, "{host:?}");
    }
    assert!(
        job.hosts.iter().map(|h| h.rules).sum::<u32>() > 0,
        "some rules were learned: {job:?}"
    );

    // Duplicates: URLs of one content should share a canonical form; negatives never.
    let forms = canonical_forms(&server, &corpus).await;
    let mut urls_total = 0usize;
    let mut forms_total = HashSet::new();
    let mut contents = HashSet::new();
    for site in &corpus.sites {
        for page in &site.pages {
            urls_total += 1;
            forms_total.insert(forms[&page.url].0.clone());
            contents.insert(page.content_id);
        }
        for (a, b) in &site.hard_negatives {
            if let (Some(fa), Some(fb)) = (forms.get(a), forms.get(b)) {
                assert_ne!(
                    fa.0, fb.0,
                    "hard negative merged on {}: {a} / {b}",
                    site.host
                );
            }
        }
    }
    let achievable = 1.0 - contents.len() as f64 / urls_total as f64;
    let compression = 1.0 - forms_total.len() as f64 / urls_total as f64;
    eprintln!("e2e: {urls_total} URLs, {} contents, {} canonical forms: compression {compression:.3} of achievable {achievable:.3}", contents.len(), forms_total.len());
    assert!(
        compression >= 0.5 * achievable,
        "compression {compression:.3} is far below the achievable {achievable:.3}"
    );

    // Explain names the site rules that changed a URL, with their evidence.
    let mut explained_one = false;
    for site in &corpus.sites {
        let rules = admin
            .get_rules(GetRulesRequest {
                host: site.host.clone(),
                ..Default::default()
            })
            .await
            .expect("rules")
            .into_inner();
        if rules.site_rules.is_empty() {
            continue;
        }
        for page in site.pages.iter().take(400) {
            let e = admin
                .explain(ExplainRequest {
                    url: page.url.clone(),
                })
                .await
                .expect("explain")
                .into_inner();
            let Some(applied) = e.site_rules.first() else {
                continue;
            };
            let listed = rules
                .site_rules
                .iter()
                .find(|r| r.id == applied.id)
                .unwrap_or_else(|| panic!("{}: unknown site rule {applied:?}", page.url));
            assert_eq!(applied.action, listed.action);
            assert!(applied.support > 0, "{applied:?}");
            assert_ne!(e.canonical, e.static_result, "{e:?}");
            explained_one = true;
            break;
        }
    }
    assert!(explained_one, "no URL was changed by a site rule");

    // Record everything, then restart on the same data directory.
    let mut client = server.canonicalizer().await;
    let suppressed = canonicalize_all(&mut client, &corpus_urls(&corpus), false)
        .await
        .iter()
        .filter(|r| r.decision == Decision::Duplicate as i32)
        .count();
    assert_eq!(suppressed, urls_total - forms_total.len());
    let host = corpus.sites[0].host.clone();
    let rules_before = admin
        .get_rules(GetRulesRequest {
            host: host.clone(),
            ..Default::default()
        })
        .await
        .expect("rules")
        .into_inner();
    // One URL is one sample (a page fetched again refreshes its sample), so the sample holds at
    // most one sample per page URL.
    let held = admin
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner()
        .samples;
    assert!(
        held > 0 && held <= sampled,
        "{held} held, {sampled} sampled"
    );
    server.stop().await;

    let server = TestServer::start_with(Some(data.path()), relearn_when_asked()).await;
    let after = canonical_forms(&server, &corpus).await;
    for (url, (form, decision)) in &after {
        assert_eq!(
            form, &forms[url].0,
            "same canonical form after restart for {url}"
        );
        assert_eq!(
            *decision,
            Decision::Duplicate as i32,
            "the seen-set was restored for {url}"
        );
    }
    let mut admin = server.admin().await;
    let rules_after = admin
        .get_rules(GetRulesRequest {
            host: host.clone(),
            ..Default::default()
        })
        .await
        .expect("rules")
        .into_inner();
    assert_eq!(rules_after.version, rules_before.version);
    assert_eq!(rules_after.rules_json, rules_before.rules_json);
    let stats = admin
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner();
    assert_eq!(stats.samples, held, "samples were restored");

    // A second relearn makes version 2; rollback puts version 1 back.
    let job = relearn(&mut admin, &host, true).await;
    assert_eq!(
        job.job.expect("job").hosts[0].rules_version,
        rules_before.version + 1
    );
    let rolled = admin
        .rollback_rules(RollbackRulesRequest {
            host: host.clone(),
            to_version: 0,
        })
        .await
        .expect("rollback")
        .into_inner();
    assert_eq!(rolled.version, rules_before.version);
    let rules = admin
        .get_rules(GetRulesRequest {
            host,
            ..Default::default()
        })
        .await
        .expect("rules")
        .into_inner();
    assert_eq!(rules.version, rules_before.version);
    assert!(rules
        .previous_versions
        .contains(&(rules_before.version + 1)));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relearn_of_a_host_waiting_in_a_running_job_joins_it() {
    let server = TestServer::start_with(
        None,
        Knobs {
            relearn_min_new_samples: Some(1_000_000),
            relearn_concurrency: Some(1),
            ..Knobs::default()
        },
    )
    .await;
    let corpus = corpus::generate(
        &CorpusConfig::new(5, 1)
            .with_kinds(&[SiteKind::Shop, SiteKind::Forum])
            .with_pages(1_500, 1_500),
    );
    stream_pages(&server, &corpus).await;
    let mut hosts: Vec<String> = corpus.sites.iter().map(|s| s.host.clone()).collect();
    hosts.sort();
    let mut admin = server.admin().await;
    // One job for every host; with one learning slot the last host waits behind the first.
    let all = relearn(&mut admin, "", false).await;
    assert!(!all.joined);
    let last = hosts.last().cloned().expect("two hosts");
    let joined = relearn(&mut admin, &last, true).await;
    assert!(
        joined.joined,
        "the second call joined instead of starting a second run"
    );
    assert_eq!(joined.job_id, all.job_id);
    let job = joined.job.expect("job");
    assert_eq!(job.hosts.len(), 2);
    assert!(
        job.hosts
            .iter()
            .all(|h| h.state == JobState::Succeeded as i32),
        "{job:?}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canonicals_declared_in_html_are_learned_from_and_survive_a_restart() {
    let data = tempfile::tempdir().expect("tempdir");
    let post = |id: u64, head: &str| ObservedPage {
        url: format!("http://blog.example/post?id={id}"),
        http_status: 200,
        content_type: "text/html".into(),
        body: format!(
            "<html><head><title>Blog</title>{head}</head><body><nav><a href=/>Home</a> \
             <a href=/archive>Archive</a> <a href=/about>About</a></nav><article><p>{}</p>\
             </article></body></html>",
            prose(id, 90)
        )
        .into_bytes(),
        ..ObservedPage::default()
    };
    let mut pages = Vec::new();
    // Twelve posts declaring their canonical (never fetched) in the HTML only: twelve clusters
    // of two.
    for id in 0..12 {
        pages.push(post(
            id,
            &format!(r#"<link rel="canonical" href="/posts/{id}">"#),
        ));
    }
    // Posts without a canonical.
    for id in 100..106 {
        pages.push(post(id, ""));
    }
    // The crawler's canonical wins over the HTML's: it points at post 0, whose content
    // contradicts it (no merge), where the HTML's would have made a thirteenth cluster.
    pages.push(ObservedPage {
        rel_canonical: "http://blog.example/post?id=0".into(),
        ..post(200, r#"<link rel="canonical" href="/posts/200">"#)
    });
    let server = TestServer::start_with(Some(data.path()), relearn_when_asked()).await;
    let mut ingest = server.ingest().await;
    let summary = ingest
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.sampled, 19, "{summary:?}");
    let clusters = |job: undust::pb::RelearnResponse| {
        let host = job.job.expect("job").hosts.remove(0);
        assert_eq!(host.state, JobState::Succeeded as i32, "{host:?}");
        host.clusters
    };
    let mut admin = server.admin().await;
    assert_eq!(
        clusters(relearn(&mut admin, "blog.example", true).await),
        12
    );
    server.stop().await;

    // After a restart the samples (no bodies) still carry the canonicals.
    let server = TestServer::start_with(Some(data.path()), relearn_when_asked()).await;
    let mut admin = server.admin().await;
    assert_eq!(
        clusters(relearn(&mut admin, "blog.example", true).await),
        12
    );
    server.stop().await;
}

/// A site's shortlinks, declared in the HTML only (Drupal's `/node/N` on the page at its path
/// alias), become the host's alias table through the sidecar's own relearn: a frontier asking for
/// `/node/N` gets the page it was fetched as. The store keeps each sample's shortlink, so the
/// same table is learned after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shortlinks_declared_in_html_become_aliases_and_survive_a_restart() {
    let data = tempfile::tempdir().expect("tempdir");
    let titles = [
        "river-council",
        "harbour-budget",
        "village-engine",
        "orchard-ledger",
        "winter-market",
        "signal-bridge",
        "canvas-rocket",
        "garden-silver",
        "thunder-meadow",
        "library-tunnel",
        "lantern-compass",
        "factory-glacier",
    ];
    let pages: Vec<ObservedPage> = titles
        .iter()
        .enumerate()
        .map(|(id, title)| ObservedPage {
            url: format!("http://cms.example/articles/{title}"),
            http_status: 200,
            content_type: "text/html".into(),
            body: format!(
                "<html><head><title>CMS</title><link rel=\"canonical\" \
                 href=\"/articles/{title}\"><link rel=\"shortlink\" href=\"/node/{}\"></head>\
                 <body><nav><a href=/>Home</a> <a href=/articles>Articles</a></nav><article>\
                 <p>{}</p></article></body></html>",
                id + 40,
                prose(id as u64, 90)
            )
            .into_bytes(),
            ..ObservedPage::default()
        })
        .collect();
    let asked: Vec<String> = (0..titles.len())
        .map(|id| format!("http://cms.example/node/{}", id + 40))
        .chain(["http://cms.example/node/999".to_owned()])
        .collect();
    let expected: Vec<String> = titles
        .iter()
        .map(|title| format!("http://cms.example/articles/{title}"))
        .chain(["http://cms.example/node/999".to_owned()])
        .collect();

    let server = TestServer::start_with(Some(data.path()), relearn_when_asked()).await;
    let mut ingest = server.ingest().await;
    let summary = ingest
        .observe_pages(tokio_stream::iter(pages))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.sampled, titles.len() as u64, "{summary:?}");
    // Each declared id URL is its page; an id no page declared is left as it is.
    assert_eq!(
        relearned_forms(&server, "cms.example", &asked).await,
        expected
    );
    // The operator sees the table, and which entry made a URL's form.
    let mut admin = server.admin().await;
    let rules = admin
        .get_rules(GetRulesRequest {
            host: "cms.example".into(),
            ..Default::default()
        })
        .await
        .expect("rules")
        .into_inner();
    assert_eq!(rules.aliases.len(), titles.len(), "{rules:?}");
    assert!(rules
        .aliases
        .iter()
        .any(|alias| alias.from == "http://cms.example/node/40"
            && alias.to == "http://cms.example/articles/river-council"));
    let mut explained = Vec::new();
    for url in ["http://cms.example/node/40", "http://cms.example/node/999"] {
        let request = ExplainRequest { url: url.into() };
        explained.push(admin.explain(request).await.expect("explain").into_inner());
    }
    assert_eq!(
        explained[0].canonical,
        "http://cms.example/articles/river-council"
    );
    let alias = explained[0].alias.as_ref().expect("an alias made the form");
    assert_eq!(
        (alias.from.as_str(), alias.to.as_str()),
        (
            "http://cms.example/node/40",
            "http://cms.example/articles/river-council"
        )
    );
    assert_eq!(explained[1].alias, None);
    server.stop().await;

    // After a restart the samples (no bodies) still carry their shortlinks.
    let server = TestServer::start_with(Some(data.path()), relearn_when_asked()).await;
    assert_eq!(
        relearned_forms(&server, "cms.example", &asked).await,
        expected
    );
    server.stop().await;
}

/// Relearns `host` on `server` (the job must succeed), then the canonical forms of `urls` (dry
/// run).
async fn relearned_forms(server: &TestServer, host: &str, urls: &[String]) -> Vec<String> {
    let mut admin = server.admin().await;
    let job = relearn(&mut admin, host, true).await;
    let outcome = job.job.expect("job").hosts.remove(0);
    assert_eq!(outcome.state, JobState::Succeeded as i32, "{outcome:?}");
    let mut client = server.canonicalizer().await;
    canonicalize_all(&mut client, urls, true)
        .await
        .into_iter()
        .map(|r| r.canonical)
        .collect()
}
