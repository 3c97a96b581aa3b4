import Bus
import Hummingbird
import HummingbirdWebSocket
import RideModels
import Wire

/// Each request's context: who is asking (set by `BearerAuthentication` on the routes that need
/// it), the connection's peer address (for the limits) and the WebSocket upgrade slot.
public struct GatewayContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    public var user: User?
    /// The address the connection comes from; nil when there is none (tests without a socket).
    public let peer: String?

    public init(source: Source) {
        coreContext = .init(source: source)
        webSocket = .init()
        user = nil
        peer = source.channel.remoteAddress?.ipAddress
    }

    /// Location batches are the largest bodies apps send; 1 MiB holds thousands of fixes.
    public var maxUploadSize: Int { Self.uploadLimit }
    static let uploadLimit = 1 << 20

    /// The authenticated user; a route that needs one and has none answers 401.
    func requireUser() throws -> User {
        guard let user else {
            throw GatewayError(
                .unauthorized, "unauthorized", "this route needs a bearer token (Authorization: Bearer <token> from POST /v1/sessions)")
        }
        return user
    }

    /// `{"caller", "id"}` of the order in the route's `{id}`: what the orders ops take.
    func orderParams() throws -> OrderParams {
        OrderParams(caller: Caller(try requireUser()), id: try parameters.require("id"))
    }

    /// The caller as the services' ops take it.
    func caller() throws -> JSONValue {
        try JSONValue(encoding: Caller(try requireUser()))
    }
}
