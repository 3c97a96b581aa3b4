import Foundation
import ServiceKit
import SettingsKit
import TrackingSDK

// A driver app in ten lines, using only TrackingSDK. Configuration comes from the environment:
// HyperTrackPublishableKey, HyperTrackAllowMockLocations, HyperTrackLocationGPX, RIDE_TRACKING_INGEST.
// (The switch only answers --help and --version and checks the settings first: the SDK stops a
// program whose settings are wrong, as its specification asks of an integration mistake.)
switch CommandLine.arguments.dropFirst().first {
case "--version":
    print(PlatformVersion.current)
    exit(0)
case "--help", "-h":
    print(
        """
        USAGE: driver-example [NAME]

        A driver's phone on the platform: goes available, tracks, prints each location it sends.
        NAME is the driver's name (default "Demo driver"). Settings come from the environment:
          HyperTrackPublishableKey      the platform's publishable key (required; ride-tracking's RIDE_PUBLISHABLE_KEYS)
          HYPERTRACK_CONFIG             a JSON file with the same settings
          HyperTrackLocationGPX         replay this GPX track instead of real locations
          HyperTrackAllowMockLocations  allow the replayed (mock) locations
          RIDE_TRACKING_INGEST          where tracking's device ingest listens (default tcp://127.0.0.1:5558)

        OPTIONS:
          --version   Show the version.
          -h, --help  Show help information.
        """)
    exit(0)
default:
    let problem: String? =
        switch Result(catching: { try SDKConfiguration.load() }) {
        case .success(let configuration): configuration.publishableKey == nil ? SDKConfiguration.missingKeyMessage : nil
        case .failure(let error): "\(error)"
        }
    if let problem {
        StandardStream.error.write("driver-example: \(problem)\n")
        exit(64)
    }
}
HyperTrack.name = CommandLine.arguments.dropFirst().first ?? "Demo driver"
HyperTrack.metadata = ["car": .object(["model": .string("Prius"), "license_plate": .string("AB 1234")])]
HyperTrack.isAvailable = true
HyperTrack.startTracking()
let subscription = HyperTrack.subscribeToLocation { print("\(HyperTrack.deviceID) location:", $0) }
while true { sleep(60) }
