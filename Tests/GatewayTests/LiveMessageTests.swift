import Bus
import BusModel
import Foundation
import RideContract
import RideModels
import Testing
import Wire

@testable import GatewayService

/// The live sockets' messages: typed, each kind in the API document, sent once each in order.
@Suite struct LiveMessageTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let rider = User(id: "u-ann", role: .rider, name: "Ann", phoneNumber: "+380501110001", createdAt: now)

    static func order(version: Int, offeredTo: [String] = []) -> Order {
        Order(
            id: "o-1", status: .accepted, rider: rider, pickup: Place(latitude: 60.169_87, longitude: 24.938_37),
            dropoff: Place(latitude: 60.171_2, longitude: 24.941_4), createdAt: now, updatedAt: now, offeredTo: offeredTo,
            version: version)
    }

    static func status(_ sequence: UInt64, version: Int, offeredTo: [String] = []) -> LiveMessage {
        .status(
            Sequenced(sequence: sequence), OrderStatusChanged(order: order(version: version, offeredTo: offeredTo), previousStatus: .new))
    }

    static func decoded(_ message: LiveMessage) throws -> JSONValue {
        try JSONCoding.decode(JSONValue.self, from: Array(try #require(message.text).utf8))
    }

    @Test func eachStatusPassesOnceInOrderAndOtherMessagesAlways() {
        var statuses = StatusesOnce(lastSequence: 10, lastVersion: 3)
        let fix = DeviceLocation(latitude: 60.17, longitude: 24.94, recordedAt: Self.now)
        let location = LiveMessage.location(Watched(orderID: "o-1"), DeviceLocationEvent(deviceID: "d", location: fix))
        let steps: [(LiveMessage, Bool, String)] = [
            (Self.status(10, version: 4), false, "a sequence already covered"),
            (Self.status(11, version: 3), false, "a version the client already has (the snapshot's)"),
            (Self.status(12, version: 4), true, "the next status"),
            (Self.status(12, version: 4), false, "repeated by the bus"),
            (location, true, "not a status"),
        ]
        for (message, expected, why) in steps {
            let admitted = statuses.admits(message)
            #expect(admitted == expected, "\(why)")
        }
    }

    @Test func aStatusThatLeavesTheViewerOutRevokesTheirSocket() {
        var statuses = StatusesOnce(viewer: "u-eve")
        #expect(statuses.admits(Self.status(1, version: 1, offeredTo: ["u-eve"])) && !statuses.revoked, "offered to Eve")
        #expect(statuses.admits(Self.status(2, version: 2)) && statuses.revoked, "taken by another driver: passed once more, to refuse")
    }

    @Test func aMessageIsItsTypeAndItsBodysMembers() throws {
        let status = try Self.decoded(Self.status(7, version: 2))
        #expect(status["type"] == "status" && status["sequence"] == 7 && status["previous_status"] == "NEW")
        #expect(status["order"]?["version"] == 2)
        let error = try Self.decoded(.error(status: 429, code: "too_many_messages", message: "slow down", batchID: 12))
        #expect(error == ["type": "error", "status": 429, "error": ["code": "too_many_messages", "message": "slow down"], "batch_id": 12])
        #expect(LiveMessage.accountSuspended(userID: "u-ann").text == nil, "the gateway's own: never sent")
        let fix = DeviceLocation(latitude: 60.17, longitude: 24.94, recordedAt: Self.now, speed: 8)
        let location = try Self.decoded(.location(Watched(orderID: "o-1"), DeviceLocationEvent(deviceID: "d", location: fix)))
        #expect(
            location["order_id"] == "o-1" && location["device_id"] == "d" && location["speed"] == 8,
            "the order watched beside the event's members")
        #expect(location["location"]?["type"] == "Point")
    }

    static func event<Payload: Codable & Sendable>(_ kind: EventKind<Payload>, _ payload: Payload) throws -> CloudEvent<JSONValue> {
        let data = try JSONCoding.decode(JSONValue.self, from: JSONCoding.encode(payload))
        return CloudEvent(source: kind.source, type: kind.type, sequence: 5, data: data)
    }

    @Test func theHubReadsWhatAnEventIsAboutAsDecodingItWould() throws {
        let order = Self.order(version: 2)
        let message = ChatMessage(
            id: "m-1", orderID: "o-1", number: 1, senderID: "u-ann", senderRole: .rider, recipientID: "u-bob", text: "Hi", sentAt: Self.now)
        let quote = FareEstimate(
            currency: "EUR", totalCents: 900, distanceMetres: 1_200, durationSeconds: 300, surge: 1, pickup: order.pickup,
            dropoff: order.dropoff)
        let orderEvents = [
            try Self.event(Events.orderStatus, OrderStatusChanged(order: order, previousStatus: .new)),
            try Self.event(
                Events.orderDestinationChanged, DestinationChanged(order: order, previousDropoff: order.pickup, fareQuote: quote)),
            try Self.event(Events.orderMessage, ChatMessageSent(message: message)),
        ]
        for event in orderEvents {
            var asked: [String] = []
            #expect(
                LiveHub.orderMessage(
                    event,
                    about: {
                        asked.append($0)
                        return true
                    })?.orderID == "o-1", "\(event.type)")
            #expect(asked == ["o-1"], "\(event.type): asked about the order it decodes")
            #expect(LiveHub.orderMessage(event, about: { _ in false }) == nil, "\(event.type): not decoded for no one")
        }
        let fix = DeviceLocation(latitude: 60.17, longitude: 24.94, recordedAt: Self.now)
        let deviceEvents = [
            try Self.event(Events.deviceLocation, DeviceLocationEvent(deviceID: "d-1", location: fix)),
            try Self.event(Events.deviceStatus, DeviceStatusEvent(deviceID: "d-1", value: .active, available: true)),
        ]
        for event in deviceEvents {
            var asked: [String] = []
            #expect(
                LiveHub.deviceMessage(
                    event,
                    about: {
                        asked.append($0)
                        return true
                    })?.deviceID == "d-1", "\(event.type)")
            #expect(asked == ["d-1"], "\(event.type): asked about the device it decodes")
            #expect(LiveHub.deviceMessage(event, about: { _ in false }) == nil, "\(event.type): not decoded for no one")
        }
        let trip = TripEvent(
            createdAt: Self.now, deviceID: "d-1", data: TripEvent.Data(value: "eta", tripID: "t-1", tripMetadata: ["order_id": "o-1"]))
        #expect(TripEvent.orderID(in: try Self.event(Events.tripETA, trip).data) == "o-1")
        var forged = orderEvents[0]
        forged.source = BusContract.Service.tracking
        #expect(LiveHub.orderMessage(forged) == nil, "an order event from another service is about no order")
    }

    @Test func everyKindIsInTheAPIDocumentWithItsTypeAndMembers() async throws {
        let document = try await GatewayAPI.document()
        let components = try #require(document["components"]?["schemas"])
        var documented: Set<String> = []
        for path in ["/v1/orders/{id}/live", "/v1/me/live"] {
            let messages = try #require(
                document["paths"]?[path]?["get"]?["responses"]?["101"]?["x-messages"]?["oneOf"]?.arrayValue, "\(path)")
            for reference in messages {
                let name = try #require(reference["$ref"]?.stringValue?.split(separator: "/").last.map(String.init))
                let schema = try #require(components[name], "\(name) is a component")
                let type = try #require(schema["properties"]?["type"]?["const"]?.stringValue, "\(name) names its type")
                let kind = try #require(LiveKinds.catalog.first { $0.type == type })
                let members = Set((schema["properties"]?.objectValue ?? [:]).keys)
                let parts = kind.members().map(\.key)
                #expect(
                    members == Set(parts + ["type"]) && parts.count == Set(parts).count, "\(type): its parts' members, once each, and type")
                #expect(schema["required"]?.arrayValue?.contains("type") == true)
                documented.insert(type)
            }
        }
        #expect(documented == Set(LiveKinds.catalog.map(\.type)), "each kind is sent on some socket")
    }
}
