import Bus
import Foundation
import Geo
import RideContract
import RideModels
import Testing
import Wire

extension HostsIntegrationTests {
    /// A zone lost mid-ride, with what it held of the platform's state: PostgreSQL's primary (on
    /// `db`; its synchronous standby on `db-2`, every service given both with
    /// `target_session_attrs=read-write`) and tracking's shard 1 (on `edge-2`; shard 0 on `edge`,
    /// both on PostgreSQL). Both hosts are cut off at once, the server and the shard killed, and the
    /// harness promotes the standby (the documented step: docs/operations.md, "A primary and its
    /// standby"). Writes flow again when a new account is stored; the drivers are visible again when
    /// Nearby finds every one of them (shard 0 has taken shard 1's over). Afterwards the rides' tally
    /// shows nothing committed lost or doubled, and every fix the phones saw acknowledged stored.
    @Test func aZoneLostWithTheDatabasePrimaryAndATrackingShardLosesNoRide() async throws {
        try await ridesSurvive(
            "a zone lost: db (PostgreSQL's primary) and edge-2 (tracking shard 1) cut off and killed, the standby on db-2 promoted",
            layout: Layout(standby: true, trackingShards: 2)
        ) { run in
            let standby = try #require(run.standby)
            let shard = try #require(run.platform.trackingShards.first)
            let users = run.platform.users
            let client = try await run.platform.bus.client(timeout: .seconds(3), attempts: 1)
            // Every device, wherever it is (the platform's own two test drivers too).
            let query = NearbyQuery(
                location: GeoJSONPoint(GeoPoint(latitude: 50.4501, longitude: 30.5234)), radius: 20_000_000, limit: 1000)
            @Sendable func visible() async throws -> Int {
                try await client.call(BusContract.Service.tracking, "nearby", query, as: NearbyResult.self).devices.count
            }
            // The simulator's phones start streaming over the first seconds.
            try await eventually("every driver in Nearby", timeout: .seconds(60)) { (try? await visible()) ?? 0 >= FailureLoad.rides }
            let before = try await visible()

            try await run.hosts.cut(run.hosts["db"])
            try await run.hosts.cut(run.hosts["edge-2"])
            run.platform.bus.supervisor.signal(shard.process.name, SIGKILL)
            try await run.postgres.stop(immediate: true)
            let killed = ContinuousClock.now
            try await standby.promote()
            let promoted = ContinuousClock.now - killed
            async let drivers: Duration = {
                try await eventually("every driver in Nearby again", timeout: .seconds(60)) { (try? await visible()) ?? 0 >= before }
                return ContinuousClock.now - killed
            }()
            try await eventually("a new account is stored on the promoted standby", timeout: .seconds(60)) {
                let phone = "+38050" + String(format: "%07d", Int.random(in: 0..<10_000_000))
                let reply = try? await users.call(
                    "register", #"{"role":"rider","name":"After","phone_number":"\#(phone)","password":"secret123"}"#)
                return reply?.status == 201
            }
            let writes = ContinuousClock.now - killed
            let visibleAgain = try await drivers
            await client.close()
            print(
                """
                hosts test — zone lost: standby promoted \(promoted.milliseconds) ms after the kill; writes stored again \(writes.milliseconds) ms \
                after it; \(before) drivers in Nearby again \(visibleAgain.milliseconds) ms after it
                """)
            #expect(writes < .seconds(15), "writes flow again within 15 s of the primary's host dying")
            #expect(visibleAgain < .seconds(15), "drivers are visible again within 15 s of their shard's host dying")
        }
    }
}
