//! A kept part read where it is: each read asks the worker that holds the part for the bytes it
//! needs (`ReadPart` with a range), so that `query`, `serve`, `pack` and the rest read a layer
//! that stayed on its workers without copying it (the blocks read are checked as any are). A
//! worker that does not answer within [`READ_TIMEOUT`] (stopped, or cut off) fails the read.

use kingmaker_proto::v1 as pb;
use kingmaker_rpc::auth::AddToken;
use kingmaker_rpc::auth::TOKEN_ENV;
use kingmaker_rpc::connect::keep_alive_for;
use kingmaker_rpc::connect::{connect, Client};
use kingmaker_rpc::status::status_message;
use kingmaker_tablefmt::layer::ReadAt;
use std::io::{Error, ErrorKind};
use std::time::Duration;
use tonic::{Code, Status};

/// How long a read of a part (connecting, or one range asked and sent) may take: a range is a
/// block or the file's index, so a worker that takes longer is not answering.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

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
            let connecting = connect(&addr_owned, &token, keep_alive_for(READ_TIMEOUT));
            tokio::time::timeout(READ_TIMEOUT, connecting)
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "worker {addr_owned} did not answer within {} s (stopped, or cut off?)",
                        READ_TIMEOUT.as_secs()
                    ))
                })
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
        // The caller names the part: the messages name the worker and what went wrong.
        let bytes = run(&self.runtime, async move {
            let fail = |s: Status| format!("worker {addr}: {}", read_failed(&s));
            let silent = format!(
                "worker {addr} did not answer within {} s (stopped, or cut off?)",
                READ_TIMEOUT.as_secs()
            );
            let reading = async move {
                let mut stream = client.read_part(request).await.map_err(fail)?.into_inner();
                let mut bytes = Vec::with_capacity(want);
                while let Some(chunk) = stream.message().await.map_err(fail)? {
                    bytes.extend_from_slice(&chunk.data);
                    if bytes.len() > want {
                        break;
                    }
                }
                Ok::<_, String>(bytes)
            };
            tokio::time::timeout(READ_TIMEOUT, reading)
                .await
                .unwrap_or(Err(silent))
        })
        .and_then(|r| r)
        .map_err(Error::other)?;
        if bytes.len() != want {
            return Err(Error::new(
                ErrorKind::UnexpectedEof,
                format!(
                    "worker {}: {} bytes at {offset} asked, {} sent",
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

/// A failed read in words: a wrong token names the variable readers take it from (they have no
/// `--token`); anything else as the coordinator says it.
fn read_failed(status: &Status) -> String {
    match status.code() {
        Code::Unauthenticated => format!(
            "refused the token in {TOKEN_ENV}: set it to the token the workers were started with"
        ),
        _ => status_message(status),
    }
}
