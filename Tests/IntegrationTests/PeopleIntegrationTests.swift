import Foundation
import Testing
import Wire

/// The operator's people, through the gateway against the real services: riders and drivers
/// searched, one person's rides and reports, and the dashboard page drawing both in a real browser.
@Suite(.serialized) struct PeopleIntegrationTests {
    static let basic = SuspensionIntegrationTests.basic

    @Test func anOperatorFindsAPersonAndSeesTheirRidesAndReportsOnTheDashboard() async throws {
        try await withTestBus("people") { bus in
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            let gateway = apps.gateway
            let ride = try await apps.ride()
            let report = try await gateway.request(
                "POST", "/v1/orders/\(ride)/reports", token: apps.rider.token, #"{"category":"fare","text":"Charged twice"}"#)
            #expect(report.status == 201, "\(report.body)")

            // Only the operator may look.
            #expect(try await gateway.request("GET", "/dashboard/users?query=Dan", token: apps.rider.token).status == 401)
            let found = try await gateway.request("GET", "/dashboard/users?query=dan&role=driver", headers: Self.basic)
            #expect(
                found.status == 200 && found.body["users"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [apps.driver.id],
                "\(found.body)")
            let everyone = try await gateway.request("GET", "/dashboard/users", headers: Self.basic)
            #expect(everyone.body["users"]?.arrayValue?.count == 2, "\(everyone.body)")
            for bad in ["role=pilot", "limit=0", "suspended=maybe"] {
                let refused = try await gateway.request("GET", "/dashboard/users?\(bad)", headers: Self.basic)
                #expect(refused.status == 422, "\(bad): \(refused.body)")
            }

            let person = try await gateway.request("GET", "/dashboard/users/\(apps.rider.id)", headers: Self.basic)
            #expect(person.status == 200 && person.body["user"]?["name"] == "Ann", "\(person.body)")
            #expect(person.body["rides"]?.arrayValue?.map { $0["order"]?["id"] } == [.string(ride)], "\(person.body)")
            #expect(person.body["reports"]?.arrayValue?.map { $0["report"]?["text"] } == ["Charged twice"], "\(person.body)")
            let driver = try await gateway.request("GET", "/dashboard/users/\(apps.driver.id)", headers: Self.basic)
            #expect(driver.body["reports"]?.arrayValue?.count == 1, "the report on his ride: \(driver.body)")
            #expect(try await gateway.request("GET", "/dashboard/users/r-0000000000000000", headers: Self.basic).status == 404)

            // The page: a search from the address, then the person.
            let page = "http://ridesharing:sk_dev_ridesharing@127.0.0.1:\(gateway.port)/dashboard?auth=basic"
            let search = try await HeadlessBrowser.dom(page + "#people=Dan")
            #expect(search.contains(#"data-person="\#(apps.driver.id)" data-suspended="false""#), "\(search.suffix(3000))")
            #expect(!search.contains(#"data-person="\#(apps.rider.id)""#), "Ann is not a Dan")
            let view = try await HeadlessBrowser.dom(page + "#person=\(apps.rider.id)")
            #expect(view.contains(#"data-person-view="\#(apps.rider.id)""#), "\(view.suffix(3000))")
            #expect(view.contains(#"data-ride="\#(ride)" data-ride-status="COMPLETED""#), "\(view.suffix(3000))")
            #expect(view.contains("Charged twice"))
        }
    }
}
