import Bus
import Wire

/// The platform's contract as data: every op and every event kind, for what is derived from
/// them — the docs' tables, the fuzzer's catalog, the API document, the property tests.
public enum RideContract {
    public static let ops: [OpDescriptor] = [
        Ops.Users.register.descriptor, Ops.Users.login.descriptor, Ops.Users.refresh.descriptor, Ops.Users.logout.descriptor,
        Ops.Users.authenticate.descriptor, Ops.Users.get.descriptor,
        Ops.Users.update.descriptor, Ops.Users.savePlace.descriptor, Ops.Users.places.descriptor,
        Ops.Users.deletePlace.descriptor, Ops.Users.issueDeviceCredential.descriptor, Ops.Users.verifyDeviceCredential.descriptor,
        Ops.Users.verifyDeviceCredentials.descriptor,
        Ops.Users.loginWithIdentity.descriptor, Ops.Users.linkIdentity.descriptor, Ops.Users.putPhoto.descriptor, Ops.Users.photo.descriptor,
        Ops.Users.suspend.descriptor, Ops.Users.reinstate.descriptor,
        Ops.Users.search.descriptor, Ops.Users.putDocument.descriptor, Ops.Users.document.descriptor,
        Ops.Users.approveDriver.descriptor, Ops.Users.withdrawApproval.descriptor, Ops.Users.events.descriptor, Ops.Orders.create.descriptor,
        Ops.Orders.get.descriptor,
        Ops.Orders.list.descriptor, Ops.Orders.accept.descriptor, Ops.Orders.decline.descriptor, Ops.Orders.startRide.descriptor,
        Ops.Orders.endRide.descriptor, Ops.Orders.cancel.descriptor, Ops.Orders.arrive.descriptor, Ops.Orders.noShow.descriptor, Ops.Orders.changeDestination.descriptor,
        Ops.Orders.estimate.descriptor,
        Ops.Orders.nearbyCars.descriptor,
        Ops.Orders.sendMessage.descriptor, Ops.Orders.messages.descriptor, Ops.Orders.rate.descriptor,
        Ops.Orders.history.descriptor, Ops.Orders.share.descriptor, Ops.Orders.revokeShare.descriptor, Ops.Orders.getByShare.descriptor, Ops.Orders.earnings.descriptor,
        Ops.Orders.payment.descriptor,
        Ops.Orders.retryPayment.descriptor, Ops.Orders.refund.descriptor,
        Ops.Orders.stats.descriptor, Ops.Orders.paymentSheet.descriptor, Ops.Orders.cards.descriptor, Ops.Orders.cardSetup.descriptor, Ops.Orders.payoutOnboarding.descriptor,
        Ops.Orders.providerWebhook.descriptor, Ops.Orders.report.descriptor, Ops.Orders.reports.descriptor, Ops.Orders.answerReport.descriptor,
        Ops.Orders.events.descriptor, Ops.Trips.create.descriptor, Ops.Trips.get.descriptor, Ops.Trips.getByShare.descriptor,
        Ops.Trips.complete.descriptor, Ops.Trips.changeDestination.descriptor, Ops.Trips.events.descriptor, Ops.Tracking.nearby.descriptor,
        Ops.Tracking.device.descriptor, Ops.Tracking.setAvailability.descriptor, Ops.Tracking.locations.descriptor,
        Ops.Tracking.ingest.descriptor, Ops.Notifications.list.descriptor, Ops.Notifications.registerPushToken.descriptor,
        Ops.Notifications.registerWebhook.descriptor, Ops.Notifications.listWebhooks.descriptor,
        Ops.Notifications.deleteWebhook.descriptor, Ops.Notifications.rotateWebhookSecret.descriptor,
        Ops.Notifications.dropPreviousSecret.descriptor, Ops.Notifications.deadLetters.descriptor, Ops.Notifications.replay.descriptor,
        Ops.Notifications.events.descriptor,
    ]

    public static let events: [EventDescriptor] = [
        Events.orderStatus.descriptor, Events.orderMessage.descriptor, Events.orderOffered.descriptor, Events.orderOfferWithdrawn.descriptor,
        Events.orderRated.descriptor, Events.orderDriverCancelled.descriptor, Events.orderPaid.descriptor, Events.tripCreated.descriptor,
        Events.tripDestinationArrival.descriptor, Events.tripETA.descriptor, Events.tripRerouted.descriptor, Events.tripDelayed.descriptor,
        Events.tripCompleted.descriptor, Events.deviceLocation.descriptor, Events.deviceStatus.descriptor, Events.deviceCommand.descriptor,
        Events.userRegistered.descriptor, Events.notification.descriptor, Events.orderReportAnswered.descriptor, Events.orderPaymentFailed.descriptor,
        Events.orderRefunded.descriptor, Events.orderDestinationChanged.descriptor, Events.tripDestinationChanged.descriptor,
        Events.userSuspended.descriptor, Events.userApprovalLapsed.descriptor,
    ]

    /// The ops of `service`, in declaration order.
    public static func ops(of service: String) -> [OpDescriptor] { ops.filter { $0.service == service } }
}
