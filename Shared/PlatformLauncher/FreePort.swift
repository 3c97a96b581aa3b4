import Foundation
import SettingsKit
import Synchronization

/// Free TCP ports on 127.0.0.1, for tests and benchmarks that start real processes side by side.
///
/// Ports come from 20000–32767, below Linux's ephemeral range (32768–60999): a port the kernel
/// hands out for `bind(0)` may be taken a moment later as the local end of some outgoing connection,
/// and a test opens many. Each candidate is checked by binding it; a process-wide counter keeps
/// concurrent tests from getting the same one. Between processes nothing can: a port picked but
/// not yet bound (a server still starting) looks free to another process. So `ridectl` (its
/// benchmarks and `up`, which the tests run beside themselves) picks from 26000–32767 and every
/// other process — the test process, which picks thousands — from 20000–25999.
public enum FreePort {
    private static let range = ProcessInfo.processInfo.processName.hasPrefix("ridectl") ? 26_000...32_767 : 20_000...25_999
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

    /// Probed with a plain POSIX socket, bound on every address: a libzmq socket would release the
    /// port only later, when its reaper thread gets to it, so the caller's bind could still fail.
    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = INADDR_ANY
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
