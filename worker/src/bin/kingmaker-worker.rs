//! `kingmaker-worker`: serves shards of a build to a coordinator over gRPC.

fn main() {
    eprintln!("kingmaker-worker: the gRPC worker service is not built yet");
    std::process::exit(2);
}
