import ServiceLifecycle

extension EventSubscriber {
    /// Hands each event received to `handle`, in order, until the subscription ends; a graceful
    /// shutdown closes it (what was received already is still handled). Malformed messages are
    /// skipped: the subscriber reports them. For a service that only reacts to each event.
    public func eachEvent(_ handle: (ReceivedEvent<Payload>) async -> Void) async {
        await withGracefulShutdownHandler {
            for await batch in deliveries {
                for case .event(let received) in batch { await handle(received) }
            }
        } onGracefulShutdown: {
            Task { await self.close() }
        }
    }
}
