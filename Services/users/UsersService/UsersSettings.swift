import ArgumentParser
import Bus
import Foundation
import RideContract
import ServiceKit
import ServiceStorage
import SettingsKit
import Storage

/// `ride-users`' flags. Each has an environment variable; a flag wins over its variable.
public struct RideUsersCommand: ServiceCommand {
    /// What `--data-dir` holds.
    public enum Files: DataFiles {
        public static let description = "users.sqlite (unless --database-url) and the token key"
    }

    public static let configuration = CommandConfiguration(
        commandName: "ride-users",
        abstract: "Users: riders and drivers, their credentials, and the tokens that say who is asking.",
        discussion: """
            \(RideContract.helpSummary(of: BusContract.Service.users)) Events come from a transactional \
            outbox. Follows orders' order.rated to keep each user's rating average. Passwords are \
            kept only as salted PBKDF2-SHA256 hashes; access tokens are HS256 JWTs naming their key \
            (kid) and session; refresh tokens are opaque, stored hashed, rotated on each use. \
            The signing key comes from RIDE_TOKEN_SECRET, else --token-secret-file, else \
            <data-dir>/users-token.key (made once); RIDE_TOKEN_PREVIOUS_SECRET or \
            --token-previous-secret-file names the key being rotated out (its tokens still verify). --http defaults to \(RideProcess.users.httpDefault).

            \(ExitCodes.help(opening: "the database or the key"))
            """,
        version: PlatformVersion.current
    )

    public static let busRole: HeldRole? = Roles.users.held
    typealias Keys = UsersSettingKeys

    @OptionGroup var bus: BusClientOptions

    @OptionGroup var dataDirectory: DataDirectoryOptions<Files>

    @OptionGroup var database: DatabaseOptions

    @Option(name: Keys.tokenSecretFile.name, help: Keys.tokenSecretFile.help) var tokenSecretFile: String?
    @Option(name: Keys.tokenPreviousSecretFile.name, help: Keys.tokenPreviousSecretFile.help) var tokenPreviousSecretFile: String?
    @Option(name: Keys.tokenTTLSeconds.name, help: Keys.tokenTTLSeconds.help) var tokenTTLSeconds: Int?
    @Option(name: Keys.refreshTTLSeconds.name, help: Keys.refreshTTLSeconds.help) var refreshTTLSeconds: Int?
    @Option(name: Keys.passwordRounds.name, help: Keys.passwordRounds.help) var passwordRounds: Int?
    @Option(name: Keys.reauthenticationWindowSeconds.name, help: Keys.reauthenticationWindowSeconds.help) var reauthenticationWindowSeconds:
        Int?
    @Option(name: Keys.replacedPhotoRetentionSeconds.name, help: Keys.replacedPhotoRetentionSeconds.help) var replacedPhotoRetentionSeconds:
        Int?
    @Option(name: Keys.credentialReplaySeconds.name, help: Keys.credentialReplaySeconds.help) var credentialReplaySeconds: Int?
    @Option(name: Keys.driverApproval.name, help: Keys.driverApproval.help) var driverApproval: String?
    @Option(name: Keys.documentCheckSeconds.name, help: Keys.documentCheckSeconds.help) var documentCheckSeconds: Int?

    @OptionGroup var workers: WorkerOptions

    @OptionGroup public var common: CommonOptions

    public init() {}

    public static func serve(_ settings: UsersSettings) async throws {
        try await UsersServer(settings: settings).run()
    }

    public func settings() throws -> UsersSettings { try settings(environment: ProcessInfo.processInfo.environment) }

    func settings(environment: [String: String]) throws -> UsersSettings {
        let dataDirectory = dataDirectory.resolved()
        let secretFile = Keys.tokenSecretFile.resolve(
            tokenSecretFile, default: URL(fileURLWithPath: dataDirectory).appendingPathComponent("users-token.key").path,
            environment: environment
        ).value
        var secret: [UInt8]?
        if let text = environment["RIDE_TOKEN_SECRET"], !text.isEmpty {
            guard text.utf8.count >= 32 else {
                throw ConfigurationError("RIDE_TOKEN_SECRET must be at least 32 characters (it signs every token)")
            }
            secret = Array(text.utf8)
        }
        var previous: [UInt8]?
        if let text = environment["RIDE_TOKEN_PREVIOUS_SECRET"], !text.isEmpty {
            guard text.utf8.count >= 32 else { throw ConfigurationError("RIDE_TOKEN_PREVIOUS_SECRET must be at least 32 characters") }
            previous = Array(text.utf8)
        }
        let previousFile = Keys.tokenPreviousSecretFile.resolve(tokenPreviousSecretFile, default: "", environment: environment).value
        return UsersSettings(
            basics: try ServiceBasics(.users, bus: bus, common: common),
            dataDirectory: dataDirectory,
            database: try database.location(
                sqlitePath: URL(fileURLWithPath: dataDirectory).appendingPathComponent("users.sqlite").path, environment: environment),
            tokenSecret: secret, tokenSecretFile: secretFile,
            previousTokenSecret: previous, previousTokenSecretFile: previousFile.isEmpty ? nil : previousFile,
            tokenLifetime: TimeInterval(try Keys.tokenTTLSeconds.value(tokenTTLSeconds, environment: environment)),
            refreshLifetime: TimeInterval(try Keys.refreshTTLSeconds.value(refreshTTLSeconds, environment: environment)),
            passwordRounds: try Keys.passwordRounds.value(passwordRounds, environment: environment),
            reauthenticationWindow: TimeInterval(
                try Keys.reauthenticationWindowSeconds.value(reauthenticationWindowSeconds, environment: environment)),
            replacedPhotoRetention: TimeInterval(
                try Keys.replacedPhotoRetentionSeconds.value(replacedPhotoRetentionSeconds, environment: environment)),
            credentialReplay: TimeInterval(try Keys.credentialReplaySeconds.value(credentialReplaySeconds, environment: environment)),
            driverApproval: try Self.approval(driverApproval, environment: environment),
            documentCheck: .seconds(try Keys.documentCheckSeconds.value(documentCheckSeconds, environment: environment)),
            concurrency: try workers.resolved())
    }
}

