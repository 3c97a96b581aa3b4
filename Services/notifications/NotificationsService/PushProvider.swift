import Foundation
import RideModels
import Wire

/// Where notifications go beyond the inbox: a push service (APNs, FCM) in production. The default
/// writes each push as a JSON line to a file, which is what a developer wants to look at.
public protocol PushProvider: Sendable {
    func push(_ notification: UserNotification, to tokens: [String]) async throws
}

/// `<data-dir>/push.jsonl`: one line per push, `{"tokens":[…],"notification":{…}}`.
public actor FilePushProvider: PushProvider {
    let path: String

    public init(path: String) { self.path = path }

    public func push(_ notification: UserNotification, to tokens: [String]) async throws {
        let members: [String: JSONValue] = ["tokens": .array(tokens.map(JSONValue.string)), "notification": try JSONValue(encoding: notification)]
        var line = members.jsonBytes
        line.append(0x0A)
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line))
    }
}
