import CZeroMQ

/// A CURVE key pair in Z85 text (40 characters each), as libzmq's `ZMQ_CURVE_*` options take them.
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: String
    public let secretKey: String

    /// A fresh key pair from libzmq's generator (libsodium's randomness).
    public static func generate() throws -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicKey, &secretKey) == 0 else { throw ZMQError.last("zmq_curve_keypair") }
        return CurveKeyPair(publicKey: Z85.string(publicKey), secretKey: Z85.string(secretKey))
    }

    /// The pair of `secretKey`, its public half derived. Throws `CurveKeyError` for text that is
    /// not a 40-character Z85 key.
    public init(secretKey: String) throws(CurveKeyError) {
        try Z85.validateKey(secretKey)
        var publicKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&publicKey, secretKey) == 0 else { throw .notAKey("secret key is not a CURVE key") }
        self.init(publicKey: Z85.string(publicKey), secretKey: secretKey)
    }

    private init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

public enum CurveKeyError: Error, Equatable, CustomStringConvertible {
    case notAKey(String)
    public var description: String {
        switch self {
        case .notAKey(let why): why
        }
    }
}

/// Z85 (ZeroMQ RFC 32), the text form of CURVE keys.
public enum Z85 {
    /// Checks that `key` is 40 Z85 characters that decode to 32 bytes.
    public static func validateKey(_ key: String) throws(CurveKeyError) {
        guard key.utf8.count == 40 else {
            throw .notAKey("a CURVE key is 40 Z85 characters, got \(key.utf8.count)")
        }
        guard decode(key) != nil else { throw .notAKey("'\(key)' is not Z85 text") }
    }

    /// The bytes of Z85 `text` (a multiple of 5 characters), nil if it is not Z85.
    public static func decode(_ text: String) -> [UInt8]? {
        let count = text.utf8.count
        guard count % 5 == 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: count / 5 * 4)
        // zmq_z85_decode reads only Z85 characters; anything else makes it return NULL.
        return zmq_z85_decode(&bytes, text) == nil ? nil : bytes
    }

    /// The Z85 text of `bytes` (a multiple of 4 bytes).
    public static func encode(_ bytes: [UInt8]) -> String? {
        guard bytes.count % 4 == 0 else { return nil }
        var text = [CChar](repeating: 0, count: bytes.count / 4 * 5 + 1)
        return zmq_z85_encode(&text, bytes, bytes.count) == nil ? nil : string(text)
    }

    static func string(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// How a process's sockets use CURVE (ZeroMQ RFC 26): every TCP connection it makes is encrypted
/// and proves `identity` to a server presenting `serverKey`; every endpoint it binds (when it has
/// a `server` pair) encrypts and admits only the client keys `authorizer` accepts. Over `ipc://`
/// the same keys authenticate the connection once (`LocalProof`) and its frames are not sealed.
///
/// It is set once per `Context` (`Context.enableCurve`), before the context's sockets connect or
/// bind, so the code that makes sockets — publishers, subscribers, MDP clients and workers, the
/// device SDK — need not know about it. `inproc://` endpoints stay plain: they never leave the process.
public struct CurveSecurity: Sendable {
    /// This process's own pair: its proof when it connects.
    public var identity: CurveKeyPair
    /// The public key of the servers it connects to (the bus, the device ingest).
    public var serverKey: String
    /// The pair it serves with, when it binds endpoints (the bus, the device ingest). A process
    /// without one refuses to bind TCP/IPC endpoints rather than listen in plain text.
    public var server: CurveKeyPair?
    /// Decides, per connecting client's public key (Z85), whether it may connect.
    public var authorizer: any CurveAuthorizer

    public init(
        identity: CurveKeyPair, serverKey: String, server: CurveKeyPair? = nil, authorizer: any CurveAuthorizer = AllowedCurveKeys([:])
    ) {
        self.identity = identity
        self.serverKey = serverKey
        self.server = server
        self.authorizer = authorizer
    }
}

/// Who may connect to a CURVE server.
public protocol CurveAuthorizer: Sendable {
    /// The name of the client whose public key (Z85) this is, or nil when it is not allowed.
    func clientName(forPublicKey key: String) -> String?
}

/// A fixed set of allowed client keys, each with a name for the logs.
public struct AllowedCurveKeys: CurveAuthorizer {
    public let names: [String: String]
    /// `names`: public key (Z85) → the client's name.
    public init(_ names: [String: String]) { self.names = names }
    public func clientName(forPublicKey key: String) -> String? { names[key] }
}

extension Socket {
    /// Makes this socket a CURVE server with `keys`, asking the context's ZAP handler about each client.
    /// libzmq admits any valid key when no handler is bound (ZMQ_ZAP_ENFORCE_DOMAIN, which would
    /// refuse instead, is a draft option not in Debian's build): `Context.enableCurve` binds the
    /// handler before it returns, so no server socket of the context exists without one.
    func becomeCurveServer(_ keys: CurveKeyPair, domain: String) throws {
        try set(ZMQ_CURVE_SERVER, 1, name: "ZMQ_CURVE_SERVER")
        try set(ZMQ_CURVE_SECRETKEY, bytes: Frame(frame: keys.secretKey), name: "ZMQ_CURVE_SECRETKEY")
        try setZAPDomain(domain)
    }

    /// Makes this socket's next `ipc://` endpoint a PLAIN server asking the ZAP handler, which
    /// checks each client's `LocalProof`. libzmq copies a socket's options into each endpoint as
    /// it binds or connects, so one socket can be a CURVE server on TCP and this on IPC.
    func becomeLocalServer(domain: String) throws {
        try set(ZMQ_PLAIN_SERVER, 1, name: "ZMQ_PLAIN_SERVER")
        try setZAPDomain(domain)
    }

    /// Makes this socket's next `ipc://` connection prove `identity` to the server whose key is `serverKey`.
    func becomeLocalClient(_ identity: CurveKeyPair, serverKey: String) throws {
        let proof: String
        do { proof = try LocalProof.proof(identity: identity, serverKey: serverKey) } catch {
            throw ZMQError(code: EINVAL, operation: "local proof: \(error)")
        }
        try setPlainCredentials(user: identity.publicKey, password: proof)
    }

    /// ZMTP PLAIN's user name and password for the next connection.
    func setPlainCredentials(user: String, password: String) throws {
        try set(ZMQ_PLAIN_USERNAME, bytes: Frame(frame: user), name: "ZMQ_PLAIN_USERNAME")
        try set(ZMQ_PLAIN_PASSWORD, bytes: Frame(frame: password), name: "ZMQ_PLAIN_PASSWORD")
    }

    /// Makes this socket a CURVE client proving `identity` to a server presenting `serverKey`.
    func becomeCurveClient(_ identity: CurveKeyPair, serverKey: String) throws {
        try set(ZMQ_CURVE_SERVERKEY, bytes: Frame(frame: serverKey), name: "ZMQ_CURVE_SERVERKEY")
        try set(ZMQ_CURVE_PUBLICKEY, bytes: Frame(frame: identity.publicKey), name: "ZMQ_CURVE_PUBLICKEY")
        try set(ZMQ_CURVE_SECRETKEY, bytes: Frame(frame: identity.secretKey), name: "ZMQ_CURVE_SECRETKEY")
    }
}
