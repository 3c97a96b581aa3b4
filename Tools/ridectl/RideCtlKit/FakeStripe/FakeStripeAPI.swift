import Foundation
import Providers
import Wire

/// The fake's API: authentication (the secret key, or a rider's ephemeral key for their own
/// cards), idempotency, routing to the objects. One actor call per request, so a request and its
/// idempotency record are one step.
actor FakeStripeAPI {
    struct Answer: Sendable {
        var status: Int
        var body: String
        var replayed = false
        /// Events to post to the webhook endpoint.
        var events: [JSONValue] = []
        var contentType = "application/json"
        /// Where a hosted page sends the browser (303).
        var location: String? = nil
    }

    let state: FakeStripeState
    let secretKey: String
    private var idempotency = FakeStripeIdempotency()

    init(secretKey: String, publicURL: String, autoCard: Bool = false) {
        self.secretKey = secretKey
        self.state = FakeStripeState(publicURL: publicURL, autoCard: autoCard)
    }

    func handle(method: String, path: String, query: String, body: String, authorization: String?, idempotencyKey: String?) -> Answer {
        let parts = path.split(separator: "/").map(String.init)
        // Stripe's hosted onboarding page, here a link that finishes it (no key: the driver's browser opens it).
        if method == "GET", parts.count == 3, parts[0] == "connect", parts[1] == "onboarding" {
            return run { () throws(FakeStripeError) in
                let account = try state.completeOnboarding(parts[2])
                return (
                    ["object": "onboarding", "account": account["id"] ?? .null, "completed": true],
                    [state.event("account.updated", account)]
                )
            }
        }
        // Stripe's hosted Checkout page: the rider's browser, no key.
        if parts.count == 2, parts[0] == "checkout" {
            if method == "GET" {
                let page = state.checkoutPage(parts[1])
                return Answer(status: page.status, body: page.html, contentType: "text/html; charset=utf-8")
            }
            let done = state.completeCheckout(parts[1], FakeStripeForm(body: body))
            return Answer(status: done.status, body: done.html, contentType: "text/html; charset=utf-8", location: done.location)
        }
        guard let bearer = authorization.flatMap({ $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }) else {
            return answer(
                .unauthorized(
                    "You did not provide an API key. Provide it in the Authorization header (Authorization: Bearer YOUR_SECRET_KEY)."))
        }
        let ephemeralCustomer = state.customer(ofEphemeralKey: bearer)
        guard bearer == secretKey || ephemeralCustomer != nil else {
            return answer(.unauthorized("Invalid API Key provided: \(bearer.prefix(8))…"))
        }
        let form = FakeStripeForm(body: method == "POST" ? body : query)
        // An ephemeral key reaches only its customer's cards, as the app's SDK uses it.
        if let ephemeralCustomer, bearer != secretKey {
            let own = form["customer"] == ephemeralCustomer && parts.first == "v1" && parts.dropFirst().first == "payment_methods"
            guard own else { return answer(.unauthorized("This ephemeral key may only read and add its customer's payment methods")) }
        }
        guard method == "POST", let key = idempotencyKey else { return route(method, parts, form) }
        let request = "\(method) \(path)\n\(body)"
        switch idempotency.check(key: key, request: request) {
        case .replay(let status, let body): return Answer(status: status, body: body, replayed: true)
        case .reused:
            return answer(
                .idempotency(
                    "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '\(key.prefix(60))' if you meant to execute a different request."
                ))
        case .new:
            let answer = route(method, parts, form)
            idempotency.remember(key: key, request: request, status: answer.status, body: answer.body)
            return answer
        }
    }

    func route(_ method: String, _ parts: [String], _ form: FakeStripeForm) -> Answer {
        guard parts.first == "v1" else {
            return answer(.missing("Unrecognized request URL (\(method) /\(parts.joined(separator: "/").prefix(120)))."))
        }
        let limit = min(max(Int(form["limit"] ?? "10") ?? 10, 1), 100)
        let after = form["starting_after"]
        // A list of `type`, of those whose `key` is the form's (all of them without one).
        func list(_ type: String, whose key: String) -> Answer {
            let wanted = form[key]
            let objects = state.list(type, limit: limit, startingAfter: after) { wanted == nil || $0[key] == .string(wanted ?? "") }
            return Answer(status: 200, body: text(objects))
        }
        switch (method, parts.dropFirst().first ?? "", parts.count) {
        case ("POST", "customers", 2): return run { () throws(FakeStripeError) in (state.createCustomer(form), []) }
        case ("GET", "customers", 3): return run { () throws(FakeStripeError) in (try state.object(parts[2], type: "customer"), []) }
        case ("POST", "ephemeral_keys", 2): return run { () throws(FakeStripeError) in (try state.createEphemeralKey(form), []) }
        case ("POST", "payment_methods", 4) where parts[3] == "attach":
            return run { () throws(FakeStripeError) in (try state.attach(parts[2], form), []) }
        case ("GET", "payment_methods", 2):
            return run { () throws(FakeStripeError) in
                let customer = try form.required("customer")
                return (state.list("payment_method", limit: limit, startingAfter: after) { $0["customer"] == .string(customer) }, [])
            }
        case ("POST", "checkout", 3) where parts[2] == "sessions":
            return run { () throws(FakeStripeError) in (try state.createCheckoutSession(form), []) }
        case ("GET", "checkout", 4) where parts[2] == "sessions":
            return run { () throws(FakeStripeError) in (try state.object(parts[3], type: "checkout.session"), []) }
        case ("POST", "accounts", 2): return run { () throws(FakeStripeError) in (try state.createAccount(form), []) }
        case ("GET", "accounts", 3): return run { () throws(FakeStripeError) in (try state.object(parts[2], type: "account"), []) }
        case ("POST", "account_links", 2): return run { () throws(FakeStripeError) in (try state.createAccountLink(form), []) }
        case ("POST", "payment_intents", 2):
            let (intent, declined): (JSONValue, FakeStripeError?)
            do throws(FakeStripeError) { (intent, declined) = try state.createPaymentIntent(form) } catch { return answer(error) }
            if let declined { return answer(declined, events: [state.event("payment_intent.payment_failed", intent)]) }
            return Answer(
                status: 200, body: text(intent),
                events: intent["status"] == "succeeded" ? [state.event("payment_intent.succeeded", intent)] : [])
        case ("GET", "payment_intents", 3):
            return run { () throws(FakeStripeError) in (try state.object(parts[2], type: "payment_intent"), []) }
        case ("GET", "payment_intents", 2): return list("payment_intent", whose: "customer")
        case ("GET", "transfers", 2): return list("transfer", whose: "destination")
        case ("POST", "refunds", 2): return run { () throws(FakeStripeError) in (try state.createRefund(form), []) }
        case ("GET", "refunds", 2): return list("refund", whose: "payment_intent")
        default: return answer(.missing("Unrecognized request URL (\(method) /\(parts.joined(separator: "/").prefix(120)))."))
        }
    }

    func run(_ work: () throws(FakeStripeError) -> (JSONValue, [JSONValue])) -> Answer {
        do throws(FakeStripeError) {
            let (object, events) = try work()
            return Answer(status: 200, body: text(object), events: events)
        } catch {
            return answer(error)
        }
    }

    func answer(_ error: FakeStripeError, events: [JSONValue] = []) -> Answer {
        Answer(status: error.status, body: text(error.body), events: events)
    }

    func text(_ value: JSONValue) -> String { (try? JSONCoding.encodeText(value)) ?? "{}" }
}
