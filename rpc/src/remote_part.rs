//! A kept part read where it is: each read asks the worker that holds the part for the bytes it
//! needs (`ReadPart` with a range), so that `query`, `serve`, `pack` and the rest read a layer
//! that stayed on its workers without copying it (the blocks read are checked as any are).

use super::auth::AddToken;
use super::connect::{connect, Client};
use super::status::status_message;
use kingmaker_proto::v1 as pb;
use kingmaker_tablefmt::layer::ReadAt;
use std::io::{Error, ErrorKind};
use std::time::Duration;

/// The bytes of one kept part on its worker.
pub struct RemotePart {
    addr: String,
    run_id: String,
    file: String,
    client: Client,
    /// The gRPC calls run here; a read waits for its call, from any thread (a reader's rayon
    /// threads, or a server's async handlers, which must not start a runtime of their own).
    runtime: tokio::runtime::Runtime,
}

impl RemotePart {
    /// Connect to the worker at `addr` holding `file` of run `run_id`.
    pub fn connect(
        addr: &str,
        token: &str,
        run_id: &str,
        file: &str,
    ) -> Result<RemotePart, String> {
        let token = AddToken::new(token)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("starting the network runtime: {e}"))?;
        let addr_owned = addr.to_string();
        let client = run(&runtime, async move {
            connect(&addr_owned, &token, Duration::from_secs(30)).await
        })??;
        Ok(RemotePart {
            addr: addr.to_string(),
            run_id: run_id.to_string(),
            file: file.to_string(),
            client,
            runtime,
        })
    }
}

/// Run `fut` on `runtime` and wait for it, whatever thread this is.
fn run<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    fut: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv()
        .map_err(|_| "the network runtime stopped".to_string())
}

impl ReadAt for RemotePart {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let mut client = self.client.clone();
        let request = pb::ReadPartRequest {
            run_id: self.run_id.clone(),
            file: self.file.clone(),
            offset,
            length: buf.len() as u64,
        };
        let addr = self.addr.clone();
        let want = buf.len();
        let bytes = run(&self.runtime, async move {
            let fail = |s: tonic::Status| format!("worker {addr}: {}", status_message(&s));
            let mut stream = client.read_part(request).await.map_err(fail)?.into_inner();
            let mut bytes = Vec::with_capacity(want);
            while let Some(chunk) = stream.message().await.map_err(fail)? {
                bytes.extend_from_slice(&chunk.data);
                if bytes.len() > want {
                    break;
                }
            }
            Ok::<_, String>(bytes)
        })
        .and_then(|r| r)
        .map_err(|e| Error::other(format!("{}: {e}", self.file)))?;
        if bytes.len() != want {
            return Err(Error::new(
                ErrorKind::UnexpectedEof,
                format!(
                    "{} on worker {}: {} bytes at {offset} asked, {} sent",
                    self.file,
                    self.addr,
                    want,
                    bytes.len()
                ),
            ));
        }
        buf.copy_from_slice(&bytes);
        Ok(())
    }
}
