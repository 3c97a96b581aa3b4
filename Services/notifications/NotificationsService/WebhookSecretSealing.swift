import Crypto
import Foundation
import RideModels
import Wire

/// Webhook signing secrets as the webhooks table keeps them: AES-GCM-sealed under a key derived
/// from the service's own key (`--secret-file`), so a copy of the table or a backup signs nothing.
/// A secret kept before sealing (`whsec_…`) still opens as itself; the next rotation seals it.
public struct WebhookSecretSealing: Sendable {
    static let prefix = "sealed.v1."
    private let key: SymmetricKey

    public init(secret: [UInt8]) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), info: Array("ride webhook secret".utf8), outputByteCount: 32)
    }

    func seal(_ secret: String) throws -> String {
        guard let combined = try AES.GCM.seal(Data(secret.utf8), using: key).combined else { throw CryptoKitError.incorrectParameterSize }
        return Self.prefix + Base64URL.encode(combined)
    }

    /// The secret `stored` holds: opened when sealed, as it is when kept before sealing.
    func open(_ stored: String) throws -> String {
        guard stored.hasPrefix(Self.prefix) else { return stored }
        guard let data = Base64URL.decode(stored.dropFirst(Self.prefix.count)), let box = try? AES.GCM.SealedBox(combined: data),
            let secret = try? AES.GCM.open(box, using: key)
        else { throw WebhookSecretUnreadable() }
        return String(decoding: secret, as: UTF8.self)
    }

    func open(_ webhook: Webhook) throws -> Webhook {
        var webhook = webhook
        webhook.secret = try open(webhook.secret)
        return webhook
    }
}

/// A sealed secret this service's key does not open (another key than the one that sealed it).
struct WebhookSecretUnreadable: Error, CustomStringConvertible {
    var description: String { "a webhook secret is sealed under another key than this service's --secret-file" }
}
