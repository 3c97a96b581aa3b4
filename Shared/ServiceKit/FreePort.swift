import Foundation
import Synchronization
import ZeroMQ

/// Free TCP ports on 127.0.0.1, for tests and benchmarks that start real processes side by side.
///
/// Ports come from 20000–32767, below Linux's ephemeral range (32768–60999): a port the kernel
/// hands out for `bind(0)` may be taken a moment later as the local end of some outgoing connection,
/// and a test opens many. Each candidate is checked by binding it; a process-wide counter keeps
/// concurrent tests from getting the same one.
public enum FreePort {
    private static let range = 20_000...32_767
    private static let cursor = Mutex<Int>(Int.random(in: range))

    public static func next() throws -> Int {
        for _ in 0..<range.count {
            let candidate = cursor.withLock { cursor -> Int in
                cursor = cursor >= range.upperBound ? range.lowerBound : cursor + 1
                return cursor
            }
            if isFree(candidate) { return candidate }
        }
        throw ConfigurationError("no free TCP port in \(range)")
    }

    private static func isFree(_ port: Int) -> Bool {
        guard let socket = try? Socket(.router) else { return false }
        defer { socket.close() }
        return (try? socket.bind("tcp://127.0.0.1:\(port)")) != nil
    }
}
