//! Real crawls in: the NetarchiveSuite test material (real ARC, WARC, CDX and Heritrix crawl.log
//! files of Danish sites, 2004–2015) read record by record, and learning from its indexes.

use std::path::{Path, PathBuf};

use undust::ingest::index::{read_index, Capture, IndexFormat};
use undust::ingest::pages::{read_pages, Format, PageRecord, ReaderStats, RecordKind};

use crate::support::testdata;

fn crawls() -> Option<PathBuf> {
    Some(testdata()?.join("real-crawls-netarchivesuite/data"))
}

fn read(path: &Path) -> (Vec<PageRecord>, ReaderStats, usize) {
    let mut reader = read_pages(path).unwrap();
    let mut pages = Vec::new();
    let mut errors = 0;
    for item in reader.by_ref() {
        match item {
            Ok(page) => pages.push(page),
            Err(err) => {
                eprintln!("{}: {err}", path.display());
                errors += 1;
            }
        }
    }
    (pages, reader.stats().clone(), errors)
}

fn file(relative: &str) -> Option<PathBuf> {
    Some(crawls()?.join(relative))
}

#[test]
fn a_real_arc_reads_every_record_with_its_server_ip() {
    let Some(path) =
        file("common/common-test/tests/dk/netarkivet/common/utils/arc/data/input/fyensdk.arc")
    else {
        return;
    };
    let (pages, stats, errors) = read(&path);
    assert_eq!(read_pages(&path).unwrap().format(), Format::Arc);
    assert_eq!(errors, 0);
    assert_eq!(stats.records, 190);
    assert_eq!(stats.arc_file_headers, 1);
    assert_eq!(stats.pages, 189);
    assert_eq!(pages.len(), 189);
    assert!(pages
        .iter()
        .all(|p| p.server_ip.as_deref() == Some("194.255.126.118")));
    assert!(pages
        .iter()
        .all(|p| p.status == Some(200) && !p.body.is_empty()));
    assert!(pages[0]
        .url
        .starts_with("http://www.fyens.dk/picturecache/"));
}

#[test]
fn a_gzip_per_record_arc_yields_its_redirect() {
    let Some(path) = file("common/common-test/tests/dk/netarkivet/common/utils/arc/data/input/NetarchiveSuite-netarkivet.arc.gz")
    else {
        return;
    };
    let (pages, stats, errors) = read(&path);
    assert_eq!(errors, 0);
    assert_eq!((stats.records, stats.pages, stats.redirects), (66, 63, 1));
    assert_eq!((stats.arc_file_headers, stats.non_http), (1, 1));
    let redirects: Vec<(&str, Option<&str>)> = pages
        .iter()
        .filter(|p| p.kind == RecordKind::Redirect)
        .map(|p| (p.url.as_str(), p.final_url.as_deref()))
        .collect();
    assert_eq!(
        redirects,
        [(
            "http://netarchive.dk/",
            Some("http://netarchive.dk/index-en.php")
        )]
    );
}

#[test]
fn a_real_warc_counts_every_record_type_and_keeps_redirects_ips_and_digests() {
    let Some(path) = file("archive/archive-test/tests/dk/netarkivet/archive/distribute/arcrepository/data/originals/NAS-20100909163324-00000-mette.kb.dk.warc")
    else {
        return;
    };
    let (pages, stats, errors) = read(&path);
    assert_eq!(errors, 0);
    assert_eq!(stats.warcinfo, 1);
    assert_eq!(stats.requests, 39);
    assert_eq!(stats.metadata, 39);
    assert_eq!(stats.pages + stats.redirects + stats.non_http, 41);
    assert_eq!(
        stats.records,
        stats.warcinfo
            + stats.requests
            + stats.metadata
            + stats.pages
            + stats.redirects
            + stats.non_http
    );
    let redirects: Vec<(&str, &str)> = pages
        .iter()
        .filter(|p| p.kind == RecordKind::Redirect)
        .map(|p| (p.url.as_str(), p.final_url.as_deref().unwrap()))
        .collect();
    eprintln!("{redirects:?} {stats:?}");
    assert!(redirects.contains(&("http://netarkivet.dk/", "http://netarkivet.dk/index-da.php")));
    assert_eq!(redirects.len() as u64, stats.redirects);
    assert!(pages.iter().all(|p| p.server_ip.is_some()));
    assert!(pages.iter().all(|p| p
        .payload_digest
        .as_deref()
        .is_some_and(|d| d.starts_with("sha1:"))));
}

#[test]
fn the_same_crawl_as_warc_and_as_arc_gives_the_same_pages() {
    let (Some(arc), Some(warc)) = (
        file("common/common-test/tests/dk/netarkivet/common/utils/arc/data/input/fyensdk.arc"),
        file("common/common-test/tests/dk/netarkivet/common/utils/warc/data/input/fyensdk.warc"),
    ) else {
        return;
    };
    let (arc_pages, _, _) = read(&arc);
    let (warc_pages, warc_stats, errors) = read(&warc);
    assert_eq!(errors, 0);
    assert_eq!(
        (warc_stats.warcinfo, warc_stats.metadata, warc_stats.pages),
        (1, 1, 189)
    );
    let urls = |pages: &[PageRecord]| pages.iter().map(|p| p.url.clone()).collect::<Vec<_>>();
    assert_eq!(urls(&arc_pages), urls(&warc_pages));
    // Neither file stores payload digests (ARC has none, this WARC was converted from it): for
    // a file that is digest evidence the reader computes the one WARC writers record, the same
    // for the same payload in both; HTML is analysed for content and gets none.
    let files: Vec<(&PageRecord, &PageRecord)> = arc_pages
        .iter()
        .zip(&warc_pages)
        .filter(|(a, _)| a.payload_digest.is_some())
        .collect();
    eprintln!("{} ARC files with a computed digest", files.len());
    assert!(files.len() >= 20, "{}", files.len());
    assert!(files
        .iter()
        .all(|(a, w)| a.payload_digest == w.payload_digest));
    assert!(files.iter().all(|(a, _)| {
        !undust::ingest::pages::is_html(a.content_type.as_deref().unwrap_or(""), &a.body)
    }));
}

#[test]
fn a_truncated_arc_is_an_error_at_the_record_offset() {
    let Some(path) = file("archive/archive-test/tests/dk/netarkivet/archive/arcrepository/bitpreservation/data/originals/bitarchive1/filedir/integrity11.ARC")
    else {
        return;
    };
    let items: Vec<_> = read_pages(&path).unwrap().collect();
    assert_eq!(items.len(), 1);
    let err = items[0].as_ref().unwrap_err();
    assert_eq!(err.offset(), Some(150));
    assert!(err.to_string().contains("truncated"), "{err}");
}

fn captures(relative: &str) -> Option<(Vec<Capture>, undust::ingest::index::IndexStats)> {
    let path = file(relative)?;
    let mut reader = read_index(&path).unwrap();
    let captures: Vec<Capture> = reader.by_ref().map(|c| c.unwrap()).collect();
    Some((captures, reader.stats().clone()))
}

