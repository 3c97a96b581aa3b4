import ArgumentParser
import Foundation
import ServiceKit
import SettingsKit

/// Who reaches the bus and the device ingest of `ridectl up`: processes on this machine (the
/// default), or every machine that reaches this one (`--listen-all`: phones, a second host), which
/// needs CURVE (`--secure`) or `--insecure-bus`, as each process checks for itself (`BusExposure`).
enum BusListening: Sendable, Equatable {
    case loopback
    case everywhere

    /// The host the bus's sockets and the ingest bind.
    var host: String { self == .loopback ? "127.0.0.1" : "*" }

    /// What the start-up banner says about it; `keys` is the CURVE key directory when CURVE is on.
    func banner(keys: String?) -> String {
        switch (self, keys) {
        case (.loopback, nil):
            "The bus and the device ingest listen on 127.0.0.1 only, without CURVE: only processes on this machine reach them.\n"
                + "  --secure encrypts and authenticates them; --listen-all opens them to other machines (with --secure, or --insecure-bus)."
        case (.loopback, let keys?):
            "The bus and the device ingest listen on 127.0.0.1 only, with CURVE: only processes on this machine holding a key of \(keys) reach them.\n"
                + "  --listen-all opens them to other machines (each with a key: ridectl keys add \(keys) NAME)."
        case (.everywhere, let keys?):
            "The bus and the device ingest listen on every interface, with CURVE: other machines reach them with a key of \(keys) (ridectl keys add \(keys) NAME)."
        case (.everywhere, nil):
            "The bus and the device ingest listen on every interface WITHOUT CURVE (--insecure-bus): anyone who reaches this machine can read every event and call every op."
        }
    }
}

/// `ridectl up`'s flags that choose `BusListening`.
struct BusListeningOptions: ParsableArguments {
    static let listenAllKey = SettingKey(
        "listen-all", env: "RIDE_LISTEN_ALL", unset: "off: 127.0.0.1 only",
        "Bind the bus (5555–5557) and the device ingest (5558) on every interface, for other machines (phones, a second host); needs --secure or --insecure-bus"
    )
    static let insecureBusKey = SettingKey(
        BusExposure.insecureFlag, env: BusExposure.insecureEnvironment, unset: "off",
        "With --listen-all and without --secure: plain TCP that anyone who reaches this machine can read and call, on purpose (passed on to every process)"
    )
    @Flag(name: Self.listenAllKey.name, help: Self.listenAllKey.help) var listenAll = false
    @Flag(name: Self.insecureBusKey.name, help: Self.insecureBusKey.help) var insecureBus = false

    /// Whether every process is told `--insecure-bus`.
    func insecure(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Bool {
        try Self.insecureBusKey.isOn(insecureBus, environment: environment)
    }

    /// The choice, checked: listening everywhere needs CURVE (`secure`) or `--insecure-bus`.
    func listening(secure: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> BusListening {
        let everywhere = try Self.listenAllKey.isOn(listenAll, environment: environment)
        guard everywhere else { return .loopback }
        let insecure = try insecure(environment: environment)
        guard secure || insecure else {
            throw ConfigurationError(
                "--\(Self.listenAllKey.flag) opens the bus and the device ingest to other machines: add --secure (CURVE: only holders of a key reach them), "
                    + "or --\(BusExposure.insecureFlag) to open them without CURVE on purpose")
        }
        return .everywhere
    }
}
