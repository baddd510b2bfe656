//! Mirror sets across a fleet (issues 12 and 15): two sidecars on one real Redis. The mirror-group
//! corpus is ingested through sidecar A only and relearned there; sidecar B, which never saw a
//! page of it, then folds alias URLs to the same canonical forms as A and reports them seen when
//! A recorded their canonical site's pages; B's own detection passes (on A's shared summaries, B
//! samples none of these hosts) withdraw nothing; an
//! operator's forbid asked on B is obeyed by A after its next poll and survives A's relearns.
//! The table itself is fenced: a paused publisher cannot overwrite a newer one. And a mirror pair
//! whose two hosts were sampled on different sidecars is found (the shared host summaries), while
//! hard negatives split the same way stay apart.

use std::collections::HashSet;
use std::time::Duration;

use undust::canon::rules::MirrorSet;
use undust::config::Knobs;
use undust::corpus::{generate_mirrors, MirrorCorpus, MirrorCorpusConfig};
use undust::pb::{Decision, MirrorDecision};

use crate::fleet::{fleet_knobs, Redis};
use crate::mirrors_serve::{decide, ingest, live_sets, mirrors};
use crate::support::{canonicalize_all, relearn, AdminConnection, TestServer};

/// A fleet sidecar that relearns (and so detects mirrors) only when asked.
fn knobs(redis: &Redis) -> Knobs {
    Knobs {
        relearn_min_new_samples: Some(1_000_000),
        relearn_interval_secs: Some(86_400),
        ..fleet_knobs(redis)
    }
}