#[test]
fn a_real_cdx_without_header_reads_digests_and_redirects() {
    let Some((captures, stats)) = captures("archive/archive-test/tests/dk/netarkivet/archive/distribute/arcrepository/data/originals/NAS-20100909163324-00000-mette.kb.dk.warc.cdx")
    else {
        return;
    };
    assert_eq!(stats.malformed, 0);
    assert_eq!(stats.captures as usize, captures.len());
    assert_eq!(stats.captures + stats.non_http, stats.lines);
    let home = captures
        .iter()
        .find(|c| c.url == "http://netarkivet.dk/")
        .unwrap();
    assert_eq!(home.status, Some(302));
    assert_eq!(
        home.digest.as_deref(),
        Some(undust::ingest::index::EMPTY_SHA1)
    );
    assert_eq!(
        home.redirect.as_deref(),
        Some("http://netarkivet.dk/index-da.php")
    );
    assert!(!home.is_payload_evidence());
    let page = captures
        .iter()
        .find(|c| c.url == "http://netarkivet.dk/index-da.php")
        .unwrap();
    assert_eq!(
        page.digest.as_deref(),
        Some("KCJYF3HAR7UXFQDEHK474AI6ZRZTPKAG")
    );
    // The 9-field layout has the record offset (3864), not its length.
    assert_eq!(page.length, None);
    assert!(page.is_payload_evidence());
}

#[test]
fn heritrix_1_and_3_crawl_logs_read_with_their_digests() {
    let Some((h1, s1)) =
        captures("harvester/harvester-core/src/test/resources/crawldir/logs/crawl.log")
    else {
        return;
    };
    let Some((h3, s3)) = captures("harvester/heritrix3/heritrix3-controller/src/test/resources/crawldir/heritrix3/jobs/crawldir/logs/crawl.log") else {
        return;
    };
    assert_eq!((s1.malformed, s3.malformed), (0, 0));
    assert_eq!(s1.lines, 71);
    assert_eq!(s3.lines, 107);
    assert_eq!(s1.captures + s1.non_http, 71);
    // Heritrix 1 writes bare base32 digests, Heritrix 3 `sha1:` ones: both read the same.
    let robots = h1
        .iter()
        .find(|c| c.url == "http://www.netarkivet.dk/robots.txt")
        .unwrap();
    assert_eq!(
        robots.digest.as_deref(),
        Some("ESVJLA2FRUB6UDKGUQWRMONKMVJQR325")
    );
    assert_eq!(robots.status, Some(302));
    assert!(h3.iter().filter(|c| c.digest.is_some()).count() > 50);
    assert!(h3
        .iter()
        .all(|c| c.digest.as_deref().is_none_or(|d| !d.contains(':'))));
    // Redirects: the capture reached through an `R` hop names the URL that redirected.
    assert!(h1.iter().any(|c| c.redirected_from.is_some()));
    // A crawl.log kept in a metadata ARC starts with the ARC header line: skipped, not an error.
    let Some((_, idna)) = captures("harvester/harvester-test/src/test/resources/harvesting/report/LegacyHarvestReportTester/idna-crawl.log") else {
        return;
    };
    assert_eq!((idna.headers, idna.malformed), (1, 0));
    assert_eq!(
        IndexFormat::from_path(Path::new("crawl-42.log")),
        Some(IndexFormat::CrawlLog)
    );
}

#[test]
fn crawl_logs_as_training_data_find_real_dust_and_refuse_the_catch_all() {
    let Some(root) = crawls() else { return };
    let logs = crawl_logs(&root);
    assert_eq!(logs.len(), 13);
    let normalizer = undust::canon::normalize::StaticNormalizer::new(Default::default()).unwrap();
    let hosts = undust::cli::index::index_training_sets(&logs, &normalizer, false).unwrap();
    let cluster = |host: &str, url: &str| -> u64 {
        hosts[host]
            .iter()
            .find(|l| l.url == url)
            .unwrap_or_else(|| panic!("{url} not in {host}"))
            .cluster
    };
    // Folder and default-document forms of one page, with a case difference.
    let wop = cluster("www.kaarefc.dk", "http://www.kaarefc.dk/wop/");
    assert_eq!(cluster("www.kaarefc.dk", "http://www.kaarefc.dk/Wop/"), wop);
    assert_eq!(
        cluster("www.kaarefc.dk", "http://www.kaarefc.dk/wop/index.html"),
        wop
    );
    assert_eq!(
        cluster("www.trinekc.dk", "http://www.trinekc.dk/"),
        cluster("www.trinekc.dk", "http://www.trinekc.dk/index.php")
    );
    // The catch-all host answers its home page for any path: those URLs stay apart.
    let www = &hosts["www.netarkivet.dk"];
    let distinct: std::collections::HashSet<u64> = www.iter().map(|l| l.cluster).collect();
    assert_eq!(distinct.len(), www.len());
    assert!(www.len() >= 20);
    // Files are evidence like pages (an image's copies are fetched like a page's). A file
    // copied into every section folder is one file under many paths, not a catch-all (which
    // answers whatever name is asked): its copies are one cluster, the sections' pages each
    // their own.
    let pligt = &hosts["www.pligtaflevering.dk"];
    let of_name = |suffix: &str| -> Vec<u64> {
        pligt
            .iter()
            .filter(|l| l.url.ends_with(suffix))
            .map(|l| l.cluster)
            .collect()
    };
    let logos = of_name("/logo.gif");
    assert!(logos.len() >= 10, "{logos:?}");
    assert!(logos.iter().all(|&c| c == logos[0]), "{logos:?}");
    let indexes = of_name("/index.htm");
    assert!(indexes.len() >= 9, "{indexes:?}");
    let distinct: std::collections::HashSet<&u64> = indexes.iter().collect();
    assert_eq!(distinct.len(), indexes.len());
    // An image under two names with one digest is one cluster.
    assert_eq!(
        cluster("www.kaarefc.dk", "http://www.kaarefc.dk/Wop/wop.css"),
        cluster("www.kaarefc.dk", "http://www.kaarefc.dk/wop/wop.css")
    );
}

#[test]
fn learn_from_crawl_logs_writes_the_query_rule_the_index_shows() {
    let Some(root) = crawls() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = root.join("harvester/harvester-test/tests/dk/netarkivet/harvester/indexserver/data/originals/crawllogs/crawl-42.log");
    let (_, rules) = learn_from_index(&[log], dir.path());
    let hosts = rules["hosts"].as_array().unwrap();
    let sputnik = hosts
        .iter()
        .find(|h| h["host"] == "film.sputnik.dk")
        .unwrap();
    let rule = &sputnik["rules"][0];
    assert_eq!(
        rule["source_pattern"],
        "http://film.sputnik.dk/?forside=&mediaid=*"
    );
    assert_eq!(rule["support"], 5);
}

