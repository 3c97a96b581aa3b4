import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceLifecycle
import ServiceStorage
import Storage

/// How drivers come to be approved for shifts (`--driver-approval`).
public enum DriverApprovalMode: String, Sendable, CaseIterable {
    /// At sign-up, documents or not (development, simulations); an expired document still ends it
    /// until a valid one is uploaded.
    case automatic
    /// By an operator, once the licence and the insurance are uploaded and valid.
    case required
}

/// Drivers' documents and approval: the driver uploads a photo of their licence and insurance with
/// the last day each is valid; an operator looks at them and approves the driver (or withdraws the
/// approval); a document that expires ends the approval (`ApprovalSweep`), which takes the
/// driver's device off duty (`user.approval_lapsed`) and keeps them from going online.
struct DocumentOps: Sendable {
    let store: any UserStorage
    let relay: OutboxRelay
    let mode: DriverApprovalMode
    var logger = Logger(label: "ride-users")

    /// How far ahead a document's last day may be.
    static let longestValidity: TimeInterval = 20 * 366 * 86_400

    func register(on router: inout OpRouter) {
        router.on(Ops.Users.putDocument) { (params: DocumentUpload, _) -> User in
            let now = Date()
            if let problem = Self.problem(expiresOn: params.expiresOn, now: now) {
                throw ServiceError.unprocessable("invalid_params", problem)
            }
            let photo = try PhotoOps.checked(data: params.data)
            do {
                return try await store.setDocument(
                    photo, userID: params.userID, kind: params.kind, expiresOn: params.expiresOn, now: now, reapprove: mode == .automatic)
            } catch let failure as UserStoreFailure {
                throw Self.refusal(failure, userID: params.userID)
            }
        }
        router.on(Ops.Users.document) { (params: DocumentQuery, _) -> Photo in
            guard let photo = try await store.document(userID: params.userID, kind: params.kind) else {
                throw ServiceError.notFound("unknown_document", "user \(params.userID.prefix(64)) has no \(params.kind.rawValue) uploaded")
            }
            return Photo(
                sha256: photo.sha256, contentType: photo.contentType, width: photo.width, height: photo.height,
                data: photo.bytes.base64EncodedString())
        }
        router.on(Ops.Users.approveDriver) { (params: UserIDParams, _) -> User in
            do {
                guard let user = try await store.approveDriver(userID: params.id, now: Date(), requireDocuments: true) else {
                    throw UsersOps.unknownUser(params.id)
                }
                logger.notice("driver approved", metadata: ["user_id": "\(user.id)"])
                return user
            } catch let failure as UserStoreFailure {
                throw Self.refusal(failure, userID: params.id)
            }
        }
        router.on(Ops.Users.withdrawApproval) { (params: SuspendParams, _) -> User in
            do {
                guard let user = try await store.withdrawApproval(userID: params.id, reason: params.reason, now: Date()) else {
                    throw UsersOps.unknownUser(params.id)
                }
                relay.notify()
                logger.notice("driver approval withdrawn", metadata: ["user_id": "\(user.id)", "reason": "\(params.reason)"])
                return user
            } catch let failure as UserStoreFailure {
                throw Self.refusal(failure, userID: params.id)
            }
        }
    }

    /// A new driver, approved at once where approval is automatic.
    func registered(_ user: User) async throws -> User {
        guard user.role == .driver, mode == .automatic else { return user }
        return try await store.approveDriver(userID: user.id, now: user.createdAt, requireDocuments: false) ?? user
    }

    /// Why a document's last day cannot be taken: not a day, already past, or implausibly far.
    static func problem(expiresOn: String, now: Date) -> String? {
        guard DriverApproval.isDay(expiresOn) else { return "expires_on: \(expiresOn.prefix(20)) is not a day (YYYY-MM-DD)" }
        guard expiresOn >= DriverApproval.day(now) else { return "expires_on: \(expiresOn) is past: upload a document that is valid today" }
        guard expiresOn <= DriverApproval.day(now.addingTimeInterval(longestValidity)) else {
            return "expires_on: \(expiresOn) is more than 20 years away"
        }
        return nil
    }

    static func refusal(_ failure: UserStoreFailure, userID: String) -> ServiceError {
        switch failure {
        case .unknownUser: return UsersOps.unknownUser(userID)
        case .notADriver:
            return ServiceError.conflict("not_a_driver", "user \(userID.prefix(64)) is not a driver: documents and approval are drivers'")
        case .documentsMissing(let kinds):
            return ServiceError.conflict(
                "documents_missing", "the driver has not uploaded their \(kinds.map(\.rawValue).joined(separator: " and ")) yet")
        case .documentExpired(let document):
            return ServiceError.conflict(
                "document_expired", "the driver's \(document.kind.rawValue) expired on \(document.expiresOn): they upload the new one first"
            )
        default: return ServiceError.conflict("refused", "\(failure)")
        }
    }
}

/// Ends the approval of drivers whose document expired, every `interval` (and at start).
struct ApprovalSweep: Service {
    let store: any UserStorage
    let relay: OutboxRelay
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do {
                let now = Date()
                let lapsed = try await store.lapseApprovals(today: DriverApproval.day(now), now: now)
                if !lapsed.isEmpty { relay.notify() }
                for lapse in lapsed {
                    logger.notice("driver approval lapsed", metadata: ["user_id": "\(lapse.userID)", "reason": "\(lapse.reason)"])
                }
            } catch {
                logger.warning("cannot check drivers' documents; the next round retries", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
