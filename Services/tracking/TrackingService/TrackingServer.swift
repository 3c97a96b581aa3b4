import ArgumentParser
import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceKit
import ServiceLifecycle
import ServiceStorage
import Wire
import ZeroMQ

/// The running tracking service.
public struct TrackingServer: Sendable {
    public let settings: TrackingSettings

    public init(settings: TrackingSettings) { self.settings = settings }

    public func run() async throws {
        let host = ServiceHost(.tracking, settings: settings)
        let (logger, metrics) = (host.logger, host.metrics)
        // A shard starts with its own devices (in PostgreSQL every shard's devices share one table).
        let shard = settings.shard
        var devices: [DeviceRecord] = []
        let store: any TrackingStore = try await settings.database.open(
            program: host.program, sqlite: { try SQLiteTrackingStore(path: $0) },
            postgres: { try await PostgresTrackingStore.open(url: $0, logger: logger) },
            prepare: { devices = try await $0.loadDevices().filter { shard.owns($0.id) } })
        // Handing over, another shard may have served these devices while this one was down: each
        // is read again before its next batch (`IngestPipeline.refreshIfNeeded`).
        let state = TrackingState(devices: devices, stale: settings.handsOver)
        let ownership = ShardOwnership(shard: settings.shard)
        let publisher = try await EventPublisher(endpoint: settings.pub, source: BusContract.Service.tracking, logger: logger)
        let writer = StoreWriter(store: store, publisher: publisher, logger: logger)
        let asksUsers = settings.verifiesDeviceOwners || settings.requiresDeviceCredentials
        let ownersClient = asksUsers ? try await host.client(broker: settings.broker) : nil
        let owners = settings.verifiesDeviceOwners ? ownersClient.map(UsersDeviceOwners.init(client:)) : nil
        let recheck = settings.deviceCredentialRecheck
        let credentials =
            settings.requiresDeviceCredentials
            ? ownersClient.map {
                DeviceCredentialQueue(
                    check: DeviceCredentialCheck(verifier: UsersDeviceCredentials(client: $0), recheckAfter: recheck, logger: logger))
            } : nil
        let pipeline = IngestPipeline(
            state: state, writer: writer, rules: settings.rules, ownership: ownership, store: settings.handsOver ? store : nil,
            publishableKeys: settings.publishableKeys, owners: owners, credentials: credentials, logger: logger)
        let ingest = IngestServer(pipeline: pipeline, logger: logger)
        do {
            try await ingest.start(endpoints: settings.ingest)
        } catch {
            await writer.close()
            await publisher.close()
            let endpoint = (error as? ZMQError)?.operation.components(separatedBy: " to ").last ?? ""
            throw exitWithError(
                "cannot bind device ingest (--ingest) to \(endpoint): \((error as? ZMQError)?.message ?? "\(error)")",
                program: host.program, code: ExitCodes.unavailable)
        }
        let (workers, peers) = try await Self.workers(settings: settings, pipeline: pipeline, store: store, host: host)
        let commandEvents = try await EventSubscriber<DeviceCommandEvent>(
            endpoint: settings.sub, prefixes: [Events.deviceCommand.topic], options: .platform, logger: logger)
        host.needsBus([commandEvents], at: settings.sub)
        let commands = DeviceCommandForwarder(
            subscriber: commandEvents, ingest: ingest, state: state, writer: writer, ownership: ownership, logger: logger)
        let suspensionEvents = try await EventSubscriber<UserSuspended>(
            endpoint: settings.sub, prefixes: [Events.userSuspended.topic], options: .platform, logger: logger)
        let lapseEvents = try await EventSubscriber<DriverApprovalLapsed>(
            endpoint: settings.sub, prefixes: [Events.userApprovalLapsed.topic], options: .platform, logger: logger)
        host.needsBus([suspensionEvents, lapseEvents], at: settings.sub)
        let suspensions = SuspensionListener(
            subscriber: suspensionEvents, lapses: lapseEvents, credentials: credentials?.check, state: state, writer: writer,
            ownership: ownership, logger: logger)
        let sweeper = InactivitySweeper(state: state, writer: writer, inactiveAfter: settings.inactiveAfter)
        TrackingMetrics(metrics: metrics, state: state, pipeline: pipeline, ingest: ingest, writer: writer, peers: peers).register()
        let settings = self.settings
        // Stopped in reverse: health first, then requests, sweeps, commands, ingest; the writer
        // stores what is queued and the publisher sends it before the process ends.
        let storage = ShutdownHook {
            await peers?.close()
            await ownersClient?.close()
            await writer.close()
            await publisher.close()
            logger.info("tracking stopped")
        }
        let ingestHook = ShutdownHook {
            ingest.stop()
            await ingest.join()
        }
        let ready: Logger.Metadata = [
            "shard": "\(settings.shard)", "ingest": "\(settings.ingest.joined(separator: ","))", "broker": "\(settings.broker)",
            "devices": "\(devices.count)", "database": "\(settings.database)",
        ]
        let credentialChecks: [any Service] = credentials.map { [$0] } ?? []
        try await host.run([storage, ingestHook, commands, suspensions, sweeper] + credentialChecks + workers, ready: ready) {
            let counts = state.counts
            let stats = pipeline.statistics
            return host.health([
                "shard": .string(settings.shard.description),
                "live_shards": .array(ownership.liveShards.sorted().map { .number(Double($0)) }),
                "devices": .number(Double(counts.devices)), "active": .number(Double(counts.active)),
                "indexed": .number(Double(counts.indexed)), "ingest": .array(settings.ingest.map(JSONValue.string)),
                "accepted_locations": .number(Double(stats.acceptedLocations)),
                "rejected_locations": .number(Double(stats.rejectedLocations)),
                "refused_batches": .number(Double(stats.refusedBatches)),
            ])
        }
    }
}

