import ServiceKit
import TripsService

/// `ride-trips`: everything lives in TripsService; this is the process entry point.
@main enum RideTrips {
    static func main() async {
        await RideTripsCommand.main()
    }
}
