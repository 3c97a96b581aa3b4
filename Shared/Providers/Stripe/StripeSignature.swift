import Crypto
import Foundation

/// Stripe's webhook signature: the `Stripe-Signature` header `t=<unix seconds>,v1=<hex>` where
/// v1 is HMAC-SHA256 of `"<t>.<raw body>"` with the endpoint's secret (`whsec_…`). A header may
/// carry several v1 (while a secret is rolled); one matching is enough. Older than the tolerance
/// (5 minutes, Stripe's default) is a replay.
public enum StripeSignature {
    public static let tolerance: TimeInterval = 300

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case malformed
        case stale(ageSeconds: Int)
        case mismatch

        public var description: String {
            switch self {
            case .malformed: "Stripe-Signature must be t=<unix seconds>,v1=<hex HMAC-SHA256>"
            case .stale(let age): "Stripe-Signature timestamp is \(age) s from now, outside the 300 s tolerance (a replay?)"
            case .mismatch: "Stripe-Signature does not match the body with the endpoint secret"
            }
        }
    }

    /// The header Stripe sends with `body`, signed at `timestamp`.
    public static func header(body: [UInt8], secret: String, timestamp: Int) -> String {
        "t=\(timestamp),v1=" + hex(mac(body: body, secret: secret, timestamp: "\(timestamp)"))
    }

    /// Throws unless `header` signs `body` with `secret` within the tolerance of `now`.
    public static func verify(body: [UInt8], header: String, secret: String, now: Date = Date()) throws(Failure) {
        var timestamp: Int?
        var signatures: [[UInt8]] = []
        for item in header.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { throw .malformed }
            if pair[0] == "t" { timestamp = Int(pair[1]) }
            if pair[0] == "v1", let bytes = unhex(pair[1]) { signatures.append(bytes) }
        }
        guard let timestamp, !signatures.isEmpty else { throw .malformed }
        let age = Int(now.timeIntervalSince1970) - timestamp
        guard abs(age) <= Int(tolerance) else { throw .stale(ageSeconds: age) }
        let key = SymmetricKey(data: Array(secret.utf8))
        let signed = Array("\(timestamp).".utf8) + body
        // Compared in constant time by swift-crypto.
        guard signatures.contains(where: { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: signed, using: key) }) else {
            throw .mismatch
        }
    }

    static func mac(body: [UInt8], secret: String, timestamp: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + body, using: SymmetricKey(data: Array(secret.utf8))))
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func unhex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
