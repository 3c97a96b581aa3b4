import RideCtlKit
import ServiceKit

/// `ridectl`: everything lives in RideCtlKit; this is the process entry point.
@main enum RideCtlMain {
    static func main() async {
        ProcessLimits.raiseOpenFileLimit()
        await RideCtl.main()
    }
}
