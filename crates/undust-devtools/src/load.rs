//! `undust load`: a bounded load generator for a running sidecar, on loopback only.
//!
//! It drives `Canonicalize` with batches of generated URLs (forum, shop and news shapes with
//! tracking and session parameters, a share of repeats) from several connections for a bounded
//! time and request count, and reports URLs per second and batch latency percentiles. With
//! `--probe`, a concurrent single-URL caller measures the latency a frontier sees for one URL.
//! With `--relearn-pages N`, it first streams N generated pages of one host to Ingest and forces a
//! relearn of that host in the middle of the run, so the probe measures latency while learning
//! runs. With `--ingest-hosts N`, it instead streams `--ingest-pages-per-host` generated pages of
//! each of N distinct hosts to Ingest (the memory a crawl of many hosts costs the sidecar) and
//! stops. With `--ingest-throughput N`, it streams N generated pages of 14 sites to Ingest from
//! `--connections` streams at once and reports pages per second. With `--shared-batch-bytes N`,
//! every caller sends one shared, prebuilt batch of about N bytes ([`shared_batch`]). Batch calls
//! answered
//! RESOURCE_EXHAUSTED (the sidecar shedding load) are counted and the caller goes on; any other
//! failure stops the run. Targets other than loopback addresses are refused.

mod shared_batch;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tonic::transport::Endpoint;

use crate::corpus::{self, CorpusConfig, Site, SiteKind};
use crate::pb::admin_client::AdminClient;
use crate::pb::canonicalizer_client::CanonicalizerClient;
use crate::pb::ingest_client::IngestClient;
use crate::pb::{CanonicalizeRequest, ObservedPage, RelearnRequest};
use crate::{EXIT_SOFTWARE, EXIT_USAGE};

/// Longest run allowed.
const MAX_SECONDS: u64 = 600;
/// Most hosts `--ingest-hosts` may stream.
const MAX_INGEST_HOSTS: usize = 10_000_000;
/// Most pages per host `--ingest-pages-per-host` may stream.
const MAX_INGEST_PAGES_PER_HOST: usize = 1_000;
/// Pages per Ingest stream in `--ingest-hosts` mode (the sidecar acknowledges a stream once its
/// samples are durable, so streams of this size keep commits few).
const INGEST_PAGES_PER_STREAM: usize = 2_000;
/// Pages of each generated site whose renderings are spread over the `--ingest-hosts` hosts.
const INGEST_SITE_PAGES: usize = 300;

/// Flags of `undust load`.
#[derive(Debug, clap::Args)]
pub struct LoadArgs {
    /// Canonicalizer address (loopback only).
    #[arg(long, default_value = "127.0.0.1:50051")]
    addr: SocketAddr,
    /// Admin address (for `--relearn-pages`).
    #[arg(long, default_value = "127.0.0.1:50052")]
    admin_addr: SocketAddr,
    /// File holding the admin write token (for `--relearn-pages`).
    #[arg(long)]
    admin_token_file: Option<PathBuf>,
    /// How long to run, in seconds (at most 600).
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Stop after this many batches in all.
    #[arg(long, default_value_t = 1_000_000)]
    max_batches: u64,
    /// URLs per batch.
    #[arg(long, default_value_t = 1_000)]
    batch: usize,
    /// Concurrent batch callers (each on its own connection).
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Distinct URLs generated (batches cycle through them; repeats become duplicates).
    #[arg(long, default_value_t = 2_000_000)]
    distinct_urls: usize,
    /// Also measure single-URL call latency, this many calls per second.
    #[arg(long, default_value_t = 0)]
    probe: u64,
    /// Stream this many pages of one generated host before the run and relearn it mid-run.
    #[arg(long, default_value_t = 0)]
    relearn_pages: usize,
    /// Dry-run batches (record nothing).
    #[arg(long)]
    dry_run: bool,
    /// Instead of Canonicalize batches, stream pages of this many distinct generated hosts to
    /// Ingest, from `--connections` streams at once, then stop (at most 10,000,000 hosts).
    #[arg(long, default_value_t = 0)]
    ingest_hosts: usize,
    /// Pages per host in `--ingest-hosts` mode (1..=1000).
    #[arg(long, default_value_t = 3)]
    ingest_pages_per_host: usize,
    /// Instead of Canonicalize batches, stream this many generated pages (a crawl of 14 sites,
    /// hosts interleaved) to Ingest from `--connections` streams and report pages per second
    /// (at most 200,000; the run also ends at `--seconds`).
    #[arg(long, default_value_t = 0)]
    ingest_throughput: usize,
    /// Instead of generated batches, every caller sends one shared batch of about this many
    /// encoded bytes, built once (the load tool holds one copy whatever `--connections`), at most
    /// 512 MiB; the sidecar needs a `--max-batch` and `--max-message-bytes` that admit it.
    #[arg(long, default_value_t = 0)]
    shared_batch_bytes: usize,
    /// With `--shared-batch-bytes`: each call's deadline in milliseconds (sent as `grpc-timeout`;
    /// the caller gives up at it); 0 for none.
    #[arg(long, default_value_t = 0)]
    deadline_ms: u64,
}

