import BusService
import ServiceKit

/// `ride-bus`: everything lives in BusService; this is the process entry point.
@main enum RideBus {
    static func main() async {
        ProcessLimits.raiseOpenFileLimit()
        ProcessLimits.keepFreedMemoryLonger()
        await RideBusCommand.main()
    }
}
