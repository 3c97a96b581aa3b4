import Foundation
import Testing

@testable import UsersService

@Suite struct DeviceCredentialKeysTests {
    let old = Array(repeating: UInt8(7), count: 32)
    let new = Array(repeating: UInt8(9), count: 32)
    let session = "s-0123456789abcdef01234567"

    @Test func aCredentialHoldsForItsDeviceOnly() throws {
        let keys = DeviceCredentialKeys(secret: new)
        let text = keys.make(session: session, deviceID: "dan-phone")
        let presented = try #require(DeviceCredentialKeys.parse(text))
        #expect(presented.session == session && presented.kid == keys.currentKey)
        #expect(keys.isGenuine(presented, deviceID: "dan-phone"))
        #expect(!keys.isGenuine(presented, deviceID: "eve-phone"))
    }

    @Test func aForgedOrMisshapenCredentialIsRefused() throws {
        let keys = DeviceCredentialKeys(secret: new)
        let text = keys.make(session: session, deviceID: "dan-phone")
        // Another key's credential, a changed mac, another session's mac.
        let other = DeviceCredentialKeys(secret: old).make(session: session, deviceID: "dan-phone")
        #expect(!keys.isGenuine(try #require(DeviceCredentialKeys.parse(other)), deviceID: "dan-phone"))
        var flipped = Array(text.utf8)
        flipped[flipped.count - 2] = flipped[flipped.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        if let changed = DeviceCredentialKeys.parse(String(decoding: flipped, as: UTF8.self)) {
            #expect(!keys.isGenuine(changed, deviceID: "dan-phone"))
        }
        let parts = text.split(separator: ".")
        let moved = "dc1.\(parts[1]).s-ffffffffffffffffffffffff.\(parts[3])"
        #expect(!keys.isGenuine(try #require(DeviceCredentialKeys.parse(moved)), deviceID: "dan-phone"))
        for bad in [
            "", "dc1", "dc1.a.b.c", "dc2.\(parts[1]).\(parts[2]).\(parts[3])", "dc1.\(parts[1]).s-1.\(parts[3])",
            "dc1.\(parts[1]).\(parts[2]).!!!", text + ".x",
            String(repeating: "a", count: 300),
        ] {
            #expect(DeviceCredentialKeys.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func duringARotationThePreviousKeysCredentialsStillHold() throws {
        let before = DeviceCredentialKeys(secret: old).make(session: session, deviceID: "dan-phone")
        let rotating = DeviceCredentialKeys(secret: new, previous: old)
        #expect(rotating.isGenuine(try #require(DeviceCredentialKeys.parse(before)), deviceID: "dan-phone"))
        #expect(
            try #require(DeviceCredentialKeys.parse(rotating.make(session: session, deviceID: "dan-phone"))).kid == TokenSigner.keyID(new))
        #expect(!DeviceCredentialKeys(secret: new).isGenuine(try #require(DeviceCredentialKeys.parse(before)), deviceID: "dan-phone"))
    }
}
