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
                    let url =
                        "\(base)/v1/orders/\(orderID)/live?access_token=\(token)" + (after.withLock { $0 }.map { "&after=\($0)" } ?? "")
                    _ = try await WebSocketClient.connect(url: url, logger: logger) { inbound, _, _ in
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let text) = message, let (update, sequence) = Self.update(text, orderID: orderID) else {
                                continue
                            }
                            continuation.yield(update)
                            after.withLock { $0 = sequence }
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

    /// What the apps read of a message: a status, or the snapshot's.
    private struct StatusMessage: Decodable {
        let type: String
        let sequence: UInt64
        let order: Order
    }

    /// A status (or the snapshot's) of the followed order as an update of the ride, with its
    /// sequence (where a new connection resumes); nil for the rest (positions, ETAs, chat).
    static func update(_ text: String, orderID: String) -> (RideUpdate, sequence: UInt64)? {
        guard let message = try? JSONCoding.decode(StatusMessage.self, fromText: text), ["status", "snapshot"].contains(message.type),
            message.order.id == orderID
        else { return nil }
        return (RideUpdate(rideID: orderID, change: .status(message.order), seenAt: Date()), message.sequence)
    }
}