/// Waits (bounded) until `admin`'s live mirror sets satisfy `wanted`; returns them.
async fn wait_live(
    admin: &mut AdminConnection,
    what: &str,
    wanted: impl Fn(&[MirrorSet]) -> bool,
) -> Vec<MirrorSet> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let sets = live_sets(&mirrors(admin).await);
        if wanted(&sets) {
            return sets;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "within 10 s: {what}; live sets: {sets:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn pairs(sets: &[MirrorSet]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = sets
        .iter()
        .flat_map(|s| {
            s.aliases
                .iter()
                .map(move |a| (a.site.display(), s.canonical.display()))
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_mirror_table_for_the_fleet_folds_alike_and_obeys_an_operator_anywhere() {
    let Some(redis) = Redis::start() else { return };
    let a = TestServer::start_with(None, knobs(&redis)).await;
    // B runs a detection pass every second on its own (it has no host to relearn).
    let b = TestServer::start_with(
        None,
        Knobs {
            relearn_interval_secs: Some(1),
            ..knobs(&redis)
        },
    )
    .await;
    let corpus = generate_mirrors(&MirrorCorpusConfig::new(7, 4, 40));
    ingest(&a, &corpus).await;
    let (mut admin_a, mut admin_b) = (a.admin().await, b.admin().await);
    relearn(&mut admin_a, "", true).await;
    relearn(&mut admin_a, "", true).await;
    let sets = live_sets(&mirrors(&mut admin_a).await);
    assert!(!sets.is_empty(), "A detected no mirror set");
    let on_a = pairs(&sets);
    let on_b = wait_live(&mut admin_b, "B serves A's mirror sets", |live| {
        pairs(live) == on_a
    })
    .await;

    // B samples none of these hosts: its passes, on the summaries A shared, withdraw none of
    // A's pairs.
    let passes = mirrors(&mut admin_b).await.passes;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while mirrors(&mut admin_b).await.passes < passes + 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "B ran no detection passes"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(pairs(&live_sets(&mirrors(&mut admin_b).await)), on_a);
    assert_eq!(pairs(&live_sets(&mirrors(&mut admin_a).await)), on_a);

    // A records the canonical sites' pages; B is asked for the aliases' pages.
    let canonical_origins: HashSet<&str> =
        on_b.iter().map(|s| s.canonical.origin.as_str()).collect();
    let alias_sites: Vec<_> = on_b
        .iter()
        .flat_map(|s| s.aliases.iter().map(|a| a.site.clone()))
        .collect();
    let is_alias_url = |url: &str| {
        alias_sites.iter().any(|site| {
            let prefix = site.display();
            url.strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    };
    let all_urls = || {
        corpus.hosts.iter().flat_map(|h| {
            h.pages
                .iter()
                .map(move |p| (h.origin.as_str(), p.url.clone()))
        })
    };
    let canonical_urls: Vec<String> = all_urls()
        .filter(|(origin, _)| canonical_origins.contains(origin))
        .map(|(_, url)| url)
        .collect();
    let alias_urls: Vec<String> = all_urls()
        .filter(|(origin, url)| !canonical_origins.contains(origin) && is_alias_url(url))
        .map(|(_, url)| url)
        .collect();
    assert!(!canonical_urls.is_empty() && !alias_urls.is_empty());
    let mut client_a = a.canonicalizer().await;
    let mut client_b = b.canonicalizer().await;
    canonicalize_all(&mut client_a, &canonical_urls, false).await;
    let forms_a = canonicalize_all(&mut client_a, &alias_urls, true).await;
    let answers_b = canonicalize_all(&mut client_b, &alias_urls, false).await;
    for ((url, on_a), on_b) in alias_urls.iter().zip(&forms_a).zip(&answers_b) {
        assert_eq!(
            on_a.canonical, on_b.canonical,
            "{url}: the two sidecars fold it differently"
        );
    }
    let seen = answers_b
        .iter()
        .filter(|r| r.decision == Decision::Duplicate as i32)
        .count();
    eprintln!(
        "B: {seen} of {} alias URLs seen through A's canonical pages",
        alias_urls.len()
    );
    assert!(
        seen as f64 >= 0.8 * alias_urls.len() as f64,
        "{seen} of {}",
        alias_urls.len()
    );

    // An operator forbids one alias on B: A obeys after its next poll, and A's relearns keep it.
    let (forbidden_alias, its_canonical) = on_a[0].clone();
    decide(
        &mut admin_b,
        MirrorDecision::Forbid,
        &its_canonical,
        &forbidden_alias,
    )
    .await;
    let without = |live: &[MirrorSet]| pairs(live).iter().all(|(a, _)| *a != forbidden_alias);
    wait_live(&mut admin_a, "A obeys B's forbid", without).await;
    relearn(&mut admin_a, "", true).await;
    relearn(&mut admin_a, "", true).await;
    let after = live_sets(&mirrors(&mut admin_a).await);
    assert!(without(&after), "A's relearn undid the forbid: {after:?}");
    assert!(
        !after.is_empty(),
        "the other sets stay live after the forbid"
    );
    wait_live(&mut admin_b, "B serves the same sets as A", |live| {
        pairs(live) == pairs(&after)
    })
    .await;
    a.stop().await;
    b.stop().await;
}

/// The mirror table is fenced like a host's rules: a publisher whose mirror lease expired while
/// it was paused cannot overwrite the table a newer lease published, and a poll returns a table
/// only when its version moved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_mirror_publisher_cannot_overwrite_a_newer_table() {
    use undust::fleet::{Fleet, FleetConfig, MirrorsOutcome, MIRRORS_LEASE};

    let Some(redis) = Redis::start() else { return };
    let config = |lease_ms: u64| FleetConfig {
        url: redis.url(),
        lease_ttl: Duration::from_millis(lease_ms),
        rules_poll: Duration::from_millis(100),
        call_timeout: undust::fleet::DEFAULT_CALL_TIMEOUT,
        evidence_per_host: 100,
        evidence_max_hosts: 100,
        mirror_summaries_per_pass: undust::config::DEFAULT_FLEET_MIRROR_SUMMARIES_PER_PASS,
    };
    let seen = undust::config::ServeConfig::from_knobs(Knobs::default())
        .expect("defaults")
        .seen_set;
    let slow = Fleet::new(config(300), &seen).expect("fleet");
    let fast = Fleet::new(config(10_000), &seen).expect("fleet");
    slow.establish().await.expect("connect");
    fast.establish().await.expect("connect");
    assert_eq!(fast.mirrors.newer_than(0).await.expect("redis"), None);

    let old = slow
        .leases
        .acquire(MIRRORS_LEASE)
        .await
        .expect("redis")
        .expect("free lease");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let new = loop {
        if let Some(lease) = fast.leases.acquire(MIRRORS_LEASE).await.expect("redis") {
            break lease;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lease never expired"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let published = fast
        .mirrors
        .publish(&new, b"newer", 1)
        .await
        .expect("redis");
    assert_eq!(published, MirrorsOutcome::Published { version: 1 });
    let late = slow
        .mirrors
        .publish(&old, b"older", 1)
        .await
        .expect("redis");
    assert_eq!(late, MirrorsOutcome::Fenced { newer: new.token });
    let table = slow
        .mirrors
        .newer_than(0)
        .await
        .expect("redis")
        .expect("a table");
    assert_eq!((table.version, table.body.as_slice()), (1, &b"newer"[..]));
    assert_eq!(slow.mirrors.newer_than(1).await.expect("redis"), None);
    // A publisher that has seen a later version than Redis holds publishes past it.
    let again = fast
        .mirrors
        .publish(&new, b"newest", 5)
        .await
        .expect("redis");
    assert_eq!(again, MirrorsOutcome::Published { version: 5 });
}

/// The host of an origin (`scheme://host`).
fn host_of(origin: &str) -> &str {
    origin.split_once("://").map_or(origin, |(_, host)| host)
}

/// The origin a site (`scheme://host[:port][/prefix]`) belongs to.
fn origin_of_site(site: &str) -> String {
    let url = url::Url::parse(site).expect("site URL");
    url.origin().ascii_serialization()
}

/// Whether `a` and `b` are folded into one set by `sets` (same canonical origin, or one the
/// other's canonical).
fn folded_together(sets: &[MirrorSet], a: &str, b: &str) -> bool {
    let root = |origin: &str| {
        sets.iter()
            .find(|s| {
                s.canonical.origin == origin || s.aliases.iter().any(|x| x.site.origin == origin)
            })
            .map(|s| s.canonical.origin.clone())
    };
    matches!((root(a), root(b)), (Some(x), Some(y)) if x == y)
}

/// The mirror-group corpus the split-fleet tests share (deterministic).
fn split_corpus() -> MirrorCorpus {
    generate_mirrors(&MirrorCorpusConfig::new(11, 4, 40))
}

/// The origins a frontier sharding by host would send to sidecar one: each group's primary host
/// (`www.{name}.com`, over https and http); every other host of a group (its bare host, other
/// TLD, mirrors, the sibling blog, the redirector) goes to sidecar two; the shop-software sites
/// alternate.
fn sidecar_one_origins(corpus: &MirrorCorpus) -> HashSet<String> {
    let primary_hosts: HashSet<String> = corpus
        .hosts
        .iter()
        .map(|h| host_of(&h.origin).to_owned())
        .filter(|host| host.starts_with("www.") && host.ends_with(".com"))
        .collect();
    let mut shops = 0;
    let mut on_one = HashSet::new();
    for host in &corpus.hosts {
        let name = host_of(&host.origin);
        let first = if name.starts_with("shop.") {
            shops += 1;
            shops % 2 == 1
        } else {
            primary_hosts.contains(name)
        };
        if first {
            on_one.insert(host.origin.clone());
        }
    }
    on_one
}

/// [`split_corpus`] sharded across two fleet sidecars by [`sidecar_one_origins`].
struct SplitFleet {
    one: TestServer,
    two: TestServer,
    corpus: MirrorCorpus,
    /// Full mirrors of a primary sampled on the other sidecar: its bare host (same IP, same
    /// template).
    split_mirrors: Vec<(String, String)>,
}

impl SplitFleet {
    /// Starts both sidecars with `knobs` and ingests each one's part of the corpus.
    async fn start(knobs: Knobs) -> SplitFleet {
        let one = TestServer::start_with(None, knobs.clone()).await;
        let two = TestServer::start_with(None, knobs).await;
        let corpus = split_corpus();
        let on_one = sidecar_one_origins(&corpus);
        let part = |first: bool| MirrorCorpus {
            hosts: corpus
                .hosts
                .iter()
                .filter(|h| on_one.contains(&h.origin) == first)
                .cloned()
                .collect(),
            ..MirrorCorpus::default()
        };
        ingest(&one, &part(true)).await;
        ingest(&two, &part(false)).await;
        let split = |(a, b): &(String, String)| on_one.contains(a) != on_one.contains(b);
        let split_mirrors: Vec<(String, String)> = corpus
            .mirror_pairs
            .iter()
            .filter(|pair| split(pair))
            .filter(|(a, b)| {
                let bare = |x: &str, y: &str| {
                    host_of(y).strip_prefix("www.") == Some(host_of(x)) && x.starts_with("http://")
                };
                bare(a, b) || bare(b, a)
            })
            .cloned()
            .collect();
        let split_negatives = corpus.negative_pairs.iter().filter(|p| split(p)).count();
        assert!(
            split_mirrors.len() >= 4 && split_negatives >= 4,
            "the split leaves {} mirror pairs and {split_negatives} hard negatives across sidecars",
            split_mirrors.len()
        );
        SplitFleet {
            one,
            two,
            corpus,
            split_mirrors,
        }
    }

    /// Relearns both sidecars `rounds` times (each relearn ends with a detection pass on the
    /// fleet's book; a pair goes live on its second consecutive confirmation) and checks what
    /// goes live: every split mirror pair folded, the same sets on both sidecars, and nothing
    /// that joins origins that are not mirrors. Returns the live sets.
    async fn fold_split_mirrors(&self, rounds: usize) -> Vec<MirrorSet> {
        let (mut admin_one, mut admin_two) = (self.one.admin().await, self.two.admin().await);
        for _ in 0..rounds {
            relearn(&mut admin_one, "", true).await;
            relearn(&mut admin_two, "", true).await;
        }
        let all_folded = |live: &[MirrorSet]| {
            self.split_mirrors
                .iter()
                .all(|(a, b)| folded_together(live, a, b))
        };
        let on_two = wait_live(
            &mut admin_two,
            "sidecar two folds every split mirror pair",
            all_folded,
        )
        .await;
        let on_one = wait_live(&mut admin_one, "sidecar one serves the same sets", |live| {
            pairs(live) == pairs(&on_two)
        })
        .await;
        assert!(all_folded(&on_one));
        self.assert_only_mirrors_folded(&on_one);
        on_one
    }

    /// Nothing live joins origins that are not mirrors: the hard negatives (sibling blogs on the
    /// primary's IP, redirectors, shop-software sites on one IP) split across sidecars included.
    fn assert_only_mirrors_folded(&self, live: &[MirrorSet]) {
        for (alias, canonical) in pairs(live) {
            let (alias, canonical) = (origin_of_site(&alias), origin_of_site(&canonical));
            let pair = (alias.clone().min(canonical.clone()), alias.max(canonical));
            assert!(
                self.corpus.mirror_pairs.contains(&pair),
                "{pair:?} is folded but is not a mirror pair (hard negative: {})",
                self.corpus.negative_pairs.contains(&pair)
            );
        }
    }

    async fn stop(self) {
        self.one.stop().await;
        self.two.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mirrors_whose_hosts_are_sampled_on_different_sidecars_fold_and_negatives_split_the_same_way_stay_apart(
) {
    let Some(redis) = Redis::start() else { return };
    let fleet = SplitFleet::start(knobs(&redis)).await;
    fleet.fold_split_mirrors(2).await;
    fleet.stop().await;
}

/// A fleet holding more origins than one pass fetches: a pass proposes pairs from the fleet's
/// signatures and fetches only the proposed origins' full summaries (here at most half of either
/// sidecar's origins, fewer than the proposals), and still finds every split mirror pair and no
/// negative: proposals beyond one pass's budget get their turn in the next passes (before that
/// rotation, the same best-ranked origins were fetched every pass and some pairs never were).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fleet_larger_than_one_pass_fetches_finds_split_mirrors_through_proposed_pairs() {
    let Some(redis) = Redis::start() else { return };
    let corpus = split_corpus();
    let one = sidecar_one_origins(&corpus).len();
    let two = corpus.hosts.len() - one;
    let per_pass = one.min(two) / 2;
    assert!(
        per_pass >= 2,
        "{per_pass} summaries per pass for {one} and {two} origins"
    );
    let fleet = SplitFleet::start(Knobs {
        fleet_mirror_summaries_per_pass: Some(per_pass),
        ..knobs(&redis)
    })
    .await;
    // Enough passes for every origin of the larger side to be fetched twice in turn.
    fleet
        .fold_split_mirrors(2 * one.max(two).div_ceil(per_pass) + 1)
        .await;
    fleet.stop().await;
}

/// How many origins' full summaries the fleet's Redis holds.
fn summaries_in(redis: &Redis) -> usize {
    redis::cmd("HLEN")
        .arg("undust:ms:full")
        .query(&mut redis.connection())
        .expect("HLEN")
}

/// Redis going away leaves the live mirror sets folding on both sidecars (passes fail,
/// Canonicalize does not wait on them); a Redis that comes back without the summaries it held
/// (flushed here, as after a failover to a replica that lost them) is given them again by the
/// sidecars' next periodic passes, with no host relearned, and the live sets do not change.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mirror_sets_outlive_redis_going_away_and_summaries_it_lost_are_shared_again() {
    let Some(mut redis) = Redis::start() else {
        return;
    };
    // A detection pass every second; no host relearns by itself (the threshold of new samples
    // is never reached), so nothing but the pass itself can share summaries again.
    let fleet = SplitFleet::start(Knobs {
        relearn_interval_secs: Some(1),
        ..knobs(&redis)
    })
    .await;
    let live = fleet.fold_split_mirrors(2).await;
    let shared = summaries_in(&redis);
    assert!(
        shared >= 2 * fleet.split_mirrors.len(),
        "{shared} summaries shared"
    );
    let urls: Vec<String> = fleet
        .corpus
        .hosts
        .iter()
        .flat_map(|host| host.pages.iter().map(|page| page.url.clone()))
        .collect();
    let canonical_forms = |results: Vec<undust::pb::CanonicalizeResult>| -> Vec<String> {
        results.into_iter().map(|r| r.canonical).collect()
    };
    let mut client = fleet.two.canonicalizer().await;
    let before = canonical_forms(canonicalize_all(&mut client, &urls, true).await);

    redis.kill();
    // Passes fail meanwhile (two or three of them on each sidecar).
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let during = canonical_forms(canonicalize_all(&mut client, &urls, true).await);
    assert!(
        during == before,
        "with Redis gone, the live mirror sets fold as before"
    );

    redis.restart();
    let () = redis::cmd("FLUSHALL")
        .query(&mut redis.connection())
        .expect("FLUSHALL");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let now = summaries_in(&redis);
        if now == shared {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "within 20 s of Redis losing them, the sidecars share their {shared} summaries \
             again (it holds {now})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A few more passes on the restored summaries: the live sets stay as they were, everywhere.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    for server in [&fleet.one, &fleet.two] {
        let mut admin = server.admin().await;
        assert_eq!(
            pairs(&live_sets(&mirrors(&mut admin).await)),
            pairs(&live),
            "the live mirror sets did not change"
        );
    }
    let after = canonical_forms(canonicalize_all(&mut client, &urls, true).await);
    assert!(
        after == before,
        "after Redis came back, URLs fold as before"
    );
    fleet.stop().await;
}

/// Used memory of a Redis, from `INFO memory`.
async fn redis_used_memory(url: &str) -> u64 {
    let client = redis::Client::open(url).expect("redis url");
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .expect("redis");
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(&mut connection)
        .await
        .expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("used_memory")
}

/// The figures of BENCHMARKS.md "Mirror detection at scale", fleet: 20,000 origins shared through
/// a real Redis (2,000 of them halves of 1,000 mirror pairs whose halves differ in name and
/// address, so only the path and content sketches can propose them), then what a pass does:
/// read every signature, propose pairs, fetch the proposed origins' full summaries.
/// `cargo test --test it fleet_summaries_at_scale -- --ignored --nocapture`; with
/// `UNDUST_FLEET_ORIGINS=100000`, 100,000 origins and 5,000 pairs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement (BENCHMARKS.md), run by hand: about a minute"]
async fn fleet_summaries_at_scale_measured() {
    use std::time::Instant;
    use undust::fleet::{Fleet, FleetConfig, SharedOrigin};
    use undust::mirrors::signature::DEFAULT_SKETCH;
    use undust::mirrors::{propose, ContentMark, HostSummary, OriginSignature, ProposeParams};

    // 20,000 by default; `UNDUST_FLEET_ORIGINS=100000` for the figure at 100,000 origins.
    let origins_wanted: usize = std::env::var("UNDUST_FLEET_ORIGINS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let (origins, pairs) = (origins_wanted.max(2_000), origins_wanted.max(2_000) / 20);
    let Some(redis) = Redis::start() else { return };
    let fleet = Fleet::new(
        FleetConfig {
            url: redis.url(),
            lease_ttl: Duration::from_secs(30),
            rules_poll: Duration::from_millis(500),
            call_timeout: undust::fleet::DEFAULT_CALL_TIMEOUT,
            evidence_per_host: 100,
            evidence_max_hosts: origins,
            mirror_summaries_per_pass: undust::config::DEFAULT_FLEET_MIRROR_SUMMARIES_PER_PASS,
        },
        &undust::config::ServeConfig::from_knobs(Knobs::default())
            .expect("defaults")
            .seen_set,
    )
    .expect("fleet");
    fleet.establish().await.expect("connect");
    // A deterministic generator (xorshift), so runs compare.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let site = |next: &mut dyn FnMut() -> u64| -> Vec<(String, u64)> {
        (0..40)
            .map(|i| {
                let (a, b) = (next() % 2_000, next() % 2_000);
                (format!("/w{a}/w{b}-{i}.html"), next())
            })
            .collect()
    };
    let summary = |name: &str, ip: u64, paths: &[(String, u64)]| {
        let mut h = HostSummary::new(&format!("http://{name}"), name);
        h.ip = Some(std::net::IpAddr::V4(std::net::Ipv4Addr::from(ip as u32)));
        h.urls_seen = paths.len() as u64;
        for (i, (path, content)) in paths.iter().enumerate() {
            h.paths.insert(path.clone());
            if i % 4 == 0 {
                let page = h.pages.entry(path.clone()).or_default();
                page.marks.push(ContentMark {
                    exact: *content,
                    simhash: Some(*content),
                    strong: true,
                });
                page.links = (0..20).map(|j| content ^ j).collect();
            }
        }
        h
    };
    let mut summaries = Vec::with_capacity(origins);
    for p in 0..pairs {
        let paths = site(&mut next);
        summaries.push(summary(&format!("www.site{p}.com"), next(), &paths));
        summaries.push(summary(
            &format!("copy{p}.example.net"),
            next(),
            &paths[..paths.len() * 8 / 10],
        ));
    }
    while summaries.len() < origins {
        let paths = site(&mut next);
        let n = summaries.len();
        summaries.push(summary(&format!("www.other{n}.org"), next(), &paths));
    }
    let before = redis_used_memory(&redis.url()).await;
    let started = Instant::now();
    let shared: Vec<SharedOrigin> = summaries
        .iter()
        .map(|s| SharedOrigin {
            origin: s.origin.clone(),
            signature: postcard::to_stdvec(&OriginSignature::of(s, DEFAULT_SKETCH))
                .expect("encode"),
            summary: postcard::to_stdvec(s).expect("encode"),
        })
        .collect();
    let encoded = started.elapsed();
    let signature_bytes: usize = shared.iter().map(|s| s.signature.len()).sum();
    let summary_bytes: usize = shared.iter().map(|s| s.summary.len()).sum();
    let started = Instant::now();
    fleet
        .summaries
        .share(&shared, &[], Duration::from_secs(3_600))
        .await
        .expect("share");
    let share_time = started.elapsed();
    let after = redis_used_memory(&redis.url()).await;

    // A pass on a sidecar holding none of them (every origin is another sidecar's).
    let started = Instant::now();
    let raw = fleet.summaries.signatures(origins * 2).await.expect("scan");
    let scanned = started.elapsed();
    let started = Instant::now();
    let signatures: Vec<OriginSignature> = raw
        .iter()
        .map(|(_, bytes)| postcard::from_bytes(bytes).expect("decode"))
        .collect();
    let proposed = propose(&signatures, |_| true, &ProposeParams::default());
    let proposing = started.elapsed();
    let name = |i: u32| signatures[i as usize].host.as_str();
    let true_pairs = proposed
        .iter()
        .filter(|p| {
            let (a, b) = (name(p.a), name(p.b));
            let number = |h: &str| {
                h.strip_prefix("www.site")
                    .or_else(|| h.strip_prefix("copy"))
                    .and_then(|h| h.split('.').next())
                    .map(str::to_owned)
            };
            number(a).is_some() && number(a) == number(b) && a != b
        })
        .count();
    let mut wanted: Vec<String> = Vec::new();
    let mut taken = HashSet::new();
    for p in &proposed {
        for i in [p.a, p.b] {
            if taken.insert(i) {
                wanted.push(signatures[i as usize].origin.clone());
            }
        }
    }
    wanted.truncate(2_000);
    let started = Instant::now();
    let fetched = fleet
        .summaries
        .summaries(&wanted, 256 << 20)
        .await
        .expect("fetch");
    let fetching = started.elapsed();
    let fetched_bytes: usize = fetched.iter().map(|(_, b)| b.len()).sum();
    // The baseline: reading every origin's full summary instead (what a pass without
    // signatures would load), the same way (HSCAN, 500 a call).
    let started = Instant::now();
    let client = redis::Client::open(redis.url()).expect("redis url");
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .expect("redis");
    let (mut cursor, mut all_bytes, mut calls) = (0u64, 0usize, 0usize);
    loop {
        let (next, page): (u64, Vec<(String, Vec<u8>)>) = redis::cmd("HSCAN")
            .arg("undust:ms:full")
            .arg(cursor)
            .arg("COUNT")
            .arg(500)
            .query_async(&mut connection)
            .await
            .expect("HSCAN");
        calls += 1;
        all_bytes += page.iter().map(|(_, b)| b.len()).sum::<usize>();
        let _decoded: Vec<HostSummary> = page
            .iter()
            .map(|(_, b)| postcard::from_bytes(b).expect("decode"))
            .collect();
        if next == 0 || calls > origins {
            break;
        }
        cursor = next;
    }
    let everything = started.elapsed();
    let two_stage = scanned + proposing + fetching;
    eprintln!(
        "fleet summaries at scale: two-stage read {two_stage:?} ({} B) vs every full summary \
         {everything:?} ({all_bytes} B, {calls} HSCAN calls): ratio {:.2}",
        signature_bytes + fetched_bytes,
        two_stage.as_secs_f64() / everything.as_secs_f64()
    );
    eprintln!(
        "fleet summaries at scale: {origins} origins; encoded in {encoded:?}: signatures {:.0} B/origin, \
         full summaries {:.0} B/origin; shared in {share_time:?}; Redis used memory +{:.0} B/origin; \
         pass: {} signatures scanned in {scanned:?} ({} HSCAN calls at most), decoded and {} pairs \
         proposed in {proposing:?} ({true_pairs} of {pairs} true pairs among them); {} full summaries \
         ({fetched_bytes} B) fetched in {fetching:?} ({} HMGET calls)",
        signature_bytes as f64 / origins as f64,
        summary_bytes as f64 / origins as f64,
        (after.saturating_sub(before)) as f64 / origins as f64,
        raw.len(),
        origins / undust::fleet::summaries::SCAN_COUNT + 2,
        proposed.len(),
        fetched.len(),
        wanted.len().div_ceil(undust::fleet::summaries::FETCH_CHUNK),
    );
    assert_eq!(raw.len(), origins);
    assert!(
        true_pairs as f64 >= 0.9 * pairs as f64,
        "{true_pairs} of {pairs}"
    );
}
