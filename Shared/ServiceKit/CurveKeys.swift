import ArgumentParser
import Bus
import Foundation
import Logging
import SettingsKit
import Synchronization
import ZeroMQ

/// The key directory that `ridectl keys init` writes and `--curve-keys` reads:
///
///     server.key, server.pub          the pair the bus and the device ingest serve with
///     clients/NAME.key, NAME.pub      one pair per client (users, orders, …, ridectl);
///                                     every clients/*.pub may connect
///
/// Each file holds one Z85 key; lines starting with `#` are comments. A deployment gives each
/// container only its own `clients/NAME.key`, `server.pub`, and — for the bus and tracking —
/// `server.key` and the `clients/*.pub` files.
public struct CurveKeyDirectory: Sendable {
    public let path: String
    /// The clients `init` makes keys for: one per role of `RideContract.Roles` (a test holds them
    /// equal), each named after its role — every process but the bus (the server), `operator`
    /// (ridectl), `bench`.
    public static let standardClients = RideProcess.allCases.filter { $0 != .bus }.map(\.rawValue) + ["operator", "bench"]

    public init(path: String) { self.path = path }

    var clientsPath: String { path + "/clients" }

    /// Writes a server pair and one pair per client into `path` (created if needed). Refuses to
    /// replace a key that is already there.
    @discardableResult
    public static func create(at path: String, clients: [String] = standardClients) throws -> CurveKeyDirectory {
        let directory = CurveKeyDirectory(path: path)
        try FileManager.default.createDirectory(atPath: directory.clientsPath, withIntermediateDirectories: true)
        try directory.write(try CurveKeyPair.generate(), named: "server", in: path, about: "the bus's and the device ingest's")
        for client in clients { try directory.addClient(client) }
        return directory
    }

    /// Makes a pair for a new client, `clients/NAME.key` and `.pub`; the servers admit it from its
    /// next connection on (no restart).
    @discardableResult
    public func addClient(_ name: String) throws -> CurveKeyPair {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw ConfigurationError("client name '\(name)' may hold only letters, digits, '-' and '_'")
        }
        let pair = try CurveKeyPair.generate()
        try write(pair, named: name, in: clientsPath, about: "client '\(name)'s")
        return pair
    }

    private func write(_ pair: CurveKeyPair, named name: String, in folder: String, about whose: String) throws {
        let secretPath = "\(folder)/\(name).key"
        let publicPath = "\(folder)/\(name).pub"
        for existing in [secretPath, publicPath] where FileManager.default.fileExists(atPath: existing) {
            throw ConfigurationError("\(existing) exists already; remove it first to make a new key")
        }
        // The secret file is created readable by its owner only, before the key is written into it.
        guard FileManager.default.createFile(atPath: secretPath, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("cannot create \(secretPath)")
        }
        try "# CURVE secret key: \(whose). Keep it private.\n\(pair.secretKey)\n".write(
            toFile: secretPath, atomically: false, encoding: .utf8)
        try "# CURVE public key: \(whose).\n\(pair.publicKey)\n".write(toFile: publicPath, atomically: true, encoding: .utf8)
    }

    /// The key in a key file (the first line that is not a comment), checked.
    public static func readKey(_ path: String, what: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("CURVE: cannot read \(what) from \(path)")
        }
        let key =
            text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty && !$0.hasPrefix("#") } ?? ""
        do {
            try Z85.validateKey(key)
        } catch {
            throw ConfigurationError("CURVE: \(path) does not hold a key: \(error)")
        }
        return key
    }
}

/// Admits the clients whose public keys are in a folder (`clients/*.pub`), named by their files.
/// The folder is read again whenever it changes, so adding or deleting a `.pub` file takes effect
/// at the next connection.
final class DirectoryAuthorizer: CurveAuthorizer {
    let folder: String
    private let cache = Mutex<(modified: Date?, names: [String: String])>((nil, [:]))

    init(folder: String) { self.folder = folder }

    func clientName(forPublicKey key: String) -> String? {
        let modified = (try? FileManager.default.attributesOfItem(atPath: folder))?[.modificationDate] as? Date
        return cache.withLock { cache in
            if cache.modified == nil || cache.modified != modified {
                cache = (modified, Self.read(folder))
            }
            return cache.names[key]
        }
    }

    static func read(_ folder: String) -> [String: String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var names: [String: String] = [:]
        for file in files where file.hasSuffix(".pub") {
            if let key = try? CurveKeyDirectory.readKey("\(folder)/\(file)", what: "a public key") {
                names[key] = String(file.dropLast(4))
            }
        }
        return names
    }
}

/// `--curve-keys`: whether this process's bus sockets use CURVE, and with which keys.
public struct CurveOptions: ParsableArguments, Sendable {
    public static let directoryEnvironment = "RIDE_CURVE_KEYS"
    public static let serverKeyEnvironment = "RIDE_CURVE_SERVER_KEY"
    public static let secretKeyEnvironment = "RIDE_CURVE_SECRET_KEY"
    public static let serverSecretKeyEnvironment = "RIDE_CURVE_SERVER_SECRET_KEY"
    public static let allowedKeysEnvironment = "RIDE_CURVE_ALLOWED_KEYS"
    public static let clientEnvironment = "RIDE_CURVE_CLIENT"