/// Most pages `--ingest-throughput` renders (they are held in memory, about 5 KB each).
const MAX_THROUGHPUT_PAGES: usize = 200_000;
/// Pages per ObservePages call in `--ingest-throughput` mode (each call ends with the sidecar
/// making its samples durable, as a crawler's batches would).
const THROUGHPUT_PAGES_PER_CALL: usize = 2_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// Deterministic URL mix in the shapes crawlers meet: forum, shop, news and documentation URLs
/// over 500 hosts each, three in ten carrying tracking or session parameters or a fragment (the
/// rest already clean, as most extracted links are).
fn url_mix(count: usize) -> Vec<String> {
    let mut urls = Vec::with_capacity(count);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..count {
        let r = next();
        let host = r % 500;
        let dirty = i % 10 < 3;
        let url = match (i % 4, dirty) {
            (0, true) => format!(
                "https://forum{host}.example/showthread.php?t={}&sid={:032x}",
                r % 100_000,
                next()
            ),
            (0, false) => format!(
                "https://forum{host}.example/showthread.php?t={}&page={}",
                r % 100_000,
                r % 5 + 1
            ),
            (1, true) => format!(
                "https://shop{host}.example/product/{}?utm_source=news&utm_medium=email&ref={}",
                r % 1_000_000,
                r % 7
            ),
            (1, false) => format!(
                "https://shop{host}.example/product/{}/colour-{}",
                r % 1_000_000,
                r % 7
            ),
            (2, true) => format!(
                "http://www.news{host}.example/2024/05/{:02}/story-{}/?output=amp#comments",
                r % 28 + 1,
                r % 50_000
            ),
            (2, false) => format!(
                "https://www.news{host}.example/2024/05/{:02}/story-{}/",
                r % 28 + 1,
                r % 50_000
            ),
            (_, true) => format!(
                "https://docs{host}.example/v{}/guide/page-{}.html?lang=en&fbclid={:x}",
                r % 3,
                r % 20_000,
                next()
            ),
            (_, false) => format!(
                "https://docs{host}.example/v{}/guide/page-{}.html?lang=en",
                r % 3,
                r % 20_000
            ),
        };
        urls.push(url);
    }
    urls
}

