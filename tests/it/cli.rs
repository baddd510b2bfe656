//! The offline command line, run as a real process: canonicalize, clusters, learn, eval, corpus.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::support::prose;

fn undust(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run undust");
    // Written from its own thread: with the whole input written first, a child that fills its
    // stdout pipe before reading all of stdin would block both processes.
    let input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let mut input = input;
        match input.write_all(&stdin) {
            // The command may answer (a usage error, say) without reading its input.
            Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    });
    let output = child.wait_with_output().expect("undust output");
    writer
        .join()
        .expect("stdin writer thread")
        .expect("write stdin");
    output
}

#[test]
fn canonicalize_writes_one_line_per_input_line_in_order() {
    let input = b"HTTP://Example.com:80/a/../b?utm_source=x#f\n\nnot a url\nftp://example.com/x\r\nhttp://example.com/b\n";
    let output = undust(&["canonicalize"], input);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    let lines: Vec<&str> = stdout.split('\n').collect();
    assert_eq!(
        lines,
        vec![
            "http://example.com/b",
            "",
            "not a url",
            "ftp://example.com/x",
            "http://example.com/b",
            ""
        ]
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("5 lines") && stderr.contains("3 echoed unchanged"),
        "{stderr}"
    );
    assert!(
        stderr.contains("line 3:"),
        "invalid lines are named by number: {stderr}"
    );
}

#[test]
fn canonicalize_keeps_input_order_across_many_batches_on_every_core() {
    // 50,000 lines: a dozen batches, canonicalized on all cores; every 7th line is echoed.
    let lines = 50_000usize;
    let input: String = (0..lines)
        .map(|i| {
            if i % 7 == 3 {
                format!("bad line {i}\n")
            } else {
                format!("HTTP://Example.com:80/p/{i}/../{i}?utm_source=x#top\n")
            }
        })
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_undust"))
        .arg("canonicalize")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run undust");
    let mut stdin = child.stdin.take().expect("stdin");
    // Written from another thread: the output pipe fills while the input is still being written.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("undust output");
    writer.join().expect("writer").expect("stdin written");
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), lines);
    for (i, line) in got.iter().enumerate() {
        let want = if i % 7 == 3 {
            format!("bad line {i}")
        } else {
            format!("http://example.com/p/{i}")
        };
        assert_eq!(*line, want, "line {}", i + 1);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("50000 lines"), "{stderr}");
    assert!(stderr.contains("line 4:"), "{stderr}");
}

#[test]
fn a_bad_rule_file_is_refused_with_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("rules.json");
    std::fs::write(
        &rules,
        "{\"format\": \"something-else\", \"version\": 1, \"hosts\": []}",
    )
    .expect("write");
    let output = undust(
        &[
            "canonicalize",
            "--rules",
            rules.to_str().expect("utf-8 path"),
        ],
        b"http://a.com/\n",
    );
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("rules.json"));
}

/// A rule file's mirror sets fold alias origins (a bare host, a folder on a mirror network) onto
/// the canonical site before that site's own rules apply, as the sidecar folds them: `undust
/// learn` writes both halves, so `undust canonicalize --rules` must read both. Before stop 34 it
/// read the hosts' rules only, and every URL of an alias kept its own host.
#[test]
fn canonicalize_folds_the_rule_files_mirror_sets_before_the_sites_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("rules.json");
    let file = serde_json::json!({
        "format": "undust-rules",
        "version": 1,
        "hosts": [{
            "host": "www.example.org",
            "version": 1,
            "learned_at_unix_ms": 0,
            "site_rules": [{
                "id": "www.example.org#s1",
                "op": "default_document",
                "name": "index.php",
                "support": 3,
                "support_clusters": 3,
                "false_positive_rate": 0.0
            }],
            "rules": []
        }],
        "mirrors": [{
            "id": "mirror:https://www.example.org",
            "canonical": {"origin": "https://www.example.org"},
            "aliases": [
                {"origin": "http://example.org"},
                {"origin": "https://mirror.example.net", "path_prefix": "/pub/example"}
            ]
        }]
    });
    std::fs::write(&rules, file.to_string()).expect("write");
    let input = b"http://example.org/docs/index.php?utm_source=x\n\
        https://mirror.example.net/pub/example/b\n\
        https://mirror.example.net/other/c\n\
        https://www.example.org/docs/index.php\n";
    let output = undust(
        &["canonicalize", "--rules", rules.to_str().expect("utf-8")],
        input,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "https://www.example.org/docs/\n\
         https://www.example.org/b\n\
         https://mirror.example.net/other/c\n\
         https://www.example.org/docs/\n"
    );
    assert!(stderr.contains("2 of them folded"), "{stderr}");

    // A mirror set that does not hold together is refused with the file's name, not ignored.
    let mut damaged = file.clone();
    damaged["mirrors"][0]["aliases"] = serde_json::json!([]);
    std::fs::write(&rules, damaged.to_string()).expect("write");
    let output = undust(
        &["canonicalize", "--rules", rules.to_str().expect("utf-8")],
        input,
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("rules.json"), "{stderr}");
    assert!(stderr.contains("at least one alias"), "{stderr}");
}

