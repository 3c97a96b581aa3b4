import Foundation
import Wire

#if !FUZZING
import Crypto
#endif

/// Keeps what a service's requests table holds of keyed requests unreadable to whoever reads the
/// table: a request's hash is an HMAC under the service's secret (so a stolen table tests no guess
/// of a password it was a hash of), and its reply — a log-in's tokens, a device credential — is
/// sealed with AES-GCM under a key derived from that secret and the request itself. A retry sends
/// the request again and so opens the reply; the table alone opens nothing.
public struct RequestSealing: Sendable {
    #if FUZZING
    // The fuzz build has no swift-crypto (Package.swift), and the fuzzer makes no sealing router.
    public init(secret: [UInt8]) { fatalError("the fuzz build has no RequestSealing") }
    public func hash(_ material: [UInt8]) -> String { fatalError("the fuzz build has no RequestSealing") }
    public func seal(_ reply: ServiceReply, for key: RequestKey) throws -> ServiceReply {
        fatalError("the fuzz build has no RequestSealing")
    }
    public func open(_ stored: ServiceReply, for key: RequestKey) -> ServiceReply? { fatalError("the fuzz build has no RequestSealing") }
    #else
    private let hashing: SymmetricKey
    private let sealing: SymmetricKey

    /// `secret`: the service's own (at least 32 bytes), never stored beside the table.
    public init(secret: [UInt8]) {
        let master = SymmetricKey(data: secret)
        hashing = HKDF<SHA256>.deriveKey(inputKeyMaterial: master, info: Array("ride request hash".utf8), outputByteCount: 32)
        sealing = HKDF<SHA256>.deriveKey(inputKeyMaterial: master, info: Array("ride request reply".utf8), outputByteCount: 32)
    }

    /// The hash a keyed request is stored under.
    public func hash(_ material: [UInt8]) -> String {
        HMAC<SHA256>.authenticationCode(for: material, using: hashing).map { String(format: "%02x", $0) }.joined()
    }

    /// `reply` as the table keeps it: `{"sealed":"<base64 of nonce, ciphertext and tag>"}`.
    public func seal(_ reply: ServiceReply, for key: RequestKey) throws -> ServiceReply {
        let box = try AES.GCM.seal(reply.json, using: replyKey(key))
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return ServiceReply(status: reply.status, json: Array(#"{"sealed":"\#(combined.base64EncodedString())"}"#.utf8))
    }

    /// The reply `seal` made for the same request; nil when `stored` is not sealed or does not open.
    public func open(_ stored: ServiceReply, for key: RequestKey) -> ServiceReply? {
        guard case .object(let object)? = try? JSONCoding.decode(JSONValue.self, from: stored.json), object.count == 1,
            let text = object["sealed"]?.stringValue, let data = Data(base64Encoded: text),
            let box = try? AES.GCM.SealedBox(combined: data), let json = try? AES.GCM.open(box, using: replyKey(key))
        else { return nil }
        return ServiceReply(status: stored.status, json: Array(json))
    }

    private func replyKey(_ key: RequestKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: sealing, salt: Array(key.scope.utf8) + [0] + Array(key.key.utf8), info: key.material, outputByteCount: 32)
    }
    #endif
}
