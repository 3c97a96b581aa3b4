import ServiceKit
import TrackingService

/// `ride-tracking`: everything lives in TrackingService; this is the process entry point.
@main enum RideTracking {
    static func main() async {
        ProcessLimits.raiseOpenFileLimit()
        ProcessLimits.keepFreedMemoryLonger()
        await RideTrackingCommand.main()
    }
}