#[test]
fn clusters_reports_malformed_lines_and_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pages = dir.path().join("pages.jsonl");
    let article = "<html><body><nav><a href=/1>1</a><a href=/2>2</a><a href=/3>3</a></nav><article><p>\
        The committee published its annual report on regional water quality, noting improvements in \
        three rivers and persistent problems in two lakes where agricultural runoff remains high.</p></article></body></html>";
    let mut text = String::new();
    text.push_str(
        &serde_json::json!({"url": "http://news.example/story?id=1", "html": article}).to_string(),
    );
    text.push('\n');
    text.push_str("{this is not json\n");
    text.push_str(
        &serde_json::json!({"url": "http://news.example/story?id=1&ref=home", "html": article})
            .to_string(),
    );
    text.push('\n');
    std::fs::write(&pages, text).expect("write");
    let output = undust(
        &["clusters", "--pages", pages.to_str().expect("utf-8 path")],
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("line 2"),
        "the malformed line is named: {stderr}"
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["host"], "news.example");
    assert_eq!(
        lines[0]["cluster"], lines[1]["cluster"],
        "identical content clusters together"
    );
    assert_eq!(lines[0]["simhash"].as_str().map(str::len), Some(16));
}

/// A crawl that fetched some URLs many times (revisits, retries) is sampled as the sidecar samples
/// it: one sample per URL, the last record winning, and the summary says so.
#[test]
fn repeated_records_of_a_url_are_one_sample_and_the_summary_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pages = dir.path().join("pages.jsonl");
    let mut text = String::new();
    for round in 0..30 {
        for story in 0..10 {
            let article = format!(
                "<article><p>Story {story} of the regional desk, revision {round}: the council met \
                 again to discuss the harbour budget, the new ferry timetable and a library.</p></article>"
            );
            let line = serde_json::json!({
                "url": format!("http://desk.example/story/{story}"),
                "html": article,
            });
            text.push_str(&line.to_string());
            text.push('\n');
        }
    }
    std::fs::write(&pages, text).expect("write");
    let output = undust(
        &["clusters", "--pages", pages.to_str().expect("utf-8 path")],
        b"",
    );
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("300 records: 300 pages")
            && stderr.contains("kept the last record of 290 repeated URLs"),
        "{stderr}"
    );
    let urls: std::collections::HashSet<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            value["url"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(urls.len(), 10, "one answer per URL");
}

