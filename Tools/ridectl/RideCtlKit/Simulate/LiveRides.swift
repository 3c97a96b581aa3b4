import Foundation
import HummingbirdWSClient
import Logging
import RideModels
import Synchronization
import Wire

/// The rides the simulated riders follow, each on its own `GET /v1/orders/{id}/live` WebSocket
/// (as the rider app does): every status reaches `updates`. A connection that ends — a gateway
/// replica gone, a token checked again and refused — is opened again after the last sequence
/// received, so nothing is missed, until the ride is unfollowed.
final class LiveRides: Sendable {
    let updates: AsyncStream<RideUpdate>
    private let continuation: AsyncStream<RideUpdate>.Continuation
    private let base: String
    private let sessions: SessionBook
    private let logger: Logger
    private let followed = Mutex<[String: Task<Void, Never>]>([:])

    init(base: String, sessions: SessionBook, logger: Logger) {
        (updates, continuation) = AsyncStream.makeStream(of: RideUpdate.self)
        self.base = base.replacingOccurrences(of: "http://", with: "ws://").replacingOccurrences(of: "https://", with: "wss://")
        self.sessions = sessions
        self.logger = logger
    }

    func follow(_ orderID: String, as rider: String) {
        let task = Task { [base, sessions, logger, continuation] in
            let after = Mutex<UInt64?>(nil)  // the last sequence received: a new connection resumes after it
            while !Task.isCancelled {
                do {
                    let token = try await sessions.token(for: rider)
                    let url = "\(base)/v1/orders/\(orderID)/live?access_token=\(token)" + (after.withLock { $0 }.map { "&after=\($0)" } ?? "")
                    _ = try await WebSocketClient.connect(url: url, logger: logger) { inbound, _, _ in
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let text) = message, let value = try? JSONCoding.decode(JSONValue.self, fromText: text) else { continue }
                            if let update = Self.update(value, orderID: orderID) { continuation.yield(update) }
                            if value["type"] == "status" || value["type"] == "snapshot", let sequence = value["sequence"]?.numberValue { after.withLock { $0 = UInt64(sequence) } }
                        }
                    }
                } catch {
                    logger.debug("live connection ended", metadata: ["order_id": "\(orderID)", "error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        followed.withLock { $0.updateValue(task, forKey: orderID) }?.cancel()
    }

    func unfollow(_ orderID: String) {
        followed.withLock { $0.removeValue(forKey: orderID) }?.cancel()
    }

    func close() {
        for task in followed.withLock({ $0.values }) { task.cancel() }
        continuation.finish()
    }

    /// A status (or the snapshot's) as an update of the ride; nil for the rest (positions, ETAs, chat).
    static func update(_ message: JSONValue, orderID: String) -> RideUpdate? {
        guard message["type"] == "status" || message["type"] == "snapshot", let order = message["order"],
            let decoded = try? JSONCoding.decode(Order.self, from: JSONCoding.encode(order)), decoded.id == orderID
        else { return nil }
        return RideUpdate(rideID: orderID, change: .status(decoded), seenAt: Date())
    }
}
