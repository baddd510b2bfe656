//! `undust admin` and `undust client` through the built binary against a real sidecar on
//! loopback whose admin tokens were generated in its data directory, as `undust serve` does.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use undust::config::{Knobs, ServeConfig};
use undust::corpus::{self, CorpusConfig, SiteKind};
use undust::pb::ObservedPage;
use undust::service::{run, Listeners};

use crate::support::{observed_pages, wait_serving};

/// A sidecar whose tokens are generated in `data_dir`; stops when the sender is dropped.
async fn start(data_dir: &Path) -> (SocketAddr, SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let config = ServeConfig::from_knobs(Knobs {
        data_dir: Some(data_dir.to_owned()),
        // Relearning only when asked, so versions change only through the commands under test.
        relearn_min_new_samples: Some(1_000_000),
        relearn_interval_secs: Some(86_400),
        ..Knobs::default()
    })
    .expect("valid configuration");
    let main = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = main.local_addr().expect("addr");
    let admin_addr = admin.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(run(
        config,
        Listeners {
            main,
            admin,
            metrics: None,
        },
        async move {
            let _ = stopped.await;
        },
    ));
    wait_serving(addr).await;
    (addr, admin_addr, stop)
}

/// Runs the built `undust` with `args` off the runtime's threads, bounded in time.
async fn undust(args: &[&str], stdin: Option<&str>) -> Output {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let stdin = stdin.map(str::to_owned);
    let child = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut command = Command::new(env!("CARGO_BIN_EXE_undust"));
        command
            .args(&args)
            .env_remove("UNDUST_DATA_DIR")
            .env_remove("UNDUST_ADMIN_TOKEN_FILE")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().expect("spawn undust");
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(text.as_bytes()).expect("write stdin");
        }
        child.wait_with_output().expect("undust ran")
    });
    tokio::time::timeout(Duration::from_secs(120), child)
        .await
        .expect("undust finished within 120 s")
        .expect("join")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs a command expected to succeed and returns its stdout.
async fn ok(args: &[&str]) -> String {
    let output = undust(args, None).await;
    assert!(
        output.status.success(),
        "undust {args:?} failed: {}",
        stderr(&output)
    );
    stdout(&output)
}

