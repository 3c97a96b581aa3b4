import Foundation
import RideModels
import Synchronization
import Testing
import TrackingSDK
import Wire
import ZeroMQ

/// A phone without CURVE keys of its own, given the ingest's server key, connects with a pair made
/// for the run; the ingest (admitting any key) hears its batches, which name the device, from a
/// random routing id that is not the device id.
@Suite struct SDKCurveTests {
    @Test func aPhoneWithoutKeysReachesACurveIngestWithAPairOfItsOwn() async throws {
        let serverKeys = try CurveKeyPair.generate()
        let ingestContext = try Context()
        try await ingestContext.enableCurve(CurveSecurity(identity: serverKeys, serverKey: serverKeys.publicKey, server: serverKeys))
        let ingest = try Socket(.router, context: ingestContext)
        defer { ingest.close() }
        ingest.admitsAnyCurveKey = true
        try ingest.setReceiveTimeout(milliseconds: 10_000)
        try ingest.bind("tcp://127.0.0.1:*")

        var configuration = SDKConfiguration(publishableKey: "pk_test")
        configuration.endpoints = [try ingest.lastEndpoint]
        configuration.ingestServerKey = serverKeys.publicKey
        configuration.batchInterval = .milliseconds(100)
        // The runtime's context has no keys (as a phone's process); the shared one may have, in tests.
        let device = try TrackingDevice(
            id: "keyless-phone", configuration: configuration, provider: nil, runtime: DeviceRuntime(context: try Context()))
        device.isAvailable = true
        let message = try #require(try ingest.receive(), "the CURVE ingest heard the phone")
        #expect(message.count == 3 && message[1] == Frame(frame: IngestFrame.batch))
        #expect(try JSONCoding.decode(IngestBatch.self, from: message[2]).deviceID == "keyless-phone")
        #expect(message[0] != Frame(frame: "keyless-phone") && message[0].count == 16 && message[0][0] != 0, "a random routing id")
        await device.close()
    }

    @Test func theServerKeyComesFromTheEnvironmentAndMustBeAKey() throws {
        let key = try CurveKeyPair.generate().publicKey
        let loaded = try SDKConfiguration.load(environment: ["HyperTrackPublishableKey": "pk_1", "RIDE_TRACKING_INGEST_SERVER_KEY": key])
        #expect(loaded.ingestServerKey == key)
        #expect(throws: SDKConfiguration.Problem.self) {
            try SDKConfiguration.load(environment: ["HyperTrackPublishableKey": "pk_1", "RIDE_TRACKING_INGEST_SERVER_KEY": "not a key"])
        }
    }
}
