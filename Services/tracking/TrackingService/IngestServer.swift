import Bus
import Foundation
import Logging
import RideModels
import Synchronization
import Wire
import ZeroMQ

/// The device ingest socket: a ROUTER that SDKs connect to with a DEALER whose routing id is their
/// device id. A device sends `["batch"][IngestBatch]` and gets `["ack"][IngestAck]` once the batch
/// is stored, or `["error"][{"error":{…},"batch_id":…}]`. Commands for a device
/// (`device.command.<id>` on the bus) reach it here as `["command"][{"command":…}]` — the silent
/// push of this platform.
///
/// One thread owns the socket. `ZMQ_ROUTER_HANDOVER` lets a reconnecting device take its id back at
/// once; `ZMQ_ROUTER_MANDATORY` tells us when a device is not connected (its command is dropped).
public final class IngestServer: Sendable {
    enum Command: Sendable {
        case send(identity: Frame, frames: [Frame])
        case command(deviceID: String, DeviceCommandEvent)
    }

    public struct Stats: Sendable {
        public var messages: UInt64 = 0
        public var badMessages: UInt64 = 0
        public var commandsDelivered: UInt64 = 0
        public var commandsUndeliverable: UInt64 = 0
    }

    /// Above this many locations waiting to be written, the socket is not read (devices wait, and
    /// their SDKs keep their locations): memory stays bounded when the disk is slower than the load.
    public static let backlogLimit = 200_000

    private let pipeline: IngestPipeline
    private let mailbox = Mailbox<Command>()
    private let stopFlag = StopFlag()
    private let stats = Mutex(Stats())
    private let loop = Mutex<OwnedThread?>(nil)
    private let logger: Logger

    public init(pipeline: IngestPipeline, logger: Logger) {
        self.pipeline = pipeline
        self.logger = logger
    }

    public var statistics: Stats { stats.withLock { $0 } }

    /// Binds every endpoint and starts serving; throws the bind error without starting.
    @discardableResult
    public func start(endpoints: [String]) async throws -> [String] {
        let (thread, bound) = try await OwnedThread.start(name: "tracking-ingest") { [self] ready in
            let socket: Socket
            var bound: [String] = []
            do {
                socket = try Socket(.router)
                try socket.setRouterHandover(true)
                try socket.setRouterMandatory(true)
                try socket.setListenBacklog(4096)
                // Per connection: a device has one batch in flight; a few queued are plenty, and a
                // flooding peer is held back by TCP instead of filling our memory.
                try socket.setReceiveHighWaterMark(8)
                try socket.setSendHighWaterMark(1000)
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
        loop.withLock { $0 = thread }
        return bound
    }

    /// Sends `command` (with the time it was issued) to the device, if it is connected.
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
        let identity = frames[0]
        guard let deviceID = identity.utf8String, DeviceIdentity.problem(with: deviceID) == nil else {
            reject(
                identity, code: "invalid_device_id",
                message: "the connection's routing id must be the device id (printable ASCII, at most 128 bytes); set ZMQ_ROUTING_ID before connecting")
            return
        }
        guard frames.count == 3, frames[1] == Frame(frame: IngestFrame.batch) else {
            reject(identity, code: "bad_frame", message: "a device sends [\"batch\"][JSON]; got \(frames.count - 1) frames")
            return
        }
        let batch: IngestBatch
        do {
            batch = try JSONCoding.decode(IngestBatch.self, from: frames[2])
        } catch {
            reject(identity, code: "invalid_batch", message: JSONCoding.describe(error))
            return
        }
        let mailbox = self.mailbox
        pipeline.accept(deviceID: deviceID, batch: batch, now: Date()) { result in
            let frames: [Frame]
            switch result {
            case .success(let ack):
                frames = [Frame(frame: IngestFrame.ack), (try? JSONCoding.encode(ack)) ?? Array("{}".utf8)]
            case .failure(let error):
                frames = Self.errorFrames(code: error.code, message: error.message, batchID: batch.batchID)
            }
            mailbox.post(.send(identity: identity, frames: frames))
        }
    }

    private func reject(_ identity: Frame, code: String, message: String) {
        stats.withLock { $0.badMessages += 1 }
        pipeline.countRefused()
        logger.warning("ingest message refused", metadata: ["code": "\(code)", "message": "\(message)"])
        mailbox.post(.send(identity: identity, frames: Self.errorFrames(code: code, message: message, batchID: nil)))
    }

    static func errorFrames(code: String, message: String, batchID: UInt64?) -> [Frame] {
        var body: [String: JSONValue] = ["error": ["code": .string(code), "message": .string(message)]]
        if let batchID { body["batch_id"] = .number(Double(batchID)) }
        return [Frame(frame: IngestFrame.error), (try? JSONCoding.encode(JSONValue.object(body))) ?? []]
    }

    private func send(_ command: Command, on socket: Socket) {
        let identity: Frame
        let frames: [Frame]
        switch command {
        case .send(let to, let message):
            identity = to
            frames = message
        case .command(let deviceID, let deviceCommand):
            identity = Frame(frame: deviceID)
            frames = [Frame(frame: IngestFrame.command), (try? JSONCoding.encode(deviceCommand)) ?? []]
        }
        do {
            try socket.send(message: [identity] + frames, dontWait: true)
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
