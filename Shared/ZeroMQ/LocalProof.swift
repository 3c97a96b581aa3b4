#if !FUZZING
import Crypto
#endif

/// How a client proves its CURVE key over `ipc://`, where frames travel unsealed.
///
/// A Unix socket never leaves the machine: only the kernel carries its bytes, and only processes
/// that may open its file connect. There the bus authenticates each connection once instead of
/// sealing each frame: the client sends ZMTP's PLAIN handshake (RFC 24) with its public key as user
/// name and, as password, a proof only the holder of its secret key (or of the server's) can make —
/// 32 bytes derived (HKDF-SHA256) from the X25519 secret the two keys share, bound to both keys.
/// The ZAP handler checks the proof, that the peer runs as this process's user (the kernel's
/// `SO_PEERCRED`, which libzmq writes into the ZAP address) and the key's role, as for CURVE.
///
/// The proof is the same on every connection: a process that can read it off a Unix socket (the
/// same user, or root) can read the key files too. docs/security.md says what this leaves open.
public enum LocalProof {
    static let label = "ride ipc proof 1"

    /// The proof `identity` sends to the server whose public key (Z85) is `serverKey`, as Z85 text.
    public static func proof(identity: CurveKeyPair, serverKey: String) throws(CurveKeyError) -> String {
        guard let secret = Z85.decode(identity.secretKey), let own = Z85.decode(identity.publicKey),
            let server = Z85.decode(serverKey)
        else { throw .notAKey("a CURVE key of the local proof is not Z85 text") }
        let bytes = try derive(secret: secret, peer: server, serverKey: server, clientKey: own)
        // 32 bytes always encode: Z85 takes any multiple of 4.
        return Z85.encode(bytes) ?? ""
    }

    /// Whether `proof` (Z85 text) is the one `clientKey` (Z85) makes for `server`.
    public static func verify(_ proof: [UInt8], clientKey: String, server: CurveKeyPair) -> Bool {
        guard let given = String(validating: proof, as: UTF8.self).flatMap(Z85.decode), given.count == 32,
            let client = Z85.decode(clientKey), let secret = Z85.decode(server.secretKey), let own = Z85.decode(server.publicKey),
            let expected = try? derive(secret: secret, peer: client, serverKey: own, clientKey: client)
        else { return false }
        // Constant time: how much of a guess matched is not told by when the answer comes.
        return zip(given, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The user id of an IPC peer from its ZAP address: libzmq writes `HOST:UID:GID:PID` for a Unix
    /// socket (the kernel's `SO_PEERCRED`), an IP address for TCP.
    public static func peerUser(address: String) -> UInt32? {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 4 else { return nil }
        return UInt32(parts[parts.count - 3])
    }

    private static func derive(secret: [UInt8], peer: [UInt8], serverKey: [UInt8], clientKey: [UInt8]) throws(CurveKeyError) -> [UInt8] {
        #if FUZZING
        throw .notAKey("the fuzz build has no X25519 (Package.swift leaves swift-crypto out of it)")
        #else
        let shared: SharedSecret
        do {
            let own = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secret)
            shared = try own.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer))
        } catch {
            throw .notAKey("a CURVE key of the local proof is not an X25519 key: \(error)")
        }
        let key = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: Array(label.utf8), sharedInfo: serverKey + clientKey, outputByteCount: 32)
        return key.withUnsafeBytes { Array($0) }
        #endif
    }
}
