// snoozefuse-make-sounds: renders the built-in alarm sounds (see BuiltInSoundSynthesis) into a
// folder, `Sounds` by default. The output is byte-for-byte the same on every run.
//
//   swift run snoozefuse-make-sounds Sounds
import Foundation
import SnoozeFuseAudio

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("-h") || arguments.contains("--help") || arguments.count > 1 {
    FileHandle.standardError.write(Data("usage: snoozefuse-make-sounds [FOLDER]   (default: Sounds)\n".utf8))
    exit(arguments.count > 1 ? 64 : 0)
}
let folder = arguments.first ?? "Sounds"

do {
    for path in try BuiltInSoundSynthesis.writeAll(toFolder: folder) {
        let info = try SoundFile(readingAtPath: path).info
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print("\(path): \(info.frames) frames at \(info.sampleRate) Hz (\(info.duration.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 2))))), \(size) bytes")
    }
} catch {
    FileHandle.standardError.write(Data("snoozefuse-make-sounds: \(error)\n".utf8))
    exit(1)
}
