// libFuzzer entry for the duration parser and the time-of-day parser of `nap --until`: any bytes,
// read as UTF-8 (lossily), must either parse to a duration within the documented range (a time on
// a clock) or throw an error whose message shows the accepted forms. Anything else (a crash, a
// trap, a sanitizer report) is a bug.

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
    do {
        let time = try ClockTime(parsing: text)
        precondition((0 ..< 24).contains(time.hour) && (0 ..< 60).contains(time.minute) && (0 ..< 60).contains(time.second),
                     "not a time on a clock: \(time) from \(text.debugDescription)")
        // What it says of itself reads back as the same time.
        precondition((try? ClockTime(parsing: time.description)) == time, "\(time) does not read back")
    } catch {
        precondition(error.description.contains(ClockTime.acceptedForms), "an error without the accepted forms")
    }
    return 0
}
