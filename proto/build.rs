//! Compile proto/kingmaker.proto with protox (a protobuf compiler in Rust: no protoc needed) and
//! generate the tonic client and server with tonic-prost-build.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/kingmaker.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
