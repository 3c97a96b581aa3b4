import Crypto
import Foundation
import _CryptoExtras

/// Passwords are stored only as salted slow hashes: PBKDF2-HMAC-SHA256 with a random 16-byte
/// salt per user, written as `pbkdf2-sha256$<rounds>$<salt base64>$<hash base64>` so the rounds
/// can grow later without invalidating stored hashes. 600 000 rounds is OWASP's 2023 figure for
/// PBKDF2-SHA256 (~0.3 s on this machine's core: a login costs that, a guess too).
public struct PasswordHasher: Sendable {
    public static let defaultRounds = 600_000
    public var rounds: Int

    public init(rounds: Int = PasswordHasher.defaultRounds) { self.rounds = rounds }

    public func hash(_ password: String) throws -> String {
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = generator.next() }
        let key = try Self.derive(password, salt: salt, rounds: rounds)
        return "pbkdf2-sha256$\(rounds)$\(Data(salt).base64EncodedString())$\(Data(key).base64EncodedString())"
    }

    /// Whether `password` matches `stored`; false for a stored value of an unknown form.
    public func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$")
        guard parts.count == 4, parts[0] == "pbkdf2-sha256", let rounds = Int(parts[1]), rounds > 0,
            let salt = Data(base64Encoded: String(parts[2])), let expected = Data(base64Encoded: String(parts[3])),
            let key = try? Self.derive(password, salt: [UInt8](salt), rounds: rounds)
        else { return false }
        return Self.constantTimeEqual(key, [UInt8](expected))
    }

    static func derive(_ password: String, salt: [UInt8], rounds: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256,
            outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { [UInt8]($0) }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