/// `undust corpus --kinds` writes sites of the families named, `--rel-canonical` makes their
/// pages declare their canonical and shortlink as Drupal and WordPress write them, and `undust
/// eval` learns the host's alias table from those declarations as `undust learn` does: trained
/// on every page, the rows reach the best achievable.
#[test]
fn eval_learns_the_alias_tables_of_a_corpus_whose_pages_declare_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = |name: &str| dir.path().join(name).to_str().expect("utf-8").to_owned();
    let corpus = |out: &str, declare: &str| {
        let args = [
            "corpus",
            "--seed",
            "5",
            "--kinds",
            "drupal,wordpress",
            "--min-pages",
            "300",
            "--max-pages",
            "400",
            "--rel-canonical",
            declare,
            "--out",
            out,
        ];
        let output = undust(&args, b"");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::read_to_string(out).expect("corpus")
    };
    let declaring = corpus(&path("declaring.jsonl"), "1");
    let plain = corpus(&path("plain.jsonl"), "0");
    assert!(
        declaring.contains("rel=\\\"shortlink\\\""),
        "shortlinks declared"
    );
    assert!(!plain.contains("shortlink"), "nothing declared");
    let hosts: std::collections::BTreeSet<String> = declaring
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            let url = url::Url::parse(value["url"].as_str().expect("url")).expect("URL");
            url.host_str().expect("host").to_owned()
        })
        .collect();
    assert_eq!(hosts.len(), 2, "one site of each kind: {hosts:?}");

    let output = undust(
        &[
            "eval",
            "--pages",
            &path("declaring.jsonl"),
            "--train-fraction",
            "1",
            "--json",
        ],
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let graph = report["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["method"] == "Graph"))
        .expect("a graph row");
    let averages = &graph["averages"];
    let (got, best) = (
        averages["micro_compression"].as_f64().expect("compression"),
        averages["micro_best_compression"].as_f64().expect("best"),
    );
    // The rules alone reach about half of the best here (stop 41: 0.28 of 0.60).
    assert!(best > 0.5 && got >= 0.99 * best, "{got} of {best}");
    assert_eq!(averages["micro_fpr"], 0.0);

    let output = undust(
        &[
            "corpus",
            "--kinds",
            "drupal,wordpres",
            "--out",
            &path("x.jsonl"),
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(64));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no kind is named \"wordpres\"") && stderr.contains("wordpress"),
        "{stderr}"
    );
}

#[test]
fn corpus_learn_eval_and_canonicalize_work_together() {
    let dir = tempfile::tempdir().expect("tempdir");
    let crawl = dir.path().join("crawl.jsonl");
    let rules = dir.path().join("rules.json");
    let path = |p: &std::path::Path| p.to_str().expect("utf-8 path").to_owned();
    let output = undust(
        &[
            "corpus",
            "--seed",
            "4",
            "--min-pages",
            "150",
            "--max-pages",
            "300",
            "--out",
            &path(&crawl),
        ],
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let output = undust(
        &["learn", "--pages", &path(&crawl), "--out", &path(&rules)],
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rules).expect("rules")).expect("JSON");
    assert_eq!(file["format"], "undust-rules");
    assert!(
        file["hosts"]
            .as_array()
            .is_some_and(|hosts| !hosts.is_empty()),
        "rules were learned: {file}"
    );

    // The learned rules load and apply.
    let first_host = file["hosts"][0]["host"].as_str().expect("host").to_owned();
    let sample = format!("http://{first_host}/\n");
    let output = undust(
        &["canonicalize", "--rules", &path(&rules)],
        sample.as_bytes(),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let output = undust(&["eval", "--pages", &path(&crawl), "--json"], b"");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 3, "static, graph and naive rows");
    let fpr = rows[1]["averages"]["micro_fpr"].as_f64().expect("fpr");
    assert!(fpr < 0.05, "graph strategy false-positive rate {fpr}");

    let output = undust(&["eval", "--pages", &path(&crawl)], b"");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("tree + graph") && table.contains("best achievable"),
        "{table}"
    );
}

