import Bus
import Foundation
import HTTPTypes
import Hummingbird
import RideContract
import RideModels
import Wire

/// Drivers' documents: the driver uploads a photo of their licence or insurance (the raw image body,
/// as a profile photo) with the last day it is valid; operators look at it and approve the driver,
/// or withdraw the approval. A document's photo is never a public photo: only the dashboard serves it.
struct DocumentRoutes {
    let platform: PlatformCalls
    let tokens: TokenCache

    static let expiresOn = RouteDoc.Parameter(
        name: "expires_on", schema: .string(), rules: .init(pattern: DriverApproval.dayPattern, meaning: DriverApproval.dayMeaning),
        required: true,
        description: "the last day the document is valid (YYYY-MM-DD)")
    static let kinds = DocumentKind.allCases.map(\.rawValue).joined(separator: " or ")

    func register(authenticated routes: RecordedRoutes, dashboard: RecordedRoutes) {
        var upload = RouteDoc(
            "A driver uploads a photo of their licence or insurance (the body is the JPEG or PNG, at most 5 MiB) and the last day it is valid",
            tag: .drivers, query: [Self.expiresOn], path: ["kind": Self.kinds], reply: User.self, "the driver, with the document",
            errors: [409, 413, 415], op: Ops.Users.putDocument.fullName)
        upload.imageBody = true
        routes.on(.put, "me/documents/{kind}", upload) { request, context in
            let user = try context.requireUser()
            let kind = try Self.kind(context)
            guard let expiresOn = try Self.expiresOn.read(from: request)?.stringValue else {
                throw GatewayError(
                    .unprocessableContent, "invalid_params", "expires_on: required, the last day the document is valid (YYYY-MM-DD)")
            }
            let bytes: ByteBuffer
            do {
                bytes = try await request.body.collect(upTo: PhotoRules.maxBytes)
            } catch let error as HTTPError where error.status == .contentTooLarge {
                throw GatewayError(.contentTooLarge, "too_large", "a document's photo is at most \(PhotoRules.maxBytes) bytes (5 MiB)")
            }
            let params = DocumentUpload(
                userID: user.id, kind: kind, expiresOn: expiresOn, data: Data(bytes.readableBytesView).base64EncodedString())
            let reply = try await platform.reply(Ops.Users.putDocument, params, keyedBy: request)
            if reply.isSuccess { tokens.forget(userID: user.id) }
            return JSONBody.response(reply)
        }
        dashboard.on(
            .get, "dashboard/users/{id}/documents/{kind}",
            RouteDoc(
                "A driver's document photo, for the operator (never cached by others)", tag: .operators,
                path: ["id": "the driver's id", "kind": Self.kinds],
                replies: [.init(status: 200, description: "the image", content: .image)], errors: [404], op: Ops.Users.document.fullName)
        ) { _, context in
            let params: JSONValue = [
                "user_id": .string(try context.parameters.require("id")), "kind": .string(try Self.kind(context).rawValue),
            ]
            let reply = try await platform.reply(Ops.Users.document, body: params)
            guard reply.isSuccess else { return JSONBody.response(reply) }
            let photo = try JSONCoding.decode(Photo.self, from: reply.json)
            guard let bytes = Data(base64Encoded: photo.data) else {
                throw GatewayError(.internalServerError, "internal_error", "the stored document did not decode")
            }
            return Response(
                status: .ok, headers: [.contentType: photo.contentType, .cacheControl: "private, no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        dashboard.on(
            .post, "dashboard/users/{id}/approve",
            OpRoute(
                Ops.Users.approveDriver, tag: .operators,
                summary: "Approves a driver for shifts (their licence and insurance uploaded and valid)", fill: [:],
                path: ["id": "id"], errors: [404, 409]), calling: platform)
        dashboard.on(
            .post, "dashboard/users/{id}/withdraw-approval",
            OpRoute(
                Ops.Users.withdrawApproval, tag: .operators,
                summary: "Withdraws a driver's approval: their device goes off duty until approved again",
                fill: [:], path: ["id": "id"], body: .only(["reason"]), errors: [404, 409]), calling: platform)
    }

    static func kind(_ context: GatewayContext) throws -> DocumentKind {
        let given = try context.parameters.require("kind")
        guard let kind = DocumentKind(rawValue: given) else {
            throw GatewayError(.notFound, "unknown_document_kind", "no document kind \(given.prefix(40)): \(kinds)")
        }
        return kind
    }
}
