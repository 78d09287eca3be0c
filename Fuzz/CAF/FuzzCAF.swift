// libFuzzer entry point for the CAF inspector. Compiled together with the SnoozeFuseCAF sources
// into one module (see Fuzz/fuzz.sh), so it needs no imports.

/// Inspects the input through both entry points and traps when an invariant of the report breaks;
/// the sanitizers catch everything else (out-of-bounds reads, overflows, leaks).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCAF(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let inspector = CAFInspector(maxMetadataChunkBytes: 1024)
    let report = inspector.inspect(buffer)
    precondition(report == inspector.inspect(Array(buffer)), "both entry points agree")
    precondition(report.fileSize == Int64(size), "file size")

    for issue in report.issues {
        precondition((0...report.fileSize).contains(issue.offset), "issue offset inside the file")
        precondition(!issue.message.isEmpty, "every issue says what is wrong")
    }
    for chunk in report.chunks {
        precondition(chunk.offset >= 8 && chunk.bodySize >= 0, "chunk fields")
        precondition(chunk.bodyOffset + chunk.bodySize <= report.fileSize, "chunk body inside the file")
    }
    if let audio = report.audioData {
        precondition(audio.audioStart <= audio.audioEnd && audio.audioEnd <= report.fileSize, "audio range")
    }
    if let duration = report.duration {
        precondition(duration.frames >= 0 && duration.seconds.isFinite && duration.seconds >= 0, "duration")
    }
    // The info chunk's entries survive being written again and read back.
    let rewritten = CAFInfoChunk.encode(report.info)
    precondition(CAFInfoChunk.decode(body: Array(rewritten.dropFirst(12)))?.entries == report.info, "info round trip")
    let verdicts = report.verdicts
    precondition(verdicts.libsndfile.canDecode == verdicts.libsndfile.blockers.isEmpty, "verdict")
    precondition(!verdicts.libsndfile.canDecode || report.isValid, "a decodable file has no errors")
    precondition(!verdicts.repairable || !verdicts.libsndfile.canDecode, "repairs only what is broken")
    return 0
}
