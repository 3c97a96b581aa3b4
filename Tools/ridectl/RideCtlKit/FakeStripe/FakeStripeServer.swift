import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Providers
import Wire

/// A local server speaking Stripe's API wire format (form bodies in, JSON objects and error
/// objects out), for tests and `make run`: nothing outside this machine is reached. Events are
/// posted to `webhookURL`, signed with `webhookSecret` as Stripe signs them, retried 3 times.
public struct FakeStripeServer: Sendable {
    let api: FakeStripeAPI
    let webhookURL: String?
    let webhookSecret: String
    let logger: Logger
    static let bodyLimit = 1 << 20

    /// `autoCard`: every new customer has a `pm_card_visa` card, as if their app had added it.
    public init(secretKey: String, webhookURL: String?, webhookSecret: String, publicURL: String, autoCard: Bool = false, logger: Logger) {
        self.api = FakeStripeAPI(secretKey: secretKey, publicURL: publicURL, autoCard: autoCard)
        self.webhookURL = webhookURL
        self.webhookSecret = webhookSecret
        self.logger = logger
    }

    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post] {
            router.on("**", method: method) { request, _ -> Response in
                var request = request
                let body = try await request.collectBody(upTo: Self.bodyLimit)
                let answer = await api.handle(
                    method: request.method.rawValue, path: request.uri.path, query: request.uri.query ?? "",
                    body: String(decoding: body.readableBytesView, as: UTF8.self),
                    authorization: request.headers[.authorization], idempotencyKey: request.headers[HTTPField.Name("Idempotency-Key")!])
                for event in answer.events { send(event) }
                var headers: HTTPFields = [.contentType: answer.contentType]
                if let location = answer.location { headers[.location] = location }
                if answer.replayed { headers[HTTPField.Name("Idempotent-Replayed")!] = "true" }
                return Response(
                    status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
            }
        }
        return router
    }

    /// Posts `event` to the webhook endpoint in the background, as Stripe does after answering.
    func send(_ event: JSONValue) {
        guard let webhookURL, let body = try? JSONCoding.encode(event) else { return }
        let (secret, logger) = (webhookSecret, logger)
        Task {
            for attempt in 1...3 {
                var request = HTTPClientRequest(url: webhookURL)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
                request.headers.add(
                    name: "Stripe-Signature",
                    value: StripeSignature.header(body: body, secret: secret, timestamp: Int(Date().timeIntervalSince1970)))
                request.body = .bytes(body)
                let status = try? await HTTPClient.shared.execute(request, timeout: .seconds(10)).status.code
                if let status, (200..<300).contains(status) { return }
                logger.warning(
                    "webhook not taken",
                    metadata: [
                        "event": "\(event["type"]?.stringValue ?? "")", "status": "\(status.map(String.init) ?? "no answer")",
                        "attempt": "\(attempt)",
                    ])
                try? await Task.sleep(for: .seconds(attempt))
            }
        }
    }

    /// The server as a Hummingbird application on `host:port`; `onRunning` gets the bound port.
    public func application(host: String, port: Int, onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        Application(
            router: router(), configuration: .init(address: .hostname(host, port: port), serverName: "ridectl-fake-stripe"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) }, logger: logger)
    }
}
