//! Near-duplicate index and clusters: exactness against brute force, incremental updates against
//! a model, stable ids under permutation, redirect/canonical evidence, the chaining guard and
//! misused canonicals, catch-all redirects and how a fetch is recorded.

use std::collections::HashMap;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use undust::cluster::{ClusterBuilder, ClusterConfig, PageEvidence, SimhashIndex};

fn flip(fp: u64, rng: &mut SmallRng, bits: u32) -> u64 {
    let mut out = fp;
    while (out ^ fp).count_ones() < bits {
        out ^= 1u64 << rng.random_range(0..64);
    }
    out
}

#[test]
fn index_matches_brute_force_at_scale() {
    for k in [3u32, 5] {
        let mut rng = SmallRng::seed_from_u64(u64::from(k));
        let mut index = SimhashIndex::new(k);
        let mut stored: Vec<u64> = Vec::new();
        for id in 0..20_000u32 {
            let fp = if id % 4 == 0 && id > 0 {
                let base = stored[rng.random_range(0..stored.len())];
                let bits = rng.random_range(0..=k + 2);
                flip(base, &mut rng, bits)
            } else {
                rng.random()
            };
            index.insert(id, fp);
            stored.push(fp);
        }
        let mut out = Vec::new();
        let mut total = 0;
        for q in 0..1_000usize {
            let fp = if q % 2 == 0 {
                stored[q * 7]
            } else {
                flip(stored[q * 13], &mut rng, k)
            };
            index.query(fp, &mut out);
            let want: Vec<u32> = stored
                .iter()
                .enumerate()
                .filter(|(_, s)| (*s ^ fp).count_ones() <= k)
                .map(|(i, _)| i as u32)
                .collect();
            assert_eq!(out, want, "k = {k}, query {q}");
            total += out.len();
        }
        assert!(
            total > 1_000,
            "planted near-duplicates were found ({total})"
        );
    }
}

#[test]
fn incremental_inserts_and_removals_match_a_model() {
    let mut rng = SmallRng::seed_from_u64(5);
    let mut index = SimhashIndex::new(3);
    let mut model: HashMap<u32, u64> = HashMap::new();
    let centres: Vec<u64> = (0..20).map(|_| rng.random()).collect();
    let mut out = Vec::new();
    for step in 0..20_000u32 {
        let id = rng.random_range(0..3_000u32);
        match rng.random_range(0..10) {
            0..=5 => {
                let bits = rng.random_range(0..6);
                let fp = flip(centres[rng.random_range(0..centres.len())], &mut rng, bits);
                assert_eq!(index.insert(id, fp), model.insert(id, fp));
            }
            6..=8 => assert_eq!(index.remove(id), model.remove(&id)),
            _ => {
                let q = flip(centres[rng.random_range(0..centres.len())], &mut rng, 1);
                index.query(q, &mut out);
                let mut want: Vec<u32> = model
                    .iter()
                    .filter(|(_, f)| (*f ^ q).count_ones() <= 3)
                    .map(|(i, _)| *i)
                    .collect();
                want.sort_unstable();
                assert_eq!(out, want, "step {step}");
            }
        }
        assert_eq!(index.len(), model.len());
    }
    assert!(index.memory_bytes() > 0);
}

fn strong(simhash: u64) -> PageEvidence {
    PageEvidence {
        simhash,
        exact: simhash.rotate_left(17) ^ 0x5555,
        strong: true,
    }
}

fn weak(simhash: u64, exact: u64) -> PageEvidence {
    PageEvidence {
        simhash,
        exact,
        strong: false,
    }
}

enum Ev {
    Page(String, PageEvidence),
    Redirect(String, String),
    Canonical(String, String),
}

fn build(evidence: &[Ev]) -> undust::cluster::Clustering {
    let mut b = ClusterBuilder::new(ClusterConfig::default());
    for e in evidence {
        match e {
            Ev::Page(u, ev) => b.add_page(u, *ev),
            Ev::Redirect(a, t) => {
                b.add_redirect(a, t);
            }
            Ev::Canonical(a, t) => {
                b.add_canonical(a, t);
            }
        }
    }
    b.finish()
}

