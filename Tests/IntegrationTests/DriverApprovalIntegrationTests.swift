import Foundation
import Geo
import PlatformLauncher
import Testing
import TrackingSDK
import Wire

/// Driver onboarding where approval is required (`ride-users --driver-approval required`), through
/// the gateway against the real users and tracking: a new driver cannot go online; uploads a photo
/// of their licence and insurance with the last day each is valid; an operator looks at them and
/// approves; the driver goes online. A document that expires ends the approval (the users sweep)
/// and takes the device off duty at once; so does an operator withdrawing the approval. The driver
/// SDK streaming on the ingest socket is held to the same: its request to go online is refused
/// (its locations stored all the same) until users says the driver is approved.
@Suite(.serialized) struct DriverApprovalIntegrationTests {
    static let basic = SuspensionIntegrationTests.basic
    static let png = PhotoIntegrationTests.png
    static let jpeg = PhotoIntegrationTests.jpeg

    @Test(.timeLimit(.minutes(4)))
    func aDriverGoesOnlineOnlyApprovedAndAnExpiredDocumentTakesThemOffline() async throws {
        try await withTestBus("driver-approval") { bus in
            let users = try await TestService.users(on: bus, arguments: ["--driver-approval", "required", "--document-check-s", "1"])
            let ingest = try await TestTracking.start(on: bus, inactiveAfterSeconds: 60, deviceCredentials: true)
            let gateway = try await TestGateway.start(on: bus)
            let dan = try await gateway.signUp(
                #"{"role":"driver","name":"Dan","phone_number":"+380671110001","password":"driving9","device_id":"approval-dan","car":{"model":"Prius","license_plate":"AB 1234"}}"#,
                phone: "+380671110001", password: "driving9")
            let ann = try await gateway.signUp(
                #"{"role":"rider","name":"Ann","phone_number":"+380501110001","password":"secret123"}"#, phone: "+380501110001",
                password: "secret123")
            let tracking = TestService(
                bus: bus, name: "tracking-calls", service: "tracking", executable: "ride-tracking", arguments: [], httpPort: 0)
            func online() async throws -> (status: Int, body: JSONValue) {
                try await gateway.request("PUT", "/v1/me/availability", token: dan.token, #"{"available":true}"#)
            }
            @Sendable func onDuty() async throws -> Bool {
                try await tracking.call("device", #"{"device_id":"approval-dan"}"#).body["available"] == true
            }
            func refusal(_ reply: (status: Int, body: JSONValue), says text: String) -> Bool {
                reply.status == 403 && reply.body["error"]?["code"] == "not_approved"
                    && reply.body["error"]?["message"]?.stringValue?.contains(text) == true
            }

            // Signed up, not approved: no shift, by the app's route or the SDK's batch.
            let first = try await online()
            #expect(refusal(first, says: "upload your licence and insurance"), "\(first)")
            let batch = #"{"batch_id":1,"device":{"available":true},"locations":[]}"#
            #expect(
                refusal(try await gateway.request("POST", "/v1/devices/approval-dan/locations", token: dan.token, batch), says: "licence"))

            // Nor by the SDK on the ingest socket, with the device credential of Dan's session: the
            // request to go online is refused and the phone stays unavailable; its locations are stored.
            let session = try await gateway.request("POST", "/v1/sessions", #"{"phone_number":"+380671110001","password":"driving9"}"#)
            var configuration = ingest.sdkConfiguration()
            configuration.deviceCredential = try #require(session.body["device_credential"]?.stringValue, "\(session)")
            let phone = try TrackingDevice(
                id: "approval-dan", configuration: configuration,
                provider: SimulatedDrive(at: GeoPoint(latitude: 60.1699, longitude: 24.9384)))
            defer { Task { await phone.close() } }
            phone.startTracking()
            phone.isAvailable = true
            try await eventually("the phone's request to go online is refused, its locations stored") {
                !phone.isAvailable && phone.statistics.acknowledged >= 2
            }
            #expect(try await !onDuty())
            #expect(ingest.log.contains("not_approved"), "the refusal is logged")

            // Uploads refused, each naming why, nothing kept.
            func upload(_ kind: String, _ body: [UInt8], expires: String?, token: String? = nil) async throws -> (
                status: Int, body: JSONValue
            ) {
                try await PhotoIntegrationTests.put(
                    gateway, "/v1/me/documents/\(kind)" + (expires.map { "?expires_on=\($0)" } ?? ""), token: token ?? dan.token, body)
            }
            let nextYear = DriverDay.offset(days: 365)
            for (reply, status, text) in [
                (try await upload("licence", Self.png, expires: nil), 422, "expires_on"),
                (try await upload("licence", Self.png, expires: "2020-01-01"), 422, "is past"),
                (try await upload("licence", Self.png, expires: "2027-02-30"), 422, "not a day"),
                (try await upload("licence", Array("not an image".utf8), expires: nextYear), 415, "unsupported_image"),
                (try await upload("passport", Self.png, expires: nextYear), 404, "licence or insurance"),
                (try await upload("licence", Self.png, expires: nextYear, token: ann.token), 409, "not a driver"),
            ] {
                #expect(reply.status == status && "\(reply.body)".contains(text), "\(status) \(text): \(reply)")
            }
            #expect(try await gateway.request("GET", "/v1/me", token: dan.token).body["documents"] == nil, "nothing kept")

            // The licence and the insurance; still not approved.
            let licence = try await upload("licence", Self.jpeg, expires: nextYear)
            #expect(licence.status == 200 && licence.body["documents"]?[0]?["kind"] == "licence", "\(licence.body)")
            let insured = try await upload("insurance", Self.png, expires: DriverDay.offset(days: 30))
            #expect(insured.body["documents"]?.arrayValue?.count == 2 && insured.body["approved_at"] == nil, "\(insured.body)")
            #expect(refusal(try await online(), says: "an operator has not approved"))

            // The operator sees the photos (only the operator: no public photo of a document) and approves.
            let photoPath = try #require(insured.body["documents"]?[1]?["photo_url"]?.stringValue)
            let photo = try await HTTPProbe.send("GET", gateway.base + photoPath, headers: Self.basic, timeout: .seconds(10))
            #expect(
                photo.status == 200 && photo.headers["content-type"] == "image/png" && photo.headers["cache-control"] == "private, no-store"
            )
            #expect(
                try await HTTPProbe.send(
                    "GET", gateway.base + photoPath, headers: ["Authorization": "Bearer \(dan.token)"], timeout: .seconds(10)
                ).status == 401)
            #expect(
                try await gateway.request("POST", "/dashboard/users/\(dan.id)/approve", token: dan.token).status == 401,
                "not the driver's to do")
            let approved = try await gateway.request("POST", "/dashboard/users/\(dan.id)/approve", headers: Self.basic)
            #expect(approved.status == 200 && approved.body["approved_at"]?.stringValue != nil, "\(approved.body)")
            #expect(try await gateway.request("POST", "/dashboard/users/\(ann.id)/approve", headers: Self.basic).status == 409, "a rider")
            #expect(try await online().status == 200)
            #expect(try await onDuty())
            // The phone asks again, off duty first: now it may (users is asked again, not the refusal remembered).
            #expect(try await gateway.request("PUT", "/v1/me/availability", token: dan.token, #"{"available":false}"#).status == 200)
            try await eventually("the phone hears it is off duty") { !phone.isAvailable }
            phone.isAvailable = true
            try await eventually("the approved phone goes online by itself") { try await onDuty() }
            #expect(phone.isAvailable)

            // Time passes: the insurance's last day is behind (as stored). The sweep ends the approval;
            // tracking takes the device off duty; going online again is refused, saying why.
            let database = "\(users.dataDirectory)/users.sqlite"
            let script =
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=10); "
                + "c.execute(\"UPDATE users SET insurance_expires_on = '2020-01-01' WHERE id = ?\", (sys.argv[2],)); c.commit()"
            let aged = try await runCommand("/usr/bin/env", ["python3", "-c", script, database, dan.id])
            #expect(aged.status == 0, "\(aged.stderr)")
            try await eventually("the expired insurance takes Dan off duty", timeout: .seconds(20)) { try await !onDuty() }
            #expect(try await gateway.request("GET", "/v1/me", token: dan.token).body["approved_at"] == nil)
            #expect(refusal(try await online(), says: "insurance expired on 2020-01-01"))
            #expect(
                try await gateway.request("POST", "/dashboard/users/\(dan.id)/approve", headers: Self.basic).status == 409,
                "not with an expired document")

            // A new insurance, approved again; then the operator withdraws the approval: off duty again.
            #expect(try await upload("insurance", Self.png, expires: nextYear).status == 200)
            #expect(try await gateway.request("POST", "/dashboard/users/\(dan.id)/approve", headers: Self.basic).status == 200)
            #expect(try await online().status == 200)
            try await eventually("Dan is on duty again") { try await onDuty() }
            let withdrawn = try await gateway.request(
                "POST", "/dashboard/users/\(dan.id)/withdraw-approval", #"{"reason":"complaints"}"#, headers: Self.basic)
            #expect(withdrawn.status == 200 && withdrawn.body["approved_at"] == nil, "\(withdrawn.body)")
            try await eventually("the withdrawal takes Dan off duty", timeout: .seconds(20)) { try await !onDuty() }
            #expect(refusal(try await online(), says: "an operator has not approved"))
            // The phone that heard it is off duty cannot put itself back.
            try await eventually("the phone hears the withdrawal") { !phone.isAvailable }
            phone.isAvailable = true
            try await eventually("the phone's request is refused again") { !phone.isAvailable }
            #expect(try await !onDuty())
        }
    }
}

/// Days as documents name them, counted from today (UTC).
enum DriverDay {
    static func offset(days: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = Date().addingTimeInterval(Double(days) * 86_400)
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }
}
