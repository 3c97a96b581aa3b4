import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket opening read off a plain TCP socket: the upgrade response, then every server
/// frame until the close frame (or the end). It keeps every byte the server sent — unlike a
/// client library that can drop bytes read with the handshake — so a refusal test fails only
/// when the gateway did not refuse.
struct RawWebSocket {
    struct Opening: CustomStringConvertible {
        var statusLine = ""
        var texts: [String] = []
        var closeCode: Int?
        var description: String { "\(statusLine); texts \(texts); close \(closeCode.map(String.init) ?? "none")" }
    }

    /// Connects to `ws://127.0.0.1:<port><path>`, upgrades, and reads until the server closes or `timeout` passes.
    static func open(port: Int, path: String, timeout: Duration = .seconds(30)) async throws -> Opening {
        try await Task.detached { try blockingOpen(port: port, path: path, timeout: timeout) }.value
    }

    private static func blockingOpen(port: Int, path: String, timeout: Duration) throws -> Opening {
        guard let fd = RawTCP.connect(port: port) else { throw TestFailure("connect to :\(port): errno \(errno)") }
        defer { close(fd) }
        var wait = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw TestFailure("send: errno \(errno)")
        }
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            if let opening = parse(received), opening.closeCode != nil { return opening }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }  // the server closed the connection
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                break
            }
            received += buffer[0..<count]
        }
        return parse(received) ?? Opening(statusLine: "no response: \(String(decoding: received, as: UTF8.self).prefix(200))")
    }

    /// The response's status line and the frames complete so far; nil before the response head.
    static func parse(_ bytes: [UInt8]) -> Opening? {
        guard let end = bytes.indices.dropLast(3).first(where: { bytes[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        var opening = Opening(statusLine: String(head.split(separator: "\r\n").first ?? ""))
        var at = end + 4
        while at + 2 <= bytes.count {
            let opcode = bytes[at] & 0x0F
            var length = Int(bytes[at + 1] & 0x7F)
            var start = at + 2
            if length == 126 {
                guard start + 2 <= bytes.count else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127 {
                guard start + 8 <= bytes.count else { break }
                length = bytes[start..<start + 8].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= bytes.count else { break }
            let payload = bytes[start..<start + length]
            switch opcode {
            case 1: opening.texts.append(String(decoding: payload, as: UTF8.self))
            case 8:
                opening.closeCode = payload.count >= 2 ? Int(payload[payload.startIndex]) << 8 | Int(payload[payload.startIndex + 1]) : 1005
            default: break
            }
            at = start + length
        }
        return opening
    }
}
