import Bus
import Foundation
import RideModels

/// The `tracking` service's ops on the broker.
enum TrackingOps {
    static func router(pipeline: IngestPipeline, store: any TrackingStore, instance: String) -> OpRouter {
        let state = pipeline.state
        var router = OpRouter(service: BusContract.Service.tracking, instance: instance)

        router.on("nearby") { (query: NearbyQuery, _) -> NearbyResult in
            guard query.radius.isFinite, query.radius > 0, query.radius <= 20_037_509 else {
                throw ServiceError.unprocessable("invalid_params", "radius: must be from 0 (excluded) to 20037509 metres, got \(query.radius)")
            }
            if let limit = query.limit, !(1...1000).contains(limit) {
                throw ServiceError.unprocessable("invalid_params", "limit: must be from 1 to 1000, got \(limit)")
            }
            if let hours = query.lastUpdatedWithin, !(hours.isFinite && hours > 0) {
                throw ServiceError.unprocessable("invalid_params", "last_updated_within: must be a positive number of hours, got \(hours)")
            }
            return NearbyResult(devices: state.nearby(query, now: Date()))
        }

        router.on("device") { (params: DeviceParams, _) -> DeviceInfo in
            guard let record = state.record(params.deviceID) else { throw unknownDevice(params.deviceID) }
            return record.info
        }

        router.on("set_availability") { (params: SetAvailabilityParams, _) -> DeviceInfo in
            guard let change = state.setAvailability(deviceID: params.deviceID, available: params.available, now: Date()) else {
                throw unknownDevice(params.deviceID)
            }
            if !change.events.isEmpty {
                try await pipeline.writer.write([TrackingWrite(record: change.record)], events: change.events)
            }
            return change.record.info
        }

        router.on("locations") { (params: LocationsParams, _) -> LocationHistory in
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

        router.on("ingest") { (batch: IngestBatch, _) -> IngestAck in
            guard let deviceID = batch.deviceID else {
                throw ServiceError.unprocessable("invalid_params", "device_id: required field is missing")
            }
            return try await withCheckedThrowingContinuation { continuation in
                pipeline.accept(deviceID: deviceID, batch: batch, now: Date()) { result in
                    continuation.resume(with: result.mapError { $0 as any Error })
                }
            }
        }
        return router
    }

    static func unknownDevice(_ id: String) -> ServiceError {
        .notFound("unknown_device", "no device '\(id)' has reported to tracking")
    }
}
