import Foundation
import Wire

/// The tracking SDK, with the interface of HyperTrack's SDK (`seeds/004`): a driver app calls
/// `HyperTrack.startTracking()`, sets `HyperTrack.isAvailable`, reads `HyperTrack.location`, and
/// subscribes to changes. Everything is static; `HyperTrack` cannot be instantiated.
///
/// Configuration comes from environment variables named like the spec's Info.plist keys
/// (`HyperTrackPublishableKey`, `HyperTrackAllowMockLocations`, `HyperTrackLoggingEnabled`,
/// `HyperTrackAutomaticallyRequestPermissions`), or from a JSON file named by `HYPERTRACK_CONFIG`
/// with the same keys. Without a publishable key, the first use stops the program with a message
/// that says where to put one.
///
/// Behind the static interface is one `TrackingDevice` (`TrackingDevice.default`); programs that
/// simulate many devices (ridectl simulate) create `TrackingDevice`s themselves.
public enum HyperTrack {
    static var device: TrackingDevice { TrackingDevice.default }

    /// A string used to identify a device uniquely.
    public static var deviceID: String { device.id }

    /// You can see the device name in the devices list in the dashboard or through the APIs.
    public static var name: String {
        get { device.name }
        set { device.name = newValue }
    }

    /// This platform's addition: the device credential from the driver's session (`device_credential`
    /// in the sign-in's reply); the platform takes the device's locations only with it.
    public static var deviceCredential: String? {
        get { device.deviceCredential }
        set { device.deviceCredential = newValue }
    }

    /// Any JSON object; the driver app puts the driver's id, name, phone number and car here.
    public static var metadata: JSON.Object {
        get { device.metadata }
        set { device.metadata = newValue }
    }

    /// The device's location, or why there is none.
    public static var location: Result<Location, LocationError> { device.location }

    /// Device's availability for nearby search.
    public static var isAvailable: Bool {
        get { device.isAvailable }
        set { device.isAvailable = newValue }
    }

    /// Reflects tracking intent.
    public static var isTracking: Bool { device.isTracking }

    /// A set of errors that can prevent the app from tracking successfully.
    public static var errors: Set<HyperTrackError> { device.errors }

    /// Expresses an intent to start location tracking.
    public static func startTracking() { device.startTracking() }

    /// Expresses an intent to stop location tracking.
    public static func stopTracking() { device.stopTracking() }

    /// Pins `metadata` to the device's current location; returns that location, or why there is none.
    @discardableResult
    public static func addGeotag(_ metadata: JSON.Object) -> Result<Location, LocationError> { device.addGeotag(metadata) }

    /// Synchronizes tracking and availability intents with the platform now, and lets the platform
    /// decide whether the device tracks: it stops when the driver has no ride, starts when they have
    /// one (the seed's `syncDeviceSettings`; see docs/services/tracking.md).
    public static func sync() { device.sync() }

    /// The current location first, then each change. Stops when the handle is cancelled or released.
    public static func subscribeToLocation(_ callback: @escaping @Sendable (Result<Location, LocationError>) -> Void) -> Cancellable {
        device.subscribeToLocation(callback)
    }

    /// The current availability first, then each change.
    public static func subscribeToAvailability(_ callback: @escaping @Sendable (Bool) -> Void) -> Cancellable {
        device.subscribeToAvailability(callback)
    }

    /// The current tracking intent first, then each change.
    public static func subscribeToTracking(_ callback: @escaping @Sendable (Bool) -> Void) -> Cancellable {
        device.subscribeToTracking(callback)
    }

    /// The current errors first, then each change.
    public static func subscribeToErrors(_ callback: @escaping @Sendable (Set<HyperTrackError>) -> Void) -> Cancellable {
        device.subscribeToErrors(callback)
    }
}

extension HyperTrack {
    /// The strictest JSON: a recursive enum, the platform's own `JSONValue` (what goes on the
    /// wire). `JSON.Object` is what metadata and geotags take.
    public typealias JSON = JSONValue

    /// A position: latitude and longitude in degrees.
    public struct Location: Sendable, Hashable, CustomStringConvertible {
        public let latitude: Double
        public let longitude: Double

