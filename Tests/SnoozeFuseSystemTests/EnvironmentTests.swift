import SnoozeFuseSystem
import Testing

/// The environment as the short commands read it: some variables one by one, or all of them.
@Suite("The process environment, whole or some variables")
struct EnvironmentTests {
    @Test func someVariablesAreThoseOfTheWholeEnvironment() {
        let whole = ProcessSpawn.currentEnvironment()
        #expect(whole["PATH"] != nil, "the test runs with a PATH")
        let names = ["PATH", "HOME", "XDG_RUNTIME_DIR", "SNOOZEFUSE_TEST_SURELY_UNSET_VARIABLE"] + Array(whole.keys.prefix(5))
        let some = ProcessSpawn.currentEnvironment(only: names)
        #expect(some == whole.filter { names.contains($0.key) })
        #expect(some["SNOOZEFUSE_TEST_SURELY_UNSET_VARIABLE"] == nil)
        #expect(ProcessSpawn.currentEnvironment(only: []).isEmpty)
    }
}
