import Foundation
import RideModels

/// Where photos live: by their SHA-256, in the users service's own database — a BLOB in the
/// SQLite file under the data directory, a BYTEA in PostgreSQL — so replicas sharing a database
/// share the photos and a photo is written in the same transaction as the user pointing at it.
/// (S3-compatible storage for production is a third implementation: docs/services/users.md.)
public protocol PhotoStorage: Sendable {
    /// Stores the photo (once per hash: the same bytes again are the same row) and points the
    /// user's photo, or their car's, at it; returns the updated user.
    func setPhoto(_ photo: StoredPhoto, userID: String, kind: PhotoKind, now: Date) async throws -> User
    func photo(sha256: String) async throws -> StoredPhoto?
}

/// A photo as stored: its bytes and what their header said.
public struct StoredPhoto: Sendable, Equatable {
    public var sha256: String
    public var contentType: String
    public var width: Int
    public var height: Int
    public var bytes: Data

    public init(sha256: String, contentType: String, width: Int, height: Int, bytes: Data) {
        self.sha256 = sha256
        self.contentType = contentType
        self.width = width
        self.height = height
        self.bytes = bytes
    }
}

/// The photos table and the users' columns pointing at it (`UserStore.migrations` v8), in both stores.
enum PhotoTable {
    static let sql = """
        -- Photos by content: the same bytes uploaded twice are one row. A user points at theirs
        -- (and a driver at their car's) by hash; a replaced photo stays, as others may share it.
        CREATE TABLE photos (
            sha256 TEXT PRIMARY KEY NOT NULL,
            content_type TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            bytes BLOB NOT NULL,
            created_at_ms INTEGER NOT NULL
        );
        ALTER TABLE users ADD COLUMN photo_sha256 TEXT;
        ALTER TABLE users ADD COLUMN car_photo_sha256 TEXT;
        """

    /// The users column a kind of photo is kept in.
    static func column(_ kind: PhotoKind) -> String { kind == .profile ? "photo_sha256" : "car_photo_sha256" }
}
