//! One pipeline, two shells: the same pages through the offline commands (`undust clusters`,
//! `learn`, `canonicalize`) and through the sidecar (Ingest, Relearn, GetRules, Canonicalize) are
//! judged alike, cluster alike, give the same rules and the same canonical forms. This is what lets
//! a user trust that `undust eval` on a crawl predicts what the sidecar does with the same pages.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::process::{Command, Output, Stdio};

use undust::config::Knobs;
use undust::corpus::{self, CorpusConfig, SiteKind};
use undust::pb::{ExplainRequest, GetRulesRequest, JobState, ObservedPage};

use crate::support::{canonicalize_all, observed_pages, relearn, TestServer};

fn undust(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run undust");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin).expect("write stdin");
    }
    let output = child.wait_with_output().expect("undust output");
    assert!(
        output.status.success(),
        "undust {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The crawl: generated sites, plus pages each shell must judge the same way (a 404, a PDF, a page
/// whose final URL is invalid).
fn crawl() -> (corpus::Corpus, Vec<ObservedPage>) {
    let corpus = corpus::generate(
        &CorpusConfig::new(21, 1)
            .with_kinds(&[SiteKind::Forum, SiteKind::Shop, SiteKind::CaseInsensitive])
            .with_pages(250, 400),
    );
    let mut pages: Vec<ObservedPage> = corpus.sites.iter().flat_map(observed_pages).collect();
    let host = corpus.sites[0].host.clone();
    pages.push(ObservedPage {
        url: format!("http://{host}/missing"),
        http_status: 404,
        content_type: "text/html".into(),
        body: b"<p>Not found</p>".to_vec(),
        ..ObservedPage::default()
    });
    pages.push(ObservedPage {
        url: format!("http://{host}/manual.pdf"),
        http_status: 200,
        content_type: "application/pdf".into(),
        body: b"%PDF-1.4 a manual".to_vec(),
        ..ObservedPage::default()
    });
    pages.push(ObservedPage {
        url: format!("http://{host}/moved"),
        final_url: "http://[broken".into(),
        http_status: 200,
        content_type: "text/html".into(),
        body: b"<p>Moved</p>".to_vec(),
        ..ObservedPage::default()
    });
    (corpus, pages)
}

/// The pages as the JSON lines the offline commands read.
fn json_lines(pages: &[ObservedPage]) -> String {
    let mut out = String::new();
    for page in pages {
        let line = serde_json::json!({
            "url": page.url,
            "html": String::from_utf8_lossy(&page.body),
            "status": page.http_status,
            "content_type": page.content_type,
            "final_url": page.final_url,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// Per host, the duplicate clusters (sets of two or more canonical URLs) of `undust clusters`
/// output.
fn cli_clusters(stdout: &[u8]) -> BTreeMap<String, usize> {
    let mut members: HashMap<(String, String), HashSet<String>> = HashMap::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let field = |name: &str| value[name].as_str().unwrap_or_default().to_owned();
        // One line per record: records of one canonical URL are one member; records in no
        // cluster (skipped, rejected) are no member.
        if value.get("cluster").is_none() {
            continue;
        }
        members
            .entry((field("host"), field("cluster")))
            .or_default()
            .insert(field("canonical"));
    }
    let mut per_host = BTreeMap::new();
    for ((host, _), urls) in members {
        if urls.len() > 1 {
            *per_host.entry(host).or_insert(0) += 1;
        }
    }
    per_host
}

/// The rules of a rule file, per host, without the version stamp and learning time. A host
/// learned without any rule is left out (the sidecar keeps an empty set as a version, the CLI
/// writes no entry: both mean "no rule").
fn rules_of(file: &serde_json::Value) -> BTreeMap<String, (serde_json::Value, serde_json::Value)> {
    let empty = |v: &serde_json::Value| v.as_array().is_none_or(Vec::is_empty);
    file["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .filter(|set| !(empty(&set["rules"]) && empty(&set["site_rules"])))
        .map(|set| {
            (
                set["host"].as_str().expect("host").to_owned(),
                (
                    set.get("site_rules").cloned().unwrap_or_default(),
                    set["rules"].clone(),
                ),
            )
        })
        .collect()
}

/// A sidecar with no scheduled relearn racing the one a test asks for.
async fn sidecar_without_schedule() -> TestServer {
    TestServer::start_with(
        None,
        Knobs {
            relearn_min_new_samples: Some(1_000_000),
            relearn_interval_secs: Some(86_400),
            ..Knobs::default()
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_and_the_sidecar_judge_cluster_learn_and_canonicalize_alike() {
    let (corpus, pages) = crawl();
    let dir = tempfile::tempdir().expect("tempdir");
    let pages_path = dir.path().join("pages.jsonl");
    std::fs::write(&pages_path, json_lines(&pages)).expect("write pages");
    let pages_arg = pages_path.to_str().expect("utf-8 path");

    // The offline shell.
    let clusters = undust(&["clusters", "--pages", pages_arg], b"");
    let summary = String::from_utf8_lossy(&clusters.stderr).into_owned();
    assert!(
        summary.contains("1 non-2xx skipped, 1 non-HTML skipped, 0 malformed, 1 rejected"),
        "{summary}"
    );
    let cli_clusters = cli_clusters(&clusters.stdout);
    let rules_path = dir.path().join("rules.json");
    let rules_arg = rules_path.to_str().expect("utf-8 path");
    undust(&["learn", "--pages", pages_arg, "--out", rules_arg], b"");
    let cli_file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&rules_path).expect("rule file")).expect("JSON");
    let cli_rules = rules_of(&cli_file);
    let urls: Vec<String> = pages.iter().map(|p| p.url.clone()).collect();
    let canonicalized = undust(
        &["canonicalize", "--rules", rules_arg],
        (urls.join("\n") + "\n").as_bytes(),
    );
    let cli_forms: Vec<String> = String::from_utf8_lossy(&canonicalized.stdout)
        .lines()
        .map(str::to_owned)
        .collect();

    // The sidecar shell.
    let server = sidecar_without_schedule().await;
    let mut ingest = server.ingest().await;
    let observed = ingest
        .observe_pages(tokio_stream::iter(pages.clone()))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(
        (observed.skipped, observed.rejected),
        (2, 1),
        "the sidecar skips and rejects what the CLI does: {observed:?}"
    );
    assert_eq!(observed.sampled, observed.accepted, "nothing sampled away");
    let mut admin = server.admin().await;
    let job = relearn(&mut admin, "", true).await.job.expect("job");
    assert_eq!(job.state, JobState::Succeeded as i32, "{job:?}");
    let sidecar_clusters: BTreeMap<String, usize> = job
        .hosts
        .iter()
        .map(|h| (h.host.clone(), h.clusters as usize))
        .filter(|(_, clusters)| *clusters > 0)
        .collect();
    assert_eq!(
        sidecar_clusters, cli_clusters,
        "the same duplicate clusters"
    );
    assert!(
        sidecar_clusters.values().sum::<usize>() > 50,
        "the crawl has duplicates to learn from: {sidecar_clusters:?}"
    );

    let mut sidecar_rules = BTreeMap::new();
    for site in &corpus.sites {
        let response = admin
            .get_rules(GetRulesRequest {
                host: site.host.clone(),
                ..Default::default()
            })
            .await
            .expect("get rules")
            .into_inner();
        if response.rules_json.is_empty() {
            continue;
        }
        let file: serde_json::Value =
            serde_json::from_str(&response.rules_json).expect("rules JSON");
        sidecar_rules.extend(rules_of(&file));
    }
    let hosts: std::collections::BTreeSet<&String> =
        sidecar_rules.keys().chain(cli_rules.keys()).collect();
    for host in hosts {
        let (sidecar, cli) = (sidecar_rules.get(host), cli_rules.get(host));
        let ids = |rules: Option<&(serde_json::Value, serde_json::Value)>| {
            rules.map(|(site, pattern)| {
                let names = |v: &serde_json::Value| -> Vec<String> {
                    v.as_array()
                        .map(|a| {
                            a.iter()
                                .map(|r| {
                                    format!(
                                        "{} {}",
                                        r["source_pattern"].as_str().unwrap_or_default(),
                                        r["op"].as_str().unwrap_or_default()
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                };
                (names(site), names(pattern))
            })
        };
        assert!(
            sidecar == cli,
            "{host}: the sidecar and the CLI learned different rules:\nsidecar {:#?}\ncli {:#?}",
            ids(sidecar),
            ids(cli)
        );
    }
    assert!(!cli_rules.is_empty(), "rules were learned");

    let mut canonicalizer = server.canonicalizer().await;
    let results = canonicalize_all(&mut canonicalizer, &urls, true).await;
    let mut compared = 0;
    for ((url, result), cli_form) in urls.iter().zip(&results).zip(&cli_forms) {
        if result.canonical.is_empty() {
            continue;
        }
        assert_eq!(&result.canonical, cli_form, "canonical form of {url}");
        compared += 1;
    }
    assert!(compared >= urls.len() - 1, "{compared} of {}", urls.len());
    let changed = cli_forms.iter().zip(&urls).filter(|(f, u)| f != u).count();
    assert!(
        changed > urls.len() / 4,
        "the rules rewrite URLs ({changed})"
    );
    server.stop().await;
}

/// Pages of a forum whose crawl fetched its default post order spelled out
/// (`?sort=oldest_to_newest`, the plain topic) beside one topic only, and other orders (other
/// pages) beside many: each forum's sample shows the spelling in one duplicate cluster, under
/// the three a site rule needs.
fn forum_pages(host: &str, seed: u64) -> Vec<ObservedPage> {
    let page = |url: String, text: String| ObservedPage {
        url,
        http_status: 200,
        content_type: "text/html; charset=utf-8".into(),
        body: format!(
            "<html><head><title>Forum</title></head><body><nav>Home Categories Recent \
             Popular Users</nav><main><article>{text}</article></main><footer>Powered by \
             the forum software</footer></body></html>"
        )
        .into_bytes(),
        ..ObservedPage::default()
    };
    let mut pages = Vec::new();
    for t in 0..60u64 {
        let topic = format!("http://{host}/topic/{}/title-{t}", 100 + t);
        let text = |order: u64| crate::support::prose(seed * 10_000 + t * 10 + order, 150);
        pages.push(page(topic.clone(), text(0)));
        if t % 2 == 0 {
            pages.push(page(format!("{topic}?sort=newest_to_oldest"), text(1)));
        }
        if t % 3 == 0 {
            pages.push(page(format!("{topic}?sort=most_votes"), text(2)));
        }
        if t == 1 {
            pages.push(page(format!("{topic}?sort=oldest_to_newest"), text(0)));
        }
    }
    pages
}

/// Whether a rule file (or GetRules answer) drops the default order on `host`.
/// The rule file's site rule of `host` dropping the topic's default order, if learned.
fn default_order_rule<'f>(
    file: &'f serde_json::Value,
    host: &str,
) -> Option<&'f serde_json::Value> {
    file["hosts"]
        .as_array()?
        .iter()
        .filter(|s| s["host"] == host)
        .flat_map(|set| set["site_rules"].as_array().into_iter().flatten())
        .find(|r| {
            r["op"] == "ignore_param_value"
                && r["name"] == "sort"
                && r["value"] == "oldest_to_newest"
        })
}

fn drops_default_order(file: &serde_json::Value, host: &str) -> bool {
    default_order_rule(file, host).is_some()
}

/// A spelling the forum software fixes, shown once by each of three forums' samples, is learned
/// for all three by both shells, and by neither for one forum crawled alone: hosts are learned
/// beside each other (`learn::shared_evidence`). The rule says what the other two forums lent
/// it, in the rule file, in GetRules and in Explain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_forums_make_up_the_evidence_each_shows_too_thinly() {
    let hosts = [
        "one.forum.example",
        "two.forum.example",
        "three.forum.example",
    ];
    let pages: Vec<ObservedPage> = hosts
        .iter()
        .zip(1u64..)
        .flat_map(|(host, seed)| forum_pages(host, seed))
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let learned = |name: &str, pages: &[ObservedPage]| -> serde_json::Value {
        let pages_path = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&pages_path, json_lines(pages)).expect("write pages");
        let rules_path = dir.path().join(format!("{name}-rules.json"));
        undust(
            &[
                "learn",
                "--pages",
                pages_path.to_str().expect("utf-8"),
                "--out",
                rules_path.to_str().expect("utf-8"),
            ],
            b"",
        );
        serde_json::from_slice(&std::fs::read(&rules_path).expect("rule file")).expect("JSON")
    };
    let alone = learned("alone", &forum_pages(hosts[0], 1));
    assert!(
        !drops_default_order(&alone, hosts[0]),
        "one forum's one cluster is too thin: {alone}"
    );
    let together = learned("together", &pages);
    let lent = serde_json::json!({"clusters": 2, "hosts": 2});
    for host in hosts {
        let rule = default_order_rule(&together, host);
        assert!(rule.is_some(), "{host}: {together}");
        assert_eq!(
            rule.map(|r| &r["pooled"]),
            Some(&lent),
            "{host}: {together}"
        );
    }
    // Rules the host's own sample showed say nothing was lent.
    let own_evidence = together["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|set| set["site_rules"].as_array().into_iter().flatten())
        .filter(|r| r["name"] != "sort");
    for rule in own_evidence {
        assert!(rule.get("pooled").is_none(), "{rule}");
    }

    let server = sidecar_without_schedule().await;
    let mut ingest = server.ingest().await;
    ingest
        .observe_pages(tokio_stream::iter(pages.clone()))
        .await
        .expect("observe");
    let mut admin = server.admin().await;
    let job = relearn(&mut admin, "", true).await.job.expect("job");
    assert_eq!(job.state, JobState::Succeeded as i32, "{job:?}");
    for host in hosts {
        let response = admin
            .get_rules(GetRulesRequest {
                host: host.to_owned(),
                ..Default::default()
            })
            .await
            .expect("get rules")
            .into_inner();
        let file: serde_json::Value =
            serde_json::from_str(&response.rules_json).expect("rules JSON");
        assert_eq!(
            default_order_rule(&file, host).map(|r| &r["pooled"]),
            Some(&lent),
            "{host}: {file}"
        );
        let shown = response
            .site_rules
            .iter()
            .find(|r| r.action.contains("sort=oldest_to_newest"))
            .expect("GetRules shows the rule");
        assert_eq!(
            (shown.pooled_clusters, shown.pooled_hosts),
            (2, 2),
            "{shown:?}"
        );
        assert_eq!(shown.support_clusters, 1, "{shown:?}");
        let explained = admin
            .explain(ExplainRequest {
                url: format!("http://{host}/topic/900/title?sort=oldest_to_newest"),
            })
            .await
            .expect("explain")
            .into_inner();
        let applied = explained
            .site_rules
            .iter()
            .find(|r| r.action.contains("sort=oldest_to_newest"))
            .expect("Explain names the rule");
        assert_eq!(
            (applied.pooled_clusters, applied.pooled_hosts),
            (2, 2),
            "{applied:?}"
        );
        assert_eq!(
            explained.canonical,
            format!("http://{host}/topic/900/title"),
            "{explained:?}"
        );
    }
    server.stop().await;
}
