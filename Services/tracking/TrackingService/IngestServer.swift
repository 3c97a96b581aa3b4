import Bus
import Foundation
import Logging
import RideModels
import Synchronization
import Wire
import ZeroMQ

/// The device ingest socket: a ROUTER that SDKs connect to with a DEALER. A device sends
/// `["batch"][IngestBatch]` naming itself in `device_id`, and gets `["ack"][IngestAck]` once the
/// batch is stored, or `["error"][{"error":{…},"batch_id":…}]`, on the connection that sent it.
/// Commands for a device (`device.command.<id>` on the bus) reach it as `["command"][{"command":…}]`
/// — the silent push of this platform — on the one connection that last proved the device's
/// credential (`IngestSlots`), never on one that merely names the device.
///
/// A routing id names a connection, not a device: the SDK picks a random 16 bytes, which only it
/// and this socket know. `ZMQ_ROUTER_HANDOVER` stays on so that a device reconnecting with its id
/// gets it back at once (rather than being refused until its half-open old connection times out);
/// taking a connection over needs that id, which is never sent to anyone else nor logged (the logs
/// name a connection by a hash), and a stranger presenting a device id as routing id gets that id's
/// connection and nothing of the device's. `ZMQ_ROUTER_MANDATORY` tells us when a device is not
/// connected (its command is dropped).
///
/// Before anything of a message is read: the connection's rate (`ConnectionRateLimiter`), the
/// frame's size (`ZMQ_MAXMSGSIZE` drops far bigger ones unread, `batch_too_large` answers the rest).
/// Every refusal names what is wrong, is counted, and is logged once per connection and minute.
///
/// One thread owns the socket.
public final class IngestServer: Sendable {
    enum Command: Sendable {
        /// An answer to `connection`; `proven`: its batch showed `deviceID`'s credential, so the
        /// connection now speaks for the device.
        case answer(connection: Frame, frames: [Frame], proven: String?)
        case command(deviceID: String, DeviceCommandEvent)
    }

    public struct Stats: Sendable {
        public var messages: UInt64 = 0
        public var badMessages: UInt64 = 0
        public var rateLimited: UInt64 = 0
        public var commandsDelivered: UInt64 = 0
        public var commandsUndeliverable: UInt64 = 0
    }

    /// How much one connection may send: `rate` batches a second, `burst` at once, for at most
    /// `connections` connections tracked at a time.
    public struct RateLimit: Sendable {
        public var rate: Double = 20
        public var burst: Double = 40
        public var connections = 100_000
        public init() {}
    }

    /// Above this many locations waiting to be written, the socket is not read (devices wait, and
    /// their SDKs keep their locations): memory stays bounded when the disk is slower than the load.
    public static let backlogLimit = 200_000
    /// Devices whose slot is kept (more than a shard streams at once).
    static let slotCapacity = 200_000

    private let pipeline: IngestPipeline
    private let mailbox = Mailbox<Command>()
    private let stopFlag = StopFlag()
    private let stats = Mutex(Stats())
    private let loop = Mutex<OwnedThread?>(nil)
    private let slots = Mutex(IngestSlots(capacity: IngestServer.slotCapacity))
    private let limiter: Mutex<ConnectionRateLimiter>
    private let rejections = RejectionLog("ingest message refused")
    private let logger: Logger

    public init(pipeline: IngestPipeline, rateLimit: RateLimit = RateLimit(), logger: Logger) {
        self.pipeline = pipeline
        self.logger = logger
        limiter = Mutex(ConnectionRateLimiter(rate: rateLimit.rate, burst: rateLimit.burst, capacity: rateLimit.connections))
    }

    public var statistics: Stats { stats.withLock { $0 } }

    /// Binds every endpoint and starts serving; throws the bind error without starting.
    @discardableResult
    public func start(endpoints: [String]) async throws -> [String] {
        let maximumMessage = Int64(pipeline.rules.maximumMessageBytes)
        let (thread, bound) = try await OwnedThread.serving(.router, name: "tracking-ingest", endpoints: endpoints) { socket in
            // With CURVE on, phones bring keys of their own: any key may connect, and the
            // device credential inside says who it is.
            socket.admitsAnyCurveKey = true
            try socket.setRouterHandover(true)
            try socket.setRouterMandatory(true)
            try socket.setMaximumMessageSize(maximumMessage)
            try socket.setListenBacklog(4096)
            // Per connection: a device has one batch in flight; a few queued are plenty, and a
            // flooding peer is held back by TCP instead of filling our memory.
            try socket.setReceiveHighWaterMark(8)
            try socket.setSendHighWaterMark(1000)
        } _: { [self] socket in
            serve(socket)
        }
        loop.withLock { $0 = thread }
        return bound
    }

    /// Sends `command` (with the time it was issued) to the connection that speaks for the device, if any.
    public func deliver(_ command: DeviceCommandEvent, to deviceID: String) {
        mailbox.post(.command(deviceID: deviceID, command))
    }

    public func stop() {
        stopFlag.request()
        mailbox.waker.wake()
    }

    public func join() async { await loop.withLock { $0 }?.join() }

