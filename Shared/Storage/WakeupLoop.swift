import ServiceLifecycle

/// Work that runs when woken — after a commit, say — and on a tick anyway (so what a crash or a
/// failure left behind is picked up without a new wake-up), one pass at a time, until graceful
/// shutdown. Wake-ups while a pass runs collapse into one more pass.
public struct WakeupLoop: Sendable {
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    public init() {
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Something to do: run a pass soon.
    public func notify() { wake.yield() }

    /// Runs `pass` on each wake-up and every `tick`, starting with one, until graceful shutdown.
    public func run(tick: Duration, _ pass: () async -> Void) async {
        let ticker = Task { [wake] in
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                wake.yield()
            }
        }
        defer { ticker.cancel() }
        wake.yield()
        await withGracefulShutdownHandler {
            for await _ in wakeups {
                await pass()
                if Task.isShuttingDownGracefully { break }
            }
        } onGracefulShutdown: { [wake] in
            wake.finish()
        }
    }
}