    /// `--curve-keys` and `--curve-client`, declared once.
    public static let directoryKey = SettingKey(
        "curve-keys", env: directoryEnvironment, unset: "off, plain TCP",
        "Encrypt and authenticate the bus with CURVE, keys from this directory (made by `ridectl keys init DIR`). "
            + "Without files, keys may come from RIDE_CURVE_SERVER_KEY (the servers' public key), RIDE_CURVE_SECRET_KEY "
            + "(this process's), RIDE_CURVE_SERVER_SECRET_KEY and RIDE_CURVE_ALLOWED_KEYS (NAME:KEY,… — the bus and "
            + "tracking only); each variable wins over its file")
    public static let clientKey = SettingKey(
        "curve-client", env: clientEnvironment, unset: "the program's own: orders for ride-orders, operator for ridectl",
        "The name of this process's key in the key directory (clients/NAME.key); the name gives its role on the bus (docs/security.md#roles)"
    )
    @Option(name: Self.directoryKey.name, help: Self.directoryKey.help) public var curveKeys: String?
    @Option(name: Self.clientKey.name, help: Self.clientKey.help) public var curveClient: String?

    public init() {}

    /// Options made in code rather than parsed: every option is given a value (one left unset by
    /// `init()` cannot be read).
    public init(curveKeys: String?, curveClient: String? = nil) {
        self.curveKeys = curveKeys
        self.curveClient = curveClient
    }

    /// This process's CURVE settings, nil when CURVE is off. `client` names its own key
    /// (`clients/<client>.key`; nil for the bus, which only serves); `serves` is true for the
    /// processes that bind endpoints.
    /// Throws a `ConfigurationError` naming the missing or bad file or variable.
    public func security(
        client: String?, serves: Bool,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> CurveSecurity? {
        let value = { (name: String) in environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let directory = (curveKeys ?? value(Self.directoryEnvironment)).map(CurveKeyDirectory.init(path:))
        let client = client.map { curveClient ?? value(Self.clientEnvironment) ?? $0 }
        guard directory != nil || value(Self.serverKeyEnvironment) != nil else { return nil }

        func key(_ variable: String, file: String?, what: String) throws -> String {
            if let text = value(variable) {
                do { try Z85.validateKey(text) } catch { throw ConfigurationError("CURVE: \(variable): \(error)") }
                return text
            }
            guard let directory, let file else {
                throw ConfigurationError("CURVE: no \(what): set \(variable) or --curve-keys (\(Self.directoryEnvironment))")
            }
            return try CurveKeyDirectory.readKey("\(directory.path)/\(file)", what: what)
        }
        func pair(_ variable: String, file: String, what: String) throws -> CurveKeyPair {
            let secret = try key(variable, file: file, what: what)
            do { return try CurveKeyPair(secretKey: secret) } catch { throw ConfigurationError("CURVE: \(what): \(error)") }
        }

        let serverKey = try key(Self.serverKeyEnvironment, file: "server.pub", what: "server public key")
        guard serves else {
            guard let client else { throw ConfigurationError("CURVE: a process that only connects needs a client name") }
            return CurveSecurity(
                identity: try pair(Self.secretKeyEnvironment, file: "clients/\(client).key", what: "secret key of '\(client)'"),
                serverKey: serverKey)
        }
        let server = try pair(Self.serverSecretKeyEnvironment, file: "server.key", what: "server secret key")
        guard server.publicKey == serverKey else {
            throw ConfigurationError("CURVE: the server secret key does not belong to the server public key \(serverKey)")
        }
        let identity =
            try client.map { try pair(Self.secretKeyEnvironment, file: "clients/\($0).key", what: "secret key of '\($0)'") } ?? server
        var security = CurveSecurity(identity: identity, serverKey: serverKey, server: server)
        if let allowed = value(Self.allowedKeysEnvironment) {
            security.authorizer = try Self.parseAllowedKeys(allowed)
        } else if let directory {
            security.authorizer = DirectoryAuthorizer(folder: directory.clientsPath)
        } else {
            throw ConfigurationError(
                "CURVE: no allowed client keys: set \(Self.allowedKeysEnvironment) or --curve-keys (\(Self.directoryEnvironment))")
        }
        return security
    }

    /// `NAME:KEY,KEY,…` (a key without a name is named by its first 8 characters).
    static func parseAllowedKeys(_ text: String) throws -> AllowedCurveKeys {
        var names: [String: String] = [:]
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
            let key = parts.count == 2 ? parts[1] : parts[0]
            do { try Z85.validateKey(key) } catch { throw ConfigurationError("CURVE: \(allowedKeysEnvironment): '\(entry)': \(error)") }
            names[key] = parts.count == 2 ? parts[0] : String(key.prefix(8))
        }
        return AllowedCurveKeys(names)
    }
}

/// Turns CURVE on for the process's bus sockets (`Context.shared`), logging under `label` each
/// client the ZAP handler refuses (warning; once a minute per key, as a refused client keeps
/// reconnecting) and admits (debug: every connection of every worker is one).
public enum BusSecurity {
    public static func enable(_ security: CurveSecurity?, label: String) async throws {
        guard let security else { return }
        let lastWarned = Mutex<[String: ContinuousClock.Instant]>([:])
        try await Context.shared.enableCurve(security) { decision in
            // Made per decision: logging is bootstrapped after CURVE is enabled, and a Logger keeps
            // the handler of the moment it was made.
            let logger = Logger(label: label)
            let metadata: Logger.Metadata = ["address": "\(decision.address)", "client_key": "\(decision.clientKey)"]
            if let name = decision.clientName {
                logger.debug("CURVE client admitted", metadata: metadata.merging(["client": "\(name)"]) { $1 })
                return
            }
            let now = ContinuousClock.now
            let due = lastWarned.withLock { warned in
                guard warned[decision.clientKey].map({ now - $0 >= .seconds(60) }) ?? true else { return false }
                warned[decision.clientKey] = now
                return true
            }
            if due {
                logger.warning(
                    "CURVE client refused: \(decision.refusal ?? "not allowed") (repeats of this key are not logged for a minute)",
                    metadata: metadata)
            }
        }
    }
}