#[test]
fn clusters_are_stable_under_permutation() {
    let mut rng = SmallRng::seed_from_u64(8);
    let mut evidence = Vec::new();
    for c in 0..40 {
        let centre: u64 = rng.random();
        for v in 0..rng.random_range(1..6) {
            let bits = rng.random_range(0..3);
            let url = format!("https://s.test/item?id={c}&v={v}");
            evidence.push(Ev::Page(url, strong(flip(centre, &mut rng, bits))));
        }
        if c % 5 == 0 {
            evidence.push(Ev::Redirect(
                format!("https://s.test/old/{c}"),
                format!("/item?id={c}&v=0"),
            ));
        }
        if c % 7 == 0 {
            evidence.push(Ev::Canonical(
                format!("https://s.test/item?id={c}&v=0"),
                format!("/item/{c}"),
            ));
        }
    }
    for i in 0..30 {
        evidence.push(Ev::Page(
            format!("https://s.test/tiny/{i}"),
            weak(rng.random(), i % 4),
        ));
    }
    let reference = build(&evidence);
    assert!(reference.clusters().len() >= 40);
    for _ in 0..10 {
        evidence.shuffle(&mut rng);
        let again = build(&evidence);
        assert_eq!(again.labelled_pairs(), reference.labelled_pairs());
        assert_eq!(again.clusters(), reference.clusters());
    }
    // Ids come from the smallest member URL.
    for cluster in reference.clusters() {
        assert_eq!(
            cluster.id,
            xxhash_rust::xxh3::xxh3_64(cluster.members[0].as_bytes())
        );
    }
}

#[test]
fn redirect_and_canonical_evidence() {
    let u = |p: &str| format!("https://shop.test{p}");
    let mut b = ClusterBuilder::new(ClusterConfig::default());
    b.add_page(&u("/p?id=1"), strong(0x1111_0000_ffff_0000));
    b.add_page(&u("/p?id=2"), strong(0x2222_aaaa_0000_ffff));
    b.add_page(&u("/p?id=1&sort=a"), strong(0x1111_0000_ffff_0003));
    b.add_page(&u("/q?id=1"), strong(0x3333_5555_1234_4321));
    b.add_page(&u("/r?id=1"), strong(0x4444_6666_4321_1234));
    // Redirect to a fetched target; relative canonicals to an unfetched URL from two
    // near-duplicate pages (one content cluster): accepted.
    assert!(b.add_redirect(&u("/old?id=1"), &u("/p?id=1")));
    assert!(b.add_canonical(&u("/p?id=1"), "/p/1"));
    assert!(b.add_canonical(&u("/p?id=1&sort=a"), "p/1"));
    // Two pages with different content both claiming one unfetched URL (e.g. everything
    // canonical to the home page): the claims are rejected.
    assert!(b.add_canonical(&u("/q?id=1"), "/"));
    assert!(b.add_canonical(&u("/r?id=1"), "/"));
    // Cross-host and unparseable evidence is ignored.
    assert!(!b.add_redirect(&u("/p?id=2"), "https://other.test/p?id=1"));
    assert!(!b.add_canonical(&u("/p?id=2"), "https://cdn.test/p/1"));
    assert!(!b.add_canonical("not a url", "/x"));
    assert!(!b.add_canonical(&u("/p?id=2"), &u("/p?id=2")));
    let c = b.finish();
    let id = |p: &str| c.cluster_of(&u(p)).unwrap();
    assert_eq!(id("/old?id=1"), id("/p?id=1"));
    assert_eq!(id("/p/1"), id("/p?id=1"));
    assert_eq!(id("/p?id=1&sort=a"), id("/p?id=1"));
    assert_ne!(id("/p?id=2"), id("/p?id=1"));
    assert_ne!(id("/q?id=1"), id("/r?id=1"));
    assert_ne!(id("/q?id=1"), id("/"));
    assert_eq!(c.cluster_of("https://other.test/p?id=1"), None);
    assert_eq!(
        c.members_of(&u("/p?id=1")).unwrap(),
        [u("/old?id=1"), u("/p/1"), u("/p?id=1"), u("/p?id=1&sort=a")]
    );
    let s = c.stats();
    assert_eq!(
        (s.redirects, s.cross_host_ignored, s.invalid_ignored),
        (1, 2, 1)
    );
    assert_eq!((s.canonicals, s.canonicals_fan_in), (2, 2));
}

