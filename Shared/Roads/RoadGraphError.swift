/// Why a road graph could not be loaded or built. Each case names what was wrong, so a corrupt or
/// foreign file is reported, never trusted.
public enum RoadGraphError: Error, Equatable, CustomStringConvertible {
    /// The file could not be read at all (missing, unreadable, or the built-in one not installed).
    case unreadable(String)
    /// The first bytes are not `RIDEROAD`: not a road graph file.
    case badMagic
    /// A format version this code does not read.
    case unsupportedVersion(UInt32)
    /// The file ends before the part named is complete.
    case truncated(String)
    /// The body's CRC-32 is not the one in the header: the file was damaged.
    case checksumMismatch(expected: UInt32, actual: UInt32)
    /// A node, edge or name index points outside its table.
    case indexOutOfRange(String)
    /// A value no road has (a zero speed, a negative length, bytes after the names, bad UTF-8).
    case invalid(String)

    public var description: String {
        switch self {
        case .unreadable(let why): "road graph unreadable: \(why)"
        case .badMagic: "not a road graph file (bad magic, expected RIDEROAD)"
        case .unsupportedVersion(let version): "road graph format version \(version) is not supported (expected \(RoadGraph.formatVersion))"
        case .truncated(let part): "road graph file truncated: \(part)"
        case .checksumMismatch(let expected, let actual):
            "road graph checksum mismatch: header says \(String(expected, radix: 16)), body has \(String(actual, radix: 16))"
        case .indexOutOfRange(let what): "road graph index out of range: \(what)"
        case .invalid(let what): "road graph invalid: \(what)"
        }
    }
}
