import Bus
import Foundation
import HTTPTypes
import Hummingbird
import Logging

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
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func response(status: HTTPResponse.Status = .ok, _ value: some Encodable) throws -> Response {
        response(status: status, bytes: try JSONCoding.encode(value))
    }
}

/// Turns every error a route throws into the error JSON: the services' own errors keep their
/// status and code; a service that does not answer is 503; Hummingbird's own (no such route, body
/// too large) keep their status; anything else is a logged 500 that says nothing internal.
struct ErrorJSONMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as GatewayError {
            if error.status.code >= 500 { context.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"]) }
            return try error.response(from: request, context: context)
        } catch let error as ServiceError {
            return try GatewayError(.init(code: error.status), error.code, error.message).response(from: request, context: context)
        } catch let error as MDPClientError {
            context.logger.warning("a service did not answer", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return try GatewayError(.serviceUnavailable, "unavailable", "\(error)").response(from: request, context: context)
        } catch let error as HTTPError {
            let code = error.status == .notFound ? "not_found" : error.status == .contentTooLarge ? "too_large" : "bad_request"
            let message = error.status == .notFound ? "no route \(request.method) \(request.uri.path)" : error.body ?? error.status.reasonPhrase
            return try GatewayError(error.status, code, message, headers: error.headers).response(from: request, context: context)
        } catch {
            context.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return try GatewayError(.internalServerError, "internal", "the gateway failed to answer; see its log").response(from: request, context: context)
        }
    }
}