#[test]
fn canonical_accepted_when_content_agrees_rejected_when_it_contradicts() {
    let u = |p: &str| format!("https://news.test{p}");
    let mut b = ClusterBuilder::new(ClusterConfig::default());
    let article = 0xabcd_ef01_2345_6789u64;
    b.add_page(&u("/a?utm=x"), strong(article ^ 0b1));
    b.add_page(&u("/a"), strong(article ^ (0xff << 40))); // 8 bits away: not a near-duplicate
    b.add_page(&u("/a?print=1"), weak(1, 2));
    b.add_canonical(&u("/a?print=1"), &u("/a")); // weak claimant: accepted
    b.add_canonical(&u("/a?utm=x"), &u("/a")); // both Strong and far apart: contradicted
                                               // Paginated listing pages all pointing at page 1 (a common misuse), page 1 fetched.
    for p in 2..6u64 {
        b.add_page(
            &u(&format!("/list?page={p}")),
            strong(p.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        );
        b.add_canonical(&u(&format!("/list?page={p}")), &u("/list"));
    }
    b.add_page(&u("/list"), strong(0x0f0f_0f0f_0f0f_0f0f));
    // A real duplicate with a canonical: accepted.
    b.add_page(&u("/story?ref=rss"), strong(0x7777_0000_7777_0000));
    b.add_page(&u("/story"), strong(0x7777_0000_7777_0001));
    b.add_canonical(&u("/story?ref=rss"), &u("/story"));
    let c = b.finish();
    let id = |p: &str| c.cluster_of(&u(p)).unwrap();
    assert_eq!(id("/a?print=1"), id("/a"));
    assert_ne!(id("/a?utm=x"), id("/a"));
    for p in 2..6 {
        assert_ne!(id(&format!("/list?page={p}")), id("/list"));
    }
    assert_eq!(id("/story?ref=rss"), id("/story"));
    assert_eq!(c.stats().canonicals_contradicted, 5);
}

#[test]
fn chaining_guard_splits_a_drifting_chain() {
    // Pages 0..12, each 2 bits from the previous, drifting away: every neighbour pair is a
    // near-duplicate (k = 3), so naive transitive closure makes one cluster of pages up to 24 bits
    // apart.
    let mut fp = 0u64;
    let mut chain = vec![fp];
    for i in 0..12 {
        fp ^= 0b11 << (2 * i);
        chain.push(fp);
    }
    for w in chain.windows(2) {
        assert!((w[0] ^ w[1]).count_ones() <= 3);
    }
    assert!((chain[0] ^ chain[12]).count_ones() > 20);
    let mut b = ClusterBuilder::new(ClusterConfig::default());
    for (i, &f) in chain.iter().enumerate() {
        b.add_page(&format!("https://c.test/p{i:02}"), strong(f));
    }
    let c = b.finish();
    assert!(
        c.clusters().len() >= 4,
        "chain split into {} clusters",
        c.clusters().len()
    );
    // Every cluster has a diameter of at most 2k.
    let fp_of = |url: &str| chain[url[url.len() - 2..].parse::<usize>().unwrap()];
    for cluster in c.clusters() {
        for a in &cluster.members {
            for b in &cluster.members {
                assert!(
                    (fp_of(a) ^ fp_of(b)).count_ones() <= 6,
                    "{a} and {b} in one cluster"
                );
            }
        }
    }
    assert_ne!(
        c.cluster_of("https://c.test/p00"),
        c.cluster_of("https://c.test/p12")
    );
}

#[test]
fn weak_pages_merge_only_on_exact_hash() {
    let mut b = ClusterBuilder::new(ClusterConfig::default());
    b.add_page("https://w.test/a", weak(0, 10));
    b.add_page("https://w.test/b", weak(0, 11)); // same simhash, different exact: apart
    b.add_page("https://w.test/c", weak(u64::MAX, 10)); // different simhash, same exact: together
    b.add_page("https://w.test/d", strong(1)); // Strong, within k of a and b: still apart
    let c = b.finish();
    let id = |p: &str| c.cluster_of(&format!("https://w.test/{p}")).unwrap();
    assert_eq!(id("a"), id("c"));
    assert_ne!(id("a"), id("b"));
    assert_ne!(id("a"), id("d"));
    assert_ne!(id("b"), id("d"));
    // A refetch replaces evidence: b now has a's exact hash.
    let mut b2 = ClusterBuilder::new(ClusterConfig::default());
    b2.add_page("https://w.test/a", weak(0, 10));
    b2.add_page("https://w.test/b", weak(0, 11));
    b2.add_page("https://w.test/b", weak(0, 10));
    let c2 = b2.finish();
    assert_eq!(
        c2.cluster_of("https://w.test/a"),
        c2.cluster_of("https://w.test/b")
    );
}

#[test]
fn redirects_into_a_catch_all_are_not_duplicate_evidence() {
    let u = |p: &str| format!("https://site.test{p}");
    let mut b = ClusterBuilder::new(ClusterConfig::default());
    // Thirty different items redirect to the login page: none is a duplicate of another.
    b.add_page(&u("/login"), weak(7, 70));
    for i in 0..30 {
        assert!(b.add_redirect(&format!("http://site.test/item/{i}"), &u("/login")));
    }
    // Redirects that keep the path still apply to that target.
    assert!(b.add_redirect("http://site.test/login", &u("/login")));
    assert!(b.add_redirect(&u("/Login/"), &u("/login")));
    // A handful of real aliases: scheme, trailing slash, default documents.
    b.add_page(&u("/"), strong(0x0123_4567_89ab_cdef));
    for alias in ["/index.html", "/index.php", "/home"] {
        assert!(b.add_redirect(&u(alias), &u("/")));
    }
    assert!(b.add_redirect("http://site.test/", &u("/")));
    b.add_page(&u("/a/"), strong(0xfedc_ba98_7654_3210));
    assert!(b.add_redirect(&u("/a"), &u("/a/")));
    assert!(b.add_redirect("http://site.test/a", &u("/a/")));
    let c = b.finish();
    let id = |p: &str| c.cluster_of(p).unwrap();
    for i in 0..30 {
        let item = format!("http://site.test/item/{i}");
        assert_eq!(
            c.members_of(&item).unwrap(),
            std::slice::from_ref(&item),
            "{item}"
        );
    }
    assert_eq!(
        c.members_of(&u("/login")).unwrap(),
        ["http://site.test/login", &u("/Login/"), &u("/login")]
    );
    for alias in ["/index.html", "/index.php", "/home"] {
        assert_eq!(id(&u(alias)), id(&u("/")), "{alias}");
    }
    assert_eq!(id("http://site.test/"), id(&u("/")));
    assert_eq!(id(&u("/a")), id(&u("/a/")));
    assert_eq!(id("http://site.test/a"), id(&u("/a/")));
    assert_ne!(id(&u("/a")), id(&u("/")));
    let s = c.stats();
    assert_eq!((s.redirects, s.redirects_fan_in), (2 + 4 + 2, 30));
}

#[test]
fn the_catch_all_bound_is_on_distinct_source_paths() {
    let u = |p: &str| format!("https://b.test{p}");
    let run = |sources: usize, spellings: usize| {
        let mut b = ClusterBuilder::new(ClusterConfig::default());
        b.add_page(&u("/"), strong(1));
        for i in 0..sources {
            // Several spellings of one path (query, case, slash) count once.
            for v in 0..spellings {
                let path = match v {
                    0 => format!("/old{i}"),
                    1 => format!("/OLD{i}/"),
                    _ => format!("/old{i}?v={v}"),
                };
                b.add_redirect(&u(&path), &u("/"));
            }
        }
        let c = b.finish();
        let merged = c.members_of(&u("/")).unwrap().len() - 1;
        (merged, c.stats().redirects_fan_in)
    };
    let max = undust::cluster::MAX_REDIRECT_ALIAS_PATHS;
    assert_eq!(run(max, 1), (max, 0), "at the bound: applied");
    assert_eq!(run(max + 1, 1), (0, max + 1), "over it: a catch-all");
    assert_eq!(
        run(max, 4),
        (4 * max, 0),
        "spellings of one path count once"
    );
}

#[test]
fn a_catch_all_is_recognised_across_urls_of_one_content() {
    // Login redirects that carry the return URL: every target URL differs, but the page is the
    // same, so its content cluster is the catch-all.
    let u = |p: &str| format!("https://shop.test{p}");
    let mut b = ClusterBuilder::new(ClusterConfig::default());
    for i in 0..20 {
        let at = b.add_fetch(
            &u(&format!("/item/{i}")),
            Some(&format!("/login?next=%2Fitem%2F{i}")),
            None,
            weak(3, 33),
        );
        assert_eq!(at, Some(u(&format!("/login?next=%2Fitem%2F{i}"))));
    }
    // Two product pages behind real aliases, recorded the same way.
    let p1 = strong(0x1111_2222_3333_4444);
    b.add_fetch("http://shop.test/p/1", Some(&u("/p/1")), None, p1);
    b.add_fetch(
        &u("/p/2"),
        Some(&u("/p/2/")),
        None,
        strong(0x9999_0000_aaaa_5555),
    );
    let c = b.finish();
    let logins = c.members_of(&u("/login?next=%2Fitem%2F0")).unwrap();
    assert_eq!(
        logins.len(),
        20,
        "the login pages are one content: {logins:?}"
    );
    assert!(logins.iter().all(|m| m.contains("/login?")), "{logins:?}");
    for i in 0..20 {
        assert_eq!(c.members_of(&u(&format!("/item/{i}"))).unwrap().len(), 1);
    }
    assert_eq!(
        c.cluster_of("http://shop.test/p/1"),
        c.cluster_of(&u("/p/1"))
    );
    assert_eq!(c.cluster_of(&u("/p/2")), c.cluster_of(&u("/p/2/")));
    let s = c.stats();
    assert_eq!((s.redirects, s.redirects_fan_in), (2, 20));
    assert_eq!(s.pages, 22, "content is recorded for the final URLs");
}

#[test]
fn a_fetch_records_content_and_canonical_for_its_final_url() {
    let u = |p: &str| format!("https://news.test{p}");
    let article = strong(0x0f0f_1234_5678_f0f0);
    let mut b = ClusterBuilder::new(ClusterConfig::default());
    // Fetched at /s?id=1, redirected to /story/1, whose HTML declares the relative canonical
    // `1?amp=0`: resolved against the final URL, not the fetched one.
    let at = b.add_fetch(&u("/s?id=1"), Some("/story/1"), Some("1?amp=0"), article);
    assert_eq!(at, Some(u("/story/1")));
    // No redirect: recorded for the fetched URL.
    assert_eq!(
        b.add_fetch(&u("/other"), None, None, strong(5)),
        Some(u("/other"))
    );
    // A final URL on another host: nothing recorded for this host.
    assert_eq!(
        b.add_fetch(
            &u("/gone"),
            Some("https://sso.test/login"),
            None,
            weak(1, 2)
        ),
        None
    );
    let c = b.finish();
    assert_eq!(
        c.members_of(&u("/story/1")).unwrap(),
        [u("/s?id=1"), u("/story/1"), u("/story/1?amp=0")]
    );
    assert_eq!(c.cluster_of(&u("/gone")), None);
    assert_eq!(c.cluster_of("https://sso.test/login"), None);
    let s = c.stats();
    assert_eq!(
        (s.pages, s.redirects, s.canonicals, s.cross_host_ignored),
        (2, 1, 1, 1)
    );
}
