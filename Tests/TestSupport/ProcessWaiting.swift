import Foundation

extension Process {
    /// Waits for the process to exit on a Dispatch thread.
    ///
    /// `waitUntilExit()` called from a test blocks one of the cooperative pool's threads (one per
    /// core) for as long as the child runs: on two cores, a minutes-long child (the image build)
    /// would leave every other test in the process one thread, and their polls seconds late.
    public func exited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.waitUntilExit()
                continuation.resume()
            }
        }
    }
}
