import Foundation
import Glibc
import SnoozeFuseSystem
import SnoozeFuseTestSupport
import Testing

/// A program the user installed, judged by the file that was opened, and that same file run: real
/// files in a private folder, real children.
@Suite struct CheckedExecutableTests {
    /// Writes an executable through a close-on-exec descriptor: a child that another test starts
    /// meanwhile must not inherit it (it would keep the file busy for writing: ETXTBSY).
    private func write(_ path: String, _ body: String, mode: mode_t = 0o700) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0, "\(path): \(String(cString: strerror(errno)))")
        let bytes = Array(body.utf8)
        #expect(Glibc.write(descriptor, bytes, bytes.count) == bytes.count)
        #expect(close(descriptor) == 0)
        #expect(chmod(path, mode) == 0)
    }

    /// Runs `program` with its output in a file of `folder`; returns the output and the wait status.
    private func run(_ program: CheckedExecutable, in folder: TemporaryFolder, _ arguments: [String] = []) throws -> (String, Int32?) {
        let output = folder.path("output-\(UUID().uuidString)")
        let descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        let pid = try program.start(arguments, descriptors: [0: .devNull, 1: .inherit(descriptor), 2: .inherit(descriptor)])
        _ = close(descriptor)
        let status = ProcessSpawn.wait(for: pid, atMost: .seconds(10))
        return (try String(contentsOfFile: output, encoding: .utf8), status)
    }

    private func ready(_ opening: CheckedExecutable.Opening) -> CheckedExecutable? {
        if case .ready(let program) = opening { return program }
        return nil
    }

    private func refusal(_ opening: CheckedExecutable.Opening) -> String? {
        if case .refused(let reason) = opening { return reason }
        return nil
    }

    /// The file checked is the file run: a script replaced after the check (renamed over it, as an
    /// editor saves) does not run in its place. Started by path again, as before, it did.
    @Test func aFileSwappedInAfterTheCheckIsNotTheOneThatRuns() throws {
        let folder = try TemporaryFolder()
        let hook = folder.path("alarm")
        try write(hook, "#!/bin/sh\necho checked \"$@\"\n")
        let program = try #require(ready(CheckedExecutable.open(hook)))
        try write(folder.path("other"), "#!/bin/sh\necho swapped\n", mode: 0o777)
        #expect(rename(folder.path("other"), hook) == 0)
        let (output, status) = try run(program, in: folder, ["one", "two"])
        #expect(output == "checked one two\n")
        #expect(status == 0)
        // Opened again, the new file is judged for what it is.
        #expect(refusal(CheckedExecutable.open(hook))?.contains("others can change \(hook) (mode 777); chmod go-w") == true)
    }

    /// A script is read by its interpreter through the opened file: its `$0` is that descriptor's
    /// path, never the path that could be swapped, and the path it was opened by stays known.
    @Test func aScriptIsReadThroughItsOpenedFile() throws {
        let folder = try TemporaryFolder()
        let script = folder.path("show-name")
        try write(script, "#!/bin/sh\necho \"$0\"\n")
        let program = try #require(ready(CheckedExecutable.open(script)))
        let (output, status) = try run(program, in: folder)
        #expect(status == 0)
        #expect(output.hasPrefix("/proc/self/fd/"), "\(output)")
        #expect(program.path == script)
        #expect(program.resolved == URL(fileURLWithPath: script).resolvingSymlinksInPath().path)
    }

    @Test func whatMustNotRunIsRefusedWithTheReasonAndTheFix() throws {
        let folder = try TemporaryFolder()
        #expect({ if case .missing = CheckedExecutable.open(folder.path("none")) { true } else { false } }())
        try write(folder.path("group-writable"), "#!/bin/sh\n", mode: 0o770)
        #expect(refusal(CheckedExecutable.open(folder.path("group-writable")))?.contains("chmod go-w") == true)
        try write(folder.path("not-executable"), "#!/bin/sh\n", mode: 0o600)
        #expect(refusal(CheckedExecutable.open(folder.path("not-executable"))) == "\(folder.path("not-executable")) is not executable; chmod u+x \(folder.path("not-executable"))")
        #expect(refusal(CheckedExecutable.open(folder.url.path)) == "\(folder.url.path) is not a regular file")
        // A link is followed, and the folders above the file it leads to are judged.
        let open = folder.path("open")
        #expect(mkdir(open, 0o700) == 0)
        try write(open + "/real", "#!/bin/sh\necho real\n")
        #expect(chmod(open, 0o777) == 0)
        #expect(symlink(open + "/real", folder.path("link")) == 0)
        #expect(refusal(CheckedExecutable.open(folder.path("link")))?.contains("others can change \(open) (mode 777)") == true)
        #expect(chmod(open, 0o700) == 0)
        let linked = try #require(ready(CheckedExecutable.open(folder.path("link"))))
        #expect(try run(linked, in: folder).0 == "real\n")
    }
}
