import Providers
import Wire

/// A request's form fields as the fake reads them, and the errors it answers in Stripe's shape.
struct FakeStripeForm: Sendable {
    let fields: [(String, String)]

    init(body: String) { fields = StripeForm.decode(body) }

    subscript(name: String) -> String? { fields.last { $0.0 == name }?.1 }

    func required(_ name: String) throws(FakeStripeError) -> String {
        guard let value = self[name], !value.isEmpty else { throw .invalid(name, "Missing required param: \(name).") }
        return value
    }

    /// `metadata[key]=value` fields as an object.
    var metadata: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for (name, value) in fields where name.hasPrefix("metadata[") && name.hasSuffix("]") {
            members[String(name.dropFirst("metadata[".count).dropLast())] = .string(value)
        }
        return members
    }
}

/// Stripe's error object: `{"error":{"type","code","message","param"}}` with its HTTP status.
enum FakeStripeError: Error, Equatable {
    case invalid(String, String)
    case missing(String)
    case card(String, String, paymentIntent: String)
    case unauthorized(String)
    case idempotency(String)

    var status: Int {
        switch self {
        case .invalid, .idempotency: 400
        case .missing: 404
        case .card: 402
        case .unauthorized: 401
        }
    }

    var body: JSONValue {
        let error: JSONValue =
            switch self {
            case .invalid(let param, let message):
                ["type": "invalid_request_error", "code": "parameter_invalid", "param": .string(param), "message": .string(message)]
            case .missing(let message): ["type": "invalid_request_error", "code": "resource_missing", "message": .string(message)]
            case .card(let code, let message, let intent):
                [
                    "type": "card_error", "code": .string(code), "decline_code": "generic_decline", "message": .string(message),
                    "payment_intent": ["id": .string(intent)],
                ]
            case .unauthorized(let message): ["type": "invalid_request_error", "message": .string(message)]
            case .idempotency(let message): ["type": "idempotency_error", "message": .string(message)]
            }
        return ["error": error]
    }
}
