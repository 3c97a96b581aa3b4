import RideCtlKit

/// `ridectl`: everything lives in RideCtlKit; this is the process entry point.
@main enum RideCtlMain {
    static func main() async { await RideCtl.main() }
}
