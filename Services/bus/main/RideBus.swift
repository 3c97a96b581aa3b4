import BusService

/// `ride-bus`: everything lives in BusService; this is the process entry point.
@main enum RideBus {
    static func main() async { await RideBusCommand.main() }
}
