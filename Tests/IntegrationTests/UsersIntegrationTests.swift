import Bus
import Foundation
import RideContract
import RideModels
import ServiceKit
import TestPostgres
import Testing

@Suite(.serialized) struct UsersIntegrationTests {
    static let ann = #"{"role":"rider","name":"Ann","phone_number":"+380501234567","password":"secret123"}"#
    static let dan =
        #"{"role":"driver","name":"Dan","phone_number":"+380671234567","password":"driving9","device_id":"dan-phone","car":{"model":"Prius","license_plate":"AB 1234"}}"#

    @Test func registerLogInAuthenticateAndTheEventOnTheBus() async throws {
        try await withTestBus("users") { bus in
            // Subscribed before ride-users starts, so its publisher learns of the subscription when it connects.
            let registered = try await EventSubscriber<UserRegistered>(
                endpoint: bus.egress, prefixes: [Events.userRegistered.topic], logger: testLogger)
            let users = try await TestService.users(on: bus)

            let rider = try await users.call("register", Self.ann)
            #expect(rider.status == 201)
            #expect(rider.body["role"] == "rider")
            #expect(rider.body["password"] == nil && !"\(rider.body)".contains("secret123"), "no credential in replies")
            let driver = try await users.call("register", Self.dan)
            #expect(driver.status == 201)
            #expect(driver.body["car"]?["license_plate"] == "AB 1234")

            let events = try await collect(registered, count: 2)
            #expect(events.map { $0.event.data.user.name } == ["Ann", "Dan"])
            #expect(events.map(\.event.source) == ["users", "users"])
            #expect(events.map(\.event.sequence) == [1, 2])
            await registered.close()

            let session = try await users.call("login", #"{"phone_number":"+380671234567","password":"driving9"}"#)
            #expect(session.status == 200)
            guard case .string(let token)? = session.body["token"] else { throw TestFailure("no token: \(session.body)") }
            let me = try await users.call("authenticate", #"{"token":"\#(token)"}"#)
            #expect(me.status == 200)
            #expect(me.body["id"] == driver.body["id"])

            let page = try await users.call("events", #"{"after":1}"#)
            #expect(page.body["last_sequence"] == 2)
            #expect(page.body["events"]?[0]?["data"]?["user"]?["name"] == "Dan")
        }
    }

    /// Seed 000's car{model, make, color}: kept at sign-up, in every copy of the driver, changed by
    /// an update; a colour too long is refused with nothing changed. On SQLite and PostgreSQL.
    @Test(arguments: ["sqlite", "postgres"])
    func aCarsMakeAndColourAreKeptAndChanged(database: String) async throws {
        let databaseArguments = database == "postgres" ? ["--database-url", try await TestPostgresServer.newDatabase().urlString] : []
        try await withTestBus("users-car-\(database)") { bus in
            let users = try await TestService.users(on: bus, arguments: databaseArguments)
            let dan = Self.dan.replacingOccurrences(
                of: #""license_plate":"AB 1234"}"#, with: #""license_plate":"AB 1234","make":"Toyota","color":"white"}"#)
            let registered = try await users.call("register", dan)
            #expect(
                registered.status == 201 && registered.body["car"]?["make"] == "Toyota" && registered.body["car"]?["color"] == "white",
                "\(registered.body)")
            let id = try #require(registered.body["id"]?.stringValue)
            let session = try await users.call("login", #"{"phone_number":"+380671234567","password":"driving9"}"#)
            #expect(session.body["user"]?["car"]?["color"] == "white", "\(session.body)")
            let repainted = try await users.call(
                "update", #"{"id":"\#(id)","car":{"model":"Prius","license_plate":"AB 1234","make":"Toyota","color":"black"}}"#)
            #expect(repainted.status == 200 && repainted.body["car"]?["color"] == "black", "\(repainted.body)")
            let tooLong = String(repeating: "very ", count: 10)
            let refused = try await users.call(
                "update", #"{"id":"\#(id)","car":{"model":"Prius","license_plate":"AB 1234","color":"\#(tooLong)"}}"#)
            #expect(
                refused.status == 422 && refused.body["error"]?["message"]?.stringValue?.contains("car.color") == true, "\(refused.body)")
            let stored = try await users.call("get", #"{"id":"\#(id)"}"#)
            #expect(stored.body["car"]?["color"] == "black" && stored.body["car"]?["make"] == "Toyota", "\(stored.body)")
        }
    }

    /// `suspend` revokes every session in the same transaction and keeps the account out until
    /// `reinstate`; on SQLite and PostgreSQL (SuspensionIntegrationTests: through the gateway).
    @Test(arguments: ["sqlite", "postgres"])
    func aSuspensionEndsTheSessionsAndKeepsTheAccountOutUntilReinstated(database: String) async throws {
        let databaseArguments = database == "postgres" ? ["--database-url", try await TestPostgresServer.newDatabase().urlString] : []
        try await withTestBus("users-suspend-\(database)") { bus in
            let users = try await TestService.users(on: bus, arguments: databaseArguments)
            let id = try #require(try await users.call("register", Self.dan).body["id"]?.stringValue)
            let logIn = #"{"phone_number":"+380671234567","password":"driving9"}"#
            let token = try #require(try await users.call("login", logIn).body["token"]?.stringValue)
            let suspended = try await users.call("suspend", #"{"id":"\#(id)","reason":"documents expired"}"#)
            #expect(suspended.status == 200 && suspended.body["suspension_reason"] == "documents expired", "\(suspended.body)")
            #expect(try await users.call("suspend", #"{"id":"\#(id)","reason":"documents expired"}"#).body == suspended.body, "a retry")
            let events = try await Outboxes.events(users).filter { $0["type"] == "user.suspended" }
            #expect(events.count == 1, "one event however often it is asked: \(events)")
            #expect(events.first?["data"]?["user_id"] == .string(id) && events.first?["data"]?["device_id"] == "dan-phone", "\(events)")
            #expect(try await users.call("authenticate", #"{"token":"\#(token)"}"#).body["error"]?["code"] == "token_revoked")
            #expect(try await users.call("login", logIn).body["error"]?["code"] == "account_suspended")
            #expect(try await users.call("get", #"{"id":"\#(id)"}"#).body["suspended_at"]?.stringValue != nil)
            #expect(try await users.call("reinstate", #"{"id":"\#(id)"}"#).body["suspended_at"] == nil)
            #expect(try await users.call("login", logIn).status == 200)
        }
    }

    @Test func wrongCredentialsDuplicatesAndBadFieldsAreRefusedAndChangeNothing() async throws {
        try await withTestBus("users-bad") { bus in
            let users = try await TestService.users(on: bus)
            let first = try await users.call("register", Self.ann)
            #expect(first.status == 201)
            // The same registration again (a retry) is the user stored the first time, not a second one.
            let repeated = try await users.call("register", Self.ann)
            #expect(repeated.status == 200, "\(repeated)")
            #expect(repeated.body["id"] == first.body["id"])
            let otherPassword = try await users.call("register", Self.ann.replacingOccurrences(of: "secret123", with: "secret456"))
            #expect(otherPassword.status == 409, "the same details with another password are someone else: \(otherPassword)")

            let duplicate = try await users.call("register", Self.ann.replacingOccurrences(of: "Ann", with: "Another Ann"))
            #expect(duplicate.status == 409)
            #expect(duplicate.body["error"]?["code"] == "phone_taken")

            // A device belongs to one account: a second driver signing up with Dan's phone, or
            // changing to it, is refused and nothing is stored.
            let dan = try await users.call("register", Self.dan)
            #expect(dan.status == 201)
            let secondOnDevice = try await users.call("register", Self.dan.replacingOccurrences(of: "+380671234567", with: "+380671234599"))
            #expect(secondOnDevice.status == 409 && secondOnDevice.body["error"]?["code"] == "device_in_use", "\(secondOnDevice.body)")
            let annID = first.body["id"]?.stringValue ?? ""
            let changing = try await users.call("update", #"{"id":"\#(annID)","device_id":"dan-phone"}"#)
            #expect(changing.status == 409 && changing.body["error"]?["code"] == "device_in_use", "\(changing.body)")

            let bad: [(String, String)] = [
                (#"{"role":"rider","name":"B","phone_number":"12345","password":"secret123"}"#, "phone_number:"),
                (#"{"role":"rider","name":"B","phone_number":"+380501111111","password":"123"}"#, "password:"),
                (#"{"role":"driver","name":"B","phone_number":"+380501111112","password":"secret123"}"#, "car:"),
                (#"{"role":"pilot","name":"B","phone_number":"+380501111113","password":"secret123"}"#, "role"),
                (#"{"role":"rider","phone_number":"+380501111114","password":"secret123"}"#, "name"),
            ]
            for (json, field) in bad {
                let reply = try await users.call("register", json)
                #expect(reply.status == 422, "\(json)")
                let message = reply.body["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains(field), "\(reply.body)")
            }
            #expect(try await users.call("register", "{not json").status == 400)

            for login in [
                #"{"phone_number":"+380501234567","password":"wrong-one"}"#, #"{"phone_number":"+380509999999","password":"secret123"}"#,
            ] {
                let reply = try await users.call("login", login)
                #expect(reply.status == 401)
                #expect(reply.body["error"]?["code"] == "invalid_credentials")
            }
            for token in ["", "garbage", "a.b", "eyJzdWIiOiJyLTEifQ.AAAA"] {
                #expect(try await users.call("authenticate", #"{"token":"\#(token)"}"#).status == 401, "\(token)")
            }
            #expect(try await users.call("get", #"{"id":"r-nobody"}"#).status == 404)

            // Nothing of the refused requests was stored: two users (Ann, Dan), two events.
            let page = try await users.call("events", #"{"after":0}"#)
            #expect(page.body["last_sequence"] == 2)
        }
    }

    @Test func updatesAndARestartKeepUsersAndTokens() async throws {
        try await withTestBus("users-update") { bus in
            let users = try await TestService.users(on: bus)
            let ann = try await users.call("register", Self.ann)
            _ = try await users.call("register", Self.dan)
            guard case .string(let id)? = ann.body["id"] else { throw TestFailure("no id") }

            // A new password or phone number needs the current password; without it, or with a
            // wrong one, nothing changes.
            #expect(try await users.call("update", #"{"id":"\#(id)","name":"Ann S","password":"newsecret1"}"#).status == 403)
            #expect(
                try await users.call("update", #"{"id":"\#(id)","password":"newsecret1","current_password":"wrong-one"}"#).status == 403)
            #expect(try await users.call("update", #"{"id":"\#(id)","phone_number":"+380509999999"}"#).status == 403)
            #expect(try await users.call("get", #"{"id":"\#(id)"}"#).body["name"] == "Ann")
            let renamed = try await users.call(
                "update", #"{"id":"\#(id)","name":"Ann Smith","password":"newsecret1","current_password":"secret123"}"#)
            #expect(renamed.status == 200)
            #expect(renamed.body["name"] == "Ann Smith")
            #expect(
                try await users.call("update", #"{"id":"\#(id)","phone_number":"+380671234567","current_password":"newsecret1"}"#).status
                    == 409, "Dan's number")
            #expect(try await users.call("update", #"{"id":"\#(id)","car":{"model":"X","license_plate":"Y"}}"#).status == 422)
            #expect(try await users.call("login", #"{"phone_number":"+380501234567","password":"secret123"}"#).status == 401)
            let session = try await users.call("login", #"{"phone_number":"+380501234567","password":"newsecret1"}"#)
            guard case .string(let token)? = session.body["token"] else { throw TestFailure("no token") }

            bus.supervisor.signal(users.name, SIGKILL)
            _ = await bus.supervisor.waitForExit(users.name, timeout: .seconds(5))
            try await users.startProcess()
            let me = try await users.call("authenticate", #"{"token":"\#(token)"}"#)
            #expect(me.status == 200, "the signing key survives a restart")
            #expect(me.body["name"] == "Ann Smith")
        }
    }
}
