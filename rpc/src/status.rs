//! gRPC statuses both ways: the status a worker returns for a kernel error, and a failed call as
//! words an operator can act on or as the kernel error the driver sees.

use crate::convert::Convert;
use kingmaker_kernel::KernelError;
use tokio::sync::watch;
use tonic::{Code, Status};

/// A kernel error as a status. A damaged or missing checkpoint chunk (a format error) is
/// DATA_LOSS, so the coordinator knows it may fall back to an older checkpoint; the message names
/// the chunk.
impl Convert<KernelError> for Status {
    fn convert(err: KernelError) -> Status {
        match err {
            KernelError::Format(e) => Status::data_loss(e.to_string()),
            KernelError::CheckpointRefused(message) => {
                let mut metadata = tonic::metadata::MetadataMap::new();
                metadata.insert(REFUSED_METADATA, "1".parse().expect("an ASCII value"));
                Status::with_metadata(Code::FailedPrecondition, message, metadata)
            }
            err => Status::internal(err.to_string()),
        }
    }
}

/// A status in words: its code and message (and, for transport errors, their cause).
pub fn describe_status(status: &Status) -> String {
    use std::error::Error;
    let mut text = format!("{:?}: {}", status.code(), status.message());
    let mut source = status.source();
    while let Some(s) = source {
        // Transport errors repeat their cause at every level: keep each piece once.
        let piece = s.to_string();
        if !text.contains(&piece) {
            text = format!("{text}: {piece}");
        }
        source = s.source();
    }
    text
}

/// A failed call to a worker, in words an operator can act on.
pub fn status_message(status: &Status) -> String {
    match status.code() {
        Code::Unauthenticated => {
            "refused our token: give the coordinator the token the workers were started with \
                                  (--token or KINGMAKER_TOKEN)"
                .to_string()
        }
        Code::Unavailable | Code::Cancelled | Code::Unknown if is_transport(status) => {
            format!(
                "is unreachable: it died, was killed or lost the network ({})",
                describe_status(status)
            )
        }
        _ => describe_status(status),
    }
}

/// A transport failure (connection refused or reset), as opposed to an error the worker returned.
pub fn is_transport(status: &Status) -> bool {
    use std::error::Error;
    status.code() == Code::Unavailable || status.source().is_some()
}

/// The metadata key of a checkpoint a worker refused as another run's (of another game or
/// layer, [`KernelError::CheckpointRefused`]): the coordinator reports it, it does not fall back.
pub const REFUSED_METADATA: &str = "kingmaker-checkpoint-refused";

/// Whether `status` is a worker's refusal of a checkpoint as another run's.
pub fn is_refused(status: &Status) -> bool {
    status.metadata().get(REFUSED_METADATA).is_some()
}

/// The call `what` to `worker` failed with `status`: the kernel error the driver sees.
pub fn call_failed(worker: &str, what: &str, status: &Status) -> KernelError {
    if is_refused(status) {
        return KernelError::CheckpointRefused(format!("worker {worker}: {}", status.message()));
    }
    if status.code() == Code::DataLoss && !is_transport(status) {
        // A damaged or missing checkpoint chunk on the worker: keep the meaning of the kernel's
        // format error, so the run falls back to an older checkpoint.
        return KernelError::Format(kingmaker_tablefmt::FormatError::Corrupt(format!(
            "worker {worker}: {what}: {}",
            status.message()
        )));
    }
    let message = if is_transport(status) || status.code() == Code::Unauthenticated {
        status_message(status)
    } else {
        format!("{what} failed: {}", status_message(status))
    };
    KernelError::Worker {
        worker: worker.to_string(),
        message,
    }
}

/// The metadata key of a failure caused by a peer: its worker number (see the protocol's "Blame").
pub const PEER_METADATA: &str = "kingmaker-peer";

/// `status` (a peer's answer, or the failure to reach it) as this worker's own failure, caused by
/// worker number `peer`: the same code, the message `message`, and the peer named in the
/// metadata so that the coordinator blames it.
pub fn caused_by_peer(status: &Status, peer: usize, message: String) -> Status {
    let mut metadata = tonic::metadata::MetadataMap::new();
    metadata.insert(PEER_METADATA, peer.into());
    let code = if is_transport(status) {
        Code::Unavailable
    } else {
        status.code()
    };
    Status::with_metadata(code, message, metadata)
}

/// The worker number of the peer a failed call blames, if it blames one.
pub fn peer_at_fault(status: &Status) -> Option<usize> {
    status
        .metadata()
        .get(PEER_METADATA)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Wait until `abort` carries a reason, and return it; `dropped` when its sender is gone (the
/// run was dropped). Both ends use it: the worker's router, the coordinator's heartbeats.
pub async fn aborted<T: Clone>(abort: &mut watch::Receiver<Option<T>>, dropped: T) -> T {
    match abort.wait_for(|r| r.is_some()).await {
        Ok(reason) => reason.clone().unwrap_or(dropped),
        Err(_) => dropped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_well() {
        let s = status_message(&Status::unauthenticated("missing or wrong token"));
        assert!(s.contains("--token or KINGMAKER_TOKEN"), "{s}");
        let s = status_message(&Status::unavailable("connection refused"));
        assert!(s.contains("unreachable"), "{s}");
        let s = status_message(&Status::internal("boom"));
        assert!(s.contains("boom"), "{s}");
    }

    #[test]
    fn a_refused_checkpoint_travels_as_a_refusal() {
        let refused = Status::convert(KernelError::CheckpointRefused("of connect 4".into()));
        let http = refused.into_http::<()>();
        let back = Status::from_header_map(http.headers()).expect("a status");
        assert!(is_refused(&back));
        let err = call_failed("h:1", "restoring", &back);
        assert!(
            err.is_refused() && err.to_string().contains("of connect 4"),
            "{err}"
        );
        assert!(!is_refused(&Status::data_loss("chunk")));
    }

    #[test]
    fn a_peer_at_fault_travels_in_the_metadata() {
        let full = Status::internal("/data/r/solo/replicas/worker-0/c: No space left on device");
        let relayed = caused_by_peer(&full, 1, "its replica could not be stored".into());
        assert_eq!(relayed.code(), Code::Internal);
        // Through the wire: the metadata survive as headers.
        let http = relayed.clone().into_http::<()>();
        let back = Status::from_header_map(http.headers()).expect("a status");
        assert_eq!(peer_at_fault(&back), Some(1));
        assert_eq!(peer_at_fault(&full), None);
    }
}
