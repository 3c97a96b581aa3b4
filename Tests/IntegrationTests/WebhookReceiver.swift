import Foundation
import PlatformLauncher
import TestProcess
import Testing
import Wire

/// A Python receiver (interop/webhook_receiver.py) on a free port that verifies each delivery with
/// the reference Standard Webhooks verifier: 401 and a reason when none of its secrets verifies it
/// or its id was accepted before, 500 while `failing` exists, 200 after; one JSON line per request in its log.
struct WebhookReceiver {
    let port: Int
    let log: String
    let failing: String
    let secretsFile: String
    let process: Process

    var url: String { "http://127.0.0.1:\(port)/hook" }

    /// `failures`: how many requests fail first (nil: all, until `failing` is removed); `secrets`: label → secret.
    static func start(in directory: String, name: String, secrets: [String: String], failures: Int?) async throws -> WebhookReceiver {
        guard try await TestProcess.run("/usr/bin/env", ["python3", "-c", "import standardwebhooks"]).status == 0 else {
            throw TestFailure(
                "the reference verifier is missing: `make test-deps` installs it in .build/python, which make puts first on PATH (docs/contributing.md)"
            )
        }
        let port = try FreePort.next()
        let flag = "\(directory)/\(name).failing"
        _ = FileManager.default.createFile(atPath: flag, contents: failures.map { Data(String($0).utf8) })
        let receiver = WebhookReceiver(
            port: port, log: "\(directory)/\(name).jsonl", failing: flag, secretsFile: "\(directory)/\(name).secrets.json",
            process: Process())
        try receiver.trust(secrets)
        receiver.process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        receiver.process.arguments = [
            "python3",
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("interop/webhook_receiver.py").path,
            String(port), receiver.log, receiver.secretsFile, flag,
        ]
        try receiver.process.run()
        return receiver
    }

    /// The secrets each request is verified with from now on.
    func trust(_ secrets: [String: String]) throws {
        try Data(JSONCoding.encode(JSONValue.object(secrets.mapValues(JSONValue.string)))).write(
            to: URL(fileURLWithPath: secretsFile), options: .atomic)
    }

    var requests: [JSONValue] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            try? JSONCoding.decode(JSONValue.self, from: Array($0.utf8))
        }
    }

    /// Sends a request of its own, as a forger or a replayer would.
    func post(body: String, id: String?, timestamp: String?, signature: String?) async throws -> HTTPProbe.Response {
        var headers = ["Content-Type": "application/json"]
        headers["webhook-id"] = id
        headers["webhook-timestamp"] = timestamp
        headers["webhook-signature"] = signature
        return try await HTTPProbe.send("POST", url, headers: headers, body: Array(body.utf8), timeout: .seconds(10))
    }

    /// SIGKILL: the test process's blocked signals are inherited, so SIGTERM would wait forever.
    func stop() { kill(process.processIdentifier, SIGKILL) }
}
