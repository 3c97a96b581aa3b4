import Bus
import Foundation
import RideContract
import Testing
import Wire

/// The gateway's `/openapi.json` against the gateway itself, by tools that are not ours: the
/// document is valid OpenAPI 3.1 (openapi-spec-validator), and schemathesis, with every check it
/// has and a rider's token, finds no response that differs from it — no 5xx, every status, content
/// type and body as documented, schema-valid requests accepted and invalid ones refused with a 4xx,
/// 405 for undeclared methods. Both tools come from PyPI (`make test-deps`).
@Suite(.serialized) struct APIConformanceTests {
    /// How many requests schemathesis makes per operation and phase: a run of a couple of minutes.
    static let examples = ProcessInfo.processInfo.environment["RIDE_SCHEMATHESIS_EXAMPLES"] ?? "25"
    /// A fixed seed keeps CI's runs alike; set RIDE_SCHEMATHESIS_SEED to explore others.
    static let seed = ProcessInfo.processInfo.environment["RIDE_SCHEMATHESIS_SEED"] ?? "20261124"

    @Test func theDocumentIsValidOpenAPIAndSchemathesisFindsNothing() async throws {
        try await withTestBus("api-conformance") { bus in try await check(bus) }
    }

    func check(_ bus: TestBus) async throws {
        _ = try await TestService.start(on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
        // Schemathesis sends made-up tokens to every route to see them refused, and made-up keys to
        // the dashboard's sign-in: more than any address's allowance of invalid tokens or wrong
        // operator keys (RateLimitIntegrationTests and DashboardSessionTests check those).
        let apps = try await GatewayIntegrationTests.Apps.start(
            bus, gateway: ["--address-invalid-tokens-per-min", "1000000", "--address-attempts-per-min", "100000"])
        let gateway = apps.gateway

        let document = try await gateway.request("GET", "/openapi.json")
        #expect(document.status == 200)
        let documentPath = "\(bus.scratch)/openapi.json"
        try JSONCoding.encode(document.body).write(to: documentPath)
        let validation = try await pythonTool("openapi-spec-validator", [documentPath], timeout: .seconds(60))
        #expect(validation.status == 0, "openapi-spec-validator:\n\(validation.output)")

        // Routes that end the caller's session (log out; a new password revokes every session; an
        // operator's suspension of the caller, whose id schemathesis finds) run last, on a session
        // of their own: before them, every other route sees a valid token.
        let ending = ["POST /v1/auth/logout", "PATCH /v1/me", "POST /dashboard/users/{id}/suspend"]
        try await schemathesis(bus, gateway, document: document.body, bearer: apps.rider.token, ending.flatMap { ["--exclude-name", $0] })
        // Schemathesis's own log-ins used up this address's attempts: wait as Retry-After says (and
        // ask again after a 503: a log-in is sent once, and users may be slow on a loaded machine).
        var login = try await gateway.request("POST", "/v1/sessions", #"{"phone_number":"+380501110001","password":"secret123"}"#)
        for _ in 0..<30 where login.status == 429 || login.status == 503 {
            try await Task.sleep(for: .seconds(2))
            login = try await gateway.request("POST", "/v1/sessions", #"{"phone_number":"+380501110001","password":"secret123"}"#)
        }
        let token = try #require(login.body["token"]?.stringValue, "log-in again: \(login)")
        try await schemathesis(bus, gateway, document: document.body, bearer: token, ending.flatMap { ["--include-name", $0] })
    }

    func schemathesis(_ bus: TestBus, _ gateway: TestGateway, document: JSONValue, bearer: String, _ operations: [String]) async throws {
        let configuration = "\(bus.scratch)/schemathesis-\(UUID().uuidString.prefix(8)).toml"
        try SchemathesisConfiguration.text(document: document, bearer: bearer, basic: ("ridesharing", "sk_dev_ridesharing"))
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        let run = try await pythonTool(
            "st",
            [
                "--config-file", configuration, "--no-color", "run", "\(gateway.base)/openapi.json", "--checks", "all", "--max-examples",
                Self.examples,
                "--seed", Self.seed,
                // One worker: with two, Python 3.11.7's ast.parse races between threads ("AST
                // constructor recursion depth mismatch", CPython gh-106905) and a run ends in a runtime error.
                "--workers", "1", "--request-timeout", "20", "--output-truncate", "true",
            ] + operations, timeout: .seconds(600))
        #expect(run.status == 0, "schemathesis \(operations) (exit \(run.status)):\n\(run.output.suffix(20_000))")
    }
}

/// What schemathesis is told beyond the document: the credentials, and which operations may refuse
/// a request their schema allows — all of them when limited (429), those with rules between fields (`x-field-rules`, 422), those
/// taking an `Idempotency-Key` (a key reused with another request, 422), those taking an image (415, 422), and the
/// WebSocket routes (a plain GET is told to upgrade: 426). Derived from the document, so a route
/// that gains such rules says so in one place.
enum SchemathesisConfiguration {
    static func text(document: JSONValue, bearer: String, basic: (user: String, password: String)) -> String {
        var lines = [
            "[auth.openapi.bearer]", "bearer = \"\(bearer)\"", "", "[auth.openapi.basic]", "username = \"\(basic.user)\"",
            "password = \"\(basic.password)\"",
        ]
        let accepted = [#""2xx""#, #""3xx""#, #""401""#, #""403""#, #""404""#, #""409""#, #""429""#, #""5xx""#]
        // Every operation: a token's requests and an address's attempts are limited (429).
        lines += ["", "[checks.positive_data_acceptance]", "expected-statuses = [\(accepted.joined(separator: ", "))]"]
        for (path, item) in (document["paths"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            for (method, operation) in (item.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                var also: [String] = []
                // A key schemathesis happens to send again with another request is 422 idempotency_key_reused.
                let keyed = operation["parameters"]?.arrayValue?.contains { $0["name"] == "Idempotency-Key" } == true
                if operation["x-field-rules"] != nil || keyed { also.append(#""422""#) }
                if operation["responses"]?["101"] != nil { also.append(#""426""#) }
                // An image body is judged by its bytes: any bytes fit its schema, most are no JPEG or PNG (415, 422).
                if operation["requestBody"]?["content"]?["image/jpeg"] != nil { also += [#""415""#, #""422""#] }
                guard !also.isEmpty else { continue }
                lines += [
                    "", "[[operations]]", "include-name = \"\(method.uppercased()) \(path)\"",
                    "checks.positive_data_acceptance.expected-statuses = [\((accepted + also).joined(separator: ", "))]",
                ]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A tool from PyPI, found on the PATH; its status and its output (both streams).
func pythonTool(_ name: String, _ arguments: [String], timeout: Duration) async throws -> (status: Int32, output: String) {
    let run = try await runCommand("/usr/bin/env", [name] + arguments, timeout: timeout)
    if run.status == 127 {
        throw TestFailure(
            "\(name) is not installed (`make test-deps` installs it in .build/python, which make puts first on PATH): \(run.stderr)")
    }
    return (run.status, run.stdout + run.stderr)
}

extension [UInt8] {
    fileprivate func write(to path: String) throws {
        try Data(self).write(to: URL(fileURLWithPath: path))
    }
}