#[test]
fn labelled_clusters_are_a_training_set_with_bad_lines_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let labelled = dir.path().join("labels.jsonl");
    let mut text = String::new();
    for id in 0..40 {
        for session in ["a1b2c3d4e5f6a7b8", "f0e1d2c3b4a59687", "0123456789abcdef"] {
            text.push_str(&format!("{{\"url\": \"http://forum.example/thread?id={id}&s={session}\", \"cluster\": \"t{id}\"}}\n"));
        }
        text.push_str(&format!(
            "{{\"url\": \"http://forum.example/thread?id={id}\", \"cluster\": \"t{id}\"}}\n"
        ));
    }
    text.push_str("{\"url\": 5}\n");
    std::fs::write(&labelled, text).expect("write");
    let out = dir.path().join("rules.json");
    let output = undust(
        &[
            "learn",
            "--clusters",
            labelled.to_str().expect("path"),
            "--out",
            out.to_str().expect("path"),
        ],
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("line 161"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rules: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("rules")).expect("JSON");
    // Host-wide, as a site rule, or per page type, as a pattern rule's operation.
    let site_rule = rules["hosts"][0]["site_rules"]
        .as_array()
        .is_some_and(|rules| {
            rules
                .iter()
                .any(|rule| rule["op"] == "ignore_param" && rule["name"] == "s")
        });
    let ignores_session = site_rule
        || rules["hosts"][0]["rules"].as_array().is_some_and(|rules| {
            rules.iter().any(|rule| {
                rule["operations"].as_array().is_some_and(|ops| {
                    ops.iter()
                        .any(|op| op["op"] == "ignore" && op["key"] == "query:s")
                })
            })
        });
    assert!(ignores_session, "the session key is ignored: {rules}");
}

/// `undust clusters` on JSON lines `records`: the URL → cluster map, URL → simhash (when the URL
/// has content), and stderr.
fn clusters_of(
    records: &[serde_json::Value],
) -> (HashMap<String, String>, HashMap<String, String>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let pages = dir.path().join("pages.jsonl");
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&pages, text).expect("write");
    let output = undust(
        &["clusters", "--pages", pages.to_str().expect("utf-8 path")],
        b"",
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let (mut cluster, mut simhash) = (HashMap::new(), HashMap::new());
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        let url = v["url"].as_str().expect("url").to_owned();
        if let Some(s) = v["simhash"].as_str() {
            simhash.insert(url.clone(), s.to_owned());
        }
        cluster.insert(url, v["cluster"].as_str().expect("cluster").to_owned());
    }
    (cluster, simhash, stderr)
}

/// A page of the news site: shared navigation, `canonical` in the head when given, an article.
fn news_page(canonical: Option<&str>, article: &str) -> String {
    let link = canonical.map_or(String::new(), |c| {
        format!(r#"<link rel="stylesheet" href="/s.css"><LINK Rel="Canonical" HREF="{c}">"#)
    });
    format!(
        "<!doctype html><html><head><title>News</title>{link}</head><body><nav><a href=/>Home</a> \
         <a href=/world>World</a> <a href=/sport>Sport</a> <a href=/about>About</a></nav>\
         <article><h1>Report</h1><p>{article}</p></article></body></html>"
    )
}

/// Apache listings sorted another way list the same entries in another order: too little text
/// to be Strong, not identical, with equal simhashes. `undust clusters` marks such pages
/// `unresolved` (their cluster is no evidence, and learning leaves them out) and counts them.
#[test]
fn clusters_mark_the_pages_whose_cluster_is_no_evidence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let crawl = dir.path().join("listing.jsonl");
    let crawl = crawl.to_str().expect("utf-8 path");
    let args = [
        "corpus",
        "--seed",
        "44",
        "--kinds",
        "directory-listing",
        "--min-pages",
        "400",
        "--max-pages",
        "600",
        "--out",
        crawl,
    ];
    let output = undust(&args, b"");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = undust(&["clusters", "--pages", crawl], b"");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    let unresolved: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["unresolved"] == true).collect();
    assert!(!unresolved.is_empty(), "{stderr}");
    assert!(
        stderr.contains(&format!("{} pages with too little text", unresolved.len())),
        "{stderr}"
    );
    // Sorted views of one listing among them; the field is absent elsewhere.
    assert!(
        unresolved
            .iter()
            .any(|l| l["url"].as_str().is_some_and(|u| u.contains("?C="))),
        "{unresolved:?}"
    );
    assert!(lines
        .iter()
        .all(|l| l["unresolved"] == true || l.get("unresolved").is_none()));
}

