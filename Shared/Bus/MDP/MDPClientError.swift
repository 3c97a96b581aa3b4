/// Why a request got no reply.
public enum MDPClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No reply after every attempt (the zguide's Lazy Pirate gives up here).
    case timeout(service: String, attempts: Int, milliseconds: Int64)
    /// The broker sent something that is not a 7/MDP reply.
    case invalidReply(String)
    case closed
    case cancelled

    public var description: String {
        switch self {
        case .timeout(let service, let attempts, let ms):
            "no reply from service '\(service)' after \(attempts) attempt\(attempts == 1 ? "" : "s") of \(ms) ms (is a worker running? try `ridectl status`; a bus secured with CURVE answers only clients with an allowed key)"
        case .invalidReply(let why): "invalid reply from the broker: \(why)"
        case .closed: "the client is closed"
        case .cancelled: "the request was cancelled"
        }
    }
}
