import Foundation
import Testing

@testable import GatewayService

/// The dashboard's session cookie: signed under the operator's key, ending after its lifetime,
/// its CSRF token bound to it.
@Suite struct OperatorSessionsTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let sessions = OperatorSessions(secretKey: "sk_test_operator_key_0123456789")

    @Test func anIssuedSessionVerifiesUntilItEnds() throws {
        let issued = sessions.issue(now: now)
        let nonce = try #require(sessions.verify(issued.cookie, now: now))
        #expect(sessions.csrf(nonce: nonce) == issued.csrf)
        #expect(issued.expires == now + OperatorSessions.lifetime)
        #expect(sessions.verify(issued.cookie, now: now + OperatorSessions.lifetime - 1) == nonce)
        #expect(sessions.verify(issued.cookie, now: now + OperatorSessions.lifetime) == nil, "ended")
        #expect(sessions.issue(now: now).csrf != issued.csrf, "each session its own token")
    }

    @Test func aSessionMadeUpStretchedOrSignedUnderAnotherKeyIsRefused() {
        let issued = sessions.issue(now: now)
        let parts = issued.cookie.split(separator: ".").map(String.init)
        let other = OperatorSessions(secretKey: "sk_test_another_key_9876543210").issue(now: now)
        for forged in [
            "\(Int(parts[0])! + 3600).\(parts[1]).\(parts[2])", "\(parts[0]).AAAAAAAAAAAAAAAAAAAAAA.\(parts[2])", other.cookie, "", "a.b",
            "x.y.z",
            issued.cookie + ".", parts[0] + "." + parts[1],
        ] {
            #expect(sessions.verify(forged, now: now) == nil, "\(forged)")
        }
    }
}
