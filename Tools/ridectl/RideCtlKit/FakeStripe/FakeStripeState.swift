import Foundation
import Providers
import Wire

/// What the fake Stripe holds, in memory: customers, cards, Connect accounts, PaymentIntents with
/// their transfers, refunds and ephemeral keys — shaped as Stripe's API objects — and the events to
/// post to the webhook endpoint. Requests arrive decoded (form fields); answers are JSON objects or
/// a Stripe error.
final class FakeStripeState {
    private var objects: [String: JSONValue] = [:]
    /// Ids in creation order, per object type, for lists.
    private var order: [String: [String]] = [:]
    /// Ephemeral key secret → its customer.
    private var ephemeralKeys: [String: String] = [:]
    private var counter = 0
    let publicURL: String
    /// Every new customer gets a `pm_card_visa` card (`ridectl up --fake-stripe`'s simulated riders).
    let autoCard: Bool

    init(publicURL: String, autoCard: Bool = false) {
        self.publicURL = publicURL
        self.autoCard = autoCard
    }

    /// Stripe's test card tokens a client attaches (docs.stripe.com/testing): each a new card; `…chargeDeclined` declines when charged.
    static let testCards: [String: (brand: String, last4: String)] = [
        "pm_card_visa": ("visa", "4242"), "pm_card_mastercard": ("mastercard", "4444"), "pm_card_chargeDeclined": ("visa", "0002"),
    ]

