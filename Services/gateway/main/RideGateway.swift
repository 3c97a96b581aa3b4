import GatewayService
import ServiceKit

/// `ride-gateway`: everything lives in GatewayService; this is the process entry point.
@main enum RideGateway {
    static func main() async {
        await RideGatewayCommand.main()
    }
}
