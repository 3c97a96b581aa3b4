import AsyncHTTPClient
import Foundation
import HummingbirdWSClient
import Logging
import PlatformLauncher
import Synchronization
import Wire

/// Debian's Chromium, headless, driven over the Chrome DevTools protocol: pages opened in tabs,
/// scripts evaluated in them, clicks and typing as a person's, screenshots. What the pages log —
/// console errors, uncaught exceptions, content-security-policy refusals — is kept per page.
final class DevToolsBrowser: Sendable {
    let supervisor: ProcessSupervisor
    let port: Int
    private let profile: String

    static func launch(name: String) async throws -> DevToolsBrowser {
        guard let executable = HeadlessBrowser.executable else {
            throw TestFailure("chromium is not installed (make test installs it: apt-get install chromium)")
        }
        let profile = try makeScratchDirectory("chromium-\(name)")
        let supervisor = ProcessSupervisor(output: .files(directory: profile))
        try supervisor.start(
            name: "chromium", executable: executable,
            arguments: [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                "--user-data-dir=\(profile)/data",
                "--remote-debugging-port=0", "--remote-allow-origins=*",
                // Both apps run at once, in two tabs: neither is throttled as a background tab.
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
                "--window-size=900,1400", "about:blank",
            ])
        let portFile = "\(profile)/data/DevToolsActivePort"
        let readPort = { @Sendable in
            (try? String(contentsOfFile: portFile, encoding: .utf8)).flatMap { Int($0.split(separator: "\n").first ?? "") }
        }
        try await eventually("chromium writes its DevTools port", timeout: .seconds(60)) { readPort() != nil }
        guard let port = readPort() else { throw TestFailure("chromium wrote no DevTools port") }
        return DevToolsBrowser(supervisor: supervisor, port: port, profile: profile)
    }

    private init(supervisor: ProcessSupervisor, port: Int, profile: String) {
        (self.supervisor, self.port, self.profile) = (supervisor, port, profile)
    }

    /// A new tab at `url`.
    func open(_ url: String) async throws -> DevToolsPage {
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? url
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/json/new?\(encoded)")
        request.method = .PUT
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let target = try JSONCoding.decode(JSONValue.self, from: Array(try await response.body.collect(upTo: 1 << 20).readableBytesView))
        guard let socket = target["webSocketDebuggerUrl"]?.stringValue else { throw TestFailure("chromium opened no tab: \(target)") }
        let page = DevToolsPage(socket: socket)
        _ = try await page.send("Runtime.enable")
        _ = try await page.send("Log.enable")
        _ = try await page.send("Page.enable")
        _ = try await page.send("Emulation.setFocusEmulationEnabled", ["enabled": true])
        return page
    }

    func close() async {
        _ = await supervisor.stop("chromium", grace: .seconds(5))
        try? FileManager.default.removeItem(atPath: profile)
    }
}

/// One tab: commands with their replies matched by id; events kept as log lines.
final class DevToolsPage: Sendable {
    struct State {
        var next = 0
        var waiting: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
        var log: [String] = []
        var closed: String?
    }
    /// Shared with the socket's task.
    final class Inbox: Sendable { let state = Mutex(State()) }
    private let inbox = Inbox()
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>