#[test]
fn clusters_use_the_canonical_declared_in_the_html() {
    let h = |p: &str| format!("http://news.example{p}");
    let (a, b, c) = (prose(1, 90), prose(2, 90), prose(3, 90));
    let mut records = vec![
        // Two URLs of one story, each declaring the (never fetched) canonical /story/1, relative.
        serde_json::json!({"url": h("/story?id=1"), "html": news_page(Some("/story/1"), &a)}),
        serde_json::json!({"url": h("/story?id=1&ref=home"), "html": news_page(Some("story/1"), &a)}),
        // An opinion piece pointing its canonical at the story: its content contradicts that.
        serde_json::json!({"url": h("/opinion?id=9"), "html": news_page(Some(&h("/story?id=1")), &b)}),
        // The record's own canonical wins over the HTML's (which would claim /story/1).
        serde_json::json!({"url": h("/story?id=2"), "canonical": h("/story/2"),
                           "html": news_page(Some("/story/1"), &c)}),
    ];
    // Other pages of the site, without canonicals. With enough of them the story's article is on
    // too few pages to be taken for the site's template.
    for n in 0..8 {
        records.push(serde_json::json!({"url": h(&format!("/world/{n}")),
            "html": news_page(None, &prose(10 + n, 90))}));
    }
    let (cluster, simhash, stderr) = clusters_of(&records);
    let id = |p: &str| {
        cluster
            .get(&h(p))
            .unwrap_or_else(|| panic!("{p} in {cluster:?}"))
    };
    // The canonical URL joined the story's cluster though it was never fetched.
    assert_eq!(id("/story/1"), id("/story?id=1"));
    assert_eq!(id("/story?id=1&ref=home"), id("/story?id=1"));
    assert!(
        !simhash.contains_key(&h("/story/1")),
        "known only as a canonical"
    );
    // The contradicted claim merged nothing.
    assert_ne!(id("/opinion?id=9"), id("/story?id=1"));
    // Precedence: /story?id=2 is with its declared /story/2, not with /story/1.
    assert_eq!(id("/story/2"), id("/story?id=2"));
    assert_ne!(id("/story?id=2"), id("/story/1"));
    assert_eq!(
        cluster.len(),
        14,
        "12 pages and 2 canonical URLs: {cluster:?}"
    );
    assert!(
        stderr.contains("3 canonicals from HTML")
            && stderr.contains("evidence applied: 0 redirects, 3 canonicals;")
            && stderr.contains("1 canonicals contradicted by content"),
        "{stderr}"
    );
}

#[test]
fn clusters_do_not_merge_urls_redirected_to_one_login_page() {
    let h = |p: &str| format!("https://shop.example{p}");
    let login = "<html><body><form><p>Please sign in to continue.</p><input name=user>\
        <input name=password type=password></form></body></html>";
    let product = |n: u64| {
        format!(
            "<html><body><nav><a href=/>Home</a> <a href=/cart>Cart</a> <a href=/help>Help</a></nav>\
             <main><h1>Product {n}</h1><p>{}</p></main></body></html>",
            prose(100 + n, 80)
        )
    };
    let mut records = Vec::new();
    // Twenty members-only items: the crawler was sent to the login page, with a return URL.
    for i in 0..20 {
        records.push(serde_json::json!({
            "url": h(&format!("/item/{i}")),
            "final_url": h(&format!("/login?next=%2Fitem%2F{i}")),
            "status": 200,
            "html": login,
        }));
    }
    // Real aliases: http -> https, a missing trailing slash.
    records.push(serde_json::json!({"url": "http://shop.example/product/1",
        "final_url": h("/product/1"), "status": 200, "html": product(1)}));
    records.push(serde_json::json!({"url": h("/product/2"),
        "final_url": h("/product/2/"), "status": 200, "html": product(2)}));
    records.push(serde_json::json!({"url": h("/product/3"), "status": 200, "html": product(3)}));
    let (cluster, simhash, stderr) = clusters_of(&records);
    let id = |u: &str| {
        cluster
            .get(u)
            .unwrap_or_else(|| panic!("{u} in {cluster:?}"))
    };
    let item_clusters: std::collections::HashSet<&String> =
        (0..20).map(|i| id(&h(&format!("/item/{i}")))).collect();
    assert_eq!(item_clusters.len(), 20, "every item is its own cluster");
    let login_cluster = id(&h("/login?next=%2Fitem%2F0"));
    assert!(!item_clusters.contains(login_cluster));
    // The login pages themselves are one page under twenty URLs.
    for i in 0..20 {
        assert_eq!(id(&h(&format!("/login?next=%2Fitem%2F{i}"))), login_cluster);
        assert!(
            !simhash.contains_key(&h(&format!("/item/{i}"))),
            "no content of its own"
        );
    }
    assert_eq!(id("http://shop.example/product/1"), id(&h("/product/1")));
    assert_eq!(id(&h("/product/2")), id(&h("/product/2/")));
    assert_ne!(id(&h("/product/1")), id(&h("/product/2")));
    assert!(
        stderr.contains("evidence applied: 2 redirects")
            && stderr.contains("20 redirects into catch-alls"),
        "{stderr}"
    );
}

