import Foundation

/// The processes `ridectl up` starts, in start order, with the flags that make them one platform on
/// this machine (the public defaults: bus on 5555–5557, health/metrics on 9100…).
struct PlatformProcess: Sendable {
    var name: String
    var executable: String
    var arguments: [String]
    var healthURL: String
}

enum Platform {
    /// `portOffset` shifts every port, so a second platform can run beside the first.
    static func processes(binDirectory: String, dataDirectory: String, portOffset: Int = 0) -> [PlatformProcess] {
        let port = { (base: Int) in base + portOffset }
        return [
            PlatformProcess(
                name: "bus", executable: "\(binDirectory)/ride-bus",
                arguments: ["--pub", "tcp://*:\(port(5555))", "--sub", "tcp://*:\(port(5556))",
                            "--broker", "tcp://*:\(port(5557))", "--http", "127.0.0.1:\(port(9100))"],
                healthURL: "http://127.0.0.1:\(port(9100))/health"),
        ]
    }
}
