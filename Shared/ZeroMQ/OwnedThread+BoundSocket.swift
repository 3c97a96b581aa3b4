extension OwnedThread {
    /// Starts a thread that owns one socket: it makes the socket, lets `configure` set its options,
    /// binds every endpoint, then runs `serve` and closes the socket when `serve` returns. Returns
    /// the bound endpoints in order (wildcard ports resolved), or throws the first error (a bind to
    /// an address in use, say) without serving.
    public static func serving(
        _ type: SocketType, name: String, endpoints: [String], configure: @escaping @Sendable (Socket) throws -> Void,
        _ serve: @escaping @Sendable (Socket) -> Void
    ) async throws -> (OwnedThread, [String]) {
        try await start(name: name) { ready in
            let socket: Socket
            do {
                socket = try Socket(type)
                try configure(socket)
                var bound: [String] = []
                for endpoint in endpoints {
                    try socket.bind(endpoint)
                    bound.append(try socket.lastEndpoint)
                }
                ready(.success(bound))
            } catch {
                ready(.failure(error))
                return
            }
            serve(socket)
            socket.close()
        }
    }
}
