//! The `undust` command: the sidecar (`undust serve`) and the offline tools.
#![forbid(unsafe_code)]

/// jemalloc rather than the system allocator: under a sidecar's churn (hosts giving way to the
/// sample budget, batches allocated and freed on many threads) glibc's malloc kept the freed
/// memory in per-thread arenas, so RSS grew with every host streamed while the live heap stayed
/// at the budget. jemalloc hands it back (BENCHMARKS.md, "Memory per host and per sample").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    undust::cli::main()
}