/// The small hosts of the real logs show their server's default document once, on the home
/// page (`/` ≡ `/index.php`, `/wop/` ≡ `/wop/index.html`): too little for a rule of the site's
/// own, enough for the server's directory index, which then applies to every directory.
#[test]
fn learn_from_crawl_logs_strips_the_default_documents_small_hosts_show_once() {
    let Some(root) = crawls() else { return };
    let logs = crawl_logs(&root);
    let dir = tempfile::tempdir().unwrap();
    let (out, rules) = learn_from_index(&logs, dir.path());
    let document = |host: &str| -> Vec<String> {
        rules["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["host"] == host)
            .flat_map(|h| h["site_rules"].as_array().cloned().unwrap_or_default())
            .filter(|r| r["op"] == "default_document")
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(document("www.trinekc.dk"), ["index.php"]);
    assert_eq!(document("www.kaarefc.dk"), ["index.html"]);
    // Shown at the root only (`/` ≡ `/index.htm`), while the sections below are captured as
    // `/faq/index.htm` alone: the server's index file holds there too (stop 34; these hosts
    // also have samples only since files count as evidence).
    assert_eq!(document("www.pligtaflevering.dk"), ["index.htm"]);
    assert_eq!(document("www.sy-jonna.dk"), ["index.php"]);
    // The catch-all host answers one page for every path: no default document from it.
    assert!(document("www.netarkivet.dk").is_empty());

    let mut canonicalize = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .arg("canonicalize")
        .arg("--rules")
        .arg(&out)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    canonicalize
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"http://www.trinekc.dk/index.php\n\
              http://www.trinekc.dk/billeder/index.php?side=2\n\
              http://www.kaarefc.dk/wop/index.html\n\
              http://www.kaarefc.dk/wop/index.php\n",
        )
        .unwrap();
    let answer = canonicalize.wait_with_output().unwrap();
    assert!(answer.status.success());
    assert_eq!(
        String::from_utf8(answer.stdout).unwrap(),
        "http://www.trinekc.dk/\n\
         http://www.trinekc.dk/billeder/?side=2\n\
         http://www.kaarefc.dk/wop/\n\
         http://www.kaarefc.dk/wop/index.php\n"
    );
}

/// Learned from the archive's crawl logs and applied with `undust canonicalize --rules`, as a
/// user does, the rule file joins the captures that share a payload digest across hosts: the
/// mirror sets the logs show (`oelejr.dk` ≡ `www.oelejr.dk`, `www.kaareogtrine.dk` ≡
/// `www.trineogkaare.dk`, the `base.kb.dk/kbdesign` folder mirror, ...) fold every capture of
/// every mime type, not only the HTML pages they were found on. Truth is the logs' own digests
/// (status 200, not the empty body, at least `MIN_DIGEST_PAYLOAD_BYTES`). Measured at stop 34
/// on the 1,072 URLs: 66 of the 83 digest pairs across hosts joined (0 before the command read
/// the file's mirror sets), and 74 of the 78 pairs joined share a digest. Of the other four,
/// two are the home page of `netarkivet.dk` and a stylesheet of `kb.dk`, captured years apart
/// on two aliases whose content changed in between; two are one page of `gmpg.org` under its
/// name with and without `.php` (MultiViews), 1 and 3 bytes apart because the page writes its
/// own address (QUALITY.md, "Real crawl logs as truth").
/// A small host on a case-insensitive server shows its case variants on two pages only
/// (`www.kaarefc.dk`: `/Wop/` ≡ `/wop/` and its stylesheet `/Wop/wop.css` ≡ `/wop/wop.css`), and
/// never three; two suffice for a case fold, as the server's property, with nothing contrary.
#[test]
fn a_small_case_insensitive_host_folds_the_case_its_two_pages_show() {
    let Some(root) = crawls() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (out, rules) = learn_from_index(&crawl_logs(&root), dir.path());
    let folds: Vec<String> = rules["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| {
            let host = h["host"].as_str().unwrap().to_owned();
            h["site_rules"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|r| {
                    r["op"]
                        .as_str()
                        .is_some_and(|op| op.starts_with("lowercase"))
                })
                .map(move |r| format!("{host} {}", r["op"]))
        })
        .collect();
    assert_eq!(folds.len(), 1, "{folds:?}");
    assert!(folds[0].starts_with("www.kaarefc.dk "), "{folds:?}");
    let urls = [
        "http://www.kaarefc.dk/Wop/",
        "http://www.kaarefc.dk/wop/",
        "http://www.kaarefc.dk/Wop/wop.css",
        "http://www.kaarefc.dk/wop/wop.css",
        "http://www.kaarefc.dk/Wop/Billeder/Kort.jpg",
    ];
    let canonical = canonicalize_with(&out, &urls, dir.path());
    assert_eq!(canonical[0], canonical[1]);
    assert_eq!(canonical[2], canonical[3]);
    assert_ne!(canonical[0], canonical[2]);
    assert!(
        canonical[4].starts_with("http://www.kaarefc.dk/wop/"),
        "{canonical:?}"
    );
}

#[test]
fn rules_learned_from_crawl_logs_join_the_captures_their_digests_join_across_hosts() {
    use std::collections::{BTreeSet, HashMap};
    use undust::ingest::index::{EMPTY_SHA1, MIN_DIGEST_PAYLOAD_BYTES};
    let Some(root) = crawls() else { return };
    let logs = crawl_logs(&root);
    let mut digests: HashMap<String, BTreeSet<String>> = HashMap::new();
    for log in &logs {
        for capture in read_index(log).unwrap().flatten() {
            let payload = capture.status == Some(200)
                && capture
                    .length
                    .is_some_and(|l| l >= MIN_DIGEST_PAYLOAD_BYTES);
            if let (true, Some(digest)) = (payload, capture.digest) {
                if digest != EMPTY_SHA1 {
                    digests.entry(capture.url).or_default().insert(digest);
                }
            }
        }
    }
    let urls: Vec<&String> = {
        let mut urls: Vec<&String> = digests.keys().collect();
        urls.sort();
        urls
    };
    let dir = tempfile::tempdir().unwrap();
    let (rules, _) = learn_from_index(&logs, dir.path());
    let canonical = canonicalize_with(&rules, &urls, dir.path());
    let host = |u: &str| url::Url::parse(u).unwrap().host_str().unwrap().to_owned();
    let same_content = |a: &str, b: &str| !digests[a].is_disjoint(&digests[b]);
    let (mut truth_across, mut joined_across, mut joined, mut joined_false) = (0, 0, 0, 0);
    let (mut truth_same, mut joined_same) = (0, 0);
    let mut false_pairs = Vec::new();
    for i in 0..urls.len() {
        for j in i + 1..urls.len() {
            let (a, b) = (urls[i].as_str(), urls[j].as_str());
            let across = host(a) != host(b);
            let same = same_content(a, b);
            truth_across += usize::from(same && across);
            truth_same += usize::from(same && !across);
            if canonical[i] == canonical[j] {
                joined += 1;
                joined_across += usize::from(same && across);
                joined_same += usize::from(same && !across);
                if !same {
                    joined_false += 1;
                    false_pairs.push((a, b));
                }
            }
        }
    }
    eprintln!(
        "{} URLs: {joined_across} of {truth_across} digest pairs across hosts and \
         {joined_same} of {truth_same} on one host joined; {joined} pairs joined, \
         {joined_false} without a digest in common: {false_pairs:?}",
        urls.len()
    );
    assert!(truth_across >= 70, "{truth_across} pairs across hosts");
    // Before the command read the mirror sets: 0 joined across hosts.
    assert!(
        joined_across * 4 >= truth_across * 3,
        "{joined_across} of {truth_across} pairs across hosts joined"
    );
    // On one host, most digest pairs are copies of a site's template files in its folders
    // (before the copies were learned as shared files: 5 of 362 joined). The rest are a
    // catch-all host's paths, which must stay apart.
    assert!(
        joined_same * 3 >= truth_same,
        "{joined_same} of {truth_same} pairs on one host joined"
    );
    // Captures years apart on two aliases may differ; nothing else may be joined.
    assert!(
        joined_false * 10 <= joined,
        "{joined_false} of {joined} joined pairs share no digest: {false_pairs:?}"
    );
    let at = |u: &str| canonical[urls.iter().position(|v| *v == u).unwrap()].as_str();
    assert_eq!(
        at("http://oelejr.dk/robots.txt"),
        at("http://www.oelejr.dk/robots.txt")
    );
    assert_eq!(
        at("http://base.kb.dk/kbdesign/global/images/ui.nav.bg.gif"),
        at("http://www.kb.dk/global/images/ui.nav.bg.gif")
    );
}

