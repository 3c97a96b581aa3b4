import Foundation
import Testing
import Wire

@testable import RideCtlKit

/// `ridectl fake-stripe`'s API: Stripe's idempotency rules, keys, error objects and pagination.
@Suite struct FakeStripeTests {
    static let key = "sk_test_fake"

    func call(
        _ api: FakeStripeAPI, _ method: String, _ path: String, _ body: String = "", query: String = "", bearer: String = key,
        idempotencyKey: String? = nil
    ) async -> (status: Int, json: JSONValue, replayed: Bool) {
        let answer = await api.handle(
            method: method, path: path, query: query, body: body, authorization: "Bearer \(bearer)", idempotencyKey: idempotencyKey)
        return (answer.status, (try? JSONCoding.decode(JSONValue.self, fromText: answer.body)) ?? .null, answer.replayed)
    }

    @Test func theSameKeyAndRequestAnswerTheFirstReplyAndAnotherRequestIsAnIdempotencyError() async {
        let api = FakeStripeAPI(secretKey: Self.key, publicURL: "http://fake")
        let first = await call(api, "POST", "/v1/customers", "metadata[rider_id]=r1", idempotencyKey: "rider-r1-customer")
        let again = await call(api, "POST", "/v1/customers", "metadata[rider_id]=r1", idempotencyKey: "rider-r1-customer")
        #expect(first.status == 200 && first.json["id"]?.stringValue?.hasPrefix("cus_") == true && !first.replayed)
        #expect(again.json == first.json && again.replayed, "one customer, the first answer again")
        let other = await call(api, "POST", "/v1/customers", "metadata[rider_id]=r2", idempotencyKey: "rider-r1-customer")
        #expect(other.status == 400 && other.json["error"]?["type"] == "idempotency_error", "\(other.json)")
        let unkeyed = await call(api, "POST", "/v1/customers", "metadata[rider_id]=r1")
        #expect(unkeyed.json["id"] != first.json["id"], "without a key, a second customer")
    }

    @Test func recordsKeepOnlyWhatRanAndCompareTheWholeRequest() {
        var records = FakeStripeIdempotency()
        #expect(records.check(key: "k", request: "POST /v1/refunds\npayment_intent=pi_1") == .new)
        records.remember(key: "k", request: "POST /v1/refunds\npayment_intent=pi_1", status: 200, body: "{}")
        records.remember(key: "k", request: "POST /v1/refunds\npayment_intent=pi_1", status: 500, body: "later")
        #expect(records.check(key: "k", request: "POST /v1/refunds\npayment_intent=pi_1") == .replay(status: 200, body: "{}"))
        #expect(records.check(key: "k", request: "POST /v1/customers\npayment_intent=pi_1") == .reused, "another path under the key")
        records.remember(key: "u", request: "x", status: 401, body: "{}")
        #expect(records.check(key: "u", request: "y") == .new, "a refused key is not kept")
    }

    @Test func aDestinationChargePaysTheDriverTheFareLessTheFeeAndADeclinedCardIsACardError() async throws {
        let api = FakeStripeAPI(secretKey: Self.key, publicURL: "http://fake")
        let customer = await call(api, "POST", "/v1/customers", "").json["id"]?.stringValue ?? ""
        let account = await call(api, "POST", "/v1/accounts", "type=express").json["id"]?.stringValue ?? ""
        // The rider's app adds a card with the ephemeral key, which reaches only that customer's cards.
        let ephemeral = await call(api, "POST", "/v1/ephemeral_keys", "customer=\(customer)").json["secret"]?.stringValue ?? ""
        let card = await call(api, "POST", "/v1/payment_methods/pm_card_visa/attach", "customer=\(customer)", bearer: ephemeral)
        #expect(card.status == 200 && card.json["card"]?["last4"] == "4242", "\(card.json)")
        #expect(await call(api, "POST", "/v1/customers", "", bearer: ephemeral).status == 401)
        #expect(await call(api, "GET", "/v1/customers/\(customer)", bearer: "sk_test_wrong").status == 401)
        let method = card.json["id"]?.stringValue ?? ""
        let charge =
            "amount=1000&currency=usd&customer=\(customer)&payment_method=\(method)&confirm=true&application_fee_amount=200&transfer_data[destination]=\(account)"
        let intent = await call(api, "POST", "/v1/payment_intents", charge, idempotencyKey: "order-o1-payment_intent")
        #expect(intent.json["status"] == "succeeded", "\(intent.json)")
        let transfers = await call(api, "GET", "/v1/transfers", query: "destination=\(account)")
        #expect(transfers.json["data"]?[0]?["amount"] == 800)

        let declining =
            await call(api, "POST", "/v1/payment_methods/pm_card_chargeDeclined/attach", "customer=\(customer)").json["id"]?.stringValue
            ?? ""
        let declined = await api.handle(
            method: "POST", path: "/v1/payment_intents", query: "", body: charge.replacingOccurrences(of: method, with: declining),
            authorization: "Bearer \(Self.key)", idempotencyKey: nil)
        let error = try JSONCoding.decode(JSONValue.self, fromText: declined.body)["error"]
        #expect(declined.status == 402 && error?["type"] == "card_error" && error?["code"] == "card_declined")
        #expect(declined.events.map { $0["type"] } == ["payment_intent.payment_failed"])
        let bad = await call(api, "POST", "/v1/payment_intents", "amount=10&currency=usd")
        #expect(bad.status == 400 && bad.json["error"]?["param"] == "amount")
    }

