// libFuzzer entry for the duration parser: any bytes, read as UTF-8 (lossily), must either parse
// to a duration within the documented range or throw a DurationParseError whose message shows the
// accepted forms. Anything else (a crash, a trap, a sanitizer report) is a bug.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDurations(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let seconds = try DurationParser.parseSeconds(text)
        precondition(seconds >= 0 && seconds <= DurationParser.maximumSeconds, "out of range: \(seconds) from \(text.debugDescription)")
        // Whatever parses must parse the same way again, and through the Duration API.
        let again = try DurationParser.parse(text)
        precondition(again == .seconds(seconds))
    } catch {
        precondition(error.description.contains(DurationParser.acceptedForms), "an error without the accepted forms")
    }
    return 0
}