/// A site that keeps a copy of its template files in every folder, learned from one crawl and
/// checked on the next one's folders: the 2006 crawl of `www.pligtaflevering.dk` (job 5) shows
/// `logo.gif`, `faq.gif` and the stylesheet in four folders, the later crawl (job 11) in six
/// more. The copies are one file wherever they are, and no folder is dropped for them.
#[test]
fn a_file_copied_into_every_folder_is_learned_from_one_crawl_and_holds_in_the_next() {
    let Some(root) = crawls() else { return };
    let logs = crawl_logs(&root);
    let job = |id: &str| -> PathBuf {
        logs.iter()
            .find(|p| p.to_string_lossy().contains(id))
            .unwrap_or_else(|| panic!("no crawl.log of job {id}"))
            .clone()
    };
    let dir = tempfile::tempdir().unwrap();
    let (rules, learned) = learn_from_index(&[job("5_1140687204304")], dir.path());
    let site_rules: Vec<&serde_json::Value> = learned["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["host"] == "www.pligtaflevering.dk")
        .flat_map(|h| h["site_rules"].as_array().unwrap())
        .collect();
    let shared = site_rules
        .iter()
        .find(|r| r["op"] == "shared_files")
        .unwrap_or_else(|| panic!("no shared files: {site_rules:?}"));
    assert!(
        shared["files"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({"folder": "/", "name": "logo.gif", "copy": "/logo.gif"})),
        "{shared}"
    );
    // The copies under `/faq/` once made `faq` look like a folder to drop; its pages differ.
    assert!(
        site_rules.iter().all(|r| r["op"] != "drop_segment"),
        "{site_rules:?}"
    );
    // The later crawl's URLs of that host, canonicalized with the rules of the earlier one.
    let later: Vec<String> = read_index(&job("11_1140688359422"))
        .unwrap()
        .flatten()
        .filter(|c| c.status == Some(200))
        .map(|c| c.url)
        .filter(|u| u.starts_with("http://www.pligtaflevering.dk/"))
        .collect::<std::collections::BTreeSet<String>>()
        .into_iter()
        .collect();
    let canonical = canonicalize_with(&rules, &later, dir.path());
    let logos: Vec<&String> = later
        .iter()
        .zip(&canonical)
        .filter(|(u, _)| u.ends_with("/logo.gif"))
        .map(|(_, c)| c)
        .collect();
    assert!(logos.len() >= 10, "{logos:?}");
    assert!(
        logos
            .iter()
            .all(|c| *c == "http://www.pligtaflevering.dk/logo.gif"),
        "{logos:?}"
    );
    // Each folder's page and its own heading image stay its own.
    let own: Vec<&String> = later
        .iter()
        .zip(&canonical)
        .filter(|(u, _)| u.ends_with("/index.htm") || u.contains("/overskrift_"))
        .map(|(_, c)| c)
        .collect();
    assert!(own.len() >= 18, "{own:?}");
    let distinct: std::collections::BTreeSet<&&String> = own.iter().collect();
    assert_eq!(distinct.len(), own.len(), "{own:?}");
}

/// `undust eval --rules`: a rule file learned on one crawl (job 5's log), measured on all
/// thirteen logs, per host and across hosts with its mirror sets, beside the rows eval learns
/// itself; a damaged rule file is an error before the crawl is read.
#[test]
fn eval_measures_a_rule_file_learned_on_another_crawl() {
    let Some(root) = crawls() else { return };
    let logs = crawl_logs(&root);
    let earlier: Vec<PathBuf> = logs
        .iter()
        .filter(|p| p.to_string_lossy().contains("5_1140687204304"))
        .cloned()
        .collect();
    assert_eq!(earlier.len(), 1);
    let dir = tempfile::tempdir().unwrap();
    let (rules, _) = learn_from_index(&earlier, dir.path());
    let eval = |rules: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
            .args(["eval", "--json", "--rules"])
            .arg(rules)
            .arg("--index")
            .args(&logs)
            .output()
            .unwrap()
    };
    let out = eval(&rules);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = report["rows"].as_array().unwrap();
    let file = rows.iter().find(|r| r["method"] == "RuleFile").unwrap();
    let statically = rows.iter().find(|r| r["method"] == "StaticOnly").unwrap();
    let compression = |r: &serde_json::Value| r["averages"]["micro_compression"].as_f64().unwrap();
    // The copies of the later crawl's new folders are joined, nothing else is.
    assert!(
        compression(file) > compression(statically) + 0.02,
        "{file} against {statically}"
    );
    assert_eq!(
        file["averages"]["micro_fpr"].as_f64().unwrap(),
        0.0,
        "{file}"
    );
    assert!(file["rules"].as_u64().unwrap() >= 1, "{file}");
    let across = report["across_hosts"]["rows"].as_array().unwrap();
    let row = |name: &str| across.iter().find(|r| r["method"] == name).unwrap();
    assert!(
        row("rule file")["canonical_forms"].as_u64().unwrap()
            < row("static only")["canonical_forms"].as_u64().unwrap(),
        "{across:?}"
    );
    let damaged = dir.path().join("damaged.json");
    std::fs::write(&damaged, "{\"hosts\": [").unwrap();
    let out = eval(&damaged);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot load rules") && stderr.contains("damaged.json"),
        "{stderr}"
    );
    assert!(!stderr.contains("index captures"), "{stderr}");
}

/// A static site built with relative links keeps a copy of its logo and stylesheet in every
/// section folder. Crawled by wget into a WARC from Python's file server on loopback: `undust
/// learn --pages` learns the copies as one file, and a section the crawl never saw gets the
/// copy too, while each section's page and heading image stay its own.
#[test]
fn a_wget_crawl_of_a_static_site_learns_its_copied_files_for_sections_it_never_saw() {
    let dir = tempfile::tempdir().unwrap();
    let Some((site, warc)) = wget_crawl_of_copied_files_site(dir.path()) else {
        return;
    };
    let (rules, file) = learn_from("--pages", &[warc], dir.path());
    assert_eq!(shared_files(&file["hosts"][0]).len(), 2, "{file}");
    let base = site.base();
    let urls: Vec<String> = [
        "/news/logo.gif",
        "/faq/logo.gif",
        "/logo.gif",
        "/news/site.css",
        "/news/heading.gif",
        "/faq/heading.gif",
        "/news/index.html",
        "/faq/index.html",
    ]
    .iter()
    .map(|p| format!("{base}{p}"))
    .collect();
    let canonical = canonicalize_with(&rules, &urls, dir.path());
    assert_eq!(canonical[0], canonical[1]);
    assert_eq!(canonical[0], canonical[2]);
    assert_eq!(canonical[3], format!("{base}/site.css"));
    // Each section's own files and pages stay their own.
    let own: std::collections::BTreeSet<&String> = canonical[4..].iter().collect();
    assert_eq!(own.len(), 4, "{canonical:?}");
    assert!(canonical[4..].iter().all(|c| !c.ends_with("/logo.gif")));
}

