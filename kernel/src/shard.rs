//! Shards: contiguous ranges of the index space, each owned by one worker. The kernel keeps six
//! bits per state of a shard while solving ([`super::cells`]) and a wave log per shard
//! ([`super::wave_log`]).

/// How the index space `[0, size)` is cut into shards of `shard_size` states (the last may be
/// shorter).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShardPlan {
    /// Size of the index space.
    pub size: u64,
    /// States per shard, a multiple of 64.
    pub shard_size: u64,
}

impl ShardPlan {
    /// Largest shard size kept: larger ones give the same plan (one shard holds any index space
    /// this code can solve) and would overflow the rounding and the range ends.
    const MAX_SHARD_SIZE: u64 = 1 << 62;

    /// Shard sizes are rounded up to a multiple of 64 so wave-log bitmap words never straddle
    /// shards, and kept within `64..=2^62` so that no value can overflow.
    pub fn new(size: u64, shard_size: u64) -> ShardPlan {
        let shard_size = shard_size.clamp(64, Self::MAX_SHARD_SIZE).div_ceil(64) * 64;
        ShardPlan { size, shard_size }
    }
    /// Number of shards (at least one, even for an empty index space).
    pub fn shards(&self) -> usize {
        self.size.div_ceil(self.shard_size.max(1)).max(1) as usize
    }
    /// The shard that holds `index`.
    #[inline]
    pub fn shard_of(&self, index: u64) -> usize {
        // On the hot path (twice per update): a shift for the usual power-of-two sizes.
        if self.shard_size.is_power_of_two() {
            (index >> self.shard_size.trailing_zeros()) as usize
        } else {
            (index / self.shard_size) as usize
        }
    }
    /// The indices of shard `shard` (empty past the last shard).
    pub fn range(&self, shard: usize) -> std::ops::Range<u64> {
        let start = (shard as u64)
            .saturating_mul(self.shard_size)
            .min(self.size);
        start..start.saturating_add(self.shard_size).min(self.size)
    }
}

#[cfg(test)]
mod tests {
    use super::ShardPlan;

    /// Any shard size and any index space give a plan whose shards cover `[0, size)` in order,
    /// without overflow or a division by zero: `--shard-size` takes any u64, up to `u64::MAX`.
    #[test]
    fn shard_plans_never_overflow() {
        for size in [0, 1, 64, 1662, 1 << 40, u64::MAX - 1, u64::MAX] {
            for shard_size in [
                0,
                1,
                63,
                64,
                65,
                1 << 24,
                (1 << 62) + 1,
                u64::MAX - 63,
                u64::MAX,
            ] {
                let plan = ShardPlan::new(size, shard_size);
                assert!(plan.shard_size >= 64 && plan.shard_size.is_multiple_of(64));
                let shards = plan.shards();
                assert!(shards >= 1);
                // Consecutive ranges, the first from 0 and the last to `size` (the first and the
                // last few shards: there may be 2^58 of them).
                assert_eq!(plan.range(0).start, 0);
                assert_eq!(plan.range(shards - 1).end, size, "{size} {shard_size}");
                let ends = (0..shards.min(4)).chain(shards.saturating_sub(4)..shards);
                for s in ends.filter(|&s| s > 0) {
                    let (a, b) = (plan.range(s - 1), plan.range(s));
                    assert_eq!(a.end, b.start, "{size} {shard_size} shard {s}");
                    assert!(b.end > b.start, "{size} {shard_size} shard {s} is empty");
                }
                if size > 0 {
                    assert_eq!(plan.shard_of(size - 1), shards - 1, "{size} {shard_size}");
                    assert_eq!(plan.shard_of(0), 0);
                }
            }
        }
    }
}
