import Foundation
import Providers
import Wire

/// Checkout Sessions in setup mode, as Stripe hosts them: the platform makes one for a customer
/// (`POST /v1/checkout/sessions`, the secret key), the rider's browser opens its `url` — a page of
/// the provider with a card form — and the card typed there is attached to the customer, then the
/// browser is sent to `success_url` (or, leaving, `cancel_url`). Stripe's test numbers are the
/// cards (docs.stripe.com/testing); a session is completed once.
extension FakeStripeState {
    /// Stripe's test card numbers and the test token each stands for.
    static let testNumbers = [
        "4242424242424242": "pm_card_visa", "5555555555554444": "pm_card_mastercard", "4000000000000002": "pm_card_chargeDeclined",
    ]

    func createCheckoutSession(_ form: FakeStripeForm) throws(FakeStripeError) -> JSONValue {
        guard try form.required("mode") == "setup" else { throw .invalid("mode", "This stand-in makes setup sessions only (mode=setup)") }
        let customer = try form.required("customer")
        _ = try object(customer, type: "customer")
        let (success, cancel) = (try form.required("success_url"), try form.required("cancel_url"))
        for (name, url) in [("success_url", success), ("cancel_url", cancel)] where !(url.hasPrefix("http://") || url.hasPrefix("https://"))
        {
            throw .invalid(name, "Not a valid URL")
        }
        let id = "cs_test_" + newID("sess")
        return store(
            "checkout.session",
            [
                "id": .string(id), "object": "checkout.session", "mode": "setup", "status": "open", "customer": .string(customer),
                "success_url": .string(success), "cancel_url": .string(cancel), "url": .string("\(publicURL)/checkout/\(id)"),
                "created": .number(now), "expires_at": .number(now + 86_400), "setup_intent": .null, "metadata": .object(form.metadata),
                "livemode": false,
            ])
    }

    /// `GET /checkout/<id>`: the session's card form, with `problem` said above it.
    func checkoutPage(_ id: String, problem: String? = nil) -> (status: Int, html: String) {
        guard let session = try? object(id, type: "checkout.session"), session["status"] == "open" else {
            return (
                404,
                Self.page(
                    title: "This page is no longer available",
                    body: "<p>The link has expired or the card was already saved. Go back to the app and try again.</p>")
            )
        }
        let cancel = Self.escaped(session["cancel_url"]?.stringValue ?? "")
        let said = problem.map { #"<p role="alert" class="problem">\#(Self.escaped($0))</p>"# } ?? ""
        let form = """
            \(said)<form method="post" action="/checkout/\(Self.escaped(id))">
            <label for="number">Card number</label><input id="number" name="number" inputmode="numeric" autocomplete="cc-number" required>
            <label for="expiry">Expiry (MM / YY)</label><input id="expiry" name="expiry" autocomplete="cc-exp" placeholder="MM / YY" required>
            <label for="cvc">CVC</label><input id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" required>
            <button id="save" type="submit">Save card</button></form>
            <p><a id="back" href="\(cancel)">Back without a card</a></p>
            <p class="test">Test mode: 4242 4242 4242 4242 is a card that pays; 4000 0000 0000 0002 is saved but declined when charged.</p>
            """
        return (200, Self.page(title: "Add a card", body: form))
    }

    /// `POST /checkout/<id>`: the card attached and the session complete, and where to send the
    /// browser; or the page again with what is wrong.
    func completeCheckout(_ id: String, _ form: FakeStripeForm) -> (status: Int, html: String, location: String?) {
        guard case .object(var session)? = try? object(id, type: "checkout.session"), session["status"] == "open",
            let customer = session["customer"]?.stringValue, let success = session["success_url"]?.stringValue
        else {
            let gone = checkoutPage(id)
            return (gone.status, gone.html, nil)
        }
        let number = (form["number"] ?? "").filter { !$0.isWhitespace }
        let expiry = (form["expiry"] ?? "").split(separator: "/").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let problem = Self.problem(number: number, expiry: expiry, cvc: form["cvc"] ?? "")
        if let problem {
            let page = checkoutPage(id, problem: problem)
            return (400, page.html, nil)
        }
        guard
            let card = try? attach(
                Self.testNumbers[number] ?? "", FakeStripeForm(body: "customer=\(customer)"), expires: (expiry[0], 2000 + expiry[1]))
        else {
            return (500, Self.page(title: "Something went wrong", body: "<p>The card could not be saved.</p>"), nil)
        }
        let intent = store(
            "setup_intent",
            [
                "id": .string(newID("seti")), "object": "setup_intent", "status": "succeeded", "customer": .string(customer),
                "payment_method": card["id"] ?? .null, "usage": "off_session", "created": .number(now),
            ])
        session["status"] = "complete"
        session["setup_intent"] = intent["id"] ?? .null
        _ = store("checkout.session", .object(session))
        return (303, "", success)
    }

    /// What Stripe's page says of a card it cannot take; nil when it can.
    static func problem(number: String, expiry: [Int], cvc: String) -> String? {
        guard !number.isEmpty, number.allSatisfy(\.isNumber), luhn(number) else { return "Your card number is invalid." }
        guard testNumbers[number] != nil else { return "Your card was declined. Your request was in test mode, but used a non test card." }
        guard expiry.count == 2, (1...12).contains(expiry[0]), (0...99).contains(expiry[1]) else {
            return "Your card's expiration date is incomplete."
        }
        guard (2000 + expiry[1]) * 12 + expiry[0] >= monthNow else { return "Your card's expiration year is in the past." }
        guard (3...4).contains(cvc.count), cvc.allSatisfy(\.isNumber) else { return "Your card's security code is incomplete." }
        return nil
    }

    static var monthNow: Int {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date())
        return (parts.year ?? 0) * 12 + (parts.month ?? 0)
    }

    static func luhn(_ digits: String) -> Bool {
        let values = digits.reversed().compactMap(\.wholeNumberValue)
        let sum = values.enumerated().reduce(0) { sum, item in
            let doubled = item.offset % 2 == 1 ? item.element * 2 : item.element
            return sum + (doubled > 9 ? doubled - 9 : doubled)
        }
        return values.count >= 12 && sum % 10 == 0
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;"
        )
        .replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func page(title: String, body: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title) · fake Stripe (test mode)</title>
        <style>body{font:16px system-ui,sans-serif;max-width:26rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}label,input,button{display:block;width:100%;margin:.3rem 0}
        input,button{font:inherit;padding:.5rem;box-sizing:border-box}button{background:#4b3fd6;color:#fff;border:0;margin-top:1rem}.problem{color:#a4001d}.test{color:#555;font-size:.9rem}</style>
        </head><body><h1>\(title)</h1>\(body)</body></html>
        """
    }
}