/// What a web archive running pywb has of a crawl: its indexer's CDX (11 and 9 fields) and
/// CDXJ files, and its CDX server's answers (`output=json` and the default CDXJ). Each teaches
/// the copied files that the crawl's WARC teaches, by payload digest alone. So does the WARC
/// packaged as a WACZ by py-wacz, read for its pages and for its index.
#[test]
fn pywb_indexes_and_cdx_server_answers_of_a_wget_crawl_teach_what_its_warc_teaches() {
    let Some(pywb) = pywb_tools() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some((site, warc)) = wget_crawl_of_copied_files_site(dir.path()) else {
        return;
    };
    let indexes = dir.path().join("indexes");
    std::fs::create_dir(&indexes).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/real_tools_pywb.py");
    let out = run_bounded(
        std::process::Command::new("python3")
            .arg(script)
            .arg(&pywb)
            .arg(&warc)
            .arg(format!("127.0.0.1:{}", site.port))
            .arg(&indexes),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, from_warc) = learn_from("--pages", &[warc], dir.path());
    let expected = shared_files(&from_warc["hosts"][0]);
    assert_eq!(expected.len(), 2, "{from_warc}");
    // Lines of an index that name the site (the indexer also lists wget's own metadata
    // records, which the server's query for the site leaves out).
    let host = format!("127.0.0.1:{}", site.port);
    let lines = |name: &str| {
        std::fs::read_to_string(indexes.join(name))
            .unwrap()
            .lines()
            .filter(|l| l.contains(&host))
            .count()
    };
    // The server answers with every capture of the site the indexer wrote.
    assert!(lines("pywb.cdxj") >= 10, "{}", lines("pywb.cdxj"));
    assert_eq!(lines("server.json"), lines("pywb.cdxj"));
    for name in [
        "pywb.cdx",
        "pywb9.cdx",
        "pywb.cdxj",
        "server.json",
        "server.cdxj",
    ] {
        let (_, learned) = learn_from("--index", &[indexes.join(name)], dir.path());
        assert_eq!(
            shared_files(&learned["hosts"][0]),
            expected,
            "{name}: {learned}"
        );
    }
    let wacz = indexes.join("crawl.wacz");
    for input in ["--pages", "--index"] {
        let (_, learned) = learn_from(input, std::slice::from_ref(&wacz), dir.path());
        assert_eq!(
            shared_files(&learned["hosts"][0]),
            expected,
            "WACZ {input}: {learned}"
        );
    }
    // `eval` and `mirrors` read the same inputs the same way.
    for command in ["eval", "mirrors"] {
        for file in [&wacz, &indexes.join("server.json")] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
                .args([command, "--index"])
                .arg(file)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{command} --index {}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The Wayback Machine's CDX server answers in the two layouts a user saves from it: its
/// default text (7 fields, no header) and `output=json` (rows, the first naming the fields). The
/// real crawl logs' captures written both ways teach the rules they teach as a CDX file whose
/// header declares the same fields.
#[test]
fn the_wayback_cdx_servers_answers_teach_what_a_cdx_with_a_header_teaches() {
    let Some(root) = crawls() else {
        return;
    };
    let mut rows: Vec<[String; 7]> = Vec::new();
    for log in crawl_logs(&root) {
        for capture in read_index(&log).unwrap().flatten() {
            let text = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            rows.push([
                // The key is not read; the time is the server's 14 digits.
                capture.url.clone(),
                text(capture.timestamp.map(|t| t.chars().take(14).collect())),
                capture.url,
                text(capture.mime),
                text(capture.status.map(|s| s.to_string())),
                text(capture.digest),
                text(capture.length.map(|l| l.to_string())),
            ]);
        }
    }
    assert!(rows.len() > 1000, "{}", rows.len());
    let dir = tempfile::tempdir().unwrap();
    let text: String = rows.iter().map(|r| r.join(" ") + "\n").collect();
    let names = [
        "urlkey",
        "timestamp",
        "original",
        "mimetype",
        "statuscode",
        "digest",
        "length",
    ];
    let json_rows: Vec<String> = std::iter::once(serde_json::json!(names).to_string())
        .chain(rows.iter().map(|r| serde_json::json!(r).to_string()))
        .collect();
    let inputs = [
        ("declared.cdx", format!(" CDX N b a m s k S\n{text}")),
        ("answer.txt", text),
        ("answer.json", format!("[{}]\n", json_rows.join(",\n"))),
    ];
    let mut learned = Vec::new();
    for (name, content) in inputs {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let (_, mut file) = learn_from("--index", &[path], dir.path());
        let hosts = file["hosts"].as_array_mut().unwrap();
        for host in hosts.iter_mut() {
            // When it was learned is the only difference allowed.
            host.as_object_mut().unwrap().remove("learned_at_unix_ms");
        }
        learned.push((name, hosts.clone()));
    }
    let (_, declared) = &learned[0];
    assert!(
        declared.iter().any(|host| !shared_files(host).is_empty()),
        "the logs' copied files are learned: {declared:?}"
    );
    for (name, hosts) in &learned[1..] {
        assert_eq!(hosts, declared, "{name}");
    }
}

/// The files of a rule file's host's `shared_files` site rule (empty without one).
fn shared_files(host: &serde_json::Value) -> Vec<serde_json::Value> {
    host["site_rules"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["op"] == "shared_files")
        .and_then(|r| r["files"].as_array().cloned())
        .unwrap_or_default()
}

/// pywb's command-line tools (`UNDUST_PYWB_BIN`, the folder `.ci/run` installs them into; else
/// the PATH's): the folder to run them from, empty for the PATH.
fn pywb_tools() -> Option<PathBuf> {
    let dir = std::env::var_os("UNDUST_PYWB_BIN")
        .map(PathBuf::from)
        .unwrap_or_default();
    let manager = dir.join("wb-manager");
    has_tool(manager.to_str()?, &["--help"]).then_some(dir)
}

/// A static site whose template files (a logo, a stylesheet) are copied into each of its four
/// section folders beside the section's own heading image and page, served on loopback and
/// crawled by wget into `dir/static.warc.gz`. `None` when a tool is missing outside CI.
fn wget_crawl_of_copied_files_site(dir: &Path) -> Option<(Site, PathBuf)> {
    if !has_tool("wget", &["--version"]) {
        return None;
    }
    let root = dir.join("site");
    std::fs::create_dir(&root).unwrap();
    // Images above the 256 bytes a digest needs to be evidence; one bytes string per image.
    let image = |seed: u8| -> Vec<u8> {
        let mut gif = b"GIF89a".to_vec();
        gif.extend((0..600u32).map(|i| (i as u8).wrapping_mul(seed).wrapping_add(seed)));
        gif
    };
    let words = [
        "harbour",
        "ferry",
        "lighthouse",
        "market",
        "library",
        "garden",
        "station",
        "museum",
        "bridge",
        "theatre",
        "school",
        "orchard",
    ];
    let page = |title: &str, seed: usize, links: &str| -> String {
        let text: String = (0..120)
            .map(|i| words[(i * 7 + seed * 5 + i / 3) % words.len()])
            .collect::<Vec<_>>()
            .join(" ");
        format!(
            "<html><head><title>{title}</title><link rel=stylesheet href=site.css></head>\
             <body><img src=logo.gif><h1>{title}</h1><p>{title} {seed}: {text}</p>{links}\
             </body></html>"
        )
    };
    let sections = ["faq", "film", "radio", "contact"];
    let mut links = String::new();
    for (i, section) in sections.iter().enumerate() {
        let folder = root.join(section);
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("logo.gif"), image(3)).unwrap();
        std::fs::write(folder.join("site.css"), "body { margin: 0 } ".repeat(20)).unwrap();
        std::fs::write(folder.join("heading.gif"), image(11 + i as u8)).unwrap();
        std::fs::write(
            folder.join("index.html"),
            page(section, i + 1, "<img src=heading.gif>"),
        )
        .unwrap();
        links.push_str(&format!("<a href=/{section}/index.html>{section}</a> "));
    }
    std::fs::write(root.join("logo.gif"), image(3)).unwrap();
    std::fs::write(root.join("site.css"), "body { margin: 0 } ".repeat(20)).unwrap();
    std::fs::write(root.join("index.html"), page("home", 0, &links)).unwrap();
    let site = Site::start_static(&root)?;
    let out = run_bounded(
        std::process::Command::new("wget")
            .current_dir(dir)
            .args([
                "-nv",
                "-r",
                "-p",
                "-l",
                "3",
                "-e",
                "robots=off",
                "--tries=1",
            ])
            .arg("--warc-file=static")
            .args(["-P", "mirror"])
            .arg(format!("{}/", site.base())),
    );
    assert!(
        matches!(out.status.code(), Some(0 | 8)),
        "wget: {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Some((site, dir.join("static.warc.gz")))
}

/// One Heritrix crawl.log line: a 200 capture of `url` found from its host's home page.
fn crawl_log_line(url: &str, mime: &str, size: u32, digest: &str) -> String {
    format!(
        "2009-03-02T10:00:00.000Z   200 {size:6} {url} L http://{}/ {mime} #001 \
         20090302100000000+50 {digest} - -\n",
        url::Url::parse(url).unwrap().host_str().unwrap()
    )
}

/// A Heritrix crawl.log of one small site with a language folder: four pages under `/dutch/` were
/// never translated (the same bytes as the Danish ones), while the button images under it carry
/// Dutch text. `translated_images` false: the folder is a plain copy, images included.
fn language_folder_log(translated_images: bool) -> String {
    let mut lines = String::new();
    let mut add = |path: &str, mime: &str, content: &str, size: u32| {
        // The digest names the content: equal content, equal digest.
        let digest = format!(
            "sha1:{:016X}",
            xxhash_rust::xxh3::xxh3_64(content.as_bytes())
        );
        let url = format!("http://www.sprog.test/site/{path}");
        lines.push_str(&crawl_log_line(&url, mime, size, &digest));
    };
    let pages = [
        "om",
        "kontakt",
        "nyheder",
        "arkiv",
        "historie",
        "links",
        "priser",
        "medlemmer",
        "bestyrelse",
        "vedtaegter",
        "kalender",
        "galleri",
    ];
    for page in pages {
        add(&format!("{page}.html"), "text/html", page, 4000);
    }
    for page in &pages[..4] {
        add(&format!("dutch/{page}.html"), "text/html", page, 4000);
    }
    for image in [
        "knap_om",
        "knap_kontakt",
        "knap_nyheder",
        "knap_arkiv",
        "knap_links",
        "knap_priser",
        "overskrift",
        "menu",
    ] {
        add(
            &format!("{image}.gif"),
            "image/gif",
            &format!("da {image}"),
            1800,
        );
        let dutch = if translated_images { "nl" } else { "da" };
        add(
            &format!("dutch/{image}.gif"),
            "image/gif",
            &format!("{dutch} {image}"),
            1800,
        );
    }
    lines
}

/// Learned from a crawl index, a folder is dropped only where the captures under it show it
/// interchangeable, files included: four untranslated pages make `/site/dutch/` look like a
/// copy of `/site/`, and the translated images under it, each a digest of its own, refuse the
/// rule. A real crawl log's rule learned from pages alone dropped such a folder and merged two
/// different images (issue 11: `/site/dutch/x.gif` ≡ `/site/x.gif`); before stop 34 the index
/// reader took HTML captures only as evidence and wrote exactly that `drop_segment`. Where the
/// folder is a copy down to its images, the rule is learned.
#[test]
fn a_folder_dropped_from_a_crawl_index_is_checked_against_the_files_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let drops = |translated_images: bool| -> (Vec<serde_json::Value>, PathBuf) {
        let name = format!("crawl-{translated_images}.log");
        let log = dir.path().join(&name);
        std::fs::write(&log, language_folder_log(translated_images)).unwrap();
        let out = dir.path().join(format!("rules-{translated_images}"));
        std::fs::create_dir_all(&out).unwrap();
        let (path, rules) = learn_from_index(&[log], &out);
        let drops = rules["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|h| h["site_rules"].as_array().cloned().unwrap_or_default())
            .filter(|r| r["op"] == "drop_segment" || r["op"] == "segment_alias")
            .collect();
        (drops, path)
    };
    let (translated, rules) = drops(true);
    assert!(translated.is_empty(), "{translated:?}");
    let answer = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(["canonicalize", "--rules"])
        .arg(&rules)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = answer.stdin.as_ref().unwrap();
        stdin
            .write_all(b"http://www.sprog.test/site/dutch/knap_om.gif\n")
            .unwrap();
    }
    let output = answer.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "http://www.sprog.test/site/dutch/knap_om.gif\n"
    );
    let (copied, _) = drops(false);
    assert_eq!(copied.len(), 1, "{copied:?}");
    assert_eq!(copied[0]["value"], "dutch");
}

