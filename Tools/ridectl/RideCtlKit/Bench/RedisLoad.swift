import Foundation
import Geo

/// The benchmark load's fixes sent to Redis (`bench-devices --redis`): a batch is one
/// `GEOADD drivers lon lat member …` with a triple per fix, queued on the connection of its device
/// and written pipelined (`exchange` flushes what is queued and counts the replies).
final class RedisLoad {
    static let key = "drivers"

    private let connections: [RedisConnection]
    private var outstanding = 0

    /// HOST and PORT of `address`, or nil where it is not HOST:PORT with a port from 1 to 65535.
    static func hostAndPort(_ address: String) -> (host: String, port: Int)? {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
        return (String(parts[0]), port)
    }

    /// `address` is HOST:PORT.
    init(address: String, connections count: Int) throws {
        guard let (host, port) = Self.hostAndPort(address), count > 0 else {
            throw RedisConnection.Failure("--redis must be HOST:PORT, not '\(address)'")
        }
        connections = try (0..<count).map { _ in try RedisConnection(host: host, port: port) }
    }

    var errors: Int { connections.reduce(0) { $0 + $1.errors } }

    func add(device: Int, fixes: [GeoPoint]) {
        var arguments: [[UInt8]] = [Array("GEOADD".utf8), Array(Self.key.utf8)]
        let member = Array("bench-\(device)".utf8)
        for fix in fixes {
            var longitude: [UInt8] = []
            FixedDecimal.append(fix.longitude, to: &longitude)
            var latitude: [UInt8] = []
            FixedDecimal.append(fix.latitude, to: &latitude)
            arguments += [longitude, latitude, member]
        }
        connections[device % connections.count].queue(arguments)
        outstanding += 1
    }

    /// Writes what is queued and returns the replies that came meanwhile.
    func exchange() throws -> UInt64 {
        var replies = 0
        for connection in connections where connection.queuedBytes > 0 { try connection.flush() }
        for connection in connections { replies += try connection.receiveReplies(waitingUpTo: connection === connections[0] ? 1 : 0) }
        outstanding -= replies
        return UInt64(replies)
    }

    /// Waits (up to 10 s) for the replies still to come.
    func drain() throws -> UInt64 {
        var replies: UInt64 = 0
        let deadline = Date().addingTimeInterval(10)
        while outstanding > 0 && Date() < deadline { replies += try exchange() }
        return replies
    }
}
