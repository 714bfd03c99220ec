import AssetServer
import Foundation
import RichPush

/// What an in-process network test needs: the embedded server, a fetch engine, a scratch folder.
///
/// Each test makes its own (a test suite's `init` runs once per test) and calls ``cleanUp()`` when
/// it ends, which stops the engine and the server and removes the folder.
package struct LocalRig: Sendable {
    package let server: AssetServer
    package let engine: FetchEngine
    package let folder: String

    /// A rig over a server, engine and folder the test made itself (a server on its own asset folder).
    package init(server: AssetServer, engine: FetchEngine, folder: String) {
        self.server = server
        self.engine = engine
        self.folder = folder
    }

    package init(loops: Int = 2) throws {
        server = try Fixtures.startServer()
        engine = try FetchEngine(loops: loops)
        folder = try Fixtures.temporaryFolder()
    }

    package func cleanUp() {
        engine.shutdown()
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