/// In a WARC as in a crawl index, a file's payload digest is evidence: two copies of one image
/// under two folders are one cluster ("digest"), another image under a third stays apart. Only
/// HTML is analysed for content; before stop 34 the digest of a non-HTML response was dropped
/// with its content, and each copy was a cluster of its own.
#[test]
fn a_warc_files_copies_share_a_cluster_by_their_payload_digest() {
    let response = |url: &str, body: &[u8]| -> Vec<u8> {
        let mut http = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        http.extend_from_slice(body);
        let digest = format!("sha1:{:016X}", xxhash_rust::xxh3::xxh3_64(body));
        let mut record = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n\
             WARC-Date: 2009-03-02T10:00:00Z\r\nWARC-Record-ID: <urn:uuid:{:032x}>\r\n\
             Content-Type: application/http; msgtype=response\r\n\
             WARC-Payload-Digest: {digest}\r\nContent-Length: {}\r\n\r\n",
            xxhash_rust::xxh3::xxh3_128(url.as_bytes()),
            http.len()
        )
        .into_bytes();
        record.extend_from_slice(&http);
        record.extend_from_slice(b"\r\n\r\n");
        record
    };
    let image: Vec<u8> = (0..=255u8).cycle().take(600).collect();
    let other: Vec<u8> = image.iter().rev().copied().collect();
    let mut warc = response("http://img.test/a/logo.gif", &image);
    warc.extend(response("http://img.test/b/logo.gif", &image));
    warc.extend(response("http://img.test/c/other.gif", &other));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("images.warc");
    std::fs::write(&path, warc).unwrap();
    let lines = clusters_lines(&[&path]);
    assert_eq!(lines.len(), 3);
    let a = line_of(&lines, "http://img.test/a/logo.gif", "page");
    let b = line_of(&lines, "http://img.test/b/logo.gif", "page");
    let c = line_of(&lines, "http://img.test/c/other.gif", "page");
    assert_eq!(a["cluster"], b["cluster"]);
    assert_eq!(a["reason"], "digest");
    assert_ne!(a["cluster"], c["cluster"]);
}

/// A whole archive's index is read with bounded memory: one host keeps at most
/// `URL_EVIDENCE_PER_HOST` evidence items, as the page readers do, and the rest are counted,
/// not held.
#[test]
fn an_index_larger_than_the_bounds_keeps_a_hosts_first_items_only() {
    use undust::cli::pipeline::URL_EVIDENCE_PER_HOST;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("crawl.log");
    let mut text = String::new();
    for i in 0..URL_EVIDENCE_PER_HOST + 50 {
        // Pairs of URLs share a digest: every capture is evidence.
        text.push_str(&crawl_log_line(
            &format!("http://big.test/p/{i}"),
            "text/html",
            4000,
            &format!("sha1:D{:015}", i / 2),
        ));
    }
    std::fs::write(&log, text).unwrap();
    let normalizer = undust::canon::normalize::StaticNormalizer::new(Default::default()).unwrap();
    let hosts = undust::cli::index::index_training_sets(&[log], &normalizer, false).unwrap();
    assert_eq!(hosts["big.test"].len(), URL_EVIDENCE_PER_HOST);
}

/// The material's Heritrix crawl logs (`crawl*.log`), in path order.
fn crawl_logs(root: &Path) -> Vec<PathBuf> {
    walk(root)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_lowercase();
            name.contains("crawl") && name.ends_with(".log")
        })
        .collect()
}

