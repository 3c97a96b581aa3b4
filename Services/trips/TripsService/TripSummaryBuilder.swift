import Foundation
import Geo
import RideModels

/// Builds a completed trip's summary from the device's stored track (tracking's history), so a
/// restart of `ride-trips` in the middle of a trip loses nothing.
public enum TripSummaryBuilder {
    /// Points closer than this to the simplified line are left out of the summary's route.
    public static let routeTolerance = 5.0

    public static func summary(track: [TrackPoint], deviceID: String, startedAt: Date, completedAt: Date, arrival: TripSummary.Marker?)
        -> TripSummary
    {
        let ordered = track.sorted { $0.recordedAt < $1.recordedAt }
        var odometer = TrackOdometer()
        var kept: [GeoPoint] = []
        for fix in ordered where odometer.add(fix) { kept.append(fix.point) }
        let route = Polyline(points: kept).simplified(tolerance: routeTolerance)
        return TripSummary(
            locations: .init(coordinates: route.geoJSONCoordinates), distance: Int(odometer.distance.rounded()),
            duration: Int(max(0, completedAt.timeIntervalSince(startedAt)).rounded()), startedAt: startedAt,
            completedAt: completedAt, deviceID: deviceID, markers: arrival.map { [$0] } ?? [])
    }
}
