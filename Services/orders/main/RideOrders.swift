import OrdersService
import ServiceKit

/// `ride-orders`: everything lives in OrdersService; this is the process entry point.
@main enum RideOrders {
    static func main() async {
        await RideOrdersCommand.main()
    }
}
