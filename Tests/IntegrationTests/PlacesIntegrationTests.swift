import Bus
import Foundation
import RideContract
import Testing
import Wire

/// The places routes through a real `ride-gateway`: search, reverse, their refusals, and a
/// booking whose pickup and dropoff are search results as they came.
@Suite(.serialized) struct PlacesIntegrationTests {
    @Test func searchReverseAndBookAPlaceFound() async throws {
        try await withTestBus("gateway-places") { bus in
            _ = try await TestService.users(on: bus)
            _ = try await TestTracking.start(on: bus)
            _ = try await TestService.trips(on: bus)
            _ = try await TestService.start(on: bus, service: BusContract.Service.orders, executable: "ride-orders")
            let gateway = try await TestGateway.start(on: bus)
            let rider = try await gateway.signUp(
                #"{"role":"rider","name":"Aino","phone_number":"+358401110001","password":"secret123"}"#, phone: "+358401110001",
                password: "secret123")
            #expect(try await gateway.request("GET", "/v1/places/search?q=mannerheimintie").status == 401)

            let street = try await gateway.request("GET", "/v1/places/search?q=mannerhiemin&limit=3", token: rider.token)
            #expect(street.status == 200, "\(street.body)")
            #expect(street.body["places"]?[0]?["name"] == "Mannerheimintie", "\(street.body)")
            #expect(street.body["places"]?[0]?["kind"] == "street")
            #expect(street.body["places"]?.arrayValue?.count ?? 0 <= 3)

            // Near the railway station: the nearest Espresso House first, with its distance.
            let near = try await gateway.request(
                "GET", "/v1/places/search?q=espresso%20house&latitude=60.171&longitude=24.9414&limit=10", token: rider.token)
            let distances = near.body["places"]?.arrayValue?.compactMap { $0["distance"]?.numberValue } ?? []
            #expect(distances.count >= 5 && distances == distances.sorted(), "\(near.body)")

            let address = try await gateway.request("GET", "/v1/places/search?q=Mannerheimintie%2010", token: rider.token)
            #expect(address.body["places"]?[0]?["address"] == "Mannerheimintie 10, Helsinki", "\(address.body)")
            let none = try await gateway.request("GET", "/v1/places/search?q=qqqzzzxxx", token: rider.token)
            #expect(none.status == 200 && none.body["places"] == .array([]), "\(none.body)")

            let stockmann = try await gateway.request(
                "GET", "/v1/places/reverse?latitude=60.168294&longitude=24.942156", token: rider.token)
            #expect(stockmann.status == 200, "\(stockmann.body)")
            #expect(stockmann.body["kind"] == "address")
            #expect((stockmann.body["distance"]?.numberValue ?? 1000) < 30, "\(stockmann.body)")
            let sea = try await gateway.request("GET", "/v1/places/reverse?latitude=60.30&longitude=25.10", token: rider.token)
            #expect(sea.status == 404 && sea.body["error"]?["code"] == "no_address", "\(sea.body)")

            for (query, field) in [
                ("search?q=", "q"), ("search", "q"), ("search?q=\(String(repeating: "a", count: 101))", "q"),
                ("search?q=a&limit=0", "limit"),
                ("search?q=a&limit=51", "limit"), ("search?q=a&limit=two", "limit"), ("search?q=a&latitude=91&longitude=24", "latitude"),
                ("search?q=a&latitude=60", "longitude"), ("reverse?latitude=60.17", "longitude"),
                ("reverse?latitude=north&longitude=24.9", "latitude"),
                ("reverse?latitude=60.17&longitude=181", "longitude"),
            ] {
                let refused = try await gateway.request("GET", "/v1/places/\(query)", token: rider.token)
                #expect(refused.status == 422, "\(query): \(refused)")
                #expect(refused.body["error"]?["message"]?.stringValue?.hasPrefix(field) == true, "\(query): \(refused.body)")
            }

            // The app books with the results as they are.
            let pickup = try #require(
                try await gateway.request("GET", "/v1/places/search?q=paarautatieasema&limit=1", token: rider.token).body["places"]?[0])
            let dropoff = try #require(stockmann.body.objectValue)
            func place(_ value: JSONValue) -> JSONValue {
                .object([
                    "latitude": value["latitude"] ?? .null, "longitude": value["longitude"] ?? .null, "address": value["address"] ?? .null,
                ])
            }
            let booking = String(
                decoding: try JSONCoding.encode(JSONValue.object(["pickup": place(pickup), "dropoff": place(.object(dropoff))])),
                as: UTF8.self)
            let booked = try await gateway.request(
                "POST", "/v1/orders", token: rider.token, booking, headers: ["Idempotency-Key": UUID().uuidString])
            #expect(booked.status == 201, "\(booked.body)")
            #expect(booked.body["pickup"]?["address"] == pickup["address"], "\(booked.body)")
            #expect(booked.body["pickup"]?["address"]?.stringValue?.hasPrefix("Helsingin päärautatieasema") == true)
            #expect(booked.body["dropoff"]?["address"] == stockmann.body["address"])
        }
    }
}
