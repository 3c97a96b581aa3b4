import Foundation
import SettingsKit
import Testing
import ZeroMQ

@testable import ServiceKit

@Suite struct CurveKeysTests {
    func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("curve-keys-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func options(_ directory: String?) -> CurveOptions {
        CurveOptions(curveKeys: directory)
    }

    @Test func curveIsOffUnlessAskedFor() throws {
        #expect(try options(nil).security(client: "orders", serves: false, environment: [:]) == nil)
    }

    @Test func aKeyDirectoryGivesEachProcessItsKeysAndTheServersTheClientList() throws {
        let path = try scratch() + "/keys"
        try CurveKeyDirectory.create(at: path)
        let orders = try #require(try options(path).security(client: "orders", serves: false, environment: [:]))
        #expect(orders.server == nil)
        let serverPublic = try CurveKeyDirectory.readKey(path + "/server.pub", what: "")
        #expect(orders.serverKey == serverPublic)

        let bus = try #require(try options(path).security(client: nil, serves: true, environment: [:]))
        #expect(bus.server?.publicKey == serverPublic && bus.identity == bus.server)
        #expect(bus.authorizer.clientName(forPublicKey: orders.identity.publicKey) == "orders")
        #expect(bus.authorizer.clientName(forPublicKey: serverPublic) == nil, "the server's own key is no client")

        // Adding a client admits it at once; deleting its public key shuts it out.
        let fleet = try CurveKeyDirectory(path: path).addClient("fleet-7")
        #expect(bus.authorizer.clientName(forPublicKey: fleet.publicKey) == "fleet-7")
        try FileManager.default.removeItem(atPath: path + "/clients/fleet-7.pub")
        #expect(bus.authorizer.clientName(forPublicKey: fleet.publicKey) == nil)

        #expect(throws: ConfigurationError.self) { try CurveKeyDirectory(path: path).addClient("orders") }
        #expect(throws: ConfigurationError.self) { try CurveKeyDirectory(path: path).addClient("../escape") }
        #expect(throws: ConfigurationError.self) { try CurveKeyDirectory.create(at: path) }
    }

    @Test func keysMayComeFromTheEnvironmentAlone() throws {
        let server = try CurveKeyPair.generate()
        let client = try CurveKeyPair.generate()
        let environment = [
            "RIDE_CURVE_SERVER_KEY": server.publicKey, "RIDE_CURVE_SECRET_KEY": client.secretKey,
            "RIDE_CURVE_SERVER_SECRET_KEY": server.secretKey, "RIDE_CURVE_ALLOWED_KEYS": "orders:\(client.publicKey)",
        ]
        let tracking = try #require(try options(nil).security(client: "tracking", serves: true, environment: environment))
        #expect(tracking.identity == client && tracking.server == server && tracking.serverKey == server.publicKey)
        #expect(tracking.authorizer.clientName(forPublicKey: client.publicKey) == "orders")
    }

    @Test func everyMissingOrBadKeyIsNamed() throws {
        let path = try scratch() + "/keys"
        try CurveKeyDirectory.create(at: path, clients: ["orders"])
        func message(_ body: () throws -> CurveSecurity?) -> String {
            do {
                _ = try body()
                return "no error"
            } catch { return "\(error)" }
        }
        #expect(
            message { try options(path).security(client: "users", serves: false, environment: [:]) }
                == "CURVE: cannot read secret key of 'users' from \(path)/clients/users.key")
        #expect(
            message { try options(path + "/nowhere").security(client: "orders", serves: false, environment: [:]) }
                == "CURVE: cannot read server public key from \(path)/nowhere/server.pub")
        #expect(
            message { try options(nil).security(client: "orders", serves: false, environment: ["RIDE_CURVE_SERVER_KEY": "nonsense"]) }
                == "CURVE: RIDE_CURVE_SERVER_KEY: a CURVE key is 40 Z85 characters, got 8")
        let other = try CurveKeyPair.generate()
        #expect(
            message { try options(nil).security(client: "orders", serves: false, environment: ["RIDE_CURVE_SERVER_KEY": other.publicKey]) }
                == "CURVE: no secret key of 'orders': set RIDE_CURVE_SECRET_KEY or --curve-keys (RIDE_CURVE_KEYS)")
        #expect(
            message {
                try options(path).security(client: nil, serves: true, environment: ["RIDE_CURVE_SERVER_SECRET_KEY": other.secretKey])
            }
            .hasPrefix("CURVE: the server secret key does not belong to the server public key"))
        try "# a comment only\n".write(toFile: path + "/clients/orders.key", atomically: true, encoding: .utf8)
        #expect(
            message { try options(path).security(client: "orders", serves: false, environment: [:]) }
                == "CURVE: \(path)/clients/orders.key does not hold a key: a CURVE key is 40 Z85 characters, got 0")
        #expect(
            message { try options(path).security(client: nil, serves: true, environment: ["RIDE_CURVE_ALLOWED_KEYS": "a:b"]) }
                == "CURVE: RIDE_CURVE_ALLOWED_KEYS: 'a:b': a CURVE key is 40 Z85 characters, got 1")
    }
}
