import Foundation
import SnoozeFuseStore
import Testing

/// Where the files go (SPEC §4), as paths and as URLs: the paths are what the short commands use
/// (issue 23), the URLs what the rest uses, and both name the same files.
@Suite("StorePaths: the XDG folders as paths")
struct StorePathsTests {
    @Test func theXDGFoldersWinOverHomeAndTrailingSlashesDoNotDouble() throws {
        let paths = try StorePaths(environment: ["HOME": "/home/n", "XDG_STATE_HOME": "/run/st//", "XDG_DATA_HOME": "relative",
                                                 "XDG_RUNTIME_DIR": "/run/user/1/"])
        #expect(paths.statePath == "/run/st/snoozefuse")
        #expect(paths.dataPath == "/home/n/.local/share/snoozefuse")
        #expect(paths.configPath == "/home/n/.config/snoozefuse")
        #expect(paths.liveSessionPath == "/run/st/snoozefuse/session.json")
        #expect(paths.controlSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1/"]) == "/run/user/1/snoozefuse/control.sock")
        #expect(paths.controlSocketPath(environment: [:]) == "/run/st/snoozefuse/control.sock")
        #expect(StorePaths.path("/", "snoozefuse") == "/snoozefuse")
    }

    @Test func withoutHomeOrAnXDGFolderItSaysWhichToSet() {
        #expect(throws: StoreError.self) { try StorePaths(environment: ["XDG_STATE_HOME": "/s", "XDG_DATA_HOME": "/d"]) }
    }

    /// The URLs are the paths: a file named by one is the file named by the other.
    @Test func theURLsNameTheSameFilesAsThePaths() throws {
        let paths = try StorePaths(environment: ["HOME": "/home/n é", "XDG_RUNTIME_DIR": "/run/user/1"])
        #expect(paths.state.path == paths.statePath && paths.data.path == paths.dataPath && paths.config.path == paths.configPath)
        #expect(paths.liveSession.path == paths.liveSessionPath)
        #expect(paths.napLock.path == paths.napLockPath)
        #expect(paths.guardianLock.path == paths.guardianLockPath)
        #expect(paths.pendingHistory.path == paths.pendingHistoryPath)
        #expect(paths.database.path == paths.databasePath)
        #expect(paths.controlSocket(environment: ["XDG_RUNTIME_DIR": "/run/user/1"]).path == "/run/user/1/snoozefuse/control.sock")
        let round = StorePaths(config: paths.config, data: paths.data, state: paths.state)
        #expect(round == paths)
    }

    /// The short commands read only ``StorePaths/environmentVariables``: the files they name from
    /// those are the files named from the whole environment.
    @Test func theStoreVariablesNameTheSameFilesAsTheWholeEnvironment() throws {
        let whole = ["HOME": "/home/n", "XDG_STATE_HOME": "/run/st", "XDG_RUNTIME_DIR": "/run/user/1", "XDG_CONFIG_HOME": "/c",
                     "XDG_DATA_HOME": "/d", "XDG_CACHE_HOME": "/cache", "PATH": "/bin", "LANG": "C.UTF-8", "DISPLAY": ":0"]
        for dropped in [nil] + whole.keys.map(Optional.some) {
            var environment = whole
            if let dropped { environment[dropped] = nil }
            let some = environment.filter { StorePaths.environmentVariables.contains($0.key) }
            let fromWhole = try StorePaths(environment: environment), fromSome = try StorePaths(environment: some)
            #expect(fromWhole.configPath == fromSome.configPath && fromWhole.dataPath == fromSome.dataPath
                    && fromWhole.statePath == fromSome.statePath, "without \(dropped ?? "nothing")")
            #expect(fromWhole.controlSocketPath(environment: environment) == fromSome.controlSocketPath(environment: some))
        }
    }
}
