import RichPush

/// When each emulated device receives the push, relative to the start of the run.
///
/// Offsets depend only on the device's global index, the model and the seed, so every shard of a
/// run computes the same schedule and `report merge` reassembles exactly the full run.
package struct ArrivalSchedule: Sendable, Equatable {
    package enum Model: Sendable, Equatable {
        /// Every device at once: the campaign's synchronous spike.
        case burst
        /// Devices spread evenly over a ramp of this length.
        case ramp(Duration)
        /// Devices arriving at a fixed rate per second.
        case rate(Double)
    }

    package var devices: Int
    package var model: Model
    /// Each device's arrival is delayed by a uniform random amount in `0..<jitter`.
    package var jitter: Duration
    /// Seed for the jitter (reproducible runs).
    package var seed: UInt64

    package init(devices: Int, model: Model = .burst, jitter: Duration = .zero, seed: UInt64 = 1) {
        self.devices = devices
        self.model = model
        self.jitter = jitter
        self.seed = seed
    }

    /// The arrival offset of device `index` (0-based, global across shards).
    package func offset(of index: Int) -> Duration {
        var base: Duration
        switch model {
        case .burst: base = .zero
        case .ramp(let length): base = devices > 1 ? length * (Double(index) / Double(devices)) : .zero
        case .rate(let perSecond): base = .seconds(Double(index) / perSecond)
        }
        if jitter > .zero {
            base += jitter * Self.unitRandom(seed: seed, index: UInt64(index))
        }
        return base
    }

    /// The global indices of shard `shard` (1-based) of `count`: every count-th device, so each shard
    /// spreads over the whole schedule and carries an equal share of it.
    package static func indices(devices: Int, shard: Int, of count: Int) -> StrideTo<Int> {
        stride(from: shard - 1, to: devices, by: count)
    }

    /// A deterministic uniform value in 0..<1 from (seed, index) (SplitMix64).
    static func unitRandom(seed: UInt64, index: UInt64) -> Double {
        var z = seed &+ index &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
