// The floor a Swift command-line program stands on (issue 23): a program that imports Foundation,
// asks it one thing and prints one line. Built by Scripts/bench-report.py with the flags of the
// shipped binary (a static Swift runtime, no PIE, lld); its start-up and peak memory are what a
// Swift program on this machine cannot go below, so every start-up and memory row is also given
// as a ratio to it.
import Foundation

print("snoozefuse floor \(ProcessInfo.processInfo.processIdentifier)")
