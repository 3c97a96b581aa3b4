import CZeroMQ
import Synchronization

/// The ZAP handler (ZeroMQ RFC 27) of one context: libzmq asks it, over
/// `inproc://zeromq.zap.01`, whether each client that completed a CURVE handshake with one of
/// the context's server sockets may connect (or, over `ipc://`, a PLAIN handshake carrying a
/// `LocalProof`); it answers from a `CurveAuthorizer`.
///
/// One thread owns its REP socket (as in the zguide's and CZMQ's `zauth`). A refused client never
/// gets a connection: it cannot publish, subscribe, send a request or register as a worker.
public final class ZAPHandler: Sendable {
    /// The ZAP domain our server sockets set (`ZMQ_ZAP_DOMAIN`): the authorizer decides.
    public static let domain = "ride"
    /// The domain of sockets that admit any client key (`Socket.admitsAnyCurveKey`), named `anonymousName`.
    public static let anyKeyDomain = "ride.any-key"
    public static let anonymousName = "anonymous"
    static let endpoint = "inproc://zeromq.zap.01"

    /// One answer, for the caller's log.
    public struct Decision: Sendable, Equatable {
        /// The peer's IP address, or for IPC `HOST:UID:GID:PID` (the kernel's peer credentials).
        public var address: String
        /// The client's public key (Z85), empty when it named none.
        public var clientKey: String
        /// The authorizer's name for the key, nil when refused.
        public var clientName: String?
        /// Why it was refused, for the log (nil when admitted).
        public var refusal: String? = nil
        public var allowed: Bool { clientName != nil }
    }

    private let stopRequested = Atomic<Bool>(false)
    private let thread: Mutex<OwnedThread?> = Mutex(nil)

    /// Binds the handler in `context` and starts answering; returns once it is bound, so server
    /// sockets created afterwards always find it.
    /// `server`: the pair the context serves with, which checks local proofs; `localUsers`: the user
    /// ids an IPC peer may run as.
    init(
        context: Context, authorizer: any CurveAuthorizer, server: CurveKeyPair, localUsers: Set<UInt32>,
        onDecision: @escaping @Sendable (Decision) -> Void
    ) async throws {
        let local = LocalPeers(server: server, users: localUsers)
        let (thread, _) = try await OwnedThread.start(name: "zap-handler") { [self] ready in
            let socket: Socket
            do {
                socket = try Socket(.rep, context: context)
                try socket.setReceiveTimeout(milliseconds: 250)
                try socket.bind(Self.endpoint)
                ready(.success(()))
            } catch {
                ready(.failure(error))
                return
            }
            serve(socket, authorizer: authorizer, local: local, onDecision: onDecision)
            socket.close()
        }
        self.thread.withLock { $0 = thread }
    }

    public func stop() async {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        await thread.withLock { $0 }?.join()
    }

    private func serve(_ socket: Socket, authorizer: any CurveAuthorizer, local: LocalPeers, onDecision: @Sendable (Decision) -> Void) {
        while !stopRequested.load(ordering: .relaxed) {
            let request: [Frame]
            do {
                guard let frames = try socket.receive() else { continue }
                request = frames
            } catch let error as ZMQError where error.isAgain {
                continue
            } catch {
                return  // the context is ending
            }
            let (reply, decision) = Self.answer(request, authorizer: authorizer, local: local)
            if let decision { onDecision(decision) }
            do { try socket.send(message: reply) } catch { return }
        }
    }

    /// Who may connect over `ipc://`: a peer running as one of `users` that proves its key to `server`.
    struct LocalPeers: Sendable {
        var server: CurveKeyPair
        var users: Set<UInt32>
    }

    /// The reply to one request (RFC 27: version, request id, domain, address, identity,
    /// mechanism, credentials…) and the decision it records (nil for a malformed request).
    static func answer(_ request: [Frame], authorizer: any CurveAuthorizer, local: LocalPeers?) -> (reply: [Frame], decision: Decision?) {
        let version = Frame(frame: "1.0")
        guard request.count >= 6, request[0] == version else {
            return (
                [version, request.count > 1 ? request[1] : [], Frame(frame: "500"), Frame(frame: "malformed ZAP request"), [], []], nil
            )
        }
        let requestID = request[1]
        let domain = request[2].utf8String ?? ""
        let address = request[3].utf8String ?? ""
        let mechanism = request[5].utf8String ?? ""
        var decision = Decision(address: address, clientKey: "", clientName: nil)
        let name = { (key: String) in domain == anyKeyDomain ? anonymousName : authorizer.clientName(forPublicKey: key) }
        switch mechanism {
        case "CURVE" where request.count >= 7 && request[6].count == 32:
            decision.clientKey = Z85.encode(request[6]) ?? ""
            decision.clientName = name(decision.clientKey)
            if decision.clientName == nil { decision.refusal = "its key is not allowed" }
        case "PLAIN" where request.count >= 8:
            decision.clientKey = request[6].utf8String ?? ""
            if let local, let user = LocalProof.peerUser(address: address), local.users.contains(user) {
                if LocalProof.verify(request[7], clientKey: decision.clientKey, server: local.server) {
                    decision.clientName = name(decision.clientKey)
                    if decision.clientName == nil { decision.refusal = "its key is not allowed" }
                } else {
                    decision.refusal = "local proof does not match the key"
                }
            } else {
                decision.refusal = "a local peer must run as this process's user"
            }
        default:
            decision.refusal = "\(mechanism) is not a way in: CURVE, or PLAIN with a local proof over ipc://"
        }
        guard let name = decision.clientName else {
            return ([version, requestID, Frame(frame: "400"), Frame(frame: decision.refusal ?? "refused"), [], []], decision)
        }
        return ([version, requestID, Frame(frame: "200"), Frame(frame: "OK"), Frame(frame: name), []], decision)
    }
}
