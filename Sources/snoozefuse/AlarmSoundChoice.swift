import Foundation
import SnoozeFuseAudio
import SnoozeFuseRuntime

/// The alarm sound a `--sound` argument names: a file path (it contains a `/` or ends in a sound
/// file extension), or the name of a built-in sound. Without an argument, the default built-in
/// (`beep`); if the built-in sounds are missing altogether, the synthesized tone, said once on
/// standard error. An unknown name is reported with the names there are, and exits 66; an imported
/// sound's index that cannot be read exits 78 with its cause.
/// The built-in folder is looked for only when the argument is not a path.
func chooseAlarmSound(_ argument: String?, builtIns locate: @autoclosure () -> BuiltInSounds? = BuiltInSounds.locate()) throws -> AlarmSound {
    if let argument, BuiltInSounds.isPath(argument) {
        return .file(path: argument)
    }
    let builtIns = locate()
    let name = argument ?? BuiltInSounds.defaultName
    if let builtIns, let path = builtIns.path(named: name) {
        return .file(path: path)
    }
    if argument != nil, let path = try importedSoundPath(named: name) {
        return .file(path: path)
    }
    guard let argument else {
        let missing = builtIns.map { "there is no \(name).\(BuiltInSounds.fileExtension) in \($0.folder.path)" }
            ?? "no built-in sounds folder (looked in \(BuiltInSounds.candidateFolders(executable: BuiltInSounds.runningExecutable).map(\.path).joined(separator: ", ")))"
        writeLine("snoozefuse: \(missing); using the synthesized alarm tone.", to: STDERR_FILENO)
        return .builtInTone
    }
    let known = builtIns?.names ?? []
    let list = known.isEmpty ? "no built-in sounds are installed" : "built-in sounds: \(known.joined(separator: ", "))"
    writeLine("snoozefuse: no sound named \"\(argument)\" (\(list); `snoozefuse sounds list` shows your imported ones); for a file in this folder, write ./\(argument).", to: STDERR_FILENO)
    throw ExitStatus.missingInput
}
