import Foundation

/// One TCP connection to Redis speaking RESP, for the benchmarks that measure Redis beside the
/// platform on the same load (`bench ingest`, `bench nearby`): commands are queued and written
/// pipelined; replies are counted as they arrive, or read one by one.
final class RedisConnection {
    typealias Failure = TCPConnection.Failure

    private let connection: TCPConnection
    /// Replies that were errors (`-ERR …`), and the first one's text.
    private(set) var errors = 0
    private(set) var firstError: String?

    /// Connects to `host:port` (an IPv4 address).
    init(host: String, port: Int) throws { connection = try TCPConnection(host: host, port: port, peer: "Redis") }

    /// Queues one command (its arguments as RESP bulk strings); `flush` writes what is queued.
    func queue(_ arguments: [[UInt8]]) {
        var command = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            command += Array("$\(argument.count)\r\n".utf8)
            command += argument
            command += [13, 10]
        }
        connection.queue(command)
    }

    func queue(_ arguments: String...) { queue(arguments.map { Array($0.utf8) }) }

    var queuedBytes: Int { connection.queuedBytes }

    /// Writes everything queued (blocking until the socket took it).
    func flush() throws { try connection.flush() }

    /// Reads what has arrived (waiting up to `milliseconds` for something) and returns how many
    /// whole replies it completed.
    func receiveReplies(waitingUpTo milliseconds: Int32) throws -> Int {
        guard try connection.read(waitingUpTo: milliseconds) else { return 0 }
        var replies = 0
        while let end = Self.replyEnd(connection.incoming, from: connection.readOffset) {
            let start = connection.readOffset
            if connection.incoming[start] == UInt8(ascii: "-") {
                errors += 1
                if firstError == nil { firstError = String(decoding: connection.incoming[(start + 1)..<(end - 2)], as: UTF8.self) }
            }
            connection.readOffset = end
            replies += 1
        }
        connection.discardRead()
        return replies
    }

    /// Sends one command and returns its reply's bytes (blocking).
    func call(_ arguments: String...) throws -> [UInt8] {
        queue(arguments.map { Array($0.utf8) })
        try flush()
        while true {
            if let end = Self.replyEnd(connection.incoming, from: connection.readOffset) {
                let reply = Array(connection.incoming[connection.readOffset..<end])
                connection.readOffset = end
                return reply
            }
            try connection.read()
        }
    }

    /// Where the RESP reply starting at `start` ends (past its last CRLF), or nil while it is incomplete.
    static func replyEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count, let lineEnd = TCPConnection.lineEnd(bytes, from: start) else { return nil }
        let header = bytes[(start + 1)..<(lineEnd - 2)]
        switch bytes[start] {
        case UInt8(ascii: "$"):
            guard let length = Int(String(decoding: header, as: UTF8.self)) else { return nil }
            if length < 0 { return lineEnd }
            let end = lineEnd + length + 2
            return end <= bytes.count ? end : nil
        case UInt8(ascii: "*"):
            guard let count = Int(String(decoding: header, as: UTF8.self)) else { return nil }
            var end = lineEnd
            for _ in 0..<max(count, 0) {
                guard let next = replyEnd(bytes, from: end) else { return nil }
                end = next
            }
            return end
        default:  // + simple string, - error, : integer
            return lineEnd
        }
    }

    /// The value of `field` in an `INFO` reply (`cmdstat_geoadd:calls=12,…` gives `calls=12,…` for `cmdstat_geoadd`).
    static func infoField(_ reply: [UInt8], _ field: String) -> String? {
        for line in String(decoding: reply, as: UTF8.self).split(whereSeparator: \.isNewline) where line.hasPrefix(field + ":") {
            return String(line.dropFirst(field.count + 1)).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