    func newID(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)_fake\(String(format: "%014ld", counter))"
    }

    func store(_ type: String, _ object: JSONValue) -> JSONValue {
        guard let id = object["id"]?.stringValue else { return object }
        if objects[id] == nil { order[type, default: []].append(id) }
        objects[id] = object
        return object
    }

    func object(_ id: String, type: String) throws(FakeStripeError) -> JSONValue {
        guard let object = objects[id], object["object"] == .string(type) else {
            throw .missing("No such \(type.replacingOccurrences(of: "_", with: " ")): '\(id.prefix(80))'")
        }
        return object
    }

    /// A page of `type`, newest first as Stripe's lists are, after `startingAfter`, keeping those `include` takes.
    func list(_ type: String, limit: Int, startingAfter: String?, include: (JSONValue) -> Bool = { _ in true }) -> JSONValue {
        let all = (order[type] ?? []).reversed().compactMap { objects[$0] }.filter(include)
        var start = 0
        if let startingAfter, let index = all.firstIndex(where: { $0["id"] == .string(startingAfter) }) { start = index + 1 }
        let page = Array(all.dropFirst(start).prefix(limit))
        return ["object": "list", "url": .string("/v1/\(type)s"), "data": .array(page), "has_more": .bool(start + page.count < all.count)]
    }

    var now: Double { Date().timeIntervalSince1970.rounded(.down) }

    func createCustomer(_ form: FakeStripeForm) -> JSONValue {
        let customer = store(
            "customer",
            [
                "id": .string(newID("cus")), "object": "customer", "created": .number(now), "metadata": .object(form.metadata),
                "livemode": false,
            ])
        if autoCard, let id = customer["id"]?.stringValue { _ = try? attach("pm_card_visa", FakeStripeForm(body: "customer=\(id)")) }
        return customer
    }

    func createEphemeralKey(_ form: FakeStripeForm) throws(FakeStripeError) -> JSONValue {
        let customer = try form.required("customer")
        _ = try object(customer, type: "customer")
        let secret = "ek_test_" + newID("key")
        ephemeralKeys[secret] = customer
        return store(
            "ephemeral_key",
            [
                "id": .string(newID("ephkey")), "object": "ephemeral_key", "secret": .string(secret), "created": .number(now),
                "expires": .number(now + 3600),
                "associated_objects": [["type": "customer", "id": .string(customer)]], "livemode": false,
            ])
    }

    func customer(ofEphemeralKey secret: String) -> String? { ephemeralKeys[secret] }

    func attach(_ token: String, _ form: FakeStripeForm, expires: (month: Int, year: Int) = (12, 2034)) throws(FakeStripeError) -> JSONValue
    {
        let customer = try form.required("customer")
        _ = try object(customer, type: "customer")
        guard let card = Self.testCards[token] else { throw .missing("No such PaymentMethod: '\(token.prefix(80))'") }
        return store(
            "payment_method",
            [
                "id": .string(newID("pm")), "object": "payment_method", "type": "card", "customer": .string(customer),
                "created": .number(now),
                "card": [
                    "brand": .string(card.brand), "last4": .string(card.last4), "exp_month": .number(Double(expires.month)),
                    "exp_year": .number(Double(expires.year)),
                ],
                "metadata": ["test_token": .string(token)],
            ])
    }

    func createAccount(_ form: FakeStripeForm) throws(FakeStripeError) -> JSONValue {
        guard ["express", "standard", "custom"].contains(try form.required("type")) else {
            throw .invalid("type", "Invalid type: must be one of express, standard, custom")
        }
        return store(
            "account",
            [
                "id": .string(newID("acct")), "object": "account", "type": .string(form["type"] ?? ""), "created": .number(now),
                "metadata": .object(form.metadata),
                "charges_enabled": false, "payouts_enabled": false, "details_submitted": false,
            ])
    }

    func createAccountLink(_ form: FakeStripeForm) throws(FakeStripeError) -> JSONValue {
        let account = try form.required("account")
        _ = try object(account, type: "account")
        for field in ["refresh_url", "return_url", "type"] { _ = try form.required(field) }
        return [
            "object": "account_link", "created": .number(now), "expires_at": .number(now + 300),
            "url": .string("\(publicURL)/connect/onboarding/\(account)"),
        ]
    }

    /// The driver finished onboarding (what Stripe's hosted page does): payouts on; the `account.updated` event.
    func completeOnboarding(_ account: String) throws(FakeStripeError) -> JSONValue {
        guard case .object(var fields) = try object(account, type: "account") else { throw .missing(account) }
        for flag in ["charges_enabled", "payouts_enabled", "details_submitted"] { fields[flag] = true }
        return store("account", .object(fields))
    }

    /// A PaymentIntent, confirmed at once (`confirm=true`, as the platform sends it): the card is
    /// charged, and with `transfer_data[destination]` the amount less `application_fee_amount` is
    /// transferred to that account. A declining card is Stripe's 402 `card_error` and a failed intent.
    func createPaymentIntent(_ form: FakeStripeForm) throws(FakeStripeError) -> (intent: JSONValue, declined: FakeStripeError?) {
        guard let amount = Int(try form.required("amount")), amount >= 50 else {
            throw .invalid("amount", "Amount must be at least 50 cents")
        }
        let currency = try form.required("currency")
        guard currency.count == 3, currency == currency.lowercased() else {
            throw .invalid("currency", "Invalid currency: \(currency.prefix(20))")
        }
        let customer = try form.required("customer")
        _ = try object(customer, type: "customer")
        let methodID = try form.required("payment_method")
        let method = try object(methodID, type: "payment_method")
        guard method["customer"] == .string(customer) else {
            throw .invalid("payment_method", "The PaymentMethod \(methodID) does not belong to the Customer \(customer)")
        }
        let fee = Int(form["application_fee_amount"] ?? "0") ?? -1
        guard (0...amount).contains(fee) else {
            throw .invalid("application_fee_amount", "application_fee_amount must be from 0 to the amount")
        }
        let destination = form["transfer_data[destination]"]
        if let destination { _ = try object(destination, type: "account") }
        let id = newID("pi")
        let transferData: JSONValue = destination.map { .object(["destination": .string($0)]) } ?? .null
        var intent: [String: JSONValue] = [
            "id": .string(id), "object": "payment_intent", "amount": .number(Double(amount)), "currency": .string(currency),
            "customer": .string(customer),
            "payment_method": .string(methodID), "created": .number(now), "metadata": .object(form.metadata),
            "application_fee_amount": .number(Double(fee)), "transfer_data": transferData, "livemode": false,
        ]
        guard form["confirm"] == "true" else {
            return (store("payment_intent", .object(intent.merging(["status": "requires_confirmation"]) { $1 })), nil)
        }
        if method["metadata"]?["test_token"] == "pm_card_chargeDeclined" {
            let error = FakeStripeError.card("card_declined", "Your card was declined.", paymentIntent: id)
            intent["status"] = "requires_payment_method"
            intent["last_payment_error"] = ["type": "card_error", "code": "card_declined", "message": "Your card was declined."]
            return (store("payment_intent", .object(intent)), error)
        }
        intent["status"] = "succeeded"
        intent["amount_received"] = .number(Double(amount))
        if let destination {
            let transfer = store(
                "transfer",
                [
                    "id": .string(newID("tr")), "object": "transfer", "amount": .number(Double(amount - fee)),
                    "currency": .string(currency),
                    "destination": .string(destination), "source_transaction": .string(id), "created": .number(now),
                ])
            intent["latest_charge"] = ["transfer": transfer["id"] ?? .null]
        }
        return (store("payment_intent", .object(intent)), nil)
    }

    func createRefund(_ form: FakeStripeForm) throws(FakeStripeError) -> JSONValue {
        let intentID = try form.required("payment_intent")
        let intent = try object(intentID, type: "payment_intent")
        guard intent["status"] == "succeeded", let charged = intent["amount"]?.numberValue else {
            throw .invalid("payment_intent", "PaymentIntent \(intentID) has no successful charge")
        }
        let refunded =
            list("refund", limit: 100, startingAfter: nil) { $0["payment_intent"] == .string(intentID) }["data"]?.arrayValue ?? []
        let left = charged - refunded.reduce(0) { $0 + ($1["amount"]?.numberValue ?? 0) }
        guard left > 0 else { throw .invalid("payment_intent", "Charge for PaymentIntent \(intentID) has already been refunded.") }
        let amount = Double(form["amount"] ?? "") ?? left
        guard amount > 0, amount <= left else { throw .invalid("amount", "Refund amount must be from 1 to \(Int(left))") }
        // A destination charge's refund takes the driver's share back from their account when asked (`reverse_transfer`).
        if form["reverse_transfer"] == "true", let transferID = intent["latest_charge"]?["transfer"]?.stringValue,
            var transfer = objects[transferID]?.objectValue, let transferred = transfer["amount"]?.numberValue
        {
            let reversed = (transfer["amount_reversed"]?.numberValue ?? 0) + (transferred * amount / charged).rounded(.down)
            transfer["amount_reversed"] = .number(reversed)
            transfer["reversed"] = .bool(reversed >= transferred)
            objects[transferID] = .object(transfer)
        }
        return store(
            "refund",
            [
                "id": .string(newID("re")), "object": "refund", "amount": .number(amount), "payment_intent": .string(intentID),
                "status": "succeeded",
                "created": .number(now), "metadata": .object(form.metadata),
            ])
    }

    /// A Stripe event about `object` (what the webhook endpoint is sent).
    func event(_ type: String, _ object: JSONValue) -> JSONValue {
        [
            "id": .string(newID("evt")), "object": "event", "type": .string(type), "created": .number(now), "api_version": "2024-06-20",
            "livemode": false,
            "data": ["object": object],
        ]
    }
}
