import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOSSL
import Wire

/// APNs and FCM (with Google's token endpoint) on one local HTTPS server that speaks HTTP/2 as
/// APNs does, for tests and a developer's phone-less runs: nothing outside this machine is reached.
/// `GET /fake/pushes` lists every push request and its answer; `POST /fake/tokens/<token>` with
/// `{"answer": "unregistered"|"bad_token"|"throttled"|"unavailable", "times": n}` sets what a
/// token gets next (every time when `times` is absent; `{"answer": null}` clears it).
public struct FakePushServer: Sendable {
    let apns: FakeAPNs?
    let fcm: FakeFCM?
    let state: FakePushState
    let logger: Logger
    static let bodyLimit = 64 * 1024

    init(apns: FakeAPNs?, fcm: FakeFCM?, state: FakePushState, logger: Logger) {
        (self.apns, self.fcm, self.state, self.logger) = (apns, fcm, state, logger)
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("3/device/{token}") { request, context -> Response in
            guard let apns else { return Self.json(404, ["reason": "NotFound"]) }
            var request = request
            let body = try await request.collectBody(upTo: Self.bodyLimit)
            let answer = await apns.handle(
                token: context.parameters.get("token") ?? "", headers: Self.headers(request), body: Array(body.readableBytesView))
            var response = answer.reason.map { Self.json(answer.status, ["reason": .string($0)]) } ?? Response(status: .ok)
            for (name, value) in answer.headers { response.headers[HTTPField.Name(name)!] = value }
            return response
        }
        router.post("token") { request, _ -> Response in
            guard let fcm else { return Self.json(404, ["error": "not_found"]) }
            var request = request
            let body = try await request.collectBody(upTo: Self.bodyLimit)
            let answer = await fcm.token(form: String(decoding: body.readableBytesView, as: UTF8.self))
            return Self.json(answer.status, answer.body)
        }
        router.post("v1/projects/{project}/{action}") { request, context -> Response in
            guard let fcm, context.parameters.get("action") == "messages:send" else {
                return Self.json(404, ["error": ["code": 404, "status": "NOT_FOUND"]])
            }
            var request = request
            let body = try await request.collectBody(upTo: Self.bodyLimit)
            let answer = await fcm.send(
                project: context.parameters.get("project") ?? "", authorization: request.headers[.authorization],
                body: Array(body.readableBytesView))
            return Self.json(answer.status, answer.body)
        }
        router.get("fake/pushes") { _, _ -> Response in Self.json(200, ["pushes": .array(await state.requests)]) }
        router.post("fake/tokens/{token}") { request, context -> Response in
            var request = request
            let body = try await request.collectBody(upTo: Self.bodyLimit)
            guard let token = context.parameters.get("token"),
                let given = try? JSONCoding.decode(JSONValue.self, from: Array(body.readableBytesView))
            else {
                return Self.json(400, ["error": "a JSON body {\"answer\": …, \"times\": n} is required"])
            }
            if given["answer"] == .null || given["answer"] == nil {
                await state.setAnswer(nil, for: token)
            } else {
                guard let kind = given["answer"]?.stringValue, FakePushState.answerKinds.contains(kind) else {
                    return Self.json(400, ["error": .string("answer: one of \(FakePushState.answerKinds.joined(separator: ", ")) or null")])
                }
                await state.setAnswer(.init(kind: kind, times: given["times"]?.numberValue.map { max(Int($0), 1) }), for: token)
            }
            return Self.json(200, ["token": .string(token), "answer": given["answer"] ?? .null])
        }
        return router
    }

    static func headers(_ request: Request) -> [String: String] {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        return headers
    }

    static func json(_ status: Int, _ body: JSONValue) -> Response {
        Response(
            status: .init(code: status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: (try? JSONCoding.encode(body)) ?? [])))
    }

    /// The server on `host:port` over TLS (HTTP/2 by ALPN, HTTP/1.1 otherwise); `onRunning` gets the bound port.
    func application(host: String, port: Int, tls: TLSConfiguration, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws
        -> some ApplicationProtocol
    {
        Application(
            router: router(), server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname(host, port: port), serverName: "ridectl-fake-push"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) }, logger: logger)
    }
}
