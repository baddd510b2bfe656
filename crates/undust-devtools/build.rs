//! Compiles the clients of `proto/undust/v1` (the load generator drives a running sidecar) with
//! `protox`, as the service crate's `build.rs` does for its servers.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = [
        "../../proto/undust/v1/canonicalizer.proto",
        "../../proto/undust/v1/ingest.proto",
        "../../proto/undust/v1/admin.proto",
    ];
    for proto in protos {
        println!("cargo:rerun-if-changed={proto}");
    }
    let descriptors = protox::compile(protos, ["../../proto"])?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(true)
        .compile_fds(descriptors)?;
    Ok(())
}
