//! Protobuf ↔ kernel: every conversion between the protocol's messages and the kernel's types,
//! used by both ends (the worker's server and the coordinator's cluster and remote workers).
//! Shard arrays and update batches have encodings of their own, in `wire`.

use kingmaker_kernel::{ClosedWave, Layer, ShardPlan, WaveStats};
use kingmaker_proto::v1 as pb;

/// `From` for the conversions of this crate: between kingmaker-proto's messages and
/// kingmaker-kernel's types, where the orphan rule allows no `From` impl (neither side is ours).
pub trait Convert<T> {
    /// `value` as this type.
    fn convert(value: T) -> Self;
}

/// `TryFrom`, likewise.
pub trait TryConvert<T>: Sized {
    /// Why a value does not convert.
    type Error;
    /// `value` as this type, or why not.
    fn try_convert(value: T) -> Result<Self, Self::Error>;
}

impl Convert<&Layer> for pb::LayerSpec {
    fn convert(layer: &Layer) -> pb::LayerSpec {
        pb::LayerSpec {
            name: layer.name.clone(),
            coalition: layer.coalition.into(),
            objective: layer.objective,
        }
    }
}

/// The coalition is a bit mask of at most eight players: a mask with higher bits is refused
/// (a newer coordinator's layer this worker cannot solve), not cut down to another layer.
impl TryConvert<&pb::LayerSpec> for Layer {
    type Error = String;
    fn try_convert(spec: &pb::LayerSpec) -> Result<Layer, String> {
        let coalition = u8::try_from(spec.coalition).map_err(|_| {
            format!(
                "layer {:?}: coalition mask {:#x} names players beyond the eighth",
                spec.name, spec.coalition
            )
        })?;
        Ok(Layer::new(&spec.name, coalition, spec.objective))
    }
}

impl Convert<ShardPlan> for pb::ShardPlan {
    fn convert(plan: ShardPlan) -> pb::ShardPlan {
        pb::ShardPlan {
            size: plan.size,
            shard_size: plan.shard_size,
        }
    }
}

/// Through [`ShardPlan::new`], which rounds and bounds the shard size.
impl Convert<pb::ShardPlan> for ShardPlan {
    fn convert(plan: pb::ShardPlan) -> ShardPlan {
        ShardPlan::new(plan.size, plan.shard_size)
    }
}

/// A worker without a wire (never the case on this transport) reports 0 bytes sent.
impl Convert<ClosedWave> for pb::CloseWaveReply {
    fn convert(closed: ClosedWave) -> pb::CloseWaveReply {
        let ClosedWave {
            decided,
            stats,
            wire_bytes,
        } = closed;
        pb::CloseWaveReply {
            decided,
            stats: Some(pb::WaveStats {
                expanded: stats.expanded,
                applied: stats.applied,
                sent: stats.sent,
                bytes_sent: wire_bytes.unwrap_or(0),
                sent_states: stats.sent_states,
            }),
        }
    }
}

/// A remote worker always has a wire: missing stats count as zeros, bytes included.
impl Convert<pb::CloseWaveReply> for ClosedWave {
    fn convert(reply: pb::CloseWaveReply) -> ClosedWave {
        let s = reply.stats.unwrap_or_default();
        ClosedWave {
            decided: reply.decided,
            stats: WaveStats {
                expanded: s.expanded,
                applied: s.applied,
                sent: s.sent,
                sent_states: s.sent_states,
            },
            wire_bytes: Some(s.bytes_sent),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_types_round_trip() {
        let layer = Layer::new("enable_ab", 0b011, 0b010);
        assert_eq!(
            Layer::try_convert(&pb::LayerSpec::convert(&layer)).unwrap(),
            layer
        );
        let wide = pb::LayerSpec {
            coalition: 0x1_03,
            ..pb::LayerSpec::convert(&layer)
        };
        let err = Layer::try_convert(&wide).unwrap_err();
        assert!(err.contains("beyond the eighth"), "{err}");
        let plan = ShardPlan::new(1_000_003, 4096);
        assert_eq!(ShardPlan::convert(pb::ShardPlan::convert(plan)), plan);
        let closed = ClosedWave {
            decided: 17,
            stats: WaveStats {
                expanded: 5,
                applied: 40,
                sent: 12,
                sent_states: 3,
            },
            wire_bytes: Some(300),
        };
        assert_eq!(
            ClosedWave::convert(pb::CloseWaveReply::convert(closed)),
            closed
        );
        let empty = ClosedWave::convert(pb::CloseWaveReply {
            decided: 3,
            stats: None,
        });
        assert_eq!(empty.stats, WaveStats::default());
        assert_eq!(empty.wire_bytes, Some(0));
    }
}
