import CZeroMQ

/// The socket options the platform uses, typed. Each throws a `ZMQError` naming the option.
extension Socket {
    /// How long unsent messages are kept after close, in milliseconds. `close()` sets it to 0 anyway.
    public func setLinger(milliseconds: Int32) throws { try set(ZMQ_LINGER, milliseconds, name: "ZMQ_LINGER") }

    /// The send high-water mark, in messages (0 = unlimited).
    public func setSendHighWaterMark(_ messages: Int32) throws { try set(ZMQ_SNDHWM, messages, name: "ZMQ_SNDHWM") }

    /// The receive high-water mark, in messages (0 = unlimited).
    public func setReceiveHighWaterMark(_ messages: Int32) throws { try set(ZMQ_RCVHWM, messages, name: "ZMQ_RCVHWM") }

    /// The routing id a DEALER/REQ presents to a ROUTER (at most 255 bytes, not starting with 0).
    public func setRoutingID(_ id: Frame) throws { try set(ZMQ_ROUTING_ID, bytes: id, name: "ZMQ_ROUTING_ID") }

    /// SUB: receive messages whose first frame starts with `prefix` ("" = everything).
    public func subscribe(_ prefix: String) throws { try set(ZMQ_SUBSCRIBE, bytes: Frame(frame: prefix), name: "ZMQ_SUBSCRIBE") }

    public func unsubscribe(_ prefix: String) throws { try set(ZMQ_UNSUBSCRIBE, bytes: Frame(frame: prefix), name: "ZMQ_UNSUBSCRIBE") }

    /// PUB/XPUB: make `send` fail with EAGAIN (or block) at the high-water mark instead of silently dropping.
    public func setNoDrop(_ on: Bool) throws { try set(ZMQ_XPUB_NODROP, on ? 1 : 0, name: "ZMQ_XPUB_NODROP") }

    /// XPUB: a one-frame message sent to every subscriber when it connects (and reconnects); it
    /// reaches only subscribers that subscribed to a prefix of it before connecting.
    public func setWelcomeMessage(_ message: String) throws {
        try set(ZMQ_XPUB_WELCOME_MSG, bytes: Frame(frame: message), name: "ZMQ_XPUB_WELCOME_MSG")
    }

    /// XPUB: pass every subscription message upstream, including duplicates.
    public func setVerbose(_ on: Bool) throws { try set(ZMQ_XPUB_VERBOSE, on ? 1 : 0, name: "ZMQ_XPUB_VERBOSE") }

    /// XPUB: subscriptions are not applied on their own: each one is received as a message, and
    /// takes effect for the subscriber that sent it only when `applySubscription` is called for it
    /// (before the next receive). How the bus gives each subscriber only the topics it may hear.
    public func setManualSubscriptions(_ on: Bool) throws { try set(ZMQ_XPUB_MANUAL, on ? 1 : 0, name: "ZMQ_XPUB_MANUAL") }

    /// XPUB with manual subscriptions: applies a subscription (`\u{1}prefix`) or its end (`\u{0}prefix`)
    /// to the subscriber whose message was received last.
    public func applySubscription(_ message: Frame) throws {
        guard let kind = message.first, kind <= 1 else { return }
        try set(
            kind == 1 ? ZMQ_SUBSCRIBE : ZMQ_UNSUBSCRIBE, bytes: Array(message.dropFirst()),
            name: kind == 1 ? "ZMQ_SUBSCRIBE" : "ZMQ_UNSUBSCRIBE")
    }

    /// Messages larger than this many bytes make libzmq drop the connection that sent them
    /// (`-1`: no limit), before any of it is read into a message.
    public func setMaximumMessageSize(_ bytes: Int64) throws {
        var value = bytes
        guard zmq_setsockopt(handle, ZMQ_MAXMSGSIZE, &value, MemoryLayout<Int64>.size) == 0 else {
            throw ZMQError.last("setsockopt ZMQ_MAXMSGSIZE")
        }
    }

    /// The ZAP domain a CURVE server socket asks its context's handler about (RFC 27): the handler
    /// may admit clients differently per domain (the bus's own keys; the device ingest's phones).
    public func setZAPDomain(_ domain: String) throws { try set(ZMQ_ZAP_DOMAIN, bytes: Frame(frame: domain), name: "ZMQ_ZAP_DOMAIN") }

    /// ROUTER: fail with EHOSTUNREACH when sending to a peer that is not connected (instead of dropping).
    public func setRouterMandatory(_ on: Bool) throws { try set(ZMQ_ROUTER_MANDATORY, on ? 1 : 0, name: "ZMQ_ROUTER_MANDATORY") }

    /// ROUTER: a new connection with a routing id already in use takes it over (a reconnecting peer
    /// gets its id back at once instead of being refused until the old connection times out).
    public func setRouterHandover(_ on: Bool) throws { try set(ZMQ_ROUTER_HANDOVER, on ? 1 : 0, name: "ZMQ_ROUTER_HANDOVER") }

