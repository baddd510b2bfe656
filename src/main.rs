//! The `undust` command: the sidecar (`undust serve`) and the offline tools.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    undust::cli::main()
}
