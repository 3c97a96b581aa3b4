import Foundation
import Testing

@testable import NotificationsService

/// Webhook secrets at rest: sealed under the service's key, opened only by it; one kept before
/// sealing still opens as itself.
@Suite struct WebhookSecretSealingTests {
    let sealing = WebhookSecretSealing(secret: Array(repeating: 1, count: 32))
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test func aSealedSecretOpensOnlyUnderItsKey() throws {
        let sealed = try sealing.seal(secret)
        #expect(sealed.hasPrefix(WebhookSecretSealing.prefix) && !sealed.contains(secret) && !sealed.contains("MfKQ9r8"))
        #expect(try sealing.open(sealed) == secret)
        #expect(try sealing.seal(secret) != sealed, "a fresh nonce each time")
        #expect(throws: WebhookSecretUnreadable.self) { try WebhookSecretSealing(secret: Array(repeating: 2, count: 32)).open(sealed) }
        #expect(throws: WebhookSecretUnreadable.self) { try sealing.open(sealed.dropLast(2) + "AA") }
        #expect(try sealing.open(secret) == secret, "kept before sealing")
    }
}
