//! The admin service: authentication and roles, Explain, GetStats, ListHosts paging.

use undust::pb::{
    CanonicalizeRequest, ExplainRequest, GetRulesRequest, GetStatsRequest, ListHostsRequest,
    RelearnRequest, RollbackRulesRequest,
};

use crate::support::{TestServer, READ_TOKEN};

#[tokio::test]
async fn calls_without_a_token_are_unauthenticated_and_read_tokens_cannot_write() {
    let server = TestServer::start().await;
    let mut anonymous = server.admin_with(None).await;
    let status = anonymous
        .get_stats(GetStatsRequest {})
        .await
        .expect_err("no token");
    assert_eq!(status.code(), tonic::Code::Unauthenticated);

    let mut wrong = server.admin_with(Some("not-the-right-token-at-all")).await;
    assert_eq!(
        wrong
            .get_stats(GetStatsRequest {})
            .await
            .expect_err("bad token")
            .code(),
        tonic::Code::Unauthenticated
    );

    let mut reader = server.admin_with(Some(READ_TOKEN)).await;
    reader
        .get_stats(GetStatsRequest {})
        .await
        .expect("a read token reads");
    let status = reader
        .relearn(RelearnRequest {
            host: "example.com".into(),
            wait: false,
        })
        .await
        .expect_err("a read token cannot relearn");
    assert_eq!(status.code(), tonic::Code::PermissionDenied);
    let status = reader
        .rollback_rules(RollbackRulesRequest {
            host: "example.com".into(),
            to_version: 0,
        })
        .await
        .expect_err("a read token cannot roll back");
    assert_eq!(status.code(), tonic::Code::PermissionDenied);
    server.stop().await;
}