extension TrackingServer {
    /// The request side. Unsharded: `tracking`, answered from this process's devices. Sharded: the
    /// peer service `tracking.shard.K` (this shard's devices only) and the public `tracking`, which
    /// reaches the other shards through the broker.
    static func workers(
        settings: TrackingSettings, pipeline: IngestPipeline, store: any TrackingStore, host: ServiceHost
    ) async throws -> (workers: [any Service], peers: ShardPeers?) {
        let instance = host.instance
        let worker = { (router: OpRouter) in host.worker(broker: settings.broker, router: router, concurrency: settings.concurrency) }
        guard settings.shard.isSharded else {
            return (
                [
                    worker(
                        TrackingOps.localRouter(service: BusContract.Service.tracking, pipeline: pipeline, store: store, instance: instance)
                    )
                ], nil
            )
        }
        var peerOptions = MDPClient.Options()
        peerOptions.attempts = 1
        let peers = ShardPeers(ownership: pipeline.ownership, client: try await host.client(broker: settings.broker, options: peerOptions))
        let liveness: [any Service] =
            settings.handsOver ? [ShardLiveness(peers: peers, state: pipeline.state, store: store, logger: host.logger)] : []
        let local = TrackingOps.localRouter(
            service: BusContract.Service.trackingShard(settings.shard.index), pipeline: pipeline, store: store, instance: instance)
        return (
            [worker(local), worker(TrackingOps.publicRouter(local: local, state: pipeline.state, peers: peers, instance: instance))]
                + liveness, peers
        )
    }
}

/// Forwards `device.command.<id>` from the bus to the device's ingest connection. Every shard hears
/// every command (a device's topic says nothing of its shard); only the device's own shard, where
/// it connects, passes it on — the others would only count it undeliverable. That shard also keeps
/// a tracking command as the platform's word on the device's tracking (`DeviceRecord.platformTracking`),
/// which answers the device's sync.
struct DeviceCommandForwarder: Service {
    let subscriber: EventSubscriber<DeviceCommandEvent>
    let ingest: IngestServer
    let state: TrackingState
    let writer: StoreWriter
    let ownership: ShardOwnership
    let logger: Logger

