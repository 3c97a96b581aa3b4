import Foundation
import Wire

/// Which photo of a user: their own (`photo_url`) or a driver's car (`car.photo_url`).
@WireModel
public enum PhotoKind: String, Codable, Sendable, CaseIterable {
    case profile, car
}

/// `users.put_photo`: an image the gateway took as a request body, base64. `users` checks it by
/// its content (JPEG or PNG, dimensions in its header), stores it by its SHA-256 and points the
/// user's `photo_url` (or their car's) at it.
@WireModel
public struct PhotoUpload: Codable, Sendable, Equatable {
    public var userID: String
    public var kind: PhotoKind
    /// Base64 of at most `PhotoRules.maxBytes` bytes.
    @WireField(maxLength: PhotoRules.maxBase64Length)
    public var data: String

    public init(userID: String, kind: PhotoKind, data: String) {
        self.userID = userID
        self.kind = kind
        self.data = data
    }
}

/// `users.photo`: a stored photo by its SHA-256.
@WireModel
public struct PhotoQuery: Codable, Sendable, Equatable {
    @WireField(pattern: PhotoRules.sha256Pattern, meaning: "64 lowercase hex digits, the photo's SHA-256")
    public var sha256: String

    public init(sha256: String) { self.sha256 = sha256 }
}

/// A stored photo: its bytes (base64) and what its header says.
@WireModel
public struct Photo: Codable, Sendable, Equatable {
    public var sha256: String
    /// `image/jpeg` or `image/png`, from the bytes, never from a name or a header.
    public var contentType: String
    public var width: Int
    public var height: Int
    public var data: String

    public init(sha256: String, contentType: String, width: Int, height: Int, data: String) {
        self.sha256 = sha256
        self.contentType = contentType
        self.width = width
        self.height = height
        self.data = data
    }
}

public enum PhotoRules {
    /// 5 MiB: the most a photo may be.
    public static let maxBytes = 5 * 1024 * 1024
    public static let maxBase64Length = (maxBytes + 2) / 3 * 4
    public static let sha256Pattern = "^[0-9a-f]{64}$"
    /// A photo's URL path on the gateway, what `photo_url` holds.
    public static func path(sha256: String) -> String { "/v1/photos/\(sha256)" }
    public static let pathPattern = "^/v1/photos/[0-9a-f]{64}$"
}