/// Runs `undust args` with stdout going to `/dev/full` (every write fails with ENOSPC).
fn undust_to_dev_full(args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .expect("run undust")
}

#[test]
fn write_errors_exit_non_zero_with_a_clear_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let crawl = dir.path().join("crawl.jsonl");
    let crawl = crawl.to_str().expect("utf-8 path");
    let output = undust(
        &[
            "corpus",
            "--seed",
            "5",
            "--min-pages",
            "60",
            "--max-pages",
            "80",
            "--out",
            crawl,
        ],
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let cases: [(&str, Vec<&str>); 5] = [
        (
            "clusters --out",
            vec!["clusters", "--pages", crawl, "--out", "/dev/full"],
        ),
        ("clusters > stdout", vec!["clusters", "--pages", crawl]),
        ("eval > stdout", vec!["eval", "--pages", crawl]),
        (
            "eval --json > stdout",
            vec!["eval", "--pages", crawl, "--json"],
        ),
        (
            "learn --out",
            vec!["learn", "--pages", crawl, "--out", "/dev/full"],
        ),
    ];
    for (what, args) in cases {
        let output = undust_to_dev_full(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(74), "{what}: {stderr}");
        assert!(
            stderr.contains("the output is incomplete") && !stderr.contains("panicked"),
            "{what}: {stderr}"
        );
    }

    // canonicalize reads stdin: give it lines through a file.
    let urls = dir.path().join("urls.txt");
    std::fs::write(&urls, "http://example.com/a\n".repeat(10_000)).expect("write urls");
    let output = Command::new(env!("CARGO_BIN_EXE_undust"))
        .arg("canonicalize")
        .stdin(std::fs::File::open(&urls).expect("urls"))
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .expect("/dev/full"),
        )
        .stderr(Stdio::piped())
        .output()
        .expect("run undust");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(74), "canonicalize: {stderr}");
    assert!(stderr.contains("writing stdout failed"), "{stderr}");
}

#[test]
fn serve_help_describes_token_files_as_they_work() {
    let output = undust(&["serve", "--help"], b"");
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).expect("utf-8");
    for expected in [
        "admin-read.token",
        "admin-write.token",
        "generated",
        "0600",
        "--strip-userinfo",
    ] {
        assert!(help.contains(expected), "serve --help lacks {expected:?}");
    }
    assert!(
        !help.contains("refuses every call"),
        "the admin service without token files generates tokens, it does not refuse"
    );
}

#[test]
fn canonicalize_strips_credentials_unless_asked_to_keep_them() {
    let input = b"http://alice:s3cret@example.com/a\n";
    let output = undust(&["canonicalize"], input);
    assert!(output.status.success());
    assert_eq!(output.stdout, b"http://example.com/a\n");
    let output = undust(&["canonicalize", "--keep-userinfo"], input);
    assert!(output.status.success());
    assert_eq!(output.stdout, b"http://alice:s3cret@example.com/a\n");
}
