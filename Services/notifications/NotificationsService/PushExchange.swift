import AsyncHTTPClient

/// One request to a push service and its answer, read the same way for APNs and FCM: at most
/// 64 KiB of body, `Retry-After` passed on, and a request that does not complete retried.
enum PushExchange {
    /// The provider's `outcome` of the answer, and the answer's status (nil when there was none).
    static func send(
        _ request: HTTPClientRequest, client: HTTPClient, timeout: Duration,
        outcome: (_ status: Int, _ body: [UInt8], _ retryAfter: String?) -> PushOutcome
    ) async -> (outcome: PushOutcome, status: Int?) {
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
            let body = try await response.body.collect(upTo: 64 * 1024)
            let status = Int(response.status.code)
            return (outcome(status, Array(body.readableBytesView), response.headers.first(name: "retry-after")), status)
        } catch {
            return (.retry("\(error)"), nil)
        }
    }
}
