import NotificationsService
import ServiceKit

/// `ride-notifications`: everything lives in NotificationsService; this is the process entry point.
@main enum RideNotifications {
    static func main() async {
        await RideNotificationsCommand.main()
    }
}