/// `undust canonicalize --rules RULES` on `urls` (written to a file in `dir`): one canonical
/// form per URL, in order.
fn canonicalize_with(rules: &Path, urls: &[impl AsRef<str>], dir: &Path) -> Vec<String> {
    let stdin = dir.join("urls.txt");
    let input: String = urls.iter().map(|u| format!("{}\n", u.as_ref())).collect();
    std::fs::write(&stdin, input).unwrap();
    // `output` drains stdout while the command runs (a thousand lines overfill a pipe).
    let answer = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .arg("canonicalize")
        .arg("--rules")
        .arg(rules)
        .stdin(std::fs::File::open(&stdin).unwrap())
        .output()
        .unwrap();
    assert!(answer.status.success());
    let canonical: Vec<String> = String::from_utf8(answer.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(canonical.len(), urls.len());
    canonical
}

/// `undust learn --index INDEXES --out DIR/rules.json`: the rule file's path and its JSON.
fn learn_from_index(indexes: &[PathBuf], dir: &Path) -> (PathBuf, serde_json::Value) {
    learn_from("--index", indexes, dir)
}

/// `undust learn INPUT FILES --out DIR/rules.json` (`INPUT` is `--index` or `--pages`): the
/// rule file's path and its JSON.
fn learn_from(input: &str, files: &[PathBuf], dir: &Path) -> (PathBuf, serde_json::Value) {
    let out = dir.join("rules.json");
    let learned = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .args(["learn", input])
        .args(files)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        learned.status.success(),
        "{}",
        String::from_utf8_lossy(&learned.stderr)
    );
    let rules = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    (out, rules)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A small site served on loopback by Python's `http.server` (tests/it/real_tools_site.py): a home
/// page also at `/index.html`, a 301 from `/old`, a chunked page and a page with a tracking
/// parameter. The server stops when the handle is dropped (its stdin closes; then it is killed).
struct Site {
    child: std::process::Child,
    port: u16,
}

impl Site {
    fn start() -> Option<Site> {
        Site::serving(None)
    }

    /// The files under `root`, served as Python's `http.server` serves a static site.
    fn start_static(root: &Path) -> Option<Site> {
        Site::serving(Some(root))
    }

    fn serving(root: Option<&Path>) -> Option<Site> {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/real_tools_site.py");
        let mut child = match Command::new("python3")
            .arg(script)
            .args(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        {
            Ok(child) => child,
            Err(err) => {
                tool_missing("python3", &err.to_string());
                return None;
            }
        };
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the site prints its port");
        Some(Site { child, port })
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tool the test needs is missing: a failure under CI, a printed notice elsewhere.
fn tool_missing(tool: &str, why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{tool} is required under CI ({why}); .ci/run installs it");
    }
    eprintln!("skipping: {tool} not available ({why})");
}

/// Runs a command with a time bound (the site is on loopback; 60 s is far beyond need).
fn run_bounded(command: &mut std::process::Command) -> std::process::Output {
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{command:?} ran over 60 s");
        }
        std::thread::park_timeout(std::time::Duration::from_millis(20));
    }
}

fn has_tool(program: &str, args: &[&str]) -> bool {
    match std::process::Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
    {
        Ok(status) if status.success() => true,
        Ok(status) => {
            tool_missing(program, &format!("{args:?} exited with {status}"));
            false
        }
        Err(err) => {
            tool_missing(program, &err.to_string());
            false
        }
    }
}

/// `undust clusters` on `pages`: its output lines.
fn clusters_lines(pages: &[&Path]) -> Vec<serde_json::Value> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_undust"))
        .arg("clusters")
        .arg("--pages")
        .args(pages)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The line of the first record (or target) with this URL and record kind.
fn line_of<'a>(lines: &'a [serde_json::Value], url: &str, record: &str) -> &'a serde_json::Value {
    lines
        .iter()
        .find(|l| l["url"] == url && l["record"] == record)
        .unwrap_or_else(|| panic!("no {record} line for {url} in {lines:#?}"))
}

