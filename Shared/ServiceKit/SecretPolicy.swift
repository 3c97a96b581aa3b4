import Foundation
import SettingsKit
import Synchronization

/// How a process treats its secrets (`--mode`, `RIDE_MODE`). Development (`make run`) starts with
/// the development values the repository ships and warns; production (docker-compose.yml,
/// Kubernetes) refuses to start with a shipped or weak secret, naming it.
public enum RunMode: String, Sendable, CaseIterable {
    case development, production

    public static let flag = "mode"
    public static let environment = "RIDE_MODE"
}

/// A secret a process was given, as the production check sees it.
public struct SecretSetting: Sendable, Equatable {
    /// What it is: `secret key`, `token signing key`.
    public var name: String
    /// Where it came from: `--secret-key`, `RIDE_SECRET_KEY_FILE`, `default`.
    public var origin: String
    public var value: [UInt8]
    /// Fewer bytes than this is weak.
    public var minimumLength: Int

    public init(name: String, origin: String, value: [UInt8], minimumLength: Int) {
        self.name = name
        self.origin = origin
        self.value = value
        self.minimumLength = minimumLength
    }

    public init(name: String, _ setting: Setting, minimumLength: Int) {
        self.init(name: name, origin: setting.origin, value: Array(setting.value.utf8), minimumLength: minimumLength)
    }
}

/// What makes a secret unfit for production: the values the repository ships (public by being
/// committed) and weak ones.
public enum SecretPolicy {
    /// Every secret value this repository ships: the defaults of the flags, the development
    /// Kubernetes overlay's literals and the public keys of its committed CURVE keys (a process
    /// is refused when its own or the server's key is one of them). A test checks this list
    /// against those files.
    public static let shipped: Set<String> = [
        "sk_dev_ridesharing",
        "dev-only-token-secret-change-me-0123456789",
        "dev-only-notifications-key-change-me-012345",
        "ride",
        // deploy/kubernetes/overlays/dev/curve-keys: server.pub, then clients/*.pub.
        "5MR18Ptima{16gIEIN}i7(qb?B)EuN9r[DqgJG42",
        "{2c@H8y)--7O5zLF8I(}!&JXyhHt}5PgShY1@*..",
        "M]fu7f)Cx%r=9b&yo&&*=DF>>4p3H9KoS4BJ8Qf6",
        "&v8^[gE6qxEz@NG]ql(lBlW]j1)}Z8yvuMc+)zx?",
        "(u.dnSi/=XUpC-{>lIKj[ZqqIz=jED1.t#O7S%98",
        "]VVm&.}3vG7{i5?kq7?XPN&Gb@T>ct)>@C.4QnMp",
        "pLs/:+R<xiZ<ZPU?QM&^uA8/Rm0)OmrO!1mO=0dy",
        "(uei]F6r.mVDuxlfEV-@?QAMeO+9ubnXZvzprScE",
    ]

    /// Words people leave in a value they meant to replace.
    static let placeholders = ["change-me", "changeme", "change_me", "example", "password", "secret", "default"]

    /// Fewer distinct bytes than this is a pattern, not a random value.
    static let minimumDistinctBytes = 10

    static let shippedWeakness = "is a development value this repository ships (public)"

    /// Why `value` is unfit to be a production secret, or nil.
    public static func weakness(of value: [UInt8], minimumLength: Int) -> String? {
        var text = String(decoding: value, as: UTF8.self)
        // A file's line end is not part of what was written into it.
        while text.last?.isNewline == true { text.removeLast() }
        if shipped.contains(text) { return shippedWeakness }
        if value.count < minimumLength { return "is \(value.count) bytes; at least \(minimumLength) are needed" }
        let distinct = Set(value).count
        if distinct < minimumDistinctBytes { return "has only \(distinct) distinct characters (a pattern, not a random value)" }
        if let word = placeholders.first(where: { text.lowercased().contains($0) }) { return "contains '\(word)' (a placeholder)" }
        return nil
    }

    /// Holds `secrets` to `mode`: production throws a `ConfigurationError` naming the first weak
    /// one; development answers a warning for each shipped one.
    public static func check(_ secrets: [SecretSetting], mode: RunMode) throws -> [String] {
        switch mode {
        case .production:
            for secret in secrets {
                if let weakness = weakness(of: secret.value, minimumLength: secret.minimumLength) {
                    throw ConfigurationError(
                        "\(secret.name) (\(secret.origin)) \(weakness): production mode (\(RunMode.environment)=production) refuses it; "
                            + "give a random value of your own (e.g. head -c 32 /dev/urandom | base64), docs/security.md#secrets")
                }
            }
            return []
        case .development:
            return secrets.filter { weakness(of: $0.value, minimumLength: 0) == shippedWeakness }.map {
                "\($0.name) (\($0.origin)) is the development value this repository ships: anyone can use it; production mode (\(RunMode.environment)=production) refuses it"
            }
        }
    }
}

/// Warnings found while the configuration was read, before the logger existed: `ServiceHost`
/// logs them when it starts.
public enum StartupWarnings {
    private static let pending = Mutex<[String]>([])

    public static func add(_ warnings: [String]) { pending.withLock { $0 += warnings } }

    /// The warnings added so far, once.
    public static func take() -> [String] {
        pending.withLock { warnings in
            defer { warnings = [] }
            return warnings
        }
    }
}
