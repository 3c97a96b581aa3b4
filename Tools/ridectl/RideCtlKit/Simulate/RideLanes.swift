/// Each ride's events acted on in order, and apart from every other ride's, as each rider's and
/// driver's phone waits for its own calls only. One queue for every ride made each app wait for
/// all the others' calls: with 20 ms between hosts, rides fell minutes behind their events.
actor RideLanes {
    private var lanes: [String: (number: UInt64, task: Task<Void, Never>)] = [:]
    private var queued: UInt64 = 0

    /// Runs `body` once what was queued before for `ride` has run.
    func enqueue(_ ride: String, _ body: @escaping @Sendable () async -> Void) {
        queued += 1
        let (number, previous) = (queued, lanes[ride]?.task)
        lanes[ride] = (
            number,
            Task { [weak self] in
                await previous?.value
                await body()
                await self?.finished(ride, number)
            }
        )
    }

    /// Forgets an idle lane (a later event of its ride starts a new one).
    private func finished(_ ride: String, _ number: UInt64) {
        if lanes[ride]?.number == number { lanes[ride] = nil }
    }
}
