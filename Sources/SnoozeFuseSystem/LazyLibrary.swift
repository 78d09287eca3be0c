/// A C library linked on first use (the CLazyLink targets): what its loader said.
public enum LazyLibrary {
    /// Calls `loader` (a `snoozefuse_<library>_load`); nil once the library is loaded, else why not.
    public static func failure(of loader: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> String? {
        var why = [CChar](repeating: 0, count: 256)
        let size = why.count
        guard why.withUnsafeMutableBufferPointer({ loader($0.baseAddress!, size) }) != 0 else { return nil }
        return String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
