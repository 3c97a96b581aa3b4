import Crypto
import Foundation
import Wire

/// An opaque refresh token, `<session id>.<32 random bytes, base64url>`. The session id in front
/// finds the session; only the token's SHA-256 is stored, so a copy of the database refreshes nothing.
struct RefreshToken: Sendable, Equatable {
    let session: String
    let text: String

    /// A new token of a session.
    init(session: String) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let secret = Base64URL.encode(Data(bytes))
        self.session = session
        self.text = session + "." + secret
    }

    /// A token as a client sent it; nil when it is not shaped like one.
    init?(parsing text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 256, parts.count == 2, SessionID.isValid(parts[0]), parts[1].utf8.count >= 32 else { return nil }
        self.session = String(parts[0])
        self.text = text
    }

    /// What the sessions table keeps: SHA-256, hex.
    var hash: String { SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined() }
}

/// Session ids: `s-` and 24 random hex digits.
enum SessionID {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return "s-" + (0..<3).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max, using: &generator)) }.joined()
    }

    static func isValid(_ id: Substring) -> Bool {
        id.hasPrefix("s-") && id.utf8.count == 26 && id.dropFirst(2).allSatisfy(\.isHexDigit)
    }
}
