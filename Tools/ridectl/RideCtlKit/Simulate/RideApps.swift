import Foundation
import RideModels

/// What the simulated phones do on the platform, in the apps' terms: the seam between the
/// simulation and the way it reaches the platform — the bus with the operator's key
/// (`BusApps`), or the published gateway and nothing else, as real apps do (`GatewayApps`).
/// `caller` names whose phone acts; each implementation proves it its own way.
protocol RideApps: Sendable {
    /// Signs a person up; a driver also gets what their phone's tracking SDK streams with.
    func register(_ params: RegisterParams) async throws -> (user: User, deviceCredential: String?)
    /// A rider books (keyed: sent again after a lost reply, it books one ride).
    func book(from pickup: Place, to dropoff: Place, as rider: String, key: String) async throws -> Order
    func order(_ id: String, as caller: Caller) async throws -> Order
    /// The orders offered to a driver (what the driver app shows).
    func offers(for driver: String) async throws -> [Order]
    /// accept, decline, cancel (with `reason`), start or end.
    func act(_ action: RideAction, on id: String, as caller: Caller, reason: String?) async throws
    /// The ride's share id and the page's address, when the platform gives one.
    func share(_ id: String, as rider: String) async throws -> (shareID: String, url: String?)
    /// A chat message (keyed: stored once however often it is sent).
    func say(_ text: String, on id: String, as caller: Caller, key: String) async throws
    func rate(_ id: String, as caller: Caller, stars: Int) async throws
    func history(of rider: String, before: String?) async throws -> RideHistory
    func earnings(of driver: String) async throws -> DriverEarnings

    /// What the apps see of their rides as it happens.
    var updates: AsyncStream<RideUpdate> { get }
    /// The rider's app follows a ride it booked until `unfollow` (the bus shows every ride anyway).
    func follow(_ id: String, as rider: String) async
    func unfollow(_ id: String) async
    func close() async
}

/// What a driver or rider does to an order, named as the apps' buttons are.
enum RideAction: String, Sendable {
    case accept, decline, cancel, start, end
}

/// What the apps saw of a ride, and when this process received it.
struct RideUpdate: Sendable {
    enum Change: Sendable {
        case status(Order)
        /// The ride's trip arrived (the bus's `trip.destination.arrival`; the gateway shows none).
        case arrival(tripID: String)
    }
    let rideID: String
    let change: Change
    let seenAt: Date
}
