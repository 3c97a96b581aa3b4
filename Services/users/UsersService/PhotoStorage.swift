import Foundation
import RideModels

/// Where photos live: by their SHA-256, in the users service's own database — a BLOB in the
/// SQLite file under the data directory, a BYTEA in PostgreSQL — so replicas sharing a database
/// share the photos and a photo is written in the same transaction as the user pointing at it.
/// (S3-compatible storage for production is a third implementation: docs/services/users.md.)
public protocol PhotoStorage: Sendable {
    /// Stores the photo (once per hash: the same bytes again are the same row) and points the
    /// user's photo, or their car's, at it; returns the updated user. The photo it replaces, when
    /// no user points at it any more, is deleted once `keepReplaced` has passed (a report may show
    /// it until then): that and every other replaced photo whose time is up, in the same transaction.
    func setPhoto(_ photo: StoredPhoto, userID: String, kind: PhotoKind, now: Date, keepReplaced: TimeInterval) async throws -> User
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

/// The photos table and the users' columns pointing at it (`UserStore.migrations` v9 and v11), in both stores.
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

    /// When a photo was replaced and no user pointed at it any more (NULL while one does), and the
    /// indexes that find the ones to delete and whether anyone still points at one.
    static let replacedSQL = """
        ALTER TABLE photos ADD COLUMN replaced_at_ms INTEGER;
        CREATE INDEX photos_replaced ON photos (replaced_at_ms) WHERE replaced_at_ms IS NOT NULL;
        CREATE INDEX users_photo ON users (photo_sha256) WHERE photo_sha256 IS NOT NULL;
        CREATE INDEX users_car_photo ON users (car_photo_sha256) WHERE car_photo_sha256 IS NOT NULL;
        """

    /// No user points at `photos.sha256` (SQL for both stores, after the table's name).
    static let unreferenced = """
        NOT EXISTS (SELECT 1 FROM users WHERE photo_sha256 = photos.sha256) AND NOT EXISTS (SELECT 1 FROM users WHERE car_photo_sha256 = photos.sha256)
        """

    /// The users column a kind of photo is kept in.
    static func column(_ kind: PhotoKind) -> String { kind == .profile ? "photo_sha256" : "car_photo_sha256" }
}