#[tokio::test]
async fn explain_shows_the_static_steps_and_whether_the_form_was_seen() {
    let server = TestServer::start().await;
    let mut admin = server.admin().await;
    let input = "HTTP://WWW.Example.com:80/a/../b?utm_source=x&id=1#frag";
    let explained = admin
        .explain(ExplainRequest { url: input.into() })
        .await
        .expect("explain")
        .into_inner();
    assert_eq!(explained.static_result, "http://www.example.com/b?id=1");
    assert_eq!(explained.canonical, explained.static_result);
    let steps: Vec<&str> = explained
        .static_steps
        .iter()
        .map(|s| s.step.as_str())
        .collect();
    assert!(steps.contains(&"remove-tracking-params"), "{steps:?}");
    assert!(steps.contains(&"remove-fragment"), "{steps:?}");
    assert!(!explained.seen);
    assert!(explained.rule.is_none());

    let mut client = server.canonicalizer().await;
    client
        .canonicalize(CanonicalizeRequest {
            urls: vec![input.into()],
            dry_run: false,
            sequence: 0,
            request_id: String::new(),
        })
        .await
        .expect("record");
    let explained = admin
        .explain(ExplainRequest { url: input.into() })
        .await
        .expect("explain")
        .into_inner();
    assert!(
        explained.seen,
        "after recording, Explain reports the form as seen"
    );

    let invalid = admin
        .explain(ExplainRequest {
            url: "mailto:someone@example.com".into(),
        })
        .await
        .expect("explain")
        .into_inner();
    assert!(!invalid.invalid_reason.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn stats_and_host_lists_count_what_happened() {
    let server = TestServer::start().await;
    let mut client = server.canonicalizer().await;
    let mut urls = Vec::new();
    for host in 0..25 {
        urls.push(format!("http://host{host:02}.example/a"));
        urls.push(format!("http://host{host:02}.example/a?utm_campaign=z"));
    }
    urls.push("::not a url::".into());
    client
        .canonicalize(CanonicalizeRequest {
            urls,
            dry_run: false,
            sequence: 0,
            request_id: String::new(),
        })
        .await
        .expect("canonicalize");
    let mut admin = server.admin().await;
    let stats = admin
        .get_stats(GetStatsRequest {})
        .await
        .expect("stats")
        .into_inner();
    assert_eq!(stats.urls_canonicalized, 51);
    assert_eq!(stats.duplicates_suppressed, 25);
    assert_eq!(stats.urls_invalid, 1);
    assert_eq!(
        stats.urls_changed_static, 25,
        "the 25 tracking removals; an invalid URL is not a change: {stats:?}"
    );
    assert_eq!(stats.seen_set_entries, 25);
    assert_eq!(stats.seen_set_mode, "exact");

    let mut hosts = Vec::new();
    let mut token = String::new();
    loop {
        let page = admin
            .list_hosts(ListHostsRequest {
                page_size: 10,
                page_token: token.clone(),
            })
            .await
            .expect("list")
            .into_inner();
        assert!(page.hosts.len() <= 10);
        hosts.extend(page.hosts);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(hosts.len(), 25);
    assert!(
        hosts.windows(2).all(|w| w[0].host < w[1].host),
        "sorted, no repeats"
    );
    assert!(hosts
        .iter()
        .all(|h| h.urls_canonicalized == 2 && h.duplicates_suppressed == 1));

    let too_big = admin
        .list_hosts(ListHostsRequest {
            page_size: 5_000,
            page_token: String::new(),
        })
        .await;
    assert_eq!(
        too_big.expect_err("5000 > 1000").code(),
        tonic::Code::InvalidArgument
    );

    let rules = admin
        .get_rules(GetRulesRequest {
            host: "host00.example".into(),
            ..Default::default()
        })
        .await
        .expect("rules")
        .into_inner();
    assert_eq!(rules.version, 0, "no learned rules yet");
    let relearn = admin
        .relearn(RelearnRequest {
            host: "host00.example".into(),
            wait: true,
        })
        .await;
    assert_eq!(
        relearn.expect_err("no samples").code(),
        tonic::Code::FailedPrecondition
    );
    server.stop().await;
}

#[tokio::test]
async fn a_burst_of_bad_tokens_is_refused_quickly_then_throttled() {
    let server = TestServer::start().await;
    let mut wrong = server.admin_with(Some("not-the-right-token-at-all")).await;
    let started = std::time::Instant::now();
    let mut messages = Vec::new();
    for _ in 0..200 {
        let status = wrong
            .get_stats(GetStatsRequest {})
            .await
            .expect_err("bad token");
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        messages.push(status.message().to_owned());
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "refusals are quick: {:?}",
        started.elapsed()
    );
    assert!(
        messages[0].contains("unknown admin token"),
        "{}",
        messages[0]
    );
    let throttled = messages
        .iter()
        .filter(|message| message.contains("too many failed authentications"))
        .count();
    assert!(
        (150..=190).contains(&throttled),
        "after a burst of 10 failures the peer is throttled: {throttled} of 200"
    );
    // A throttled address is refused whatever its token, until its bucket refills.
    let status = server
        .admin()
        .await
        .get_stats(GetStatsRequest {})
        .await
        .expect_err("throttled address");
    assert!(
        status.message().contains("retry in"),
        "{}",
        status.message()
    );
    let (_, metrics) = crate::support::http_get(server.metrics_addr, "/metrics").await;
    assert!(
        metrics.contains("outcome=\"throttled\"")
            && metrics.contains("undust_admin_refusals_not_logged_total"),
        "throttling and unlogged refusals are counted"
    );
    server.stop().await;
}

/// A host whose pages each declare a canonical no rule can reach (a node number beside a
/// title without it) learns an alias table at its limit of 20,000 pairs. `undust admin rules`
/// reads it in both forms it prints, and GetRules sends each form only when asked. Before, the
/// answer carried the table twice (about 12 MB here) and the command, with tonic's default
/// 4 MiB limit for what it decodes, failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_of_a_host_with_a_full_alias_table_are_read_in_every_form() {
    use undust::canon::rules::MAX_ALIASES_PER_HOST;
    use undust::pb::{ObservedPage, RulesView};

    use crate::support::{relearn, within, CALL_LIMIT, WRITE_TOKEN};

    const HOST: &str = "big.example";
    let words = [
        "alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "forest", "meadow", "harbor",
        "copper", "velvet", "quiet", "silver", "north", "window",
    ];
    // The i-th title: `i` written in base 16 with words, padded to 30 words, so every title is
    // distinct and a pair of URLs is about 250 bytes.
    let title = |mut i: usize| {
        let mut parts = Vec::with_capacity(30);
        for _ in 0..30 {
            parts.push(words[i % words.len()]);
            i /= words.len();
        }
        parts.join("-")
    };
    let pages: Vec<ObservedPage> = (0..MAX_ALIASES_PER_HOST)
        .map(|i| {
            let title = title(i);
            let body = format!(
                "<html><head><title>Item {i}</title>\
                 <link rel=\"canonical\" href=\"https://{HOST}/articles/{title}\"></head>\
                 <body><h1>{title}</h1><p>Item number {i} of the catalogue, {title}, \
                 described at length: {}.</p></body></html>",
                title.replace('-', " ")
            );
            ObservedPage {
                url: format!("https://{HOST}/node/{i}"),
                http_status: 200,
                content_type: "text/html; charset=utf-8".into(),
                body: body.into_bytes(),
                ..ObservedPage::default()
            }
        })
        .collect();

    // Only the operator's relearn runs: one the scheduler started while the pages streamed in
    // would be joined, and would learn from the pages that had arrived by then.
    let server = TestServer::start_with(
        None,
        undust::config::Knobs {
            relearn_min_new_samples: Some(1_000_000),
            relearn_interval_secs: Some(86_400),
            ..undust::config::Knobs::default()
        },
    )
    .await;
    let mut ingest = server.ingest().await;
    let summary = within(
        CALL_LIMIT,
        "observing 20,000 pages",
        ingest.observe_pages(tokio_stream::iter(pages)),
    )
    .await
    .expect("observe")
    .into_inner();
    assert_eq!(summary.received as usize, MAX_ALIASES_PER_HOST);
    let mut admin = server.admin().await.max_decoding_message_size(usize::MAX);
    let job = relearn(&mut admin, HOST, true).await;
    assert_eq!(
        job.job.as_ref().map(|j| j.hosts[0].rules_version),
        Some(1),
        "{job:?}"
    );

    let get = |view: RulesView| {
        let mut admin = admin.clone();
        async move {
            let call = admin.get_rules(GetRulesRequest {
                host: HOST.into(),
                view: view as i32,
            });
            within(CALL_LIMIT, "GetRules", call)
                .await
                .expect("rules")
                .into_inner()
        }
    };
    let full = get(RulesView::Full).await;
    assert_eq!(full.aliases.len(), MAX_ALIASES_PER_HOST);
    assert!(full.rules_json.contains("/articles/"));
    let structured = get(RulesView::Structured).await;
    assert_eq!(structured.version, 1);
    assert_eq!(structured.aliases, full.aliases);
    assert!(structured.rules_json.is_empty());
    let file = get(RulesView::RuleFile).await;
    assert_eq!(file.version, 1);
    assert_eq!(file.rules_json, full.rules_json);
    assert!(file.aliases.is_empty() && file.rules.is_empty() && file.site_rules.is_empty());
    let unknown = admin
        .get_rules(GetRulesRequest {
            host: HOST.into(),
            view: 7,
        })
        .await
        .expect_err("no view 7");
    assert_eq!(unknown.code(), tonic::Code::InvalidArgument);

    // The command line, as an operator runs it.
    let tokens = server.data_dir.join("test-tokens");
    std::fs::write(tokens.join("cli.token"), WRITE_TOKEN).expect("token");
    let admin_addr = server.admin_addr.to_string();
    let token = tokens.join("cli.token");
    let token = token.to_str().expect("utf-8 path").to_owned();
    let run = |extra: &'static [&'static str]| {
        let mut args = vec![
            "admin".to_owned(),
            "--address".to_owned(),
            admin_addr.clone(),
            "--token-file".to_owned(),
            token.clone(),
            "rules".to_owned(),
            HOST.to_owned(),
        ];
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
                .args(&args)
                .env_remove("UNDUST_DATA_DIR")
                .output()
                .expect("undust ran")
        })
    };
    for (extra, aliases_of) in [
        (
            &["--json"][..],
            (|v: &serde_json::Value| v["aliases"].as_array().map(Vec::len))
                as fn(&serde_json::Value) -> Option<usize>,
        ),
        (&["--rule-file"][..], |v: &serde_json::Value| {
            v["hosts"][0]["aliases"].as_array().map(Vec::len)
        }),
    ] {
        let output = within(CALL_LIMIT, "undust admin rules", run(extra))
            .await
            .expect("join");
        assert!(
            output.status.success(),
            "undust admin rules {extra:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let value: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("the output is JSON");
        assert_eq!(aliases_of(&value), Some(MAX_ALIASES_PER_HOST), "{extra:?}");
    }
    let output = within(CALL_LIMIT, "undust admin rules", run(&[]))
        .await
        .expect("join");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("20000 declared aliases"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    server.stop().await;
}
