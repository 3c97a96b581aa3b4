import AsyncHTTPClient
import Foundation
import Logging
import RideModels
import Wire

/// The simulated apps as real ones: HTTP to the published gateway only, each person with their
/// own session (signed up and logged in; tokens refreshed before they expire), each ride followed
/// on its WebSocket. No bus, no operator key.
final class GatewayApps: RideApps {
    let base: String
    private let http: HTTPClient
    private let requests: GatewayRequests
    private let sessions: SessionBook
    private let live: LiveRides

    var updates: AsyncStream<RideUpdate> { live.updates }

    init(base: String, logger: Logger) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        requests = GatewayRequests(http: http, base: self.base)
        sessions = SessionBook(requests: requests)
        live = LiveRides(base: self.base, sessions: sessions, logger: logger)
    }

    /// A request as `userID`'s phone sends it, with their bearer token; the reply's body.
    @discardableResult
    private func send(_ method: String, _ path: String, as userID: String, body: JSONValue? = nil, key: String? = nil) async throws
        -> [UInt8]
    {
        let token = try await sessions.token(for: userID)
        return try await requests.send(method, path, token: token, body: body.map { try JSONCoding.encode($0) }, key: key)
    }

    /// The same, its reply decoded as `T`.
    private func send<T: Decodable>(
        _ method: String, _ path: String, as userID: String, body: JSONValue? = nil, key: String? = nil, as type: T.Type = T.self
    ) async throws -> T {
        try JSONCoding.decode(T.self, from: try await send(method, path, as: userID, body: body, key: key))
    }

    func register(_ params: RegisterParams) async throws -> (user: User, deviceCredential: String?) {
        // Keyed: a sign-up sent again after a lost reply gets the account it made.
        _ = try await requests.send("POST", "/v1/users", body: try JSONCoding.encode(params), key: "sign-up-\(params.phoneNumber)")
        let credentials: JSONValue = ["phone_number": .string(params.phoneNumber), "password": .string(params.password)]
        // Keyed too: a log-in whose reply was late (a loaded users hashing passwords) is asked again
        // and answered the same session, not refused as a second attempt.
        let logIn = try await requests.send(
            "POST", "/v1/sessions", body: try JSONCoding.encode(credentials),
            key: "log-in-\(params.phoneNumber)-\(UUID().uuidString.prefix(8))")
        let session = try JSONCoding.decode(Session.self, from: logIn)
        await sessions.keep(session)
        return (session.user, session.deviceCredential)
    }

    func book(from pickup: Place, to dropoff: Place, as rider: String, key: String) async throws -> Order {
        try await send(
            "POST", "/v1/orders", as: rider,
            body: ["pickup": try JSONValue(encoding: pickup), "dropoff": try JSONValue(encoding: dropoff)], key: key)
    }

    func order(_ id: String, as caller: Caller) async throws -> Order {
        try await send("GET", "/v1/orders/\(id)", as: caller.id)
    }

    func offers(for driver: String) async throws -> [Order] {
        try await send("GET", "/v1/orders?status=NEW&limit=5", as: driver, as: OrderList.self).orders
    }

    func act(_ action: RideAction, on id: String, as caller: Caller, reason: String?) async throws {
        try await send("POST", "/v1/orders/\(id)/\(action.rawValue)", as: caller.id, body: reason.map { ["reason": .string($0)] })
    }

    func share(_ id: String, as rider: String) async throws -> (shareID: String, url: String?) {
        let link = try await send("GET", "/v1/orders/\(id)/share", as: rider, as: JSONValue.self)
        guard let shareID = link["share_id"]?.stringValue else {
            throw GatewayRequests.Failure("GET /v1/orders/\(id)/share answered no share_id")
        }
        return (shareID, link["share_url"]?.stringValue)
    }

    func say(_ text: String, on id: String, as caller: Caller, key: String) async throws {
        try await send("POST", "/v1/orders/\(id)/messages", as: caller.id, body: ["text": .string(text)], key: key)
    }

    func rate(_ id: String, as caller: Caller, stars: Int) async throws {
        try await send("POST", "/v1/orders/\(id)/rating", as: caller.id, body: ["stars": .number(Double(stars))])
    }

    func history(of rider: String, before: String?) async throws -> RideHistory {
        let after = before.flatMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }.map { "&before=\($0)" } ?? ""
        return try await send("GET", "/v1/me/history?limit=100\(after)", as: rider)
    }

    func earnings(of driver: String) async throws -> DriverEarnings {
        try await send("GET", "/v1/me/earnings?days=1", as: driver)
    }

    func follow(_ id: String, as rider: String) async { live.follow(id, as: rider) }
    func unfollow(_ id: String) async { live.unfollow(id) }

    func close() async {
        live.close()
        try? await http.shutdown()
    }
}
