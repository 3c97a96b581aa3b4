import Foundation

/// Stripe's request bodies: `application/x-www-form-urlencoded`, nested fields written as
/// `metadata[order_id]=…` (the brackets literal, as Stripe's own examples send them), every
/// other byte outside RFC 3986's unreserved set percent-encoded.
public enum StripeForm {
    /// The body of `fields`, in their order (the order is part of the request an idempotency key names).
    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { escape($0.0, keepBrackets: true) + "=" + escape($0.1, keepBrackets: false) }.joined(separator: "&")
    }

    /// The fields of a form body (for the fake provider and tests); `+` is a space, as forms have it.
    public static func decode(_ body: String) -> [(String, String)] {
        body.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let unescape = { (text: Substring) in
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            return (unescape(parts[0]), parts.count > 1 ? unescape(parts[1]) : "")
        }
    }

    static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    static func escape(_ text: String, keepBrackets: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) || (keepBrackets && (byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]"))) {
                out.append(Character(UnicodeScalar(byte)))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
