/// Runs `body` for each of `items`, at most `width` at once, and returns once every one has: work
/// that waits on the network (another service, the database) goes on side by side instead of one
/// item after another, without starting thousands of tasks at a time.
public func forEach<Item: Sendable>(_ items: some Sequence<Item>, atMost width: Int, _ body: @escaping @Sendable (Item) async -> Void) async
{
    await withTaskGroup(of: Void.self) { group in
        var running = 0
        for item in items {
            if running >= max(1, width) {
                await group.next()
                running -= 1
            }
            group.addTask { await body(item) }
            running += 1
        }
    }
}
