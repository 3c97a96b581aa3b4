import Crypto
import Foundation
import Wire

/// Makes and checks device credentials: `dc1.<kid>.<session id>.<mac>`, the mac an HMAC-SHA256
/// (base64url) over the session id and the device id, under a key derived from the token key named
/// by `kid`. Nothing more is stored: the session's row says whether it still lives, and the
/// account says which device it names. The key rotates with the token key (the previous one still
/// checks during a rotation).
struct DeviceCredentialKeys: Sendable {
    /// A credential as a phone sent it, shaped right; not yet checked.
    struct Presented: Equatable {
        let kid: String
        let session: String
        let mac: Data
    }

    private let keys: [String: SymmetricKey]
    /// The kid new credentials are made with (the token key's).
    let currentKey: String

    init(secret: [UInt8], previous: [UInt8]? = nil) {
        currentKey = TokenSigner.keyID(secret)
        var keys = [currentKey: Self.derive(secret)]
        if let previous { keys[TokenSigner.keyID(previous)] = Self.derive(previous) }
        self.keys = keys
    }

    /// A key of its own for credentials, so a device credential can never pass for a token's signature.
    private static func derive(_ secret: [UInt8]) -> SymmetricKey {
        SymmetricKey(
            data: Data(HMAC<SHA256>.authenticationCode(for: Data("ride device credential v1".utf8), using: SymmetricKey(data: secret))))
    }

    private static func message(session: String, deviceID: String) -> Data { Data("\(session)\n\(deviceID)".utf8) }

    /// The credential of `deviceID` in `session`.
    func make(session: String, deviceID: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Self.message(session: session, deviceID: deviceID), using: keys[currentKey]!)
        return "dc1.\(currentKey).\(session).\(Base64URL.encode(Data(mac)))"
    }

    /// `text` taken apart; nil when it is not shaped like a credential.
    static func parse(_ text: String) -> Presented? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 256, parts.count == 4, parts[0] == "dc1", parts[1].utf8.count == 16, parts[1].allSatisfy(\.isHexDigit),
            SessionID.isValid(parts[2]), let mac = Base64URL.decode(parts[3]), mac.count == 32
        else { return nil }
        return Presented(kid: String(parts[1]), session: String(parts[2]), mac: mac)
    }

    /// Whether one of our keys made `presented` for `deviceID` (in constant time).
    func isGenuine(_ presented: Presented, deviceID: String) -> Bool {
        guard let key = keys[presented.kid] else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            presented.mac, authenticating: Self.message(session: presented.session, deviceID: deviceID), using: key)
    }
}
