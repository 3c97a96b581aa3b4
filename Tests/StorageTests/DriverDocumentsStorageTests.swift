import Bus
import Foundation
import RideModels
import Storage
import Testing
import Wire

@testable import UsersService

/// Drivers' documents and approval in both stores: kept with their last valid day, approved only
/// with both there and valid, the approval ended by an expired document or an operator (each with
/// its `user.approval_lapsed`), and given back automatically where approval is automatic.
@Suite struct DriverDocumentsStorageTests {
    let base = UserStorageTests()
    let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18
    static let photo = StoredPhoto(
        sha256: String(repeating: "ab", count: 32), contentType: "image/png", width: 4, height: 3, bytes: Data([1, 2, 3]))

    @Test(arguments: Backend.allCases)
    func documentsApprovalAndItsLapses(backend: Backend) async throws {
        try await base.withStore(backend) { store in
            try await store.register(base.driver("d1", phone: "+15550101"), passwordHash: "h")
            try await store.register(User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+15550201", createdAt: now), passwordHash: "h")
            await #expect(throws: UserStoreFailure.notADriver) {
                try await store.setDocument(Self.photo, userID: "r1", kind: .licence, expiresOn: "2030-01-01", now: now, reapprove: false)
            }
            await #expect(throws: UserStoreFailure.unknownUser) {
                try await store.setDocument(
                    Self.photo, userID: "nobody", kind: .licence, expiresOn: "2030-01-01", now: now, reapprove: false)
            }
            let withLicence = try await store.setDocument(
                Self.photo, userID: "d1", kind: .licence, expiresOn: "2030-01-01", now: now, reapprove: false)
            #expect(
                withLicence.documents == [
                    DriverDocument(
                        kind: .licence, expiresOn: "2030-01-01", uploadedAt: now, photoURL: "/dashboard/users/d1/documents/licence")
                ])
            #expect(withLicence.approvedAt == nil)
            await #expect(throws: UserStoreFailure.documentsMissing([.insurance])) {
                try await store.approveDriver(userID: "d1", now: now, requireDocuments: true)
            }
            _ = try await store.setDocument(Self.photo, userID: "d1", kind: .insurance, expiresOn: "2026-12-01", now: now, reapprove: false)
            let approved = try #require(try await store.approveDriver(userID: "d1", now: now, requireDocuments: true))
            #expect(approved.approvedAt == now && approved.documents?.count == 2)
            #expect(
                try await store.approveDriver(userID: "d1", now: now.addingTimeInterval(60), requireDocuments: true)?.approvedAt == now,
                "kept")
            #expect(try await store.approveDriver(userID: "nobody", now: now, requireDocuments: true) == nil)
            #expect(try await store.document(userID: "d1", kind: .licence) == Self.photo)
            #expect(try await store.document(userID: "d1", kind: .insurance)?.bytes == Self.photo.bytes)
            #expect(try await store.document(userID: "r1", kind: .licence) == nil)

            // The insurance's last day passes: the approval lapses, once, with its event.
            #expect(try await store.lapseApprovals(today: "2026-12-01", now: now).isEmpty, "valid through its last day")
            let lapsed = try await store.lapseApprovals(today: "2026-12-02", now: now)
            #expect(lapsed == [DriverApprovalLapsed(userID: "d1", deviceID: "dev-d1", reason: "the insurance expired on 2026-12-01")])
            #expect(try await store.lapseApprovals(today: "2026-12-03", now: now).isEmpty, "once")
            #expect(try await store.user(id: "d1")?.approvedAt == nil)
            let later = now.addingTimeInterval(20 * 86_400)
            await #expect(throws: UserStoreFailure.self) { try await store.approveDriver(userID: "d1", now: later, requireDocuments: true) }
            // A new insurance: approved again at once only where approval is automatic.
            #expect(
                try await store.setDocument(
                    Self.photo, userID: "d1", kind: .insurance, expiresOn: "2027-12-01", now: later, reapprove: false
                ).approvedAt == nil)
            #expect(
                try await store.setDocument(
                    Self.photo, userID: "d1", kind: .insurance, expiresOn: "2027-12-01", now: later, reapprove: true
                ).approvedAt == later)
            // An operator withdraws it: one event; withdrawn again, nothing.
            #expect(try await store.withdrawApproval(userID: "d1", reason: "complaints", now: later)?.approvedAt == nil)
            #expect(try await store.withdrawApproval(userID: "d1", reason: "complaints", now: later)?.approvedAt == nil)
            await #expect(throws: UserStoreFailure.notADriver) { try await store.withdrawApproval(userID: "r1", reason: "x", now: later) }
            let events = try await store.eventLog.page(source: "users", query: EventsQuery(after: 0, limit: 20)).events.filter {
                $0.type == "user.approval_lapsed"
            }
            #expect(events.map { $0.data["reason"]?.stringValue } == ["the insurance expired on 2026-12-01", "complaints"])
            #expect(events.allSatisfy { $0.data["user_id"] == "d1" && $0.data["device_id"] == "dev-d1" })
        }
    }

    @Test func theRulesOfDaysAndApproval() {
        #expect(DriverApproval.day(now) == "2026-11-18")
        #expect(
            DriverApproval.isDay("2028-02-29") && !DriverApproval.isDay("2027-02-29") && !DriverApproval.isDay("2027-13-01")
                && !DriverApproval.isDay("27-01-01"))
        #expect(DocumentOps.problem(expiresOn: "2026-11-18", now: now) == nil, "valid today")
        #expect(DocumentOps.problem(expiresOn: "2026-11-17", now: now)?.contains("is past") == true)
        #expect(DocumentOps.problem(expiresOn: "2070-01-01", now: now)?.contains("20 years") == true)
        #expect(DocumentOps.problem(expiresOn: "2026-02-30", now: now)?.contains("not a day") == true)
        var dan = base.driver("d1", phone: "+1")
        #expect(DriverApproval.problem(dan, today: "2026-11-18")?.contains("upload your licence and insurance") == true)
        dan.documents = [DriverDocument(kind: .licence, expiresOn: "2027-01-01", uploadedAt: now, photoURL: "")]
        #expect(DriverApproval.problem(dan, today: "2026-11-18")?.contains("upload your insurance") == true)
        dan.documents?.append(DriverDocument(kind: .insurance, expiresOn: "2026-11-17", uploadedAt: now, photoURL: ""))
        dan.approvedAt = now
        #expect(
            DriverApproval.problem(dan, today: "2026-11-18")?.contains("insurance expired on 2026-11-17") == true,
            "expired, though approved")
        dan.documents?[1].expiresOn = "2027-01-01"
        #expect(DriverApproval.problem(dan, today: "2026-11-18") == nil)
        dan.approvedAt = nil
        #expect(DriverApproval.problem(dan, today: "2026-11-18") == "an operator has not approved your documents yet")
        #expect(
            DriverApproval.problem(User(id: "r", role: .rider, name: "A", phoneNumber: "+1", createdAt: now), today: "2026-11-18") == nil)
    }
}
