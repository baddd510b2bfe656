//! The offline command line, run as a real process: canonicalize, clusters, learn, eval, corpus.

use std::io::Write;
use std::process::{Command, Output, Stdio};

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
    child.wait_with_output().expect("undust output")
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
