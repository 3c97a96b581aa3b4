import Synchronization

/// How many WebSockets each user holds open on this instance: at most `perUser`, so one account
/// cannot hold the gateway's memory and the bus's subscriptions with thousands of sockets.
final class SocketAllowance: Sendable {
    let perUser: Int
    private let open = Mutex<[String: Int]>([:])

    init(perUser: Int) { self.perUser = perUser }

    /// One more socket of `userID`; false when it holds `perUser` already.
    func take(_ userID: String) -> Bool {
        open.withLock { open in
            guard open[userID, default: 0] < perUser else { return false }
            open[userID, default: 0] += 1
            return true
        }
    }

    /// A socket of `userID` closed.
    func give(_ userID: String) {
        open.withLock { open in
            let left = open[userID, default: 1] - 1
            open[userID] = left > 0 ? left : nil
        }
    }

    /// The refusal of a socket over the allowance: 429, closed 4429.
    var refusal: GatewayError {
        GatewayError(
            .tooManyRequests, "too_many_sockets",
            "this account has \(perUser) live connections open on this gateway (--sockets-per-user); close one first")
    }
}

/// When a socket last sent its client a message: one that has sent nothing for the idle time is
/// closed (4408), and the app connects again (with `?after=` on an order's).
final class SocketActivity: Sendable {
    private let last = Mutex(ContinuousClock.now)

    func touch() { last.withLock { $0 = .now } }

    /// Returns once nothing was sent for `idle`.
    func waitUntilIdle(_ idle: Duration) async throws {
        while true {
            let since = last.withLock { $0 }
            let quiet = ContinuousClock.now - since
            if quiet >= idle { return }
            try await Task.sleep(for: idle - quiet)
        }
    }
}
