import Foundation
import RideModels

/// The identities table (`UserStore.migrations` v8), in both stores, and how an account made by a
/// social sign-in is kept in the `users` table, whose phone number and password are required.
enum IdentityTable {
    static let sql = """
        -- Identities of a provider (Apple, Google, Facebook) that log a user in: the provider's
        -- stable id of the person (the ID token's sub, Facebook's user_id), verified by the gateway.
        CREATE TABLE identities (
            provider TEXT NOT NULL,
            subject TEXT NOT NULL,
            user_id TEXT NOT NULL,
            created_at_ms INTEGER NOT NULL,
            PRIMARY KEY (provider, subject)
        );
        CREATE INDEX identities_by_user ON identities (user_id);
        """

    /// The stored phone number of an account without one: unique, and never one a phone-number
    /// log-in can be given (sign-up's pattern refuses it). Read back as "" (`UserRow.user`).
    static func placeholderPhone(_ identity: LinkedIdentity) -> String {
        "\(prefix)\(identity.provider.rawValue):\(identity.subject)"
    }

    static func isPlaceholder(_ phone: String) -> Bool { phone.hasPrefix(prefix) }

    /// The stored password hash of an account without a password: of no form the hasher knows, so
    /// no password matches it (`PasswordHasher.verify`).
    static let noPassword = "!identity"

    private static let prefix = "identity:"
}