    private func serve(_ socket: Socket) {
        var poller = Poller()
        poller.add(socket)
        poller.add(fileDescriptor: mailbox.waker.fileDescriptor)
        var paused = Poller()
        paused.add(fileDescriptor: mailbox.waker.fileDescriptor)
        while !stopFlag.isRequested {
            do {
                let overloaded = pipeline.writer.backlog > Self.backlogLimit
                if overloaded {
                    // Acknowledgements still go out (they drain the backlog's completions).
                    try paused.poll(timeoutMilliseconds: 5)
                } else {
                    try poller.poll(timeoutMilliseconds: 250)
                }
                for command in mailbox.take() { send(command, on: socket) }
                if overloaded { continue }
                var burst = 0
                while burst < 1024, let frames = try socket.receive(dontWait: true) {
                    burst += 1
                    handle(frames)
                }
            } catch {
                logger.error("ingest socket error", metadata: ["error": "\(error)"])
                if let error = error as? ZMQError, error.isTerminated { return }
            }
        }
        for command in mailbox.take() { send(command, on: socket) }
    }

    private func handle(_ frames: [Frame]) {
        stats.withLock { $0.messages += 1 }
        let connection = frames[0]
        guard limiter.withLock({ $0.admit(connection, now: .now) }) else {
            stats.withLock { $0.rateLimited += 1 }
            let limit = limiter.withLock { ($0.rate, $0.burst) }
            return reject(
                connection, code: "rate_limited",
                message:
                    "this connection sends more than \(Int(limit.0)) batches a second (\(Int(limit.1)) at once); nothing of this one was read, send it again later"
            )
        }
        guard frames.count == 3, frames[1] == Frame(frame: IngestFrame.batch) else {
            return reject(connection, code: "bad_frame", message: "a device sends [\"batch\"][JSON]; got \(frames.count - 1) frames")
        }
        if let problem = pipeline.rules.problem(withBytes: frames[2].count) {
            return reject(connection, code: "batch_too_large", message: "\(problem); nothing of it was read")
        }
        let batch: IngestBatch
        do {
            batch = try JSONCoding.decode(IngestBatch.self, from: frames[2])
        } catch {
            return reject(connection, code: "invalid_batch", message: JSONCoding.describe(error))
        }
        guard let deviceID = batch.deviceID, DeviceIdentity.problem(with: deviceID) == nil else {
            let problem = batch.deviceID.flatMap(DeviceIdentity.problem(with:)) ?? "device_id: required field is missing"
            return reject(
                connection, code: "invalid_device_id", batchID: batch.batchID,
                message: "\(problem): a batch names its device in device_id (the connection's routing id names no device)")
        }
        if let violation = batch.ruleViolation {
            return reject(connection, code: "invalid_batch", batchID: batch.batchID, message: violation)
        }
        let (mailbox, rejections, logger, ownership) = (self.mailbox, self.rejections, self.logger, pipeline.ownership)
        pipeline.accept(deviceID: deviceID, batch: batch, now: Date()) { result in
            switch result {
            case .success(let ack):
                let frames = [Frame(frame: IngestFrame.ack), (try? JSONCoding.encode(ack)) ?? Array("{}".utf8)]
                mailbox.post(.answer(connection: connection, frames: frames, proven: deviceID))
            case .failure(let error):
                // Shed load (busy) is logged here, once per connection and minute; the pipeline logs the rest.
                if error.status == Status.unavailable { rejections.note(error.code, from: Self.tag(connection), logger: logger) }
                // Another shard's device: the SDK follows `shard` to the ingest endpoint of the one serving it.
                let owner = error.code == "wrong_shard" ? ownership.owner(of: deviceID) : nil
                let frames = Self.errorFrames(code: error.code, message: error.message, batchID: batch.batchID, shard: owner)
                mailbox.post(.answer(connection: connection, frames: frames, proven: nil))
            }
        }
    }

    private func reject(_ connection: Frame, code: String, batchID: UInt64? = nil, message: String) {
        stats.withLock { $0.badMessages += 1 }
        pipeline.countRefused()
        rejections.note("\(code): \(message.prefix(200))", from: Self.tag(connection), logger: logger)
        mailbox.post(.answer(connection: connection, frames: Self.errorFrames(code: code, message: message, batchID: batchID), proven: nil))
    }

    /// A connection as the logs name it: a hash of its routing id, which must stay secret (whoever
    /// knows it may take the connection over).
    static func tag(_ connection: Frame) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in connection { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "connection-" + String(hash, radix: 16)
    }

    static func errorFrames(code: String, message: String, batchID: UInt64?, shard: Int? = nil) -> [Frame] {
        var body: [String: JSONValue] = ["error": ["code": .string(code), "message": .string(message)]]
        if let batchID { body["batch_id"] = .number(Double(batchID)) }
        if let shard { body["shard"] = .number(Double(shard)) }
        return [Frame(frame: IngestFrame.error), (try? JSONCoding.encode(JSONValue.object(body))) ?? []]
    }

    private func send(_ command: Command, on socket: Socket) {
        let connection: Frame
        let frames: [Frame]
        switch command {
        case .answer(let to, let answer, let proven):
            if let proven { slots.withLock { $0.proven(proven, by: to, at: .now) } }
            connection = to
            frames = answer
        case .command(let deviceID, let deviceCommand):
            guard let slot = slots.withLock({ $0.connection(of: deviceID) }) else {
                stats.withLock { $0.commandsUndeliverable += 1 }
                return
            }
            connection = slot
            frames = [Frame(frame: IngestFrame.command), (try? JSONCoding.encode(deviceCommand)) ?? []]
        }
        do {
            try socket.send(message: [connection] + frames, dontWait: true)
            if case .command = command { stats.withLock { $0.commandsDelivered += 1 } }
        } catch let error as ZMQError where error.isHostUnreachable || error.isAgain {
            // The device is not connected (or not reading): an ack is resent by the SDK's retry, a
            // command waits for the device's next sync.
            if case .command = command { stats.withLock { $0.commandsUndeliverable += 1 } }
        } catch {
            logger.error("ingest send failed", metadata: ["error": "\(error)"])
        }
    }
}
