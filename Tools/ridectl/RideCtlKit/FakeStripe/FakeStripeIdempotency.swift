/// Stripe's idempotency rules, as the fake keeps them: the first answer to a POST with an
/// `Idempotency-Key` is kept; the same key with the same request (method, path, body) answers it
/// again; the same key with another request is a 400 `idempotency_error`. (Stripe keeps keys 24
/// hours; the fake for as long as it runs.)
struct FakeStripeIdempotency {
    struct Stored: Equatable {
        var request: String
        var status: Int
        var body: String
    }

    enum Outcome: Equatable {
        case new
        case replay(status: Int, body: String)
        case reused
    }

    private var stored: [String: Stored] = [:]

    func check(key: String, request: String) -> Outcome {
        guard let first = stored[key] else { return .new }
        return first.request == request ? .replay(status: first.status, body: first.body) : .reused
    }

    /// Keeps an answer. Stripe does not keep 400s refused before the request ran, nor 401s; the fake keeps only what ran.
    mutating func remember(key: String, request: String, status: Int, body: String) {
        guard stored[key] == nil, status != 401 else { return }
        stored[key] = Stored(request: request, status: status, body: body)
    }
}