async fn ok_json(args: &[&str]) -> Value {
    let text = ok(args).await;
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{args:?}: {err}: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_admin_and_client_command_works_through_the_binary_with_the_generated_tokens() {
    let data = tempfile::tempdir().expect("tempdir");
    let (addr, admin_addr, stop) = start(data.path()).await;
    let addr = addr.to_string();
    let admin_addr = admin_addr.to_string();
    let dir = data.path().to_str().expect("utf-8 path");
    let admin = |rest: &[&str]| -> Vec<String> {
        let mut args = vec!["admin", "--address", &admin_addr, "--data-dir", dir];
        args.extend_from_slice(rest);
        args.into_iter().map(str::to_owned).collect()
    };
    let admin_ok = |rest: &[&str]| {
        let args = admin(rest);
        async move { ok(&args.iter().map(String::as_str).collect::<Vec<_>>()).await }
    };
    let admin_json = |rest: &[&str]| {
        let args = admin(rest);
        async move { ok_json(&args.iter().map(String::as_str).collect::<Vec<_>>()).await }
    };

    assert_eq!(
        ok(&["client", "--address", &addr, "health"]).await,
        "SERVING\n"
    );

    // The README's example, through `undust client`.
    let text = ok(&[
        "client",
        "--address",
        &addr,
        "canonicalize",
        "HTTP://Example.com:80/a/../item?id=7&utm_source=x#top",
        "http://example.com/item?id=7",
    ])
    .await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "NEW\thttp://example.com/item?id=7\thttp://example.com/item?id=7",
            "DUPLICATE\thttp://example.com/item?id=7\thttp://example.com/item?id=7",
        ],
        "{text}"
    );
    // stdin, JSON lines, an invalid URL in the middle, dry run records nothing.
    let output = undust(
        &[
            "client",
            "--address",
            &addr,
            "canonicalize",
            "--json",
            "--dry-run",
        ],
        Some("http://example.com/item?id=7\nftp://example.com/x\n\nhttp://example.com/other\n"),
    )
    .await;
    assert!(output.status.success(), "{}", stderr(&output));
    let results: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    let decisions: Vec<&str> = results
        .iter()
        .map(|r| r["decision"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(decisions, ["DUPLICATE", "INVALID", "NEW"]);
    assert_eq!(results[1]["url"], "ftp://example.com/x");
    assert!(!results[1]["invalid_reason"]
        .as_str()
        .unwrap_or("")
        .is_empty());
    let again = ok(&[
        "client",
        "--address",
        &addr,
        "canonicalize",
        "http://example.com/other",
    ])
    .await;
    assert!(
        again.starts_with("NEW\t"),
        "the dry run recorded nothing: {again}"
    );

    // Pages for one host, then the operator's loop.
    let corpus = corpus::generate(
        &CorpusConfig::new(5, 1)
            .with_kinds(&[SiteKind::Forum])
            .with_pages(250, 300),
    );
    let site = &corpus.sites[0];
    let host = site.host.clone();
    let pages: Vec<ObservedPage> = observed_pages(site);
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("uri")
        .connect()
        .await
        .expect("connect");
    let summary = undust::pb::ingest_client::IngestClient::new(channel)
        .observe_pages(tokio_stream::iter(pages.clone()))
        .await
        .expect("observe")
        .into_inner();
    assert_eq!(summary.received as usize, pages.len());

    let stats = admin_json(&["stats", "--json"]).await;
    assert_eq!(stats["pages_observed"], pages.len() as u64);
    assert_eq!(stats["urls_canonicalized"], 6);
    // The dry run's DUPLICATE answer is counted too: it is an answer the crawler acted on.
    assert_eq!(stats["duplicates_suppressed"], 2);
    let text = admin_ok(&["stats"]).await;
    assert!(
        text.lines()
            .any(|l| l.starts_with("pages observed") && l.ends_with(&pages.len().to_string())),
        "{text}"
    );

    let relearned = admin_json(&["relearn", &host, "--wait", "--json"]).await;
    assert_eq!(relearned["job"]["state"], "succeeded", "{relearned}");
    assert_eq!(relearned["job"]["hosts"][0]["rules_version"], 1);
    let rule_count = relearned["job"]["hosts"][0]["rules"].as_u64().unwrap_or(0);
    let job_id = relearned["job_id"].as_str().expect("job id").to_owned();
    let job = admin_json(&["job", &job_id, "--json"]).await;
    assert_eq!(job["state"], "succeeded");
    assert_eq!(job["hosts"][0]["host"], host.as_str());
    let text = admin_ok(&["job", &job_id]).await;
    assert!(
        text.starts_with(&format!("job {job_id}: succeeded")),
        "{text}"
    );

    let rules = admin_json(&["rules", &host, "--json"]).await;
    assert_eq!(rules["version"], 1);
    let learned = rules["rules"].as_array().map_or(0, Vec::len)
        + rules["site_rules"].as_array().map_or(0, Vec::len);
    assert!(learned > 0, "a forum has learnable DUST: {rules}");
    // The job counts rules of both kinds (`HostRuleSet::len`).
    assert_eq!(learned as u64, rule_count, "{rules}");
    let text = admin_ok(&["rules", &host]).await;
    assert!(
        text.starts_with(&format!("{host}: rule set version 1 learned 20")),
        "{text}"
    );
    let file: Value = serde_json::from_str(&admin_ok(&["rules", &host, "--rule-file"]).await)
        .expect("a rule file is JSON");
    assert!(file.is_object(), "{file}");

    let hosts = admin_json(&["hosts", "--json"]).await;
    let entry = hosts
        .as_array()
        .and_then(|hosts| hosts.iter().find(|h| h["host"] == host.as_str()))
        .unwrap_or_else(|| panic!("{host} listed: {hosts}"));
    assert_eq!(entry["pages_observed"], pages.len() as u64);
    assert_eq!(entry["rules_version"], 1);
    let text = admin_ok(&["hosts"]).await;
    assert!(text.starts_with("HOST"), "{text}");
    assert!(text.lines().any(|l| l.starts_with(&host)), "{text}");

    let url = &site.pages[0].url;
    let explained = admin_json(&["explain", url, "--json"]).await;
    assert_eq!(explained["input"], url.as_str());
    assert_eq!(explained["rules_version"], 1);
    assert!(!explained["canonical"].as_str().unwrap_or("").is_empty());
    let text = admin_ok(&["explain", "HTTP://Example.com/b?utm_source=x"]).await;
    assert!(text.contains("canonical http://example.com/b"), "{text}");

    // A second version, then back to the first.
    let again = admin_json(&["relearn", &host, "--wait", "--json"]).await;
    assert_eq!(again["job"]["hosts"][0]["rules_version"], 2, "{again}");
    let text = admin_ok(&["rollback", &host]).await;
    assert_eq!(text, format!("{host}: rule set version 1 is live\n"));
    let rules = admin_json(&["rules", &host, "--json"]).await;
    assert_eq!(rules["version"], 1);
    assert_eq!(rules["previous_versions"], serde_json::json!([2]));

    // Refusals: an unknown host, a read token on a write call, a wrong token, no token at all.
    let args = admin(&["rollback", "no-such-host.example"]);
    let output = undust(&args.iter().map(String::as_str).collect::<Vec<_>>(), None).await;
    assert_eq!(output.status.code(), Some(65), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no-such-host.example"),
        "{}",
        stderr(&output)
    );
    let args = admin(&["relearn", "no-such-host.example"]);
    let output = undust(&args.iter().map(String::as_str).collect::<Vec<_>>(), None).await;
    assert_eq!(output.status.code(), Some(65), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no samples"),
        "{}",
        stderr(&output)
    );

    let read_token = data.path().join("admin-read.token");
    let read_token = read_token.to_str().expect("utf-8");
    let output = undust(
        &[
            "admin",
            "--address",
            &admin_addr,
            "--token-file",
            read_token,
            "relearn",
            &host,
        ],
        None,
    )
    .await;
    assert_eq!(output.status.code(), Some(77), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("write token"),
        "{}",
        stderr(&output)
    );

    let wrong = data.path().join("wrong.token");
    std::fs::write(&wrong, "not-the-token-of-this-sidecar\n").expect("write");
    let output = undust(
        &[
            "admin",
            "--address",
            &admin_addr,
            "--token-file",
            wrong.to_str().expect("utf-8"),
            "stats",
        ],
        None,
    )
    .await;
    assert_eq!(output.status.code(), Some(77), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("token was refused"),
        "{}",
        stderr(&output)
    );

    let empty = tempfile::tempdir().expect("tempdir");
    let output = undust(
        &[
            "admin",
            "--address",
            &admin_addr,
            "--data-dir",
            empty.path().to_str().expect("utf-8"),
            "stats",
        ],
        None,
    )
    .await;
    assert_eq!(output.status.code(), Some(77), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("admin-read.token"),
        "{}",
        stderr(&output)
    );

    // An address where nothing listens.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").to_string()
    };
    let args = ["admin", "--address", &closed, "--data-dir", dir, "stats"];
    let output = undust(&args, None).await;
    assert_eq!(output.status.code(), Some(69), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot reach undust"),
        "{}",
        stderr(&output)
    );
    let output = undust(
        &[
            "client",
            "--address",
            &closed,
            "canonicalize",
            "http://a.example/",
        ],
        None,
    )
    .await;
    assert_eq!(output.status.code(), Some(69), "{}", stderr(&output));

    drop(stop);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_mirrors_pins_forbids_and_lists_through_the_binary() {
    let data = tempfile::tempdir().expect("tempdir");
    let (_, admin_addr, stop) = start(data.path()).await;
    let admin_addr = admin_addr.to_string();
    let dir = data.path().to_str().expect("utf-8 path");
    let base = ["admin", "--address", admin_addr.as_str(), "--data-dir", dir];
    let run = |rest: &[&str]| {
        let mut args: Vec<String> = base.iter().map(|a| (*a).to_owned()).collect();
        args.extend(rest.iter().map(|a| (*a).to_owned()));
        async move { undust(&args.iter().map(String::as_str).collect::<Vec<_>>(), None).await }
    };

    let pinned = run(&[
        "--json",
        "mirrors",
        "pin",
        "https://www.site.org",
        "http://mirror.example.edu/pub/site/",
    ])
    .await;
    assert!(pinned.status.success(), "{}", stderr(&pinned));
    let list: Value = serde_json::from_str(&stdout(&pinned)).expect("JSON");
    assert_eq!(
        list["mirrors"][0]["aliases"][0]["origin"],
        "http://mirror.example.edu"
    );
    assert_eq!(list["mirrors"][0]["aliases"][0]["path_prefix"], "/pub/site");
    assert_eq!(list["mirrors"][0]["aliases"][0]["pinned"], true);
    let forbid = run(&[
        "mirrors",
        "forbid",
        "https://www.site.org",
        "https://blog.site.org",
    ])
    .await;
    assert!(forbid.status.success(), "{}", stderr(&forbid));
    let listed = run(&["--json", "mirrors", "list"]).await;
    let list: Value = serde_json::from_str(&stdout(&listed)).expect("JSON");
    assert_eq!(
        list["decisions"][0]["forbidden"][0]["origin"],
        "https://blog.site.org"
    );
    let text = run(&["mirrors", "list"]).await;
    assert!(
        stdout(&text).contains("http://mirror.example.edu"),
        "{}",
        stdout(&text)
    );
    // A bad site is refused with the reason and EX_DATAERR.
    let bad = run(&["mirrors", "pin", "https://www.site.org", "ftp://x.org"]).await;
    assert_eq!(bad.status.code(), Some(65), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("http(s)"), "{}", stderr(&bad));
    // Clearing the pin leaves no live set.
    let cleared = run(&[
        "--json",
        "mirrors",
        "clear",
        "https://www.site.org",
        "http://mirror.example.edu/pub/site",
    ])
    .await;
    let list: Value = serde_json::from_str(&stdout(&cleared)).expect("JSON");
    assert_eq!(list["mirrors"], serde_json::json!([]));
    drop(stop);
}
