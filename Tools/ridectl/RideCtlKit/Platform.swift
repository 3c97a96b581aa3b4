import Bus
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
    static func processes(binDirectory: String, dataDirectory: String) -> [PlatformProcess] {
        [
            PlatformProcess(
                name: "bus", executable: "\(binDirectory)/ride-bus",
                arguments: ["--pub", BusContract.eventIngressBind, "--sub", BusContract.eventEgressBind,
                            "--broker", BusContract.brokerBind, "--http", "127.0.0.1:9100"],
                healthURL: "http://127.0.0.1:9100/health"),
        ]
    }
}
