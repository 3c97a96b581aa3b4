import Bus
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Wire

/// An error answered as the platform's error JSON, `{"error":{"code","message"}}`, with its status.
struct GatewayError: Error, HTTPResponseError, CustomStringConvertible {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    var description: String { "\(status.code) \(code): \(message)" }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONBody.response(status: status, bytes: ServiceReply.error(status: status.code, code: code, message: message).json)
        response.headers.append(contentsOf: headers)
        return response
    }
}

/// JSON responses from bytes already encoded (the services' replies are passed through as they are).
enum JSONBody {
    static func response(status: HTTPResponse.Status, bytes: [UInt8]) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A service's reply, status and JSON as they came.
    static func response(_ reply: ServiceReply) -> Response {
        response(status: .init(code: reply.status), bytes: reply.json)
    }

    static func response(status: HTTPResponse.Status = .ok, _ value: some Encodable) throws -> Response {
        response(status: status, bytes: try JSONCoding.encode(value))
    }
}

extension GatewayError {
    /// What an app is told about `error`: the services' own errors keep their status and code; a
    /// service that does not answer is 503; Hummingbird's own (no such route, body too large) keep
    /// their status; anything else is a 500 that says nothing internal. Logs what an operator
    /// should see (`path` names the request).
    init(answering error: any Error, path: String, method: String, logger: Logger) {
        switch error {
        case let error as GatewayError:
            if error.status.code >= 500 { logger.error("request failed", metadata: ["path": "\(path)", "error": "\(error)"]) }
            self = error
        case let error as ServiceError:
            self.init(.init(code: error.status), error.code, error.message)
        case let error as MDPClientError:
            logger.warning("a service did not answer", metadata: ["path": "\(path)", "error": "\(error)"])
            self.init(.serviceUnavailable, "unavailable", "\(error)")
        case let error as HTTPError:
            let code = error.status == .notFound ? "not_found" : error.status == .contentTooLarge ? "too_large" : "bad_request"
            let message = error.status == .notFound ? "no route \(method) \(path)" : error.body ?? error.status.reasonPhrase
            self.init(error.status, code, message, headers: error.headers)
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            // NIO's NIOTooManyBytesError, from a body collected past the route's limit.
            self.init(
                .contentTooLarge, "too_large", "the request body is larger than the gateway takes (\(GatewayContext.uploadLimit) bytes)")
        default:
            logger.error("request failed", metadata: ["path": "\(path)", "error": "\(error)"])
            self.init(.internalServerError, "internal", "the gateway failed to answer; see its log")
        }
    }
}

/// Turns every error a route throws into the error JSON (`GatewayError(answering:)`).
struct ErrorJSONMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return try GatewayError(answering: error, path: request.uri.path, method: "\(request.method)", logger: context.logger)
                .response(from: request, context: context)
        }
    }
}
