/// HTTP-like status codes of the body convention.
public enum Status {
    public static let ok = 200
    public static let created = 201
    public static let badRequest = 400
    public static let unauthorized = 401
    public static let forbidden = 403
    public static let notFound = 404
    public static let conflict = 409
    public static let gone = 410
    public static let unprocessable = 422
    public static let internalError = 500
    public static let unavailable = 503
}

/// An error reply: `{"error":{"code":"<machine_code>","message":"<human text>"}}` with a status.
/// Throw one from an op handler to answer with it.
public struct ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(status) \(code): \(message)" }

    public static func badRequest(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.badRequest, code: code, message: message)
    }
    public static func notFound(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.notFound, code: code, message: message)
    }
    public static func conflict(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.conflict, code: code, message: message)
    }
    public static func unprocessable(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.unprocessable, code: code, message: message)
    }
    public static func forbidden(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.forbidden, code: code, message: message)
    }
    public static func unauthorized(_ code: String, _ message: String) -> ServiceError {
        .init(status: Status.unauthorized, code: code, message: message)
    }
}

/// An error from below the service layer (a database, a file) that knows which reply it deserves —
/// e.g. a full disk is "503, try again later", not an internal error. Nil: an internal error after all.
public protocol ServiceErrorConvertible: Error {
    var serviceError: ServiceError? { get }
}
