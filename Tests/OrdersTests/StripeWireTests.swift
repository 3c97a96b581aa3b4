import Foundation
import Providers
import Testing

@testable import OrdersService

/// Stripe's wire format as the adapter writes and checks it: form bodies and webhook signatures.
@Suite struct StripeWireTests {
    @Test func formBodiesNestFieldsWithLiteralBracketsAndEscapeTheRest() {
        let body = StripeForm.encode([
            ("amount", "1250"), ("metadata[order_id]", "o-1 & 2"), ("transfer_data[destination]", "acct_1"),
            ("description", "Café [ride]=ok+"),
        ])
        #expect(
            body
                == "amount=1250&metadata[order_id]=o-1%20%26%202&transfer_data[destination]=acct_1&description=Caf%C3%A9%20%5Bride%5D%3Dok%2B"
        )
        let decoded = StripeForm.decode(body)
        #expect(decoded.map(\.0) == ["amount", "metadata[order_id]", "transfer_data[destination]", "description"])
        #expect(decoded.map(\.1) == ["1250", "o-1 & 2", "acct_1", "Café [ride]=ok+"])
        #expect(StripeForm.decode("a=b+c&d=").map(\.1) == ["b c", ""], "a form's + is a space; an empty value stays")
    }

    static let secret = "whsec_test_secret"
    static let body = Array(#"{"id":"evt_1"}"#.utf8)
    static let signedAt = 1_790_000_000
    static var atSigning: Date { Date(timeIntervalSince1970: Double(signedAt)) }

    @Test func aSignatureIsHMACSHA256OfTimestampDotBody() throws {
        // The v1 value computed independently (Python's hmac) for the same secret, time and body.
        let header = StripeSignature.header(body: Self.body, secret: Self.secret, timestamp: Self.signedAt)
        #expect(header == "t=1790000000,v1=621e30333c3e6f1df3159281b9d0e6983411cc64573a2fb2802f56791c7a24c1")
        try StripeSignature.verify(body: Self.body, header: header, secret: Self.secret, now: Self.atSigning.addingTimeInterval(299))
        // While a secret is rolled, Stripe sends one v1 per secret: one matching is enough.
        try StripeSignature.verify(
            body: Self.body, header: "t=1790000000,v1=00ff,v1=621e30333c3e6f1df3159281b9d0e6983411cc64573a2fb2802f56791c7a24c1,v0=abc",
            secret: Self.secret, now: Self.atSigning)
    }

    @Test func forgedStaleAndMalformedSignaturesAreRefused() {
        let header = StripeSignature.header(body: Self.body, secret: Self.secret, timestamp: Self.signedAt)
        #expect(throws: StripeSignature.Failure.mismatch) {
            try StripeSignature.verify(body: Array(#"{"id":"evt_2"}"#.utf8), header: header, secret: Self.secret, now: Self.atSigning)
        }
        #expect(throws: StripeSignature.Failure.mismatch) {
            try StripeSignature.verify(body: Self.body, header: header, secret: "whsec_other", now: Self.atSigning)
        }
        #expect(throws: StripeSignature.Failure.stale(ageSeconds: 301)) {
            try StripeSignature.verify(body: Self.body, header: header, secret: Self.secret, now: Self.atSigning.addingTimeInterval(301))
        }
        for malformed in ["", "v1=621e", "t=1790000000", "t=soon,v1=621e", "t=1790000000,v1=zz", "garbage"] {
            #expect(throws: StripeSignature.Failure.malformed, "\(malformed)") {
                try StripeSignature.verify(body: Self.body, header: malformed, secret: Self.secret, now: Self.atSigning)
            }
        }
    }

    @Test func stripeErrorsThatARetryCanChangeAreRetryable() {
        #expect(StripeError(status: 0, type: "api_connection_error", message: "").isRetryable)
        #expect(StripeError(status: 429, type: "rate_limit_error", message: "").isRetryable)
        #expect(StripeError(status: 503, type: "api_error", message: "").isRetryable)
        #expect(!StripeError(status: 402, type: "card_error", code: "card_declined", message: "").isRetryable)
        #expect(!StripeError(status: 400, type: "idempotency_error", message: "").isRetryable)
    }
}
