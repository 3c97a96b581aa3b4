import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One TCP connection to Redis speaking RESP, for the benchmarks that measure Redis beside the
/// platform on the same load (`bench ingest`, `bench nearby`): commands are queued and written
/// pipelined; replies are counted as they arrive, or read one by one. No Redis library: the
/// benchmark's own cost must stay small and plain next to what it measures.
final class RedisConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private let descriptor: Int32
    private var outgoing: [UInt8] = []
    private var incoming: [UInt8] = []
    private var readBuffer = [UInt8](repeating: 0, count: 256 * 1024)
    /// Where the next unread reply starts in `incoming`.
    private var readOffset = 0
    /// Replies that were errors (`-ERR …`), and the first one's text.
    private(set) var errors = 0
    private(set) var firstError: String?

    /// Connects to `host:port` (an IPv4 address).
    init(host: String, port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(descriptor)
            throw Failure("'\(host)' is not an IPv4 address")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure("cannot connect to Redis at \(host):\(port): \(reason)")
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(descriptor) }

    /// Queues one command (its arguments as RESP bulk strings); `flush` writes what is queued.
    func queue(_ arguments: [[UInt8]]) {
        outgoing += Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            outgoing += Array("$\(argument.count)\r\n".utf8)
            outgoing += argument
            outgoing += [13, 10]
        }
    }

    func queue(_ arguments: String...) { queue(arguments.map { Array($0.utf8) }) }

    var queuedBytes: Int { outgoing.count }

    /// Writes everything queued (blocking until the socket took it).
    func flush() throws {
        var written = 0
        while written < outgoing.count {
            let count = outgoing.withUnsafeBytes { send(descriptor, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure("writing to Redis: \(String(cString: strerror(errno)))") }
            written += count
        }
        outgoing.removeAll(keepingCapacity: true)
    }

    /// Reads what has arrived (waiting up to `milliseconds` for something) and returns how many
    /// whole replies it completed.
    func receiveReplies(waitingUpTo milliseconds: Int32) throws -> Int {
        var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&poll, 1, milliseconds) > 0 else { return 0 }
        try readAvailable()
        var replies = 0
        while let end = Self.replyEnd(incoming, from: readOffset) {
            if incoming[readOffset] == UInt8(ascii: "-") {
                errors += 1
                if firstError == nil { firstError = String(decoding: incoming[(readOffset + 1)..<(end - 2)], as: UTF8.self) }
            }
            readOffset = end
            replies += 1
        }
        if readOffset == incoming.count {
            incoming.removeAll(keepingCapacity: true)
            readOffset = 0
        } else if readOffset > 1 << 20 {
            incoming.removeFirst(readOffset)
            readOffset = 0
        }
        return replies
    }

    /// Sends one command and returns its reply's bytes (blocking).
    func call(_ arguments: String...) throws -> [UInt8] {
        queue(arguments.map { Array($0.utf8) })
        try flush()
        while true {
            if let end = Self.replyEnd(incoming, from: readOffset) {
                let reply = Array(incoming[readOffset..<end])
                readOffset = end
                return reply
            }
            try readAvailable()
        }
    }

    private func readAvailable() throws {
        let count = readBuffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
        guard count > 0 else {
            throw Failure(count == 0 ? "Redis closed the connection" : "reading from Redis: \(String(cString: strerror(errno)))")
        }
        incoming += readBuffer[0..<count]
    }

    /// Where the RESP reply starting at `start` ends (past its last CRLF), or nil while it is incomplete.
    static func replyEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count, let lineEnd = lineEnd(bytes, from: start) else { return nil }
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

    private static func lineEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index + 2 }
            index += 1
        }
        return nil
    }

    /// The value of `field` in an `INFO` reply (`cmdstat_geoadd:calls=12,…` gives `calls=12,…` for `cmdstat_geoadd`).
    static func infoField(_ reply: [UInt8], _ field: String) -> String? {
        for line in String(decoding: reply, as: UTF8.self).split(whereSeparator: \.isNewline) where line.hasPrefix(field + ":") {
            return String(line.dropFirst(field.count + 1)).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
