import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to a peer server on this machine, for the benchmarks' own thin clients of
/// the peers they stand beside (Redis, NATS): what is queued is written by `flush`, what arrives is
/// kept in `incoming` from `readOffset` on for the client to parse. No client library: the load's
/// own cost must stay small and plain next to what it measures.
final class TCPConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private let descriptor: Int32
    /// Who is at the other end, for errors ("Redis", "NATS").
    let peer: String
    private var readBuffer = [UInt8](repeating: 0, count: 256 * 1024)
    private var outgoing: [UInt8] = []
    /// What has arrived; the client's parser has read it up to `readOffset`.
    private(set) var incoming: [UInt8] = []
    var readOffset = 0

    /// Connects to `host:port` (an IPv4 address), with Nagle's delay off.
    init(host: String, port: Int, peer: String) throws {
        self.peer = peer
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
            throw Failure("cannot connect to \(peer) at \(host):\(port): \(reason)")
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(descriptor) }

    /// Queues `bytes` for the next `flush`.
    func queue(_ bytes: [UInt8]) { outgoing += bytes }

    var queuedBytes: Int { outgoing.count }

    /// Writes everything queued (blocking until the socket took it).
    func flush() throws {
        var written = 0
        while written < outgoing.count {
            let count = outgoing.withUnsafeBytes { send(descriptor, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure("writing to \(peer): \(String(cString: strerror(errno)))") }
            written += count
        }
        outgoing.removeAll(keepingCapacity: true)
    }

    /// Appends what has arrived to `incoming`, waiting up to `milliseconds` (-1: for ever) for
    /// something; false when nothing came in that time.
    @discardableResult
    func read(waitingUpTo milliseconds: Int32 = -1) throws -> Bool {
        var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&poll, 1, milliseconds) > 0 else { return false }
        let count = readBuffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
        guard count > 0 else {
            throw Failure(count == 0 ? "\(peer) closed the connection" : "reading from \(peer): \(String(cString: strerror(errno)))")
        }
        incoming += readBuffer[0..<count]
        return true
    }

    /// Lets go of what the parser has read: all of it, or once a mebibyte has piled up.
    func discardRead() {
        if readOffset == incoming.count {
            incoming.removeAll(keepingCapacity: true)
            readOffset = 0
        } else if readOffset > 1 << 20 {
            incoming.removeFirst(readOffset)
            readOffset = 0
        }
    }

    /// Where the CRLF-ended line starting at `start` ends (past its CRLF), or nil while it is
    /// incomplete: the framing of both peers' protocols.
    static func lineEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index + 2 }
            index += 1
        }
        return nil
    }
}
