import Crypto
import Foundation

/// Webhook signatures by the Standard Webhooks convention (https://www.standardwebhooks.com): the
/// HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, so a receiver can check the body,
/// refuse an old timestamp and drop an id it has seen.
public enum StandardWebhook {
    /// The headers of a delivery.
    public enum Header {
        /// The delivery's id, the same on every attempt: receivers dedupe by it.
        public static let id = "webhook-id"
        /// The attempt's time, in Unix seconds.
        public static let timestamp = "webhook-timestamp"
        /// `v1,<base64 signature>` per secret, space-separated.
        public static let signature = "webhook-signature"
    }

    public static let secretPrefix = "whsec_"
    /// The bytes a `whsec_` secret's key may have: the convention asks for 24 to 64.
    public static let keyLengths = 24...64
    /// The bytes a secret without the prefix may have (taken as they are, as before the convention).
    public static let rawSecretLengths = 16...256

    /// A new secret: `whsec_` and 32 random bytes in base64.
    public static func newSecret() -> String {
        secretPrefix + Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64EncodedString()
    }

    /// The HMAC key of a secret: after `whsec_`, base64 (padding optional, as the reference
    /// libraries accept); a secret without the prefix is its UTF-8 bytes.
    public static func key(of secret: String) -> [UInt8] {
        guard secret.hasPrefix(secretPrefix), let key = base64(secret.dropFirst(secretPrefix.count)) else { return Array(secret.utf8) }
        return key
    }

    /// Why a secret given to `register_webhook` or `rotate_webhook_secret` is refused; nil when it is fine.
    public static func problem(with secret: String) -> String? {
        if secret.hasPrefix(secretPrefix) {
            guard let key = base64(secret.dropFirst(secretPrefix.count)), keyLengths.contains(key.count) else {
                return "secret: whsec_ must be followed by the base64 of \(keyLengths.lowerBound) to \(keyLengths.upperBound) bytes"
            }
            return nil
        }
        return rawSecretLengths.contains(secret.utf8.count)
            ? nil : "secret: must be whsec_ and a base64 key, or \(rawSecretLengths.lowerBound) to \(rawSecretLengths.upperBound) bytes"
    }

    /// `webhook-signature`'s value: one `v1,<base64>` per secret.
    public static func signature(id: String, timestamp: Int64, body: [UInt8], secrets: [String]) -> String {
        let content = Array("\(id).\(timestamp).".utf8) + body
        return secrets.map { secret in
            let mac = HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: key(of: secret)))
            return "v1," + Data(mac).base64EncodedString()
        }.joined(separator: " ")
    }

    /// The three headers of one attempt, signed with each secret.
    public static func headers(id: String, timestamp: Int64, body: [UInt8], secrets: [String]) -> [(name: String, value: String)] {
        [
            (Header.id, id), (Header.timestamp, String(timestamp)),
            (Header.signature, signature(id: id, timestamp: timestamp, body: body, secrets: secrets)),
        ]
    }

    private static func base64(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty else { return nil }
        let padded = String(text) + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        return Data(base64Encoded: padded).map(Array.init)
    }
}