#[test]
fn wget_warcs_with_redirects_chunked_bodies_and_dedup_revisits_read_completely() {
    if !has_tool("wget", &["--version"]) {
        return;
    }
    let Some(site) = Site::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let crawl = |name: &str, extra: &[&str]| {
        let out = run_bounded(
            std::process::Command::new("wget")
                .current_dir(dir.path())
                .args(["-q", "-r", "-l", "2", "-e", "robots=off", "--tries=1"])
                .arg(format!("--warc-file={name}"))
                .args(extra)
                .arg("-P")
                .arg(name)
                .arg(format!("{}/", site.base())),
        );
        // wget exits 8 when a link answered 404; the WARC is complete either way.
        assert!(
            matches!(out.status.code(), Some(0 | 8)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    crawl("crawl1", &["--warc-cdx"]);
    crawl("crawl2", &["--warc-dedup=crawl1.cdx"]);
    let base = site.base();

    let (first, stats, errors) = read(&dir.path().join("crawl1.warc.gz"));
    assert_eq!(errors, 0);
    assert_eq!(stats.warcinfo, 1);
    assert!(stats.requests >= 6 && stats.metadata >= 1, "{stats:?}");
    let redirect = first
        .iter()
        .find(|p| p.kind == RecordKind::Redirect)
        .expect("the 301 is a redirect record");
    assert_eq!(redirect.url, format!("{base}/old"));
    assert_eq!(
        redirect.final_url.as_deref(),
        Some(format!("{base}/").as_str())
    );
    let chunked = first.iter().find(|p| p.url.ends_with("/chunked")).unwrap();
    assert!(chunked.body.starts_with(b"<html><body><h1>Chunks"));
    assert!(chunked.body.ends_with(b"</html>"), "de-chunked");
    assert!(first
        .iter()
        .all(|p| p.server_ip.as_deref() == Some("127.0.0.1")));
    let home = first.iter().find(|p| p.url == format!("{base}/")).unwrap();
    let home_digest = home.payload_digest.clone().unwrap();

    // The deduplicating second crawl: unchanged payloads are revisit records pointing at the
    // first crawl's records by id (wget writes no target URI), with the payload digest.
    let (second, stats, errors) = read(&dir.path().join("crawl2.warc.gz"));
    assert_eq!(errors, 0);
    assert!(stats.revisits >= 3, "{stats:?}");
    let revisits: Vec<&PageRecord> = second
        .iter()
        .filter(|p| matches!(p.kind, RecordKind::Revisit(_)))
        .collect();
    assert_eq!(revisits.len() as u64, stats.revisits);
    let home_again = revisits
        .iter()
        .find(|p| p.url == format!("{base}/"))
        .unwrap();
    assert_eq!(
        home_again.payload_digest.as_deref(),
        Some(home_digest.as_str())
    );
    let RecordKind::Revisit(revisit) = &home_again.kind else {
        unreachable!()
    };
    assert_eq!(
        revisit.profile,
        undust::ingest::pages::RevisitProfile::IdenticalPayloadDigest
    );
    assert_eq!(home_again.status, Some(200));
    assert!(home_again.body.is_empty());

    // wget's CDX declares its own layout (` CDX a b a m s k r M V g u`).
    let mut reader = read_index(&dir.path().join("crawl1.cdx")).unwrap();
    let captures: Vec<Capture> = reader.by_ref().map(|c| c.unwrap()).collect();
    assert_eq!(reader.stats().headers, 1);
    let old = captures.iter().find(|c| c.url.ends_with("/old")).unwrap();
    assert_eq!(old.status, Some(301));
    assert_eq!(old.redirect.as_deref(), Some(format!("{base}/").as_str()));
    let homes: Vec<&Capture> = captures
        .iter()
        .filter(|c| c.digest.as_deref() == Some(home_digest.trim_start_matches("sha1:")))
        .collect();
    assert!(homes.iter().any(|c| c.url.ends_with("/index.html")));
    assert!(homes.iter().all(|c| c.is_payload_evidence()));

    // Both crawls through `undust clusters`: one line per response and revisit record, the
    // redirect and the revisits in the home page's cluster.
    let lines = clusters_lines(&[
        &dir.path().join("crawl1.warc.gz"),
        &dir.path().join("crawl2.warc.gz"),
    ]);
    let home = line_of(&lines, &format!("{base}/"), "page");
    let old = line_of(&lines, &format!("{base}/old"), "redirect");
    assert_eq!(old["cluster"], home["cluster"]);
    assert_eq!(old["reason"], "redirect");
    assert_eq!(old["status"], 301);
    assert!(old.get("simhash").is_none());
    let index = line_of(&lines, &format!("{base}/index.html"), "page");
    assert_eq!(index["cluster"], home["cluster"]);
    assert_eq!(home["simhash"].as_str().map(str::len), Some(16));
    let revisit = line_of(&lines, &format!("{base}/chunked"), "revisit");
    assert_eq!(
        revisit["cluster"],
        line_of(&lines, &format!("{base}/chunked"), "page")["cluster"]
    );
    // The tracking parameter: two records, two lines, one canonical form, one cluster.
    let tracked = line_of(&lines, &format!("{base}/page?id=1&utm_source=x"), "page");
    let plain = line_of(&lines, &format!("{base}/page?id=1"), "page");
    assert_eq!(tracked["cluster"], plain["cluster"]);
    let records = lines.iter().filter(|l| l["record"] != "target").count() as u64;
    let (_, s1, _) = read(&dir.path().join("crawl1.warc.gz"));
    let (_, s2, _) = read(&dir.path().join("crawl2.warc.gz"));
    assert_eq!(
        records,
        s1.pages + s1.redirects + s1.revisits + s2.pages + s2.redirects + s2.revisits,
        "one line per response or revisit record"
    );
}

#[test]
fn warcio_gzip_records_with_chunked_body_redirect_and_revisit_read_completely() {
    if !has_tool("python3", &["-c", "import warcio"]) {
        return;
    }
    let Some(site) = Site::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("warcio.warc.gz");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/real_tools_warcio.py");
    let out = run_bounded(
        std::process::Command::new("python3")
            .arg(script)
            .arg(site.port.to_string())
            .arg(&path),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = site.base();
    let (pages, stats, errors) = read(&path);
    assert_eq!(errors, 0);
    assert_eq!(
        (stats.pages, stats.redirects, stats.revisits, stats.requests),
        (3, 1, 1, 4)
    );
    let redirect = pages
        .iter()
        .find(|p| p.kind == RecordKind::Redirect)
        .unwrap();
    assert_eq!(
        (redirect.url.as_str(), redirect.final_url.as_deref()),
        (
            format!("{base}/old").as_str(),
            Some(format!("{base}/").as_str())
        )
    );
    let chunked = pages.iter().find(|p| p.url.ends_with("/chunked")).unwrap();
    assert!(chunked.body.ends_with(b"</html>"));
    let revisit = pages
        .iter()
        .find(|p| matches!(p.kind, RecordKind::Revisit(_)))
        .unwrap();
    assert_eq!(revisit.url, format!("{base}/index.html"));
    let RecordKind::Revisit(r) = &revisit.kind else {
        unreachable!()
    };
    assert_eq!(
        r.refers_to_uri.as_deref(),
        Some(format!("{base}/").as_str())
    );
    let home = pages.iter().find(|p| p.url == format!("{base}/")).unwrap();
    assert_eq!(revisit.payload_digest, home.payload_digest);
    assert!(pages
        .iter()
        .filter(|p| p.kind != RecordKind::Revisit(r.clone()))
        .all(|p| p.server_ip.as_deref() == Some("127.0.0.1")));
}

/// Inputs that look like the start of each format, so the fuzzing reaches past the first line.
const PREFIXES: [&[u8]; 8] = [
    b"",
    b"WARC/1.0\r\nWARC-Type: revisit\r\nContent-Length: 12\r\n\r\n",
    b"filedesc://x.arc 0.0.0.0 20040511211249 text/plain 3\n1 0\n\nhttp://a.test/ 1.2.3.4 20040511211249 text/html 9\n",
    b" CDX N b a m s k r M S V g\n",
    b"a.test/ 20200101000000 {\"url\": ",
    b"2006-08-15T09:53:58.470Z   302        301 http://a.test/ P ",
    b"[[\"original\",\"digest\",\"statuscode\"],\n[\"http://a.test/\", ",
    b"{\"urlkey\": \"test,a)/\", \"url\": \"http://a.test/\", ",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        crate::support::proptest_cases(256)
    ))]

    /// A WACZ holding any bytes as its WARC and its index, with one byte of the zip file then
    /// overwritten anywhere (its directory, a header, the data): pages and captures or errors,
    /// never a panic or a hang.
    #[test]
    fn a_damaged_wacz_gives_records_or_errors(
        prefix in 0usize..PREFIXES.len(),
        body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..1024),
        damage_at in proptest::prelude::any::<proptest::sample::Index>(),
        damage in proptest::prelude::any::<u8>(),
    ) {
        use std::io::Write;
        use zip::write::SimpleFileOptions;
        let mut data = PREFIXES[prefix].to_vec();
        data.extend_from_slice(&body);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.wacz");
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        zip.start_file("archive/data.warc", stored).unwrap();
        zip.write_all(&data).unwrap();
        zip.start_file("indexes/index.cdxj", SimpleFileOptions::default()).unwrap();
        zip.write_all(&data).unwrap();
        let mut bytes = zip.finish().unwrap().into_inner();
        let at = damage_at.index(bytes.len());
        bytes[at] = damage;
        std::fs::write(&path, &bytes).unwrap();
        let bound = bytes.len() + 2;
        if let Ok(reader) = read_pages(&path) {
            proptest::prop_assert!(reader.take(bound + 1).count() <= bound);
        }
        if let Ok(reader) = read_index(&path) {
            proptest::prop_assert!(reader.take(bound + 1).count() <= bound);
        }
    }

    /// Any bytes, fed to every reader: records or errors naming an offset or a line, never a
    /// panic or a hang (each reader ends within a bound proportional to the input).
    #[test]
    fn any_bytes_give_records_or_located_errors(
        prefix in 0usize..PREFIXES.len(),
        body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048),
        gzip in proptest::prelude::any::<bool>(),
    ) {
        use undust::ingest::index::IndexReader;
        use undust::ingest::pages::{PageReader, ReaderLimits};
        let mut data = PREFIXES[prefix].to_vec();
        data.extend_from_slice(&body);
        if gzip {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&data).unwrap();
            data = e.finish().unwrap();
        }
        let bound = data.len() + 2;
        for format in [Format::Warc, Format::Arc, Format::JsonLines] {
            let reader = PageReader::new(Box::new(std::io::Cursor::new(data.clone())), format, ReaderLimits::default()).unwrap();
            let items: Vec<_> = reader.take(bound + 1).collect();
            proptest::prop_assert!(items.len() <= bound);
            for item in items {
                if let Err(err) = item {
                    proptest::prop_assert!(err.offset().is_some() || err.line().is_some());
                }
            }
        }
        for format in [None, Some(IndexFormat::Cdx), Some(IndexFormat::Cdxj), Some(IndexFormat::CrawlLog), Some(IndexFormat::CdxJson)] {
            let reader = IndexReader::new(Box::new(std::io::Cursor::new(data.clone())), format).unwrap();
            let items: Vec<_> = reader.take(bound + 1).collect();
            proptest::prop_assert!(items.len() <= bound);
            for item in items {
                if let Err(err) = item {
                    proptest::prop_assert!(err.line().is_some());
                }
            }
        }
    }
}
