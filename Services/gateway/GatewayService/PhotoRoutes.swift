import Bus
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RideContract
import RideModels
import ServiceKit
import Wire

/// Profile and car photos: uploaded as the raw image body (`PUT /v1/me/photo`,
/// `PUT /v1/me/car/photo`), checked and stored by `users` by content hash, served by that hash
/// (`GET /v1/photos/{sha256}`) to anyone — the hash is what a share page or order shows — with
/// caching for good, as a hash's bytes never change.
struct PhotoRoutes {
    let platform: PlatformCalls
    let tokens: TokenCache
    let limits: RateLimits
    /// Refused uploads, logged once per client address and minute.
    let rejections: RejectionLog

    static let cacheControl = "public, max-age=31536000, immutable"

    func register(public open: RecordedRoutes, authenticated routes: RecordedRoutes) {
        for (path, kind, summary) in [
            ("me/photo", PhotoKind.profile, "Upload the caller's profile photo (the body is the JPEG or PNG, at most 5 MiB)"),
            ("me/car/photo", .car, "A driver uploads their car's photo (the body is the JPEG or PNG, at most 5 MiB)"),
        ] {
            var doc = RouteDoc(
                summary, tag: .accounts, reply: User.self, "the user, its photo_url (or car.photo_url) the new photo's", errors: [409],
                op: Ops.Users.putPhoto.fullName)
            doc.imageBody = true
            routes.on(.put, path, doc) { request, context in try await upload(kind, request, context) }
        }
        let doc = RouteDoc(
            "A stored photo by its SHA-256 (what photo_url names); cached for good, 304 for If-None-Match", tag: .accounts,
            path: ["sha256": "64 lowercase hex digits"],
            replies: [
                .init(status: 200, description: "the image", content: .image),
                .init(status: 304, description: "the caller's copy is this photo", content: .noBody),
            ],
            op: Ops.Users.photo.fullName)
        open.on(.get, "photos/{sha256}", doc) { request, context in try await serve(request, context) }
    }

    func upload(_ kind: PhotoKind, _ request: Request, _ context: GatewayContext) async throws -> Response {
        let user = try context.requireUser()
        do {
            let bytes: ByteBuffer
            do {
                bytes = try await request.body.collect(upTo: PhotoRules.maxBytes)
            } catch let error as HTTPError where error.status == .contentTooLarge {
                throw GatewayError(.contentTooLarge, "too_large", "a photo is at most \(PhotoRules.maxBytes) bytes (5 MiB)")
            }
            // A retry's body is the same image: the key stands for the request, not the base64.
            let params = PhotoUpload(userID: user.id, kind: kind, data: Data(bytes.readableBytesView).base64EncodedString())
            let reply = try await platform.reply(Ops.Users.putPhoto, params, keyedBy: request)
            if reply.status >= 400, reply.status < 500 {
                let code = (try? JSONCoding.decode(JSONValue.self, from: reply.json))?["error"]?["code"]?.stringValue ?? "refused"
                note(code, request, context)
            }
            if reply.isSuccess { tokens.forget(userID: user.id) }
            return JSONBody.response(reply)
        } catch let error as GatewayError where error.status == .contentTooLarge {
            note(error.code, request, context)
            throw error
        }
    }

    func serve(_ request: Request, _ context: GatewayContext) async throws -> Response {
        let sha256 = try context.parameters.require("sha256")
        let etag = "\"\(sha256)\""
        // What is not a hash names no photo.
        guard sha256.wholeMatch(of: /[0-9a-f]{64}/) != nil else {
            throw GatewayError(
                .notFound, "unknown_photo", "no photo \(sha256.prefix(64)); photos are named by their SHA-256 (64 lowercase hex digits)")
        }
        // A hash's bytes never change: a client holding this hash holds the photo.
        if request.headers[values: .ifNoneMatch].contains(where: {
            $0.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces) == etag || $0.trimmingCharacters(in: .whitespaces) == "*"
            }
        }) {
            return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: Self.cacheControl])
        }
        let reply = try await platform.reply(Ops.Users.photo, PhotoQuery(sha256: sha256))
        guard reply.isSuccess else { return JSONBody.response(reply) }
        let photo = try JSONCoding.decode(Photo.self, from: reply.json)
        guard let bytes = Data(base64Encoded: photo.data) else {
            throw GatewayError(.internalServerError, "internal_error", "the stored photo \(sha256) did not decode")
        }
        return Response(
            status: .ok, headers: [.contentType: photo.contentType, .eTag: etag, .cacheControl: Self.cacheControl],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private func note(_ code: String, _ request: Request, _ context: GatewayContext) {
        rejections.note(
            code, from: ClientAddress.of(request, peer: context.peer, hops: limits.forwardedForHops), logger: context.logger,
            what: "photo refused")
    }
}
