//! The offline commands decode, analyse, cluster and learn on every core: on a realistic crawl
//! their output must be byte-identical to a one-thread run (`RAYON_NUM_THREADS=1`), so the
//! parallel stages may change how fast an answer comes, never the answer.

use std::path::Path;
use std::process::{Command, Output};

fn undust(args: &[&str], threads: usize) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .expect("run undust");
    assert!(
        output.status.success(),
        "undust {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("read output")
}

#[test]
fn parallel_clusters_and_rules_equal_a_one_thread_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pages = dir.path().join("crawl.jsonl");
    let pages = pages.to_str().expect("utf-8 path");
    // Seven sites of every kind, 150–400 pages each: many hosts and many batches of records.
    undust(
        &[
            "corpus",
            "--seed",
            "5",
            "--min-pages",
            "150",
            "--max-pages",
            "400",
            "--out",
            pages,
        ],
        1,
    );
    let mut outputs = Vec::new();
    for threads in [1, 4] {
        let clusters = dir.path().join(format!("clusters-{threads}.jsonl"));
        let rules = dir.path().join(format!("rules-{threads}.json"));
        let clustered = undust(
            &[
                "clusters",
                "--pages",
                pages,
                "--out",
                clusters.to_str().expect("utf-8 path"),
            ],
            threads,
        );
        undust(
            &[
                "learn",
                "--pages",
                pages,
                "--out",
                rules.to_str().expect("utf-8 path"),
            ],
            threads,
        );
        let summary = String::from_utf8_lossy(&clustered.stderr).into_owned();
        outputs.push((read(&clusters), read(&rules), summary));
    }
    let (one, many) = (&outputs[0], &outputs[1]);
    let lines = one.0.iter().filter(|&&b| b == b'\n').count();
    assert!(lines > 1_000, "only {lines} cluster lines");
    assert!(
        one.0.windows(9).any(|w| w == b"\"simhash\""),
        "no fingerprints: the crawl does not exercise content analysis"
    );
    assert!(one.1.len() > 100, "no rules learned");
    assert!(one.0 == many.0, "clusters differ between 1 and 4 threads");
    // Rule files record when each host was learned; everything else must be equal.
    let rules = |file: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(file)
            .lines()
            .filter(|line| !line.contains("\"learned_at_unix_ms\""))
            .map(str::to_owned)
            .collect()
    };
    assert!(
        rules(&one.1) == rules(&many.1),
        "rule files differ between 1 and 4 threads"
    );
    // The summary's counts (pages, clusters, evidence) too; only the progress lines may differ.
    let counts = |summary: &str| -> Vec<String> {
        summary
            .lines()
            .filter(|line| line.starts_with("undust clusters:"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(counts(&one.2), counts(&many.2));
}
