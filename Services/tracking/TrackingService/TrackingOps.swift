import Bus
import Foundation
import RideContract
import RideModels
import Wire

/// The `tracking` service's ops on the broker.
///
/// Unsharded, one router answers `tracking` from this process's devices. Sharded (`--shard K/N`),
/// a process answers two services: its peer service `tracking.shard.K`, from its own devices only,
/// and the public `tracking`, which passes a device op on to the shard that keeps the device and
/// asks every shard for `nearby` (callers — dispatch, the gateway, trips — see one service).
enum TrackingOps {
    /// The ops answered from this process's own devices, as `service`. A device of another shard is
    /// refused with 409 `wrong_shard` naming its shard — never passed on, so a request cannot loop
    /// between shards.
    static func localRouter(service: String, pipeline: IngestPipeline, store: any TrackingStore, instance: String) -> OpRouter {
        let state = pipeline.state
        let ownership = pipeline.ownership
        var router = OpRouter(service: service, instance: instance)
        // Keyed requests are remembered where the device is kept: the public router of a sharded
        // process passes them here (or to the owner's peer service) unclaimed.
        router.requests = store.requestLog

        router.on(Ops.Tracking.nearby) { (query: NearbyQuery, _) -> NearbyResult in
            NearbyResult(devices: state.nearby(query, now: Date()))
        }

        router.on(Ops.Tracking.device) { (params: DeviceParams, _) -> DeviceInfo in
            try checkKept(params.deviceID, by: ownership)
            try await pipeline.refreshIfNeeded(params.deviceID)
            guard let record = state.record(params.deviceID) else { throw unknownDevice(params.deviceID) }
            return record.info
        }

        router.on(Ops.Tracking.setAvailability) { (params: SetAvailabilityParams, _) -> DeviceInfo in
            try checkKept(params.deviceID, by: ownership)
            try await pipeline.refreshIfNeeded(params.deviceID)
            guard let change = state.setAvailability(deviceID: params.deviceID, available: params.available, now: Date()) else {
                throw unknownDevice(params.deviceID)
            }
            if !change.events.isEmpty {
                try await pipeline.writer.write([TrackingWrite(record: change.record)], events: change.events)
            }
            return change.record.info
        }

        router.on(Ops.Tracking.locations) { (params: LocationsParams, _) -> LocationHistory in
            try checkKept(params.deviceID, by: ownership)
            try await pipeline.refreshIfNeeded(params.deviceID)
            guard state.record(params.deviceID) != nil else { throw unknownDevice(params.deviceID) }
            let limit = params.limit ?? 1000
            guard (1...10_000).contains(limit) else {
                throw ServiceError.unprocessable("invalid_params", "limit: must be from 1 to 10000, got \(limit)")
            }
            if let from = params.from, let to = params.to, from > to {
                throw ServiceError.unprocessable("invalid_params", "from: must not be after to")
            }
            return try await store.history(deviceID: params.deviceID, from: params.from, to: params.to, limit: limit)
        }

        router.on(Ops.Tracking.ingest) { (batch: IngestBatch, _) -> IngestAck in
            guard let deviceID = batch.deviceID else {
                throw ServiceError.unprocessable("invalid_params", "device_id: required field is missing")
            }
            // The pipeline refuses another shard's device itself (as it does on the ingest socket).
            // A batch that carries a device credential (a phone's, relayed by the gateway's live
            // socket) is held to it as on the ingest socket; without one the caller vouches.
            return try await withCheckedThrowingContinuation { continuation in
                pipeline.accept(deviceID: deviceID, batch: batch, now: Date(), vouched: batch.deviceCredential == nil) { result in
                    continuation.resume(with: result.mapError { $0 as any Error })
                }
            }
        }
        return router
    }

    /// The public `tracking` service of a sharded process: a device op for this shard's device goes
    /// to `local`, any other to its shard's peer service (its reply returned as it is); `nearby`
    /// merges this shard's answer with every other shard's.
    static func publicRouter(local: OpRouter, state: TrackingState, peers: ShardPeers, instance: String) -> OpRouter {
        var router = OpRouter(service: BusContract.Service.tracking, instance: instance)
        let ownership = peers.ownership

        router.on(Ops.Tracking.nearby) { (query: NearbyQuery, context) -> NearbyResult in
            async let others = peers.nearby(query, logger: context.logger)
            let own = state.nearby(query, now: Date())
            return NearbyResult(devices: NearbyMerge.merge([own] + (await others), limit: query.limit ?? NearbyQuery.defaultLimit))
        }

        for op in Ops.Tracking.deviceOps {
            router.onRaw(op) { json, context in
                // Params without a readable device id are the local router's to refuse, as unsharded.
                if let deviceID = DeviceIDPeek.deviceID(in: json) {
                    let owner = ownership.owner(of: deviceID)
                    if owner != ownership.shard.index { return try await peers.forward(op, json: json, deviceID: deviceID, to: owner) }
                }
                return await local.reply(to: ServiceRequest(op: op, json: json), logger: context.logger)
            }
        }
        return router
    }

    static func checkKept(_ deviceID: String, by ownership: ShardOwnership) throws {
        if !ownership.owns(deviceID) { throw wrongShard(deviceID, ownership: ownership) }
    }

    /// The refusal of another shard's device, by an op or on the ingest socket (whose error frame
    /// names the owner in `shard` too, for the SDK to follow).
    static func wrongShard(_ deviceID: String, ownership: ShardOwnership) -> ServiceError {
        let shard = ownership.shard
        let owner = ownership.owner(of: deviceID)
        let home = shard.shards.owner(of: deviceID)
        let serving =
            owner == home
            ? "kept by tracking shard \(owner)/\(shard.shards.count)"
            : "served by tracking shard \(owner)/\(shard.shards.count) while its shard \(home) is down"
        return .conflict(
            "wrong_shard",
            """
            device '\(deviceID)' is \(serving) (service \(BusContract.Service.trackingShard(owner))), not by this shard \(shard): \
            ask the service '\(BusContract.Service.tracking)', or send the device's batches to the ingest endpoint of shard \(owner) \
            (entry \(owner), counted from 0, of the SDK's RIDE_TRACKING_INGEST list)
            """)
    }

    static func unknownDevice(_ id: String) -> ServiceError {
        .notFound("unknown_device", "no device '\(id)' has reported to tracking")
    }
}

/// The `device_id` of a device op's params, read without decoding the rest for its meaning.
enum DeviceIDPeek {
    @WireKeys
    private struct Params: Decodable {
        var deviceID: String?
    }

    static func deviceID(in json: [UInt8]) -> String? {
        (try? JSONCoding.decode(Params.self, from: json))?.deviceID
    }
}
