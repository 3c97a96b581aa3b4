import Foundation
import RideModels
import Wire

/// Where a push goes: a push service (APNs, FCM) in production. `PushSender` takes a push from the
/// outbox, asks the provider of its token's platform, and acts on the outcome.
public protocol PushProvider: Sendable {
    /// `apns`, `fcm` or `file`: the `platform` label of the pushes metric.
    var name: String { get }
    func send(_ notification: UserNotification, to token: String) async -> PushOutcome
}

/// What a provider made of one push.
public enum PushOutcome: Sendable, Equatable {
    case sent
    /// Worth another try (throttled, the service unavailable, our credentials refused for now);
    /// `after`: the least wait the service asked for (`Retry-After`).
    case retry(String, after: Duration? = nil)
    /// The service no longer knows the token (unregistered, malformed, another app's): it is removed.
    case deadToken(String)
    /// Refused for a reason another try would not change: given up.
    case failed(String)
}

/// `<data-dir>/push.jsonl`: one line per push, `{"tokens":[…],"notification":{…}}` — what a
/// developer wants to look at, and where a platform without a configured service's pushes go.
public actor FilePushProvider: PushProvider {
    let path: String
    public nonisolated let name = "file"

    public init(path: String) { self.path = path }

    public func send(_ notification: UserNotification, to token: String) async -> PushOutcome {
        do {
            let members: [String: JSONValue] = ["tokens": [.string(token)], "notification": try JSONValue(encoding: notification)]
            var line = members.jsonBytes
            line.append(0x0A)
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(line))
            return .sent
        } catch {
            return .retry("cannot write \(path): \(error)")
        }
    }
}
