import CZeroMQ
import Synchronization

/// The ZAP handler (ZeroMQ RFC 27) of one context: libzmq asks it, over
/// `inproc://zeromq.zap.01`, whether each client that completed a CURVE handshake with one of
/// the context's server sockets may connect; it answers from a `CurveAuthorizer`.
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
        /// The peer's IP address (empty for IPC).
        public var address: String
        /// The client's public key (Z85), empty when it did not use CURVE.
        public var clientKey: String
        /// The authorizer's name for the key, nil when refused.
        public var clientName: String?
        public var allowed: Bool { clientName != nil }
    }

    private let stopRequested = Atomic<Bool>(false)
    private let thread: Mutex<OwnedThread?> = Mutex(nil)

    /// Binds the handler in `context` and starts answering; returns once it is bound, so server
    /// sockets created afterwards always find it.
    init(context: Context, authorizer: any CurveAuthorizer, onDecision: @escaping @Sendable (Decision) -> Void) async throws {
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
            serve(socket, authorizer: authorizer, onDecision: onDecision)
            socket.close()
        }
        self.thread.withLock { $0 = thread }
    }

    public func stop() async {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        await thread.withLock { $0 }?.join()
    }

    private func serve(_ socket: Socket, authorizer: any CurveAuthorizer, onDecision: @Sendable (Decision) -> Void) {
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
            let (reply, decision) = Self.answer(request, authorizer: authorizer)
            if let decision { onDecision(decision) }
            do { try socket.send(message: reply) } catch { return }
        }
    }

    /// The reply to one request (RFC 27: version, request id, domain, address, identity,
    /// mechanism, credentials…) and the decision it records (nil for a malformed request).
    static func answer(_ request: [Frame], authorizer: any CurveAuthorizer) -> (reply: [Frame], decision: Decision?) {
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
        if mechanism == "CURVE", request.count >= 7, request[6].count == 32, let key = Z85.encode(request[6]) {
            decision.clientKey = key
            decision.clientName = domain == anyKeyDomain ? anonymousName : authorizer.clientName(forPublicKey: key)
        }
        guard let name = decision.clientName else {
            return ([version, requestID, Frame(frame: "400"), Frame(frame: "client key not allowed"), [], []], decision)
        }
        return ([version, requestID, Frame(frame: "200"), Frame(frame: "OK"), Frame(frame: name), []], decision)
    }
}