    func run() async throws {
        await subscriber.eachEvent { received in
            let deviceID = String(received.topic.dropFirst(Events.deviceCommand.topic.count))
            guard ownership.owns(deviceID) else { return }
            let command = received.event.data
            let kept = keep(command, for: deviceID)
            ingest.deliver(command, to: deviceID)
            guard let kept else { return }
            do {
                try await writer.write([TrackingWrite(record: kept.record)], events: [])
            } catch {
                logger.warning("a tracking command could not be stored", metadata: ["device": "\(deviceID)", "error": "\(error)"])
            }
        }
    }
}

extension DeviceCommandForwarder {
    /// Keeps a start or stop command as the platform's word (before the device hears it, so a sync
    /// that follows the command is answered with it); nil when nothing changed.
    func keep(_ command: DeviceCommandEvent, for deviceID: String) -> DeviceChange? {
        guard command.command != .sync else { return nil }
        let change = state.command(deviceID: deviceID, tracking: command.command == .startTracking, issuedAt: command.issuedAt ?? Date())
        if change == nil {
            logger.info(
                "a tracking command for an unknown device, or older than the last one; not kept", metadata: ["device": "\(deviceID)"])
        }
        return change
    }
}

/// Marks devices inactive after silence, a few times per silence period.
struct InactivitySweeper: Service {
    let state: TrackingState
    let writer: StoreWriter
    let inactiveAfter: TimeInterval

    func run() async throws {
        let interval = Duration.milliseconds(Int(max(200, min(5000, inactiveAfter * 250))))
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: interval)
            let changes = state.sweep(now: Date(), inactiveAfter: inactiveAfter)
            guard !changes.isEmpty else { continue }
            writer.submit(
                StoreWriter.Job(
                    writes: changes.map { TrackingWrite(record: $0.record, intentsChanged: false) }, events: changes.flatMap(\.events)))
        }
    }
}

/// Tracking's Prometheus metrics, refreshed on each scrape.
struct TrackingMetrics: Sendable {
    let metrics: ServiceMetrics
    let state: TrackingState
    let pipeline: IngestPipeline
    let ingest: IngestServer
    let writer: StoreWriter
    let peers: ShardPeers?

    func register() {
        let accepted = metrics.deltaCounter(RideMetric.locationsAccepted)
        let rejected = metrics.deltaCounter(RideMetric.locationsRejected)
        let batches = metrics.deltaCounter(RideMetric.batches)
        let refused = metrics.deltaCounter(RideMetric.refusedBatches)
        let written = metrics.deltaCounter(RideMetric.historyWritten)
        let published = metrics.deltaCounter(RideMetric.eventsPublished)
        let commits = metrics.deltaCounter(RideMetric.commits)
        let failedCommits = metrics.deltaCounter(RideMetric.failedCommits)
        let devices = metrics.gauge(RideMetric.devices)
        let active = metrics.gauge(RideMetric.activeDevices)
        let indexed = metrics.gauge(RideMetric.indexPoints)
        let cells = metrics.gauge(RideMetric.indexCells)
        let forwarded = metrics.deltaCounter(RideMetric.shardForwards)
        let unanswered = metrics.deltaCounter(RideMetric.shardForwardsUnanswered)
        let missing = metrics.deltaCounter(RideMetric.nearbyShardsMissing)
        let (state, pipeline, writer, peers) = (self.state, self.pipeline, self.writer, self.peers)
        metrics.onScrape {
            let counts = pipeline.statistics
            accepted.update(to: counts.acceptedLocations)
            rejected.update(to: counts.rejectedLocations)
            batches.update(to: counts.batches)
            refused.update(to: counts.refusedBatches)
            let stats = writer.statistics
            written.update(to: stats.writtenLocations)
            published.update(to: stats.publishedEvents)
            commits.update(to: stats.commits)
            failedCommits.update(to: stats.failedCommits)
            let sizes = state.counts
            devices.set(Double(sizes.devices))
            active.set(Double(sizes.active))
            indexed.set(Double(sizes.indexed))
            cells.set(Double(sizes.cells))
            let shards = peers?.statistics ?? ShardPeers.Stats()
            forwarded.update(to: shards.forwarded)
            unanswered.update(to: shards.unansweredForwards)
            missing.update(to: shards.missingNearbyShards)
        }
    }
}