        public init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }

        /// GeoJSON order: `[longitude, latitude]`.
        public var coordinates: [Double] { [longitude, latitude] }

        public var description: String { "(\(latitude), \(longitude))" }
    }

    /// Why there is no location.
    public enum LocationError: Error, Sendable, Hashable {
        /// The SDK is not collecting locations because it is neither tracking nor available.
        case notRunning
        /// The SDK started collecting locations and is waiting for the location source.
        case starting
        /// Errors blocking the SDK from tracking, the same as `HyperTrack.errors`.
        case errors(Set<HyperTrackError>)
    }

    /// An error that can prevent tracking. Only the SDK makes them; `string` identifies each one.
    public struct HyperTrackError: Sendable, Hashable, CustomStringConvertible {
        public let string: String

        init(_ string: String) { self.string = string }

        public var description: String { string }

        /// GPS satellites are not in view.
        public static let gpsSignalLost = HyperTrackError("gpsSignalLost")
        /// The location source is simulated while mocking locations is not allowed (`HyperTrackAllowMockLocations`).
        public static let locationMocked = HyperTrackError("locationMocked")
        /// The user denied location permissions.
        public static let locationPermissionsDenied = HyperTrackError("locationPermissionsDenied")
        /// Can't track in background with When In Use permissions.
        public static let locationPermissionsInsufficientForBackground = HyperTrackError("locationPermissionsInsufficientForBackground")
        /// The user has not chosen whether the app can use location services.
        public static let locationPermissionsNotDetermined = HyperTrackError("locationPermissionsNotDetermined")
        /// Precise location permission was not granted.
        public static let locationPermissionsReducedAccuracy = HyperTrackError("locationPermissionsReducedAccuracy")
        /// Provisional Always authorization.
        public static let locationPermissionsProvisional = HyperTrackError("locationPermissionsProvisional")
        /// The app is not authorized to use location services.
        public static let locationPermissionsRestricted = HyperTrackError("locationPermissionsRestricted")
        /// Location services are disabled systemwide.
        public static let locationServicesDisabled = HyperTrackError("locationServicesDisabled")
        /// The device has no location source (on Linux: none was configured — see `TrackingDevice`).
        public static let locationServicesUnavailable = HyperTrackError("locationServicesUnavailable")
        /// Motion activity permissions denied.
        public static let motionActivityPermissionsDenied = HyperTrackError("motionActivityPermissionsDenied")
        /// The user has not chosen whether the app can use motion activity services.
        public static let motionActivityPermissionsNotDetermined = HyperTrackError("motionActivityPermissionsNotDetermined")
        /// Motion services are disabled systemwide.
        public static let motionActivityServicesDisabled = HyperTrackError("motionActivityServicesDisabled")
        /// The device has no motion activity services.
        public static let motionActivityServicesUnavailable = HyperTrackError("motionActivityServicesUnavailable")
        /// Neither tracking nor available.
        public static let notRunning = HyperTrackError("notRunning")
        /// Waiting for the location source.
        public static let starting = HyperTrackError("starting")
        /// The platform does not know the publishable key.
        public static let invalidPublishableKey = HyperTrackError("invalidPublishableKey")
        /// The platform refuses this device's locations: no device credential, or not its own, or
        /// its driver's session ended (this platform's; set `deviceCredential` after signing in).
        public static let invalidDeviceCredential = HyperTrackError("invalidDeviceCredential")
        /// The SDK was remotely blocked from running.
        public static let blockedFromRunning = HyperTrackError("blockedFromRunning")
    }

    /// A subscription's handle: `cancel()` (or calling it, or releasing it) stops the subscription.
    public final class Cancellable: Sendable {
        private let onCancel: @Sendable () -> Void
        private let cancelled = CancelledFlag()

        init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }

        public func cancel() {
            if cancelled.set() { onCancel() }
        }

        public func callAsFunction() { cancel() }

        deinit { cancel() }
    }
}

extension HyperTrack.JSON {
    /// The JSON text of this value.
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }
}
