// The floor a playing alarm stands on (issue 23): a Swift program that imports Foundation (asks
// it one thing, as floor-foundation.swift does), decodes a sound file with libsndfile and plays
// it on an ALSA PCM, paced to the sound's own rate, for a number of seconds. Both libraries are
// loaded with dlopen, as snoozefuse loads them. Built by Scripts/bench-report.py with the flags of
// the shipped binary; its peak memory is what a Swift player on this machine cannot go below, so
// the row of a playing alarm is also given as a ratio to it.
//
// Built with `-D PLAIN`, the same player without Foundation: what Foundation itself weighs in a
// player.
//
// Usage: floor-player FILE PCM SECONDS
#if PLAIN
import Glibc

func identity() -> Int32 { getpid() }
#else
import Foundation

func identity() -> Int32 { ProcessInfo.processInfo.processIdentifier }
#endif

let arguments = CommandLine.arguments
guard arguments.count == 4, let seconds = Double(arguments[3]) else {
    fputs("usage: floor-player FILE PCM SECONDS\n", stderr)
    exit(64)
}
guard let sndfile = dlopen("libsndfile.so.1", RTLD_NOW), let alsa = dlopen("libasound.so.2", RTLD_NOW) else {
    fputs("floor-player: libsndfile or libasound is missing\n", stderr)
    exit(69)
}

func symbol<T>(_ library: UnsafeMutableRawPointer, _ name: String, as type: T.Type) -> T {
    guard let address = dlsym(library, name) else {
        fputs("floor-player: \(name) is missing\n", stderr)
        exit(69)
    }
    return unsafeBitCast(address, to: type)
}

let sfOpen = symbol(sndfile, "sf_open", as: (@convention(c) (UnsafePointer<CChar>, Int32, UnsafeMutableRawPointer) -> OpaquePointer?).self)
let sfReadShorts = symbol(sndfile, "sf_readf_short", as: (@convention(c) (OpaquePointer, UnsafeMutablePointer<Int16>, Int64) -> Int64).self)
let pcmOpen = symbol(alsa, "snd_pcm_open", as: (@convention(c) (UnsafeMutablePointer<OpaquePointer?>, UnsafePointer<CChar>, Int32, Int32) -> Int32).self)
let pcmSetParameters = symbol(alsa, "snd_pcm_set_params", as: (@convention(c) (OpaquePointer, Int32, Int32, UInt32, UInt32, Int32, UInt32) -> Int32).self)
let pcmWrite = symbol(alsa, "snd_pcm_writei", as: (@convention(c) (OpaquePointer, UnsafeRawPointer, UInt) -> Int).self)

// SF_INFO: frames (64 bits), then samplerate, channels, format, sections, seekable (32 bits each).
let information = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 8)
information.initializeMemory(as: UInt8.self, repeating: 0, count: 32)
guard let file = sfOpen(arguments[1], 0x10 /* SFM_READ */, information) else {
    fputs("floor-player: cannot read \(arguments[1])\n", stderr)
    exit(65)
}
let rate = Int(information.load(fromByteOffset: 8, as: Int32.self))
let channels = Int(information.load(fromByteOffset: 12, as: Int32.self))
var pcm: OpaquePointer?
guard pcmOpen(&pcm, arguments[2], 0 /* playback */, 0) == 0, let pcm,
      pcmSetParameters(pcm, 2 /* S16_LE */, 3 /* RW interleaved */, UInt32(channels), UInt32(rate), 1, 500_000) == 0 else {
    fputs("floor-player: cannot play on \(arguments[2])\n", stderr)
    exit(69)
}
print("floor-player \(identity()): \(rate) Hz, \(channels) channels")

let framesPerWrite = 1_024
let buffer = UnsafeMutablePointer<Int16>.allocate(capacity: framesPerWrite * channels)
var start = timespec()
clock_gettime(CLOCK_MONOTONIC, &start)
var played = 0
while Double(played) < seconds * Double(rate) {
    let frames = Int(sfReadShorts(file, buffer, Int64(framesPerWrite)))
    guard frames > 0, pcmWrite(pcm, buffer, UInt(frames)) > 0 else { break }
    played += frames
    // The PCM may take frames faster than they sound (ALSA null does): wait until they would have.
    let due = Double(played) / Double(rate)
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let elapsed = Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9
    if due > elapsed { usleep(useconds_t((due - elapsed) * 1e6)) }
}
