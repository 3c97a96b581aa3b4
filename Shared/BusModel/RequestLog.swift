import Foundation
import Wire

#if !FUZZING
import Crypto
#endif

/// One keyed request as a service remembers it: the caller's key (`request_id` in the params),
/// scoped by the caller the params name, and a hash of the op and the rest of the params — the
/// same key with other params is another request, refused (422 `idempotency_key_reused`).
public struct RequestKey: Sendable, Equatable {
    /// Who the key belongs to: `<role>:<id>` of the params' `caller`, `user:<id>` of a `user_id`, or "" (a caller on the bus itself).
    public var scope: String
    public var key: String
    /// SHA-256 (hex) of the op's name and its params without `request_id`, as sorted-key JSON —
    /// an HMAC under the service's secret when its router seals (`RequestSealing`).
    public var hash: String
    /// What the hash is of (the op and the params): with `RequestSealing`, the reply's key comes
    /// from it, so only a retry, which sends the params again, opens the reply. Never stored.
    public var material: [UInt8] = []
    /// How long this key's reply is answered again (`OpRouter.replayWindows`; at most `lifetime`):
    /// after that the key is forgotten and the request runs again.
    public var kept: TimeInterval = RequestKey.lifetime

    public init(scope: String, key: String, hash: String, material: [UInt8] = []) {
        self.scope = scope
        self.key = key
        self.hash = hash
        self.material = material
    }

    /// The params member that carries the key.
    public static let member = "request_id"
    /// The params member that, when present, stands for the request in place of the params'
    /// hash: a caller whose params carry values of the moment (a time, a batch id) hashes what it
    /// was asked (the gateway: the HTTP request), so a retry is the same request.
    public static let hashMember = "request_hash"
    /// The code of the refusal of a keyed request whose first attempt has not answered yet (409).
    public static let inProgress = "request_in_progress"
    /// How long a key is remembered.
    public static let lifetime: TimeInterval = 24 * 3600
    /// How long a claim without a reply holds (the first attempt still running); after that the
    /// attempt counts as lost (its process died) and a retry runs the op again.
    public static let lease: TimeInterval = 60

    /// An idempotency key as apps may send it: 1 to 255 visible ASCII characters (`!` to `~`).
    public static func isValid(_ key: String) -> Bool {
        let bytes = key.utf8
        return (1...255).contains(bytes.count) && bytes.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// The key of a request whose params carry `request_id`; nil when they carry none. 422
    /// `invalid_params` for a `request_id` that is not a valid key; the params' own errors are
    /// left to the op (nil when they are not a JSON object).
    public init?(op: String, json: [UInt8], sealing: RequestSealing? = nil) throws(ServiceError) {
        // Most requests carry no key: no parse for them.
        guard json.firstRange(of: Array(Self.member.utf8)) != nil,
            case .object(var params)? = try? JSONCoding.decode(JSONValue.self, from: json),
            let value = params.removeValue(forKey: Self.member)
        else { return nil }
        guard let key = value.stringValue, Self.isValid(key) else {
            throw .unprocessable("invalid_params", "\(Self.member): must be a string of 1 to 255 visible ASCII characters")
        }
        if let stated = params.removeValue(forKey: Self.hashMember) {
            guard let hash = stated.stringValue, (1...128).contains(hash.utf8.count) else {
                throw .unprocessable("invalid_params", "\(Self.hashMember): must be a string of 1 to 128 characters")
            }
            params = ["request": .string(hash)]
        }
        let material = Self.material(op: op, params: params)
        self.init(
            scope: Self.scope(params), key: key, hash: sealing?.hash(material) ?? Self.sha256(material), material: material)
    }

    static func scope(_ params: [String: JSONValue]) -> String {
        if let caller = params["caller"], let id = caller["id"]?.stringValue {
            return "\(caller["role"]?.stringValue ?? ""):\(id)"
        }
        if let user = params["user_id"]?.stringValue { return "user:\(user)" }
        return ""
    }

    /// The hash of `op` with `params` (keys sorted, so the order an app wrote them in does not count).
    public static func hash(op: String, params: [String: JSONValue]) -> String {
        sha256(material(op: op, params: params))
    }

    /// The op's name and its params as sorted-key JSON: what a request is.
    static func material(op: String, params: [String: JSONValue]) -> [UInt8] {
        Array(op.utf8) + [0x0A] + ((try? JSONCoding.encode(JSONValue.object(params))) ?? [])
    }

    /// SHA-256 of `material`, as hex.
    static func sha256(_ material: [UInt8]) -> String {
        #if FUZZING
        fatalError("the fuzz build has no SHA-256 (Package.swift leaves swift-crypto out of it)")
        #else
        SHA256.hash(data: material).map { String(format: "%02x", $0) }.joined()
        #endif
    }
}

/// What a service's store says of a keyed request when it arrives.
public enum RequestClaim: Sendable, Equatable {
    /// Not seen (or expired): this attempt runs the op, then records its reply.
    case first
    /// Answered before: the same reply again.
    case replay(ServiceReply)
    /// Another attempt holds it and has not answered yet.
    case running
    /// The key was used with other params (or another op).
    case reused
}

/// Where a service remembers keyed requests and their replies (a `requests` table in its own
/// database, so every instance sees them). Set as `OpRouter.requests`, it makes every op idempotent
/// for callers that send a `request_id`.
public protocol RequestLog: Sendable {
    /// Claims `key` at `now` — forgetting keys older than `RequestKey.lifetime`, this key when older
    /// than its `kept`, and claims older than `RequestKey.lease` that never got a reply — or says
    /// how it was answered.
    func claim(_ key: RequestKey, now: Date) async throws -> RequestClaim
    /// Records the reply of a claimed request.
    func finish(_ key: RequestKey, reply: ServiceReply) async throws
    /// Lets go of a claim whose op failed (it changed nothing): a retry runs it again.
    func release(_ key: RequestKey) async throws
}