    @Test func listsArePagedByStartingAfter() async {
        let api = FakeStripeAPI(secretKey: Self.key, publicURL: "http://fake")
        let customer = await call(api, "POST", "/v1/customers", "").json["id"]?.stringValue ?? ""
        for _ in 0..<3 { _ = await call(api, "POST", "/v1/payment_methods/pm_card_visa/attach", "customer=\(customer)") }
        let first = await call(api, "GET", "/v1/payment_methods", query: "customer=\(customer)&type=card&limit=2")
        #expect(first.json["data"]?.arrayValue?.count == 2 && first.json["has_more"] == true)
        let last = first.json["data"]?[1]?["id"]?.stringValue ?? ""
        let second = await call(api, "GET", "/v1/payment_methods", query: "customer=\(customer)&type=card&limit=2&starting_after=\(last)")
        #expect(second.json["data"]?.arrayValue?.count == 1 && second.json["has_more"] == false)
        #expect(await call(api, "GET", "/v1/nothing").json["error"]?["type"] == "invalid_request_error")
    }
}

/// The fake's hosted Checkout page in setup mode: a session made with the secret key, the card
/// typed on its page attached to the customer, what is wrong said on the page, once only.
@Suite struct FakeStripeCheckoutTests {
    let api = FakeStripeAPI(secretKey: FakeStripeTests.key, publicURL: "http://fake")

    func page(_ method: String, _ path: String, _ body: String = "") async -> FakeStripeAPI.Answer {
        await api.handle(method: method, path: path, query: "", body: body, authorization: nil, idempotencyKey: nil)
    }

    @Test func aCardTypedOnTheProvidersPageIsTheCustomersAndTheBrowserGoesBack() async throws {
        let stripe = FakeStripeTests()
        let customer = await stripe.call(api, "POST", "/v1/customers").json["id"]?.stringValue ?? ""
        let form =
            "mode=setup&customer=\(customer)&payment_method_types[0]=card&success_url=http%3A%2F%2Fapp%2Fapp%2Frider%23card-added&cancel_url=http%3A%2F%2Fapp%2Fback"
        let ephemeral = await stripe.call(api, "POST", "/v1/ephemeral_keys", "customer=\(customer)").json["secret"]?.stringValue ?? ""
        #expect(
            await stripe.call(api, "POST", "/v1/checkout/sessions", form, bearer: ephemeral).status == 401,
            "an app's ephemeral key makes no session")
        #expect(await stripe.call(api, "POST", "/v1/checkout/sessions", "mode=payment&customer=\(customer)").status == 400)
        #expect(
            await stripe.call(api, "POST", "/v1/checkout/sessions", "mode=setup&customer=cus_none&success_url=http://a&cancel_url=http://a")
                .status == 404)
        let session = await stripe.call(api, "POST", "/v1/checkout/sessions", form).json
        let url = try #require(session["url"]?.stringValue, "\(session)")
        #expect(session["status"] == "open" && url.hasPrefix("http://fake/checkout/cs_test_"), "\(session)")
        let path = String(url.dropFirst("http://fake".count))

        let shown = await page("GET", path)
        #expect(
            shown.status == 200 && shown.contentType.hasPrefix("text/html") && shown.body.contains(#"<label for="number">"#)
                && shown.body.contains("http://app/back"))
        for (fields, said) in [
            ("number=4242+4242+4242+4241&expiry=12+%2F+34&cvc=123", "card number is invalid"),
            ("number=4111+1111+1111+1111&expiry=12+%2F+34&cvc=123", "non test card"),
            ("number=4242424242424242&expiry=13+%2F+34&cvc=123", "expiration date is incomplete"),
            ("number=4242424242424242&expiry=01+%2F+20&cvc=123", "in the past"),
            ("number=4242424242424242&expiry=12%2F34&cvc=1", "security code"),
        ] {
            let refused = await page("POST", path, fields)
            #expect(
                refused.status == 400 && refused.location == nil && refused.body.contains(said), "\(fields): \(refused.body.prefix(300))")
        }
        #expect(
            await stripe.call(api, "GET", "/v1/payment_methods", query: "customer=\(customer)").json["data"]?.arrayValue?.isEmpty == true,
            "nothing refused was kept")

        let saved = await page("POST", path, "number=4000+0000+0000+0002&expiry=11+%2F+33&cvc=123")
        #expect(saved.status == 303 && saved.location == "http://app/app/rider#card-added", "\(saved.status) \(saved.body.prefix(200))")
        let cards = await stripe.call(api, "GET", "/v1/payment_methods", query: "customer=\(customer)").json["data"]?.arrayValue ?? []
        #expect(cards.count == 1 && cards.first?["card"]?["last4"] == "0002" && cards.first?["card"]?["exp_year"] == 2033, "\(cards)")
        let done = await stripe.call(api, "GET", "/v1/checkout/sessions/\(session["id"]?.stringValue ?? "")").json
        #expect(done["status"] == "complete" && done["setup_intent"]?.stringValue?.hasPrefix("seti_") == true, "\(done)")
        #expect(await page("POST", path, "number=4242424242424242&expiry=12%2F34&cvc=123").status == 404, "a session saves one card")
        #expect(await page("GET", "/checkout/cs_test_none").status == 404)
    }
}
