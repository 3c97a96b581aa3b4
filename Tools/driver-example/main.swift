import Foundation
import TrackingSDK

// A driver app in ten lines, using only TrackingSDK. Configuration comes from the environment:
// HyperTrackPublishableKey, HyperTrackAllowMockLocations, HyperTrackLocationGPX, RIDE_TRACKING_INGEST.
HyperTrack.name = CommandLine.arguments.dropFirst().first ?? "Demo driver"
HyperTrack.metadata = ["car": .object(["model": .string("Prius"), "license_plate": .string("AB 1234")])]
HyperTrack.isAvailable = true
HyperTrack.startTracking()
let subscription = HyperTrack.subscribeToLocation { print("\(HyperTrack.deviceID) location:", $0) }
while true { sleep(60) }
