import Foundation
import Testing
import Wire

/// Peers of the ingest socket written in Python with pyzmq, as an outsider on the same network
/// would run them. Each prints one JSON line: what it sent and what came back, by kind and code.
enum IngestPeers {
    static let python = "/usr/bin/env"

    /// What a peer heard.
    struct Report: Decodable {
        var sent: Int
        var ack: Int
        var command: Int
        var errors: [String: Int]
        var seconds: Double
    }

    /// What every peer starts with: counting an answer in the report, by kind, and errors by code.
    static let preamble = """
        import json, sys, time, zmq
        def tally(report, frames):
            kind = frames[0].decode()
            if kind == "error":
                code = json.loads(frames[1])["error"]["code"]
                report["errors"][code] = report["errors"].get(code, 0) + 1
            else:
                report[kind] = report.get(kind, 0) + 1
        \n
        """

    /// Connects with `device` as its routing id (again every half second: ZMQ_ROUTER_HANDOVER hands
    /// an id to its newest connection) and sends batches naming the device, half with a forged
    /// credential, half with none, far from where the device is; for `seconds`.
    static let hijacker = """
        endpoint, device, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
        context = zmq.Context()
        report = {"sent": 0, "ack": 0, "command": 0, "errors": {}, "seconds": seconds}
        start = time.time()
        while time.time() - start < seconds:
            s = context.socket(zmq.DEALER)
            s.setsockopt(zmq.ROUTING_ID, device.encode())
            s.setsockopt(zmq.LINGER, 0)
            s.connect(endpoint)
            turn = time.time()
            while time.time() - turn < 0.5:
                report["sent"] += 1
                batch = {"publishable_key": "pk_test", "device_id": device, "batch_id": report["sent"],
                         "device": {"tracking": False, "available": False},
                         "locations": [{"latitude": 10.0, "longitude": 10.0,
                                        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}
                if report["sent"] % 2:
                    batch["device_credential"] = "dc1.0123456789abcdef.forged-session.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                s.send_multipart([b"batch", json.dumps(batch).encode()])
                while s.poll(100):
                    tally(report, s.recv_multipart())
            s.close()
        print(json.dumps(report))
        """

    /// `connections` connections (random routing ids) each send `perConnection` batches at once,
    /// every one naming a device never seen, with a forged credential; then collect the answers.
    static let flooder = """
        endpoint, connections, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        context = zmq.Context()
        sockets = []
        for c in range(connections):
            s = context.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.SNDHWM, 0)
            s.connect(endpoint)
            sockets.append(s)
        time.sleep(0.5)
        report = {"sent": 0, "ack": 0, "command": 0, "errors": {}, "seconds": 0}
        start = time.time()
        for i in range(per):
            for c, s in enumerate(sockets):
                report["sent"] += 1
                batch = {"publishable_key": "pk_test", "device_id": "flood-%d-%d" % (c, i), "batch_id": 1,
                         "device_credential": "dc1.0123456789abcdef.forged-%d-%d.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" % (c, i),
                         "locations": [{"latitude": 10.0, "longitude": 10.0, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}
                s.send_multipart([b"batch", json.dumps(batch).encode()])
        poller = zmq.Poller()
        for s in sockets: poller.register(s, zmq.POLLIN)
        answered = 0
        while answered < report["sent"] and time.time() - start < 30:
            for s, _ in poller.poll(1000):
                while s.poll(0):
                    tally(report, s.recv_multipart())
                    answered += 1
        report["seconds"] = time.time() - start
        print(json.dumps(report))
        """

    /// Runs `script` (after the preamble) with `arguments`; its report.
    static func run(_ script: String, _ arguments: [String], timeout: Duration = .seconds(120)) async throws -> Report {
        let result = try await runCommand(python, ["python3", "-c", preamble + script] + arguments, timeout: timeout)
        guard result.status == 0, let line = result.stdout.split(separator: "\n").last else {
            throw TestFailure("python peer failed (\(result.status)): \(result.stderr)")
        }
        return try JSONDecoder().decode(Report.self, from: Data(line.utf8))
    }

    /// Fails the test, saying so, when pyzmq is not installed (`make test` installs it).
    static func requirePyzmq() async throws {
        let check = try await runCommand(python, ["python3", "-c", "import zmq"], timeout: .seconds(180))
        guard check.status == 0 else {
            throw TestFailure(
                "pyzmq is missing: `make test-deps` installs it in .build/python, which make puts first on PATH (docs/contributing.md)")
        }
    }
}
