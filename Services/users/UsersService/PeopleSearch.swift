import Foundation
import RideModels

/// An operator's search for people as both stores run it: the query as a case-insensitive
/// `LIKE` pattern (its `%`, `_` and `\` taken literally) on the name and the phone number, or the
/// whole id; role and suspension as filters.
public struct PeopleSearch: Sendable, Equatable {
    /// `%part%`, lower-cased and escaped with `\`; nil matches everyone.
    public var pattern: String?
    /// The query as it was, for an exact id.
    public var id: String?
    public var role: String?
    public var suspended: Bool?
    public var limit: Int

    public static let defaultLimit = 50

    public init(_ params: SearchUsersParams) {
        let query = params.query?.trimmingCharacters(in: .whitespaces)
        let text = query.flatMap { $0.isEmpty ? nil : $0 }
        pattern = text.map { "%" + Self.escaped($0.lowercased()) + "%" }
        id = text
        role = params.role?.rawValue
        suspended = params.suspended
        limit = params.limit ?? Self.defaultLimit
    }

    /// `text` with `LIKE`'s wildcards and the escape character escaped.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// The query both stores run (`columns` of `users`), with `?` placeholders bound to `arguments`
    /// (a null is typed by its `CAST`: PostgreSQL cannot tell an untyped one's type).
    static func sql(columns: String) -> String {
        """
        SELECT \(columns) FROM users
        WHERE (CAST(? AS TEXT) IS NULL OR lower(name) LIKE ? ESCAPE '\\' OR phone_number LIKE ? ESCAPE '\\' OR id = ?)
          AND (CAST(? AS TEXT) IS NULL OR role = ?)
          AND (CAST(? AS BOOLEAN) IS NULL OR (suspended_at_ms IS NOT NULL) = ?)
        ORDER BY created_at_ms DESC, id LIMIT ?
        """
    }

    /// The values of `sql`'s placeholders, in order.
    var arguments: (pattern: String?, id: String?, role: String?, suspended: Bool?, limit: Int) { (pattern, id, role, suspended, limit) }
}
