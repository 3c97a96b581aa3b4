import Foundation
import Logging
import Synchronization
import ZeroMQ

/// The one thread of the SDK: it owns every device's connection to the platform (a DEALER with a
/// random routing id, `ConnectionID`; batches name their device), samples their location sources, sends their batches and applies
/// the answers. A process with one device (an app) or a thousand (a simulator) has one runtime.
public final class DeviceRuntime: Sendable {
    enum Command: Sendable {
        case register(TrackingDevice)
        case unregister(String, CheckedContinuation<Void, Never>)
    }

    public static let shared = DeviceRuntime()

    private let mailbox = Mailbox<Command>()
    private let thread = Mutex<OwnedThread?>(nil)
    private let logger = Logger(label: "TrackingSDK.runtime")
    /// Where the devices' sockets are made: with the process's CURVE keys when it has them.
    let context: Context

    public init(context: Context = .shared) { self.context = context }

    func register(_ device: TrackingDevice) {
        mailbox.post(.register(device))
        thread.withLock { thread in
            guard thread == nil else { return }
            let (mailbox, logger, context) = (self.mailbox, self.logger, self.context)
            thread = OwnedThread(name: "tracking-sdk") {
                var loop = RuntimeLoop(mailbox: mailbox, logger: logger, context: context)
                loop.run()
            }
        }
    }

    func unregister(_ device: TrackingDevice) async {
        await withCheckedContinuation { continuation in
            mailbox.post(.unregister(device.id, continuation))
        }
    }

    /// Something changed (an intent, a sync): look at the devices now.
    func wake() { mailbox.waker.wake() }
}

/// The runtime's thread.
private struct RuntimeLoop {
    struct Slot {
        let device: TrackingDevice
        let socket: Socket
        /// The ingest endpoint the socket is connected to.
        var endpoint: String
        /// When the device next has something to do (`nextDeadline` after its last tick): a
        /// wake-up ticks only the devices due, those the platform answered, and all after a `wake()`.
        var deadline = Date.distantPast
    }

    let mailbox: Mailbox<DeviceRuntime.Command>
    let logger: Logger
    let context: Context
    /// Contexts of our own for ingests that speak CURVE to a process without keys, by server key.
    var curveContexts: [String: Context] = [:]
    var slots: [Int: Slot] = [:]
    var nextToken = 1
    let poller = ReadinessPoller()

    init(mailbox: Mailbox<DeviceRuntime.Command>, logger: Logger, context: Context) {
        self.mailbox = mailbox
        self.logger = logger
        self.context = context
    }

    /// The context for a device's socket: the runtime's, unless that has no CURVE keys and the
    /// device is given the ingest's server key; then one whose sockets use a pair made for the run.
    mutating func context(for configuration: SDKConfiguration) throws -> Context {
        guard context.curve == nil, let serverKey = configuration.ingestServerKey else { return context }
        if let made = curveContexts[serverKey] { return made }
        let made = try EphemeralCurve.context(serverKey: serverKey)
        curveContexts[serverKey] = made
        return made
    }

    mutating func run() {
        mailbox.waker.claimOwnership()
        do {
            try poller.add(fileDescriptor: mailbox.waker.fileDescriptor, token: 0)
        } catch {
            logger.critical("the tracking SDK cannot poll", metadata: ["error": "\(error)"])
            return
        }
        var timeout = 0
        while true {
            let ready = Set(poller.wait(timeoutMilliseconds: timeout))
            let woken = ready.contains(0)
            if woken { mailbox.waker.drain() }
            for command in mailbox.take() { handle(command) }
            let now = Date()
            for token in ready where token > 0 {
                guard let slot = slots[token] else { continue }
                while let frames = try? slot.socket.receive(dontWait: true) {
                    slot.device.receive(frames, now: now)
                }
            }
            var next = Date.distantFuture
            for (token, var slot) in slots {
                if woken || slot.deadline <= now || ready.contains(token) {
                    if let frames = slot.device.tick(now: now) {
                        follow(&slot)
                        do {
                            try slot.socket.send(message: frames, dontWait: true)
                        } catch {
                            slot.device.logger.debug("send failed; the batch is sent again later", metadata: ["error": "\(error)"])
                        }
                        if (try? slot.socket.canReceive) == true { poller.markReady(token) }
                    }
                    slot.deadline = slot.device.nextDeadline(after: now)
                    slots[token] = slot
                }
                next = min(next, slot.deadline)
            }
            let wait = next.timeIntervalSince(Date())
            timeout = wait <= 0 ? 0 : Int(min(1000, (wait * 1000).rounded(.up)))
        }
    }

    /// Moves the slot's connection to the shard its device sends to now, if that changed.
    func follow(_ slot: inout Slot) {
        let wanted = slot.device.endpoint
        guard wanted != slot.endpoint else { return }
        do {
            try? slot.socket.disconnect(slot.endpoint)
            try slot.socket.connect(wanted)
            slot.device.logger.info("sending to another tracking shard", metadata: ["from": "\(slot.endpoint)", "to": "\(wanted)"])
            slot.endpoint = wanted
        } catch {
            slot.device.logger.error("cannot connect to another tracking shard", metadata: ["endpoint": "\(wanted)", "error": "\(error)"])
        }
    }

    mutating func handle(_ command: DeviceRuntime.Command) {
        switch command {
        case .register(let device):
            do {
                let socket = try Socket(.dealer, context: context(for: device.configuration))
                try socket.setRoutingID(ConnectionID.random())
                try socket.setReconnectInterval(milliseconds: 200, maxMilliseconds: 5000)
                let endpoint = device.endpoint
                try socket.connect(endpoint)
                let token = nextToken
                nextToken += 1
                try poller.add(socket, token: token)
                slots[token] = Slot(device: device, socket: socket, endpoint: endpoint)
            } catch {
                device.logger.error(
                    "cannot connect to the platform",
                    metadata: ["endpoints": "\(device.configuration.endpoints.joined(separator: ","))", "error": "\(error)"])
            }
        case .unregister(let id, let continuation):
            for (token, slot) in slots where slot.device.id == id {
                poller.remove(slot.socket)
                slot.socket.close()
                slots[token] = nil
            }
            continuation.resume()
        }
    }
}

/// The routing id of a device's connection: 16 random bytes, the first non-zero (libzmq keeps ids
/// starting with 0 for its own). Never the device id, which is public (share pages, orders): the
/// ingest socket lets a reconnecting peer take over a connection by its id (ZMQ_ROUTER_HANDOVER),
/// so the id must be one nobody else can guess. It proves nothing; the device credential does.
enum ConnectionID {
    static func random() -> Frame {
        var generator = SystemRandomNumberGenerator()
        var id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        id[0] = UInt8.random(in: 1...255, using: &generator)
        return id
    }
}

/// A context whose sockets speak CURVE with a key pair made now, for a phone without keys of its
/// own: the pair says nothing about who the phone is (the ingest admits any key), it only encrypts.
enum EphemeralCurve {
    static func context(serverKey: String) throws -> Context {
        let context = try Context()
        let security = CurveSecurity(identity: try CurveKeyPair.generate(), serverKey: serverKey)
        // `enableCurve` is async only to start a ZAP handler, which a context that never binds has
        // not: the runtime's own thread (no task's) waits the moment it takes.
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await context.enableCurve(security)
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }?.get()
        return context
    }
}
