import Foundation
import RideModels

/// Drivers' documents and approval, in both stores: a document's photo (in its own table, never
/// served as a public photo), its last valid day and upload time on the user's row, and when the
/// driver was approved.
public protocol DocumentStorage: Sendable {
    /// Stores a driver's document; `reapprove` (automatic approval): a driver whose approval lapsed
    /// is approved again once no document of theirs is expired. `notADriver`, `unknownUser`.
    func setDocument(_ photo: StoredPhoto, userID: String, kind: DocumentKind, expiresOn: String, now: Date, reapprove: Bool) async throws
        -> User
    func document(userID: String, kind: DocumentKind) async throws -> StoredPhoto?
    /// Approves a driver — with every required document there (`requireDocuments`) and none
    /// expired on `now`'s day — keeping an earlier approval's time; nil for an unknown id.
    func approveDriver(userID: String, now: Date, requireDocuments: Bool) async throws -> User?
    /// Ends a driver's approval, with its `user.approval_lapsed` in the same transaction (none when
    /// there was no approval to end); nil for an unknown id.
    func withdrawApproval(userID: String, reason: String, now: Date) async throws -> User?
    /// Ends the approval of every approved driver with a document expired before `today`, each
    /// with its `user.approval_lapsed`, in one transaction; the lapses.
    func lapseApprovals(today: String, now: Date) async throws -> [DriverApprovalLapsed]
}

/// The documents' schema and the rules both stores apply.
enum DocumentTable {
    static let sql = """
        ALTER TABLE users ADD COLUMN licence_expires_on TEXT;
        ALTER TABLE users ADD COLUMN licence_uploaded_at_ms INTEGER;
        ALTER TABLE users ADD COLUMN insurance_expires_on TEXT;
        ALTER TABLE users ADD COLUMN insurance_uploaded_at_ms INTEGER;
        ALTER TABLE users ADD COLUMN approved_at_ms INTEGER;
        -- The drivers who signed up before approval existed were driving: they stay approved.
        UPDATE users SET approved_at_ms = created_at_ms WHERE role = 'driver';
        CREATE TABLE driver_documents (
            user_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            content_type TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            bytes BLOB NOT NULL,
            PRIMARY KEY (user_id, kind)
        ) WITHOUT ROWID;
        """

    /// Where operators see a document's photo on the gateway.
    static func path(userID: String, kind: DocumentKind) -> String { "/dashboard/users/\(userID)/documents/\(kind.rawValue)" }

    /// The user row's columns of a kind (a closed set of names, safe in SQL).
    static func expiresColumn(_ kind: DocumentKind) -> String { "\(kind.rawValue)_expires_on" }
    static func uploadedColumn(_ kind: DocumentKind) -> String { "\(kind.rawValue)_uploaded_at_ms" }

    /// Why `user` may not be approved on `today`; nil when they may.
    static func approvalFailure(_ user: User, today: String, requireDocuments: Bool) -> UserStoreFailure? {
        guard user.role == .driver else { return .notADriver }
        if let expired = DriverApproval.expired(user, today: today).first { return .documentExpired(expired) }
        guard requireDocuments else { return nil }
        let missing = DriverApproval.required.filter { kind in !(user.documents ?? []).contains { $0.kind == kind } }
        return missing.isEmpty ? nil : .documentsMissing(missing)
    }

    /// What ended an approval on `today`.
    static func lapseReason(_ user: User, today: String) -> String {
        guard let expired = DriverApproval.expired(user, today: today).first else { return "a document expired" }
        return "the \(expired.kind.rawValue) expired on \(expired.expiresOn)"
    }

    static let lapsingSQL = "approved_at_ms IS NOT NULL AND (licence_expires_on < ? OR insurance_expires_on < ?)"
}
