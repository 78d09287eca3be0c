import Foundation
import SnoozeFuseAudio
import SnoozeFuseCore
@testable import SnoozeFuseRuntime
import SnoozeFuseSystem
import Testing

/// The three ways a nap is held, each assembled from plain values (issue 40, item 11): a fresh
/// nap, its guardian, `resume`. Each hand-over is a row of a table, not a mode of one object.
@Suite("How each way a nap is held is assembled")
struct NapAssemblyTests {
    static let timers = SessionTimers(release: .seconds(30), nap: .seconds(600), max: .seconds(1800), snooze: .seconds(300), ringLimit: nil)

    static func surroundings(foreground: Bool?, terminal: String? = "/dev/pts/7") -> NapSurroundings {
        NapSurroundings(environment: ["HOME": "/home/a"], foreground: foreground, inputIsTerminal: foreground != nil,
                        terminalName: foreground == nil ? nil : terminal)
    }

    /// A fresh nap: the key holds it only in the foreground of its terminal (in its background,
    /// `&`, nothing does); it has its plugins, its keys, its terminal in its state, no earlier fixes.
    @Test(arguments: [(true, HoldSource.key, HoldSource.key), (false, .key, .none), (nil, .none, .none), (false, .desktop, .desktop)]
          as [(Bool?, HoldSource, HoldSource)])
    func aFreshNap(foreground: Bool?, asked: HoldSource, held: HoldSource) {
        let configuration = NapConfiguration(timers: Self.timers, presetName: "basic", hold: asked, sound: "chime")
        let assembly = NapAssembly.fresh(configuration, sound: .builtInTone, surroundings: Self.surroundings(foreground: foreground), created: 100)
        #expect(assembly.configuration.hold == held)
        #expect(assembly.history.hold == held.rawValue && assembly.history.holder == "nap" && assembly.history.sound == "chime")
        #expect(assembly.holder == .nap && assembly.isFresh && assembly.usesPlugins && assembly.readsKeys)
        #expect(assembly.bellTerminal == nil && assembly.savedTerminal == (foreground == nil ? nil : "/dev/pts/7"))
        #expect(assembly.initialSession == nil && assembly.sinkFixes.isEmpty)
    }

    static func live(phase: Phase, terminal: String? = "/dev/pts/3") throws -> LiveSessionState {
        var state = try LiveSessionState.read(Array(LiveStateReadingTests.everyMember.utf8))
        state.phase = phase
        state.terminal = terminal
        return state
    }

    /// 5.6 s after the saved ring began (its ring limit is 120 s).
    static let now = BootInstant(sinceBoot: .seconds(45_060))
    static let wallNow = Date(timeIntervalSince1970: 1_795_818_400)

    /// The guardian and `resume` over the same saved nap: the same alarm, the sound it can still
    /// read (else the built-in sound, else the tone), the ringing one continued without a second
    /// fade-in, the fixes to put back carried over, the hand-over in its history; the guardian
    /// has no keys and no terminal of its own, `resume` has its terminal's keys.
    @Test(arguments: [LiveSessionState.Holder.guardian, .resume], [Phase.ringing, .napping])
    func aTakenOverNap(holder: LiveSessionState.Holder, phase: Phase) throws {
        let live = try Self.live(phase: phase)
        let due = Self.now.advanced(by: .seconds(-2))
        func assembled(_ files: NapAssembly.SoundFiles, _ live: LiveSessionState) -> NapAssembly {
            holder == .guardian
                ? NapAssembly.guardian(live, ringAt: due, reason: .nap, now: Self.now, wallNow: Self.wallNow, sameBoot: true, files: files)
                : NapAssembly.resume(live, ringAt: due, reason: .nap, now: Self.now, wallNow: Self.wallNow, sameBoot: true,
                                     surroundings: Self.surroundings(foreground: true), files: files)
        }
        let assembly = assembled(NapAssembly.SoundFiles(readable: { _ in true }, builtIn: "/b/beep.caf"), live)
        #expect(assembly.holder == holder && !assembly.isFresh && !assembly.usesPlugins)
        #expect(assembly.readsKeys == (holder == .resume))
        #expect(assembly.bellTerminal == "/dev/pts/3" && assembly.savedTerminal == "/dev/pts/3")
        #expect(assembly.sound == .file(path: live.setup.soundPath ?? "?"))
        #expect(assembly.configuration.hold == .none && assembly.configuration.volume == live.setup.volume)
        #expect(assembly.configuration.fadeIn == (phase == .ringing ? .zero : .seconds(10)))
        #expect(assembly.sinkFixes == live.sinkFixes)
        #expect(assembly.history.holder == holder.rawValue && assembly.history.takenOverBy == "guardian, \(holder.rawValue)")
        var session = try #require(assembly.initialSession)
        #expect(session.phase == .napping && session.maxDeadline == due && session.napDeadline == due)
        // Due 2 s ago: it rings at once; a ring that was going on goes on from its first ring.
        _ = session.handle(.timeElapsed, at: Self.now)
        let ringingSince = live.ringingSince.map { $0.instant(sameBoot: true, now: Self.now, wallNow: Self.wallNow) }
        #expect(session.phase == .ringing && session.ringStartedAt == (phase == .ringing ? ringingSince : Self.now))
        // The saved sound gone: the built-in sound; no built-in sound either: the tone.
        #expect(assembled(NapAssembly.SoundFiles(readable: { _ in false }, builtIn: "/b/beep.caf"), live).sound == .file(path: "/b/beep.caf"))
        #expect(assembled(NapAssembly.SoundFiles(readable: { _ in false }, builtIn: nil), live).sound == .builtInTone)
        // A nap saved without a terminal: resume shows it on its own, the guardian on none.
        let bare = assembled(NapAssembly.SoundFiles(readable: { _ in true }, builtIn: nil), try Self.live(phase: phase, terminal: nil))
        #expect(bare.bellTerminal == nil && bare.savedTerminal == (holder == .resume ? "/dev/pts/7" : nil))
        // Plain as the nap was (--plain, TERM=dumb): its bell never moves the cursor.
        #expect(assembly.configuration.movesCursor, "a nap saved without plain")
        var plainLive = live
        plainLive.setup.plain = true
        #expect(!assembled(NapAssembly.SoundFiles(readable: { _ in true }, builtIn: nil), plainLive).configuration.movesCursor)
    }

    /// `resume` on a terminal that cannot move its cursor is plain, whatever the nap was.
    @Test func resumeOnADumbTerminalIsPlain() throws {
        let live = try Self.live(phase: .napping)
        var dumb = Self.surroundings(foreground: true)
        dumb.environment["TERM"] = "dumb"
        let due = Self.now.advanced(by: .seconds(5))
        func resumed(_ surroundings: NapSurroundings) -> NapAssembly {
            NapAssembly.resume(live, ringAt: due, reason: .nap, now: Self.now, wallNow: Self.wallNow, sameBoot: true,
                               surroundings: surroundings, files: NapAssembly.SoundFiles(readable: { _ in true }, builtIn: nil))
        }
        #expect(!resumed(dumb).configuration.movesCursor)
        #expect(resumed(Self.surroundings(foreground: true)).configuration.movesCursor)
    }
}
