//! The coordinator's watch on its workers: a heartbeat per worker, on a connection of its own, and
//! the abort signal it raises when a worker stalls, dies, restarts or abandons the run. Every
//! pending call of the run waits on that signal too, so the driver fails within seconds.

use kingmaker_proto::v1 as pb;
use kingmaker_rpc::connect::Client;
use kingmaker_rpc::status::status_message;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Why the run was stopped: the worker at fault and what happened.
pub(super) type Abort = Option<(String, String)>;

/// Wait until the run is aborted; the worker at fault and the reason.
pub(super) async fn aborted(rx: &mut watch::Receiver<Abort>) -> (String, String) {
    let dropped = ("coordinator".to_string(), "the run was dropped".to_string());
    kingmaker_rpc::status::aborted(rx, dropped).await
}

/// Heartbeat one worker until the task is aborted; stop the run when it stalls, dies, restarts
/// or abandons the run.
pub(super) async fn heartbeat_loop(
    addr: String,
    mut client: Client,
    run_id: String,
    abort: watch::Sender<Abort>,
    interval: Duration,
    timeout: Duration,
) {
    let mut last_ok = Instant::now();
    let mut last_error = String::from("no answer");
    // Whether this worker has reported our run (it does once its first layer is open).
    let mut seen_ours = false;
    let stop = |reason: String| {
        abort.send_if_modified(|a| {
            if a.is_none() {
                tracing::error!("worker {addr}: {reason}");
                *a = Some((addr.clone(), reason));
                true
            } else {
                false
            }
        });
    };
    loop {
        tokio::time::sleep(interval).await;
        let request = pb::HeartbeatRequest {
            run_id: run_id.clone(),
        };
        match tokio::time::timeout(timeout, client.heartbeat(request)).await {
            Ok(Ok(reply)) => {
                let reply = reply.into_inner();
                // A resumed run may find its workers still holding the layer the killed coordinator
                // left (abandoned when their lease ran out): that failure is old news until the
                // layer is opened again.
                if !reply.failure.is_empty() && reply.run_id == run_id && seen_ours {
                    return stop(format!("abandoned the run: {}", reply.failure));
                }
                if reply.run_id == run_id && reply.failure.is_empty() {
                    seen_ours = true;
                } else if seen_ours {
                    return stop(format!(
                        "no longer works on run {run_id} (it reports {:?}): it restarted or was taken over",
                        reply.run_id
                    ));
                }
                last_ok = Instant::now();
            }
            Ok(Err(status)) => last_error = status_message(&status),
            Err(_) => last_error = format!("no answer within {:.1}s", timeout.as_secs_f64()),
        }
        let silent = last_ok.elapsed();
        if silent > timeout {
            return stop(format!(
                "has not answered heartbeats for {:.1}s (last: {last_error}); the run stopped",
                silent.as_secs_f64()
            ));
        }
    }
}
