//! Compiles `proto/undust/v1/*.proto` with `protox` (a pure-Rust protobuf compiler, so no system
//! `protoc` is needed) and emits the file descriptor set that server reflection serves.
//!
//! It also generates the *lenient* server side of the Canonicalizer and Ingest services
//! (`crate::pb::lenient`): the same services and wire format, but the requests' `string` fields are
//! decoded as `bytes`. prost rejects a message whose `string` field is not UTF-8, which would fail a
//! whole batch (or end a whole ingest stream) for one bad URL; the lenient messages let the server
//! answer that one URL INVALID, or reject that one page, instead. Clients and reflection keep the
//! public proto, unchanged.

use std::path::PathBuf;

use prost_types::field_descriptor_proto::Type;

/// The protos whose services are served leniently, and the request messages decoded leniently.
const LENIENT_PROTOS: [&str; 2] = ["undust/v1/canonicalizer.proto", "undust/v1/ingest.proto"];
const LENIENT_MESSAGES: [&str; 2] = ["CanonicalizeRequest", "ObservedPage"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = [
        "proto/undust/v1/canonicalizer.proto",
        "proto/undust/v1/ingest.proto",
        "proto/undust/v1/admin.proto",
    ];
    for proto in protos {
        println!("cargo:rerun-if-changed={proto}");
    }

    let descriptors = protox::compile(protos, ["proto"])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptor_path = out_dir.join("undust_descriptor.bin");
    std::fs::write(
        &descriptor_path,
        prost::Message::encode_to_vec(&descriptors),
    )?;

    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(descriptors.clone())?;

    // The lenient server side: only the two request messages are new types; every other message
    // is the public one (`crate::pb::…`), so responses are built exactly as before.
    let mut lenient = descriptors;
    lenient
        .file
        .retain(|file| LENIENT_PROTOS.contains(&file.name()));
    let mut builder = tonic_prost_build::configure()
        .build_server(true)
        .build_client(false)
        .out_dir(out_dir.join("lenient"));
    for file in &mut lenient.file {
        let package = file.package().to_owned();
        for message in &mut file.message_type {
            let name = message.name().to_owned();
            if LENIENT_MESSAGES.contains(&name.as_str()) {
                for field in &mut message.field {
                    if field.r#type() == Type::String {
                        field.set_type(Type::Bytes);
                    }
                }
            } else {
                builder =
                    builder.extern_path(format!(".{package}.{name}"), format!("crate::pb::{name}"));
            }
        }
        for enumeration in &file.enum_type {
            let name = enumeration.name();
            builder =
                builder.extern_path(format!(".{package}.{name}"), format!("crate::pb::{name}"));
        }
    }
    std::fs::create_dir_all(out_dir.join("lenient"))?;
    builder.compile_fds(lenient)?;
    Ok(())
}