    init(socket: String) {
        let (stream, outgoing) = AsyncStream<String>.makeStream()
        self.outgoing = outgoing
        let inbox = self.inbox
        task = Task {
            var configuration = WebSocketClientConfiguration()
            configuration.maxFrameSize = 1 << 24
            let ending: String
            do {
                _ = try await WebSocketClient.connect(url: socket, configuration: configuration, logger: Logger(label: "devtools")) {
                    inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { for await text in stream { try await outbound.write(.text(text)) } }
                        for try await message in inbound.messages(maxSize: 1 << 26) {
                            guard case .text(let text) = message, let value = try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
                            else { continue }
                            Self.received(value, inbox: inbox)
                        }
                        group.cancelAll()
                    }
                }
                ending = "the DevTools socket closed"
            } catch {
                ending = "the DevTools socket failed: \(error)"
            }
            let waiting = inbox.state.withLock { state in
                state.closed = ending
                defer { state.waiting = [:] }
                return state.waiting.values
            }
            for continuation in waiting { continuation.resume(throwing: TestFailure(ending)) }
        }
    }

    private static func received(_ value: JSONValue, inbox: Inbox) {
        if let id = value["id"]?.numberValue.map(Int.init) {
            let continuation = inbox.state.withLock { $0.waiting.removeValue(forKey: id) }
            continuation?.resume(returning: value)
            return
        }
        let line: String? =
            switch value["method"]?.stringValue {
            case "Runtime.exceptionThrown":
                "exception: \(value["params"]?["exceptionDetails"]?["exception"]?["description"]?.stringValue ?? "\(value)")"
            case "Runtime.consoleAPICalled" where value["params"]?["type"] == "error":
                "console.error: \(value["params"]?["args"]?.arrayValue?.compactMap { $0["value"]?.stringValue ?? $0["description"]?.stringValue }.joined(separator: " ") ?? "")"
            case "Log.entryAdded":
                "\(value["params"]?["entry"]?["level"]?.stringValue ?? "log"): \(value["params"]?["entry"]?["text"]?.stringValue ?? "")"
            default: nil
            }
        if let line { inbox.state.withLock { $0.log.append(line) } }
    }

    /// What the page logged at level error or warning, exceptions and CSP refusals included.
    var problems: [String] { inbox.state.withLock { $0.log }.filter { !$0.hasPrefix("verbose") && !$0.hasPrefix("info") } }

    @discardableResult
    func send(_ method: String, _ params: JSONValue = [:]) async throws -> JSONValue {
        let reply = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
            let message: Result<String, any Error> = inbox.state.withLock { state in
                if let closed = state.closed { return .failure(TestFailure(closed)) }
                state.next += 1
                state.waiting[state.next] = continuation
                return Result {
                    String(
                        decoding: try JSONCoding.encode(
                            ["id": .number(Double(state.next)), "method": .string(method), "params": params] as JSONValue), as: UTF8.self)
                }
            }
            switch message {
            case .success(let text): outgoing.yield(text)
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
        if let error = reply["error"] { throw TestFailure("\(method): \(error)") }
        return reply["result"] ?? [:]
    }

    /// The value of a JavaScript expression (awaited when it is a promise).
    @discardableResult
    func evaluate(_ expression: String) async throws -> JSONValue {
        let result = try await send("Runtime.evaluate", ["expression": .string(expression), "awaitPromise": true, "returnByValue": true])
        if let exception = result["exceptionDetails"] {
            throw TestFailure("\(expression.prefix(200)): \(exception["exception"]?["description"] ?? exception)")
        }
        return result["result"]?["value"] ?? .null
    }

    /// Waits until `expression` is truthy; the failure says what the page showed.
    func waitFor(_ what: String, _ expression: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try? await evaluate("!!(\(expression))"), value == .bool(true) { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        let notice =
            (try? await evaluate(#"document.getElementById("notice") ? document.getElementById("notice").textContent : """#))?.stringValue
            ?? ""
        throw TestFailure("\(what): not within \(timeout) (the page's notice: \"\(notice)\"; its problems: \(problems))")
    }

    /// Clicks the element as a mouse would (at its centre, after scrolling it into view).
    func click(_ selector: String) async throws {
        try await waitFor(
            "\(selector) is shown",
            "(() => { const e = document.querySelector(\(Self.quoted(selector))); return e && e.offsetParent !== null && !e.disabled; })()")
        let box = try await evaluate(
            "(() => { const e = document.querySelector(\(Self.quoted(selector))); e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        guard let xy = box.arrayValue?.compactMap(\.numberValue), xy.count == 2 else { throw TestFailure("\(selector): no box") }
        for type in ["mousePressed", "mouseReleased"] {
            try await send(
                "Input.dispatchMouseEvent",
                ["type": .string(type), "x": .number(xy[0]), "y": .number(xy[1]), "button": "left", "clickCount": 1])
        }
    }

    /// Focuses the field and types `text` into it, key by key.
    func type(_ selector: String, _ text: String) async throws {
        try await evaluate("(() => { const e = document.querySelector(\(Self.quoted(selector))); e.focus(); e.value = ''; })()")
        try await send("Input.insertText", ["text": .string(text)])
    }

    func text(_ selector: String) async throws -> String {
        try await evaluate("(() => { const e = document.querySelector(\(Self.quoted(selector))); return e ? e.textContent : ''; })()")
            .stringValue ?? ""
    }

    func screenshot(to path: String) async throws {
        let shot = try await send("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": true])
        guard let data = shot["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else { throw TestFailure("no screenshot") }
        try data.write(to: URL(fileURLWithPath: path))
    }

    static func quoted(_ text: String) -> String { String(decoding: (try? JSONCoding.encode(JSONValue.string(text))) ?? [], as: UTF8.self) }

    func close() {
        outgoing.finish()
        task.cancel()
    }
}
