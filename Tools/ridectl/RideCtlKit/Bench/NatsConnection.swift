import Foundation

/// One connection to a NATS server speaking its text protocol (docs.nats.io, "Client Protocol"), for
/// `bench bus`, which measures NATS beside ride-bus: `CONNECT`, `SUB`, `PUB` and `PONG` out; `INFO`,
/// `MSG`, `PING`, `PONG` and `-ERR` in. Publications are queued and written by `flush`.
final class NatsConnection {
    typealias Failure = TCPConnection.Failure

    private let connection: TCPConnection
    /// PONGs that arrived, for `ping()`.
    private var pongs = 0
    /// The server's version, from its INFO.
    private(set) var serverVersion = "?"

    /// Connects and says who it is; returns once the server answered a PING (verbose off: no +OK).
    init(host: String = "127.0.0.1", port: Int) throws {
        connection = try TCPConnection(host: host, port: port, peer: "NATS")
        send(#"CONNECT {"verbose":false,"pedantic":false,"name":"ridectl-bench","lang":"swift","protocol":1}"#)
        try ping()
    }

    /// Queues one protocol line.
    private func send(_ line: String) { connection.queue(Array(line.utf8) + [13, 10]) }

    func subscribe(_ subject: String, queue: String? = nil, sid: Int) {
        send("SUB \(subject)\(queue.map { " \($0)" } ?? "") \(sid)")
    }

    func publish(_ subject: String, replyTo: String? = nil, payload: [UInt8]) {
        send("PUB \(subject)\(replyTo.map { " \($0)" } ?? "") \(payload.count)")
        connection.queue(payload + [13, 10])
    }

    var queuedBytes: Int { connection.queuedBytes }

    /// Writes everything queued.
    func flush() throws { try connection.flush() }

    /// Sends a PING and waits for its PONG: the server has then taken everything sent before it.
    /// Messages that arrive meanwhile are dropped.
    func ping() throws {
        send("PING")
        try flush()
        let awaited = pongs + 1
        while pongs < awaited { _ = try receive(waitingUpTo: -1) { _, _ in } }
    }

    /// Reads what has arrived (waiting up to `milliseconds`, -1 for ever), answers the server's
    /// PINGs, and hands each message's reply subject and payload to `handle`; returns how many.
    func receive(waitingUpTo milliseconds: Int32, _ handle: (_ replyTo: String?, _ payload: ArraySlice<UInt8>) throws -> Void) throws
        -> Int
    {
        guard try connection.read(waitingUpTo: milliseconds) else { return 0 }
        var messages = 0
        while let lineEnd = TCPConnection.lineEnd(connection.incoming, from: connection.readOffset) {
            let line = connection.incoming[connection.readOffset..<(lineEnd - 2)]
            if line.starts(with: Self.msg) {
                // MSG <subject> <sid> [reply-to] <#bytes>
                let fields = line.split(separator: UInt8(ascii: " "))
                guard fields.count == 4 || fields.count == 5, let size = Int(String(decoding: fields.last!, as: UTF8.self)) else {
                    throw Failure("NATS sent a MSG line that is not MSG <subject> <sid> [reply-to] <#bytes>")
                }
                let end = lineEnd + size + 2
                guard end <= connection.incoming.count else { break }
                try handle(
                    fields.count == 5 ? String(decoding: fields[3], as: UTF8.self) : nil, connection.incoming[lineEnd..<(lineEnd + size)])
                messages += 1
                connection.readOffset = end
                continue
            }
            if line.elementsEqual(Self.pingLine) {
                send("PONG")
                try flush()
            } else if line.elementsEqual(Self.pongLine) {
                pongs += 1
            } else if line.starts(with: Self.info) {
                serverVersion = Self.version(inInfo: line) ?? serverVersion
            } else if line.starts(with: Self.error) {
                throw Failure("NATS refused: \(String(decoding: line, as: UTF8.self))")
            }
            connection.readOffset = lineEnd
        }
        connection.discardRead()
        return messages
    }

    private static let msg = Array("MSG ".utf8)
    private static let info = Array("INFO ".utf8)
    private static let error = Array("-ERR".utf8)
    private static let pingLine = Array("PING".utf8)
    private static let pongLine = Array("PONG".utf8)

    /// `"version":"2.9.10"` of an INFO line's JSON.
    static func version(inInfo line: ArraySlice<UInt8>) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(info.count))) as? [String: Any] else { return nil }
        return object["version"] as? String
    }
}
