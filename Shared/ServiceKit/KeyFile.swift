import Foundation
import SettingsKit

/// A service's own key in a file: read when there, made once (32 random bytes, mode 0600) when
/// missing — users' token key, notifications' sealing key. Replicas sharing a database must be
/// given the same file (compose and Kubernetes mount it as a secret).
public enum KeyFile {
    /// The key in `path` (at least 32 bytes), made when there is none; `what` names it in errors.
    public static func loadOrCreate(_ path: String, what: String) throws -> [UInt8] {
        if let data = FileManager.default.contents(atPath: path) {
            guard data.count >= 32 else { throw ConfigurationError("\(what) file \(path) holds \(data.count) bytes; it needs at least 32") }
            return [UInt8](data)
        }
        // On PostgreSQL nothing else makes the data directory.
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        guard FileManager.default.createFile(atPath: path, contents: Data(key), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("cannot create the \(what) file \(path)")
        }
        return key
    }

    /// A key given in `path`, for the production check (`SecretPolicy`); nil when the file is
    /// missing or empty (the service will make a random one).
    public static func given(_ path: String?, name: String) -> SecretSetting? {
        guard let path, let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return nil }
        return SecretSetting(name: name, origin: path, value: [UInt8](data), minimumLength: 32)
    }
}