    /// A property announced to every peer in ZMTP's handshake, which the peer reads on each message
    /// from this socket (`receive(dontWait:property:)`). libzmq wants `X-` names. ZMQ_METADATA (95)
    /// is built into libzmq 4.3's library but still marked a draft in its header, hence the number;
    /// a library without it throws here, and its peers never see the property.
    public func setMetadata(_ name: String, _ value: String) throws {
        try set(95, bytes: Frame(frame: "\(name):\(value)"), name: "ZMQ_METADATA")
    }

    /// How many connections may wait to be accepted (listen(2)'s backlog; libzmq's default is 100,
    /// too few when thousands of devices connect at once).
    public func setListenBacklog(_ connections: Int32) throws { try set(ZMQ_BACKLOG, connections, name: "ZMQ_BACKLOG") }

    /// Queue messages only to completed connections (no queueing for peers not yet connected).
    public func setImmediate(_ on: Bool) throws { try set(ZMQ_IMMEDIATE, on ? 1 : 0, name: "ZMQ_IMMEDIATE") }

    /// ZMTP heartbeats: send a PING every `interval` ms, drop the connection when nothing arrives for
    /// `timeout` ms, and ask the peer to do the same after `ttl` ms.
    public func setHeartbeat(intervalMilliseconds interval: Int32, timeoutMilliseconds timeout: Int32, ttlMilliseconds ttl: Int32) throws {
        try set(ZMQ_HEARTBEAT_IVL, interval, name: "ZMQ_HEARTBEAT_IVL")
        try set(ZMQ_HEARTBEAT_TIMEOUT, timeout, name: "ZMQ_HEARTBEAT_TIMEOUT")
        try set(ZMQ_HEARTBEAT_TTL, ttl, name: "ZMQ_HEARTBEAT_TTL")
    }

    /// How soon a lost connection is retried, and the ceiling of its exponential back-off, in ms.
    public func setReconnectInterval(milliseconds: Int32, maxMilliseconds: Int32 = 0) throws {
        try set(ZMQ_RECONNECT_IVL, milliseconds, name: "ZMQ_RECONNECT_IVL")
        try set(ZMQ_RECONNECT_IVL_MAX, maxMilliseconds, name: "ZMQ_RECONNECT_IVL_MAX")
    }

    /// How long a blocking send waits at the high-water mark before failing with EAGAIN (-1 = for ever).
    public func setSendTimeout(milliseconds: Int32) throws { try set(ZMQ_SNDTIMEO, milliseconds, name: "ZMQ_SNDTIMEO") }

    /// How long a blocking receive waits before failing with EAGAIN (-1 = for ever).
    public func setReceiveTimeout(milliseconds: Int32) throws { try set(ZMQ_RCVTIMEO, milliseconds, name: "ZMQ_RCVTIMEO") }

    /// The descriptor libzmq signals when this socket's events may have changed (ZMQ_FD). It is
    /// edge-triggered: after it fires, read `pendingEvents` and receive until nothing is left.
    /// Polling it with plain poll(2) touches no libzmq state, so another thread may do that while
    /// the socket is in use under a lock.
    public var signalDescriptor: Int32 {
        get throws { try int32Option(ZMQ_FD, name: "ZMQ_FD") }
    }

    /// Whether a message can be received now (ZMQ_EVENTS has ZMQ_POLLIN). Also re-arms the
    /// `signalDescriptor` edge.
    public var canReceive: Bool {
        get throws { try int32Option(ZMQ_EVENTS, name: "ZMQ_EVENTS") & Int32(ZMQ_POLLIN) != 0 }
    }

    // MARK: Raw access

    private func checkOpen(_ option: String) throws {
        if isClosed { throw ZMQError(code: ENOTSOCK, operation: "\(option) on closed \(type)") }
    }

    public func set(_ option: Int32, _ value: Int32, name: String) throws {
        try checkOpen(name)
        var value = value
        guard zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size) == 0 else {
            throw ZMQError.last("set \(name) on \(type)")
        }
    }

    public func set(_ option: Int32, bytes: Frame, name: String) throws {
        try checkOpen(name)
        let rc = bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        guard rc == 0 else { throw ZMQError.last("set \(name) on \(type)") }
    }

    public func int32Option(_ option: Int32, name: String) throws -> Int32 {
        try checkOpen(name)
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, option, &value, &size) == 0 else { throw ZMQError.last("get \(name) on \(type)") }
        return value
    }

    public func stringOption(_ option: Int32, name: String) throws -> String {
        try checkOpen(name)
        var buffer = [CChar](repeating: 0, count: 1024)
        var size = buffer.count
        guard zmq_getsockopt(handle, option, &buffer, &size) == 0 else { throw ZMQError.last("get \(name) on \(type)") }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