/// Runs `undust load`.
pub fn run(args: LoadArgs) -> ExitCode {
    for addr in [args.addr, args.admin_addr] {
        if !addr.ip().is_loopback() {
            eprintln!("undust load: {addr} is not a loopback address; the load tool only targets this machine");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    if args.seconds == 0
        || args.seconds > MAX_SECONDS
        || args.batch == 0
        || args.connections == 0
        || args.distinct_urls == 0
    {
        eprintln!("undust load: --seconds must be 1..={MAX_SECONDS}; --batch, --connections, --distinct-urls at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    if args.ingest_hosts > MAX_INGEST_HOSTS
        || !(1..=MAX_INGEST_PAGES_PER_HOST).contains(&args.ingest_pages_per_host)
    {
        eprintln!("undust load: --ingest-hosts must be at most {MAX_INGEST_HOSTS}, --ingest-pages-per-host 1..={MAX_INGEST_PAGES_PER_HOST}");
        return ExitCode::from(EXIT_USAGE);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("undust load: {err}");
            return ExitCode::from(EXIT_SOFTWARE);
        }
    };
    if args.ingest_throughput > MAX_THROUGHPUT_PAGES {
        eprintln!("undust load: --ingest-throughput must be at most {MAX_THROUGHPUT_PAGES}");
        return ExitCode::from(EXIT_USAGE);
    }
    if args.shared_batch_bytes > shared_batch::MAX_SHARED_BATCH_BYTES {
        eprintln!(
            "undust load: --shared-batch-bytes must be at most {}",
            shared_batch::MAX_SHARED_BATCH_BYTES
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let result = if args.ingest_hosts > 0 {
        runtime.block_on(ingest_hosts(args))
    } else if args.ingest_throughput > 0 {
        runtime.block_on(ingest_throughput(args))
    } else {
        runtime.block_on(drive(args))
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("undust load: {err}");
            ExitCode::from(EXIT_SOFTWARE)
        }
    }
}

async fn drive(args: LoadArgs) -> Result<(), String> {
    let endpoint = Endpoint::from_shared(format!("http://{}", args.addr))
        .map_err(|e| e.to_string())?
        .initial_stream_window_size(Some(4 * 1024 * 1024))
        .initial_connection_window_size(Some(16 * 1024 * 1024));
    if args.shared_batch_bytes > 0 {
        return shared_batch::drive_shared(&args, endpoint).await;
    }
    let relearn_host = if args.relearn_pages > 0 {
        Some(prepare_relearn(&args, &endpoint).await?)
    } else {
        None
    };
    let urls = Arc::new(url_mix(args.distinct_urls));
    eprintln!(
        "undust load: {} distinct URLs, batches of {}, {} connections, {} s",
        urls.len(),
        args.batch,
        args.connections,
        args.seconds
    );
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let batches = Arc::new(AtomicU64::new(0));
    let sent_urls = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let exhausted = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut callers = Vec::new();
    for worker in 0..args.connections {
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| format!("connect {}: {e}", args.addr))?;
        let mut client =
            CanonicalizerClient::new(channel).max_decoding_message_size(256 * 1024 * 1024);
        let (urls, batches, sent_urls, latencies, exhausted, stop) = (
            Arc::clone(&urls),
            Arc::clone(&batches),
            Arc::clone(&sent_urls),
            Arc::clone(&latencies),
            Arc::clone(&exhausted),
            Arc::clone(&stop),
        );
        let (batch, max_batches, dry_run) = (args.batch, args.max_batches, args.dry_run);
        callers.push(tokio::spawn(async move {
            let mut offset = worker * batch;
            let mut local = Vec::new();
            while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
                if batches.fetch_add(1, Ordering::Relaxed) >= max_batches {
                    break;
                }
                let chunk: Vec<String> = (0..batch)
                    .map(|i| urls[(offset + i) % urls.len()].clone())
                    .collect();
                offset = (offset + batch * 7 + 1) % urls.len();
                let at = Instant::now();
                match client
                    .canonicalize(CanonicalizeRequest {
                        urls: chunk,
                        dry_run,
                        sequence: 0,
                        request_id: String::new(),
                    })
                    .await
                {
                    Ok(_) => {
                        local.push(at.elapsed());
                        sent_urls.fetch_add(batch as u64, Ordering::Relaxed);
                    }
                    Err(status) if status.code() == tonic::Code::ResourceExhausted => {
                        // The sidecar shed the batch: a client retries later, so does this one.
                        exhausted.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(status) => {
                        eprintln!("undust load: batch failed: {status}");
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            latencies.lock().extend(local);
        }));
    }
    let probe = if args.probe > 0 {
        let channel = endpoint.connect().await.map_err(|e| e.to_string())?;
        let mut client = CanonicalizerClient::new(channel);
        let (urls, every) = (
            Arc::clone(&urls),
            Duration::from_micros(1_000_000 / args.probe.max(1)),
        );
        Some(tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut ticker = tokio::time::interval(every);
            let mut i = 0usize;
            while Instant::now() < deadline {
                ticker.tick().await;
                let at = Instant::now();
                let request = CanonicalizeRequest {
                    urls: vec![urls[i % urls.len()].clone()],
                    dry_run: true,
                    sequence: 0,
                    request_id: String::new(),
                };
                if client.canonicalize(request).await.is_ok() {
                    samples.push(at.elapsed());
                }
                i += 7919;
            }
            samples
        }))
    } else {
        None
    };
    let relearn = match relearn_host {
        Some(host) => {
            let token = read_token(args.admin_token_file.as_ref())?;
            let admin_addr = args.admin_addr;
            let half = Duration::from_secs(args.seconds) / 3;
            Some(tokio::spawn(async move {
                tokio::time::sleep(half).await;
                let at = Instant::now();
                let result = relearn(admin_addr, &token, &host).await;
                (result, at.elapsed())
            }))
        }
        None => None,
    };
    for caller in callers {
        let _ = caller.await;
    }
    let elapsed = started.elapsed();
    let mut batch_latencies = std::mem::take(&mut *latencies.lock());
    batch_latencies.sort_unstable();
    let total = sent_urls.load(Ordering::Relaxed);
    println!(
        "urls: {total} in {:.2} s = {:.0} URLs/s",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    println!(
        "batch latency: p50 {:?}, p99 {:?}, max {:?} over {} batches",
        percentile(&batch_latencies, 0.5),
        percentile(&batch_latencies, 0.99),
        batch_latencies.last().copied().unwrap_or_default(),
        batch_latencies.len()
    );
    println!(
        "batches answered RESOURCE_EXHAUSTED: {}",
        exhausted.load(Ordering::Relaxed)
    );
    if let Some(probe) = probe {
        let mut samples = probe.await.map_err(|e| e.to_string())?;
        samples.sort_unstable();
        println!(
            "single-URL latency: p50 {:?}, p99 {:?}, max {:?} over {} calls",
            percentile(&samples, 0.5),
            percentile(&samples, 0.99),
            samples.last().copied().unwrap_or_default(),
            samples.len()
        );
    }
    if let Some(relearn) = relearn {
        let (result, took) = relearn.await.map_err(|e| e.to_string())?;
        match result {
            Ok(summary) => println!("relearn during the run: {summary} in {took:?}"),
            Err(err) => println!("relearn during the run failed: {err}"),
        }
    }
    Ok(())
}

/// `--ingest-hosts`: streams pages of many distinct hosts to Ingest. Each host's pages are
/// renderings of a generated site's pages (a few site kinds, in turn) with the site's host name
/// replaced by the host's own, in the URLs and in the HTML's links, so each host has its own
/// template, links and URLs as a crawled site would.
async fn ingest_hosts(args: LoadArgs) -> Result<(), String> {
    let endpoint = Endpoint::from_shared(format!("http://{}", args.addr))
        .map_err(|e| e.to_string())?
        .initial_stream_window_size(Some(4 * 1024 * 1024))
        .initial_connection_window_size(Some(16 * 1024 * 1024));
    let kinds = [
        SiteKind::WordPress,
        SiteKind::PhpBb,
        SiteKind::Storefront,
        SiteKind::NewsRenderings,
        SiteKind::MediaWiki,
    ];
    let corpus = Arc::new(corpus::generate(
        &CorpusConfig::new(17, 1)
            .with_kinds(&kinds)
            .with_pages(INGEST_SITE_PAGES, INGEST_SITE_PAGES),
    ));
    if corpus.sites.iter().any(|site| site.pages.is_empty()) || corpus.sites.is_empty() {
        return Err("the generator made a site without pages".into());
    }
    let (hosts, per_host) = (args.ingest_hosts, args.ingest_pages_per_host);
    eprintln!(
        "undust load: streaming {per_host} pages of each of {hosts} hosts from {} streams",
        args.connections
    );
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let started = Instant::now();
    let mut workers = Vec::new();
    for worker in 0..args.connections {
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| format!("connect {}: {e}", args.addr))?;
        let mut client = IngestClient::new(channel);
        let corpus = Arc::clone(&corpus);
        let connections = args.connections;
        workers.push(tokio::spawn(async move {
            let (mut sent, mut sampled) = (0u64, 0u64);
            let mut pages = Vec::with_capacity(INGEST_PAGES_PER_STREAM);
            let mut host = worker;
            while host < hosts && Instant::now() < deadline {
                pages.extend((0..per_host).map(|page| host_page(&corpus.sites, host, page)));
                host += connections;
                if pages.len() >= INGEST_PAGES_PER_STREAM || host >= hosts {
                    sent += pages.len() as u64;
                    let stream = tokio_stream::iter(std::mem::take(&mut pages));
                    let summary = client
                        .observe_pages(stream)
                        .await
                        .map_err(|status| status.to_string())?
                        .into_inner();
                    sampled += summary.sampled;
                }
            }
            Ok::<_, String>((sent, sampled))
        }));
    }
    let (mut sent, mut sampled) = (0u64, 0u64);
    for worker in workers {
        let (worker_sent, worker_sampled) = worker.await.map_err(|e| e.to_string())??;
        sent += worker_sent;
        sampled += worker_sampled;
    }
    let elapsed = started.elapsed();
    println!(
        "ingest: {sent} pages of {hosts} hosts ({sampled} sampled) in {:.2} s = {:.0} pages/s{}",
        elapsed.as_secs_f64(),
        sent as f64 / elapsed.as_secs_f64(),
        if Instant::now() >= deadline {
            " (stopped at --seconds)"
        } else {
            ""
        }
    );
    Ok(())
}

/// Page `page` of generated host `host` (see [`ingest_hosts`]).
fn host_page(sites: &[Site], host: usize, page: usize) -> ObservedPage {
    let site = &sites[host % sites.len()];
    let source = &site.pages[(host / sites.len() * 7 + page) % site.pages.len()];
    let name = format!("h{host}-{}", site.host);
    let html = corpus::render_html_fetch(site, source, host as u64).replace(&site.host, &name);
    ObservedPage {
        url: source.url.replacen(&site.host, &name, 1),
        http_status: 200,
        content_type: "text/html".into(),
        body: html.into_bytes(),
        server_ip: format!("10.{}.{}.{}", host >> 16 & 255, host >> 8 & 255, host & 255),
        ..ObservedPage::default()
    }
}

fn read_token(path: Option<&PathBuf>) -> Result<String, String> {
    let path = path.ok_or("--relearn-pages needs --admin-token-file (the write token)")?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text.lines().next().unwrap_or_default().trim().to_owned())
}

/// Streams a generated host's pages to Ingest; returns the host.
async fn prepare_relearn(args: &LoadArgs, endpoint: &Endpoint) -> Result<String, String> {
    let corpus = corpus::generate(
        &CorpusConfig::new(7, 1)
            .with_kinds(&[SiteKind::Shop])
            .with_pages(args.relearn_pages, args.relearn_pages),
    );
    let site = corpus.sites.first().ok_or("the generator made no site")?;
    let channel = endpoint.connect().await.map_err(|e| e.to_string())?;
    let mut ingest = IngestClient::new(channel);
    let mut sampled = 0;
    for chunk in site.pages.chunks(5_000) {
        let pages: Vec<ObservedPage> = chunk
            .iter()
            .map(|page| ObservedPage {
                url: page.url.clone(),
                http_status: 200,
                content_type: "text/html".into(),
                body: corpus::render_html(site, page).into_bytes(),
                ..ObservedPage::default()
            })
            .collect();
        let summary = ingest
            .observe_pages(tokio_stream::iter(pages))
            .await
            .map_err(|e| e.to_string())?
            .into_inner();
        sampled += summary.sampled;
    }
    eprintln!(
        "undust load: streamed {} pages of {} ({sampled} sampled)",
        site.pages.len(),
        site.host
    );
    Ok(site.host.clone())
}

async fn relearn(admin: SocketAddr, token: &str, host: &str) -> Result<String, String> {
    let channel = Endpoint::from_shared(format!("http://{admin}"))
        .map_err(|e| e.to_string())?
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    let value: tonic::metadata::MetadataValue<_> = format!("Bearer {token}")
        .parse()
        .map_err(|_| "bad token".to_owned())?;
    let mut client =
        AdminClient::with_interceptor(channel, move |mut request: tonic::Request<()>| {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
            Ok(request)
        });
    let response = client
        .relearn(RelearnRequest {
            host: host.to_owned(),
            wait: true,
        })
        .await
        .map_err(|status| status.to_string())?
        .into_inner();
    let job = response.job.unwrap_or_default();
    Ok(job
        .hosts
        .iter()
        .map(|h| {
            format!(
                "{}: state {} v{} {} rules from {} samples, {} clusters {}",
                h.host, h.state, h.rules_version, h.rules, h.samples, h.clusters, h.error
            )
        })
        .collect::<Vec<_>>()
        .join("; "))
}

/// `--ingest-throughput`: renders the pages first (not timed), then streams them to Ingest, page
/// `i` on stream `i % connections` so each stream keeps the crawl's order, and reports pages and
/// bytes per second from the first page sent to the last summary received.
async fn ingest_throughput(args: LoadArgs) -> Result<(), String> {
    let corpus = corpus::generate(&CorpusConfig::new(7, 2).with_pages(
        args.ingest_throughput.div_ceil(14),
        args.ingest_throughput.div_ceil(14),
    ));
    // Hosts interleaved, as a crawler's frontier sends them.
    let longest = corpus
        .sites
        .iter()
        .map(|s| s.pages.len())
        .max()
        .unwrap_or(0);
    let mut streams: Vec<Vec<ObservedPage>> = vec![Vec::new(); args.connections];
    let (mut rendered, mut bytes) = (0usize, 0u64);
    'render: for at in 0..longest {
        for site in &corpus.sites {
            if rendered == args.ingest_throughput {
                break 'render;
            }
            let Some(page) = site.pages.get(at) else {
                continue;
            };
            let body = corpus::render_html(site, page).into_bytes();
            bytes += body.len() as u64;
            streams[rendered % args.connections].push(ObservedPage {
                url: page.url.clone(),
                http_status: 200,
                content_type: "text/html".into(),
                body,
                ..ObservedPage::default()
            });
            rendered += 1;
        }
    }
    let endpoint = Endpoint::from_shared(format!("http://{}", args.addr))
        .map_err(|e| e.to_string())?
        .initial_stream_window_size(Some(4 * 1024 * 1024))
        .initial_connection_window_size(Some(16 * 1024 * 1024));
    eprintln!(
        "undust load: streaming {rendered} pages ({bytes} bytes) over {} streams",
        args.connections
    );
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let started = Instant::now();
    let mut senders = Vec::new();
    for pages in streams {
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| format!("connect {}: {e}", args.addr))?;
        let mut ingest = IngestClient::new(channel);
        senders.push(tokio::spawn(async move {
            let (mut sent, mut accepted, mut sampled) = (0u64, 0u64, 0u64);
            let mut pages = pages.into_iter().peekable();
            while pages.peek().is_some() && Instant::now() < deadline {
                let call: Vec<ObservedPage> =
                    pages.by_ref().take(THROUGHPUT_PAGES_PER_CALL).collect();
                let summary = ingest
                    .observe_pages(tokio_stream::iter(call))
                    .await
                    .map_err(|e| e.to_string())?
                    .into_inner();
                sent += summary.received;
                accepted += summary.accepted;
                sampled += summary.sampled;
            }
            Ok::<_, String>((sent, accepted, sampled))
        }));
    }
    let (mut sent, mut accepted, mut sampled) = (0u64, 0u64, 0u64);
    for sender in senders {
        let (s, a, k) = sender.await.map_err(|e| e.to_string())??;
        (sent, accepted, sampled) = (sent + s, accepted + a, sampled + k);
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "ingest: {sent} pages ({accepted} accepted, {sampled} sampled) in {seconds:.2} s = {:.0} \
         pages/s ({:.1} MB/s of bodies)",
        sent as f64 / seconds,
        bytes as f64 * (sent as f64 / rendered.max(1) as f64) / seconds / 1e6
    );
    Ok(())
}
