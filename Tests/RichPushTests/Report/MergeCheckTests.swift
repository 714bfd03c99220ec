import RichPush
import RichPushRuns
import Testing

/// Merge identity: duplicates, foreign runs and overlapping shards are refused; missing shards warn,
/// or refuse when every shard is required; reports without an identity merge with a warning.
@Suite struct MergeCheckTests {
    func identity(_ run: String, shard: Int, of count: Int = 3, digest: String = "d1") -> RunIdentity {
        RunIdentity(runID: run, shard: shard, shardCount: count, optionsDigest: digest)
    }

    @Test func shardsOfOneCampaignMerge() throws {
        var check = MergeCheck()
        for shard in 1...3 {
            try check.admit(
                file: "s\(shard).json", identity: identity("r\(shard)", shard: shard), shards: [shard], shardCount: 3)
        }
        #expect(try check.finish(requireAllShards: true).isEmpty)
    }

    @Test func theSameFileTwiceIsADuplicate() throws {
        var check = MergeCheck()
        try check.admit(file: "s1.json", identity: identity("r1", shard: 1), shards: [1], shardCount: 3)
        let error = #expect(throws: MergeRefusal.self) {
            try check.admit(file: "s1.json", identity: identity("r1", shard: 1), shards: [1], shardCount: 3)
        }
        #expect(error?.message.hasPrefix("s1.json repeats shard 1 of s1.json (the same run)") == true)
    }

    @Test func oneShardRunTwiceIsRefused() throws {
        var check = MergeCheck()
        try check.admit(file: "a.json", identity: identity("r1", shard: 1), shards: [1], shardCount: 3)
        let error = #expect(throws: MergeRefusal.self) {
            try check.admit(file: "b.json", identity: identity("r9", shard: 1), shards: [1], shardCount: 3)
        }
        #expect(error?.message.hasPrefix("b.json is shard 1 of 3 again (a.json is too)") == true)
    }

    @Test func foreignRunsAreRefused() throws {
        var check = MergeCheck()
        try check.admit(file: "a.json", identity: identity("r1", shard: 1), shards: [1], shardCount: 3)
        let digest = #expect(throws: MergeRefusal.self) {
            try check.admit(
                file: "b.json", identity: identity("r2", shard: 2, digest: "d2"), shards: [2], shardCount: 3)
        }
        #expect(digest?.message.contains("the options that decide verdicts differ") == true)
        let count = #expect(throws: MergeRefusal.self) {
            try check.admit(file: "c.json", identity: identity("r3", shard: 2, of: 4), shards: [2], shardCount: 4)
        }
        #expect(count?.message.contains("not shards of one run") == true)
    }

    @Test func overlappingShardsAreRefused() throws {
        var check = MergeCheck()
        var merged = identity("r1", shard: 1)
        merged.runs.append(.init(id: "r2", shard: 2))
        try check.admit(file: "merged.json", identity: merged, shards: [1, 2], shardCount: 3)
        let error = #expect(throws: MergeRefusal.self) {
            try check.admit(file: "s2.json", identity: identity("r7", shard: 2), shards: [2], shardCount: 3)
        }
        #expect(error?.message.hasPrefix("s2.json overlaps merged.json: both cover shard 2") == true)
    }

    @Test func missingShardsWarnOrRefuse() throws {
        var check = MergeCheck()
        try check.admit(file: "a.json", identity: identity("r1", shard: 2), shards: [2], shardCount: 3)
        var strict = check
        #expect(
            try check.finish(requireAllShards: false) == [
                "shards 1, 3 of 3 are missing: the merged report covers only the others"
            ])
        let error = #expect(throws: MergeRefusal.self) { try strict.finish(requireAllShards: true) }
        #expect(error?.message.hasPrefix("shards 1, 3 of 3 are missing: every shard is required") == true)
    }

    @Test func reportsWithoutAnIdentityMergeWithAWarningButNotTwice() throws {
        var check = MergeCheck()
        try check.admit(file: "old.json", identity: nil, shards: [1], shardCount: 2)
        try check.admit(file: "new.json", identity: identity("r2", shard: 2, of: 2), shards: [2], shardCount: 2)
        let warnings = try check.finish(requireAllShards: true)
        #expect(warnings.count == 1 && warnings[0].hasPrefix("old.json was written by an older richpush version"))
        var twice = MergeCheck()
        try twice.admit(file: "old.json", identity: nil, shards: [1], shardCount: 1)
        #expect(throws: MergeRefusal.self) {
            try twice.admit(file: "old.json", identity: nil, shards: [1], shardCount: 1)
        }
    }

    @Test func digestsIgnoreOrderAndRunIDsDiffer() {
        #expect(RunIdentity.digest(of: ["a": "1", "b": "2"]) == RunIdentity.digest(of: ["b": "2", "a": "1"]))
        #expect(RunIdentity.digest(of: ["a": "1"]) != RunIdentity.digest(of: ["a": "2"]))
        let (first, second) = (RunIdentity.newRunID(), RunIdentity.newRunID())
        #expect(first.count == 16 && first != second)
    }
}
