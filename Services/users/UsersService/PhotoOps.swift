import Bus
import Crypto
import Foundation
import RideContract
import RideModels

/// `users.put_photo` and `users.photo`: photos checked by their bytes and kept by their SHA-256.
enum PhotoOps {
    /// How long a replaced photo no one points at is kept (`--replaced-photo-retention-s`): a report
    /// made with it shows it until then.
    static let defaultKeepReplaced: TimeInterval = 30 * 86_400

    static func register(on router: inout OpRouter, store: any UserStorage, keepReplaced: TimeInterval) {
        router.on(Ops.Users.putPhoto) { (params: PhotoUpload, _) -> User in
            let photo = try checked(params)
            do {
                return try await store.setPhoto(photo, userID: params.userID, kind: params.kind, now: Date(), keepReplaced: keepReplaced)
            } catch UserStoreFailure.unknownUser {
                throw UsersOps.unknownUser(params.userID)
            } catch UserStoreFailure.noCar {
                throw ServiceError.conflict("no_car", "user \(params.userID.prefix(64)) has no car; a car photo is a driver's")
            }
        }
        router.on(Ops.Users.photo) { (params: PhotoQuery, _) -> Photo in
            guard let photo = try await store.photo(sha256: params.sha256) else {
                throw ServiceError.notFound("unknown_photo", "no photo with sha256 \(params.sha256)")
            }
            return Photo(
                sha256: photo.sha256, contentType: photo.contentType, width: photo.width, height: photo.height,
                data: photo.bytes.base64EncodedString())
        }
    }

    /// The upload as a photo to store, or a 4xx naming what is wrong with it.
    static func checked(_ params: PhotoUpload) throws -> StoredPhoto { try checked(data: params.data) }

    /// The base64 of an image (a photo, a document's) as a photo to store, or a 4xx naming what is wrong with it.
    static func checked(data: String) throws -> StoredPhoto {
        guard let bytes = Data(base64Encoded: data) else { throw ServiceError.unprocessable("invalid_params", "data: not base64") }
        guard !bytes.isEmpty else { throw ServiceError.unprocessable("invalid_image", "data: the image is empty") }
        guard bytes.count <= PhotoRules.maxBytes else {
            throw ServiceError(status: 413, code: "too_large", message: "the image is \(bytes.count) bytes; at most \(PhotoRules.maxBytes)")
        }
        switch ImageSniffer.sniff([UInt8](bytes)) {
        case .failure(let refusal):
            throw ServiceError(
                status: refusal.code == "unsupported_image" ? 415 : Status.unprocessable, code: refusal.code, message: refusal.message)
        case .success(let image):
            // What is stored (and hashed, and served) is the rebuilt file, metadata left out.
            let cleaned: [UInt8]
            switch ImageCleaner.clean([UInt8](bytes), contentType: image.contentType) {
            case .failure(let refusal): throw ServiceError(status: Status.unprocessable, code: refusal.code, message: refusal.message)
            case .success(let stored): cleaned = stored
            }
            let hash = SHA256.hash(data: cleaned).map { String(format: "%02x", $0) }.joined()
            return StoredPhoto(sha256: hash, contentType: image.contentType, width: image.width, height: image.height, bytes: Data(cleaned))
        }
    }
}