extension RideUsersCommand {
    static func approval(_ given: String?, environment: [String: String]) throws -> DriverApprovalMode {
        let setting = Keys.driverApproval.resolve(given, environment: environment)
        guard let mode = DriverApprovalMode(rawValue: setting.value) else {
            throw ConfigurationError("driver approval (\(setting.origin)) '\(setting.value.prefix(40))' must be automatic or required")
        }
        return mode
    }
}

/// `ride-users`' resolved configuration.
public struct UsersSettings: StoredServiceSettings {
    public var basics: ServiceBasics
    public var dataDirectory: String
    public var database: StorageLocation
    /// From `RIDE_TOKEN_SECRET`; else the key file is used.
    public var tokenSecret: [UInt8]?
    public var tokenSecretFile: String
    /// The key being rotated out (`RIDE_TOKEN_PREVIOUS_SECRET`, else its file), if any.
    public var previousTokenSecret: [UInt8]?
    public var previousTokenSecretFile: String?
    /// Of an access token.
    public var tokenLifetime: TimeInterval
    public var refreshLifetime: TimeInterval
    public var passwordRounds: Int
    /// How long after its log-in a session may change the password or phone number without the current password.
    public var reauthenticationWindow: TimeInterval
    /// How long a replaced photo no user points at is kept before it is deleted.
    public var replacedPhotoRetention: TimeInterval
    /// How long a keyed credential reply (`UsersOps.credentialOps`) is answered again.
    public var credentialReplay: TimeInterval
    public var driverApproval: DriverApprovalMode
    public var documentCheck: Duration
    public var concurrency: Int

    /// The database's password and the token keys given (a key file the service will make is random).
    public var secrets: [SecretSetting] {
        func key(_ name: String, variable: String, value: [UInt8]?, file: String?) -> SecretSetting? {
            if let value { return SecretSetting(name: name, origin: variable, value: value, minimumLength: 32) }
            return KeyFile.given(file, name: name)
        }
        return database.secrets
            + [
                key("token signing key", variable: "RIDE_TOKEN_SECRET", value: tokenSecret, file: tokenSecretFile),
                key(
                    "previous token signing key", variable: "RIDE_TOKEN_PREVIOUS_SECRET", value: previousTokenSecret,
                    file: previousTokenSecretFile),
            ].compactMap { $0 }
    }

    public var summary: String {
        basics.summary(
            of: .users,
            [
                "database": "\(database)",
                "token key": tokenSecret != nil ? "RIDE_TOKEN_SECRET" : tokenSecretFile,
                "previous token key": previousTokenSecret != nil ? "RIDE_TOKEN_PREVIOUS_SECRET" : previousTokenSecretFile ?? "none",
                "token lifetime": "access \(Int(tokenLifetime)) s, refresh \(Int(refreshLifetime)) s",
                "password hashing": "PBKDF2-SHA256, \(passwordRounds) rounds",
                "re-authentication": "current password, or a log-in of the last \(Int(reauthenticationWindow)) s",
                "replaced photos": "deleted \(Int(replacedPhotoRetention)) s after no one uses them",
                "credential replies": "answered again to a retry for \(Int(credentialReplay)) s",
                "drivers": "approval \(driverApproval.rawValue); documents checked for expiry every \(documentCheck)",
                "concurrency": "\(concurrency)",
            ])
    }

    /// The previous key, still accepted: the variable's, or the file's. A missing or empty file is
    /// no previous key, so a deployment can name the file always and fill it only during a rotation.
    func loadPreviousSecret() throws -> [UInt8]? {
        if let previousTokenSecret { return previousTokenSecret }
        guard let previousTokenSecretFile, let data = FileManager.default.contents(atPath: previousTokenSecretFile), !data.isEmpty else {
            return nil
        }
        guard data.count >= 32 else {
            throw ConfigurationError("previous token key file \(previousTokenSecretFile) holds \(data.count) bytes; it needs at least 32")
        }
        return [UInt8](data)
    }

    /// The signing key: the variable's, or the file's (made with 32 random bytes, mode 0600, when missing).
    func loadSecret() throws -> [UInt8] {
        if let tokenSecret { return tokenSecret }
        return try KeyFile.loadOrCreate(tokenSecretFile, what: "token key")
    }
}
