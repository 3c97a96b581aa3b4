import Bus
import Foundation
import RideContract
import RideModels

/// The ops of a card provider (`--payments stripe`): the rider's payment sheet, cards and the
/// provider's page that adds one, the driver's payout onboarding, the provider's webhooks. With
/// the ledger they answer 409.
extension OrdersOps {
    func registerCardOps(_ router: inout OpRouter) {
        router.on(Ops.Orders.paymentSheet) { (params: CardOwnerParams, _) -> PaymentSheet in
            guard params.caller.role == .rider else { throw forbidden("the payment sheet is a rider's") }
            return try await cardProvider { try await $0.paymentSheet(riderID: params.caller.id) }
        }
        router.on(Ops.Orders.cards) { (params: CardOwnerParams, _) -> SavedCards in
            guard params.caller.role == .rider else { throw forbidden("saved cards are a rider's") }
            return try await cardProvider { try await $0.cards(riderID: params.caller.id) }
        }
        router.on(Ops.Orders.cardSetup) { (params: CardSetupParams, _) -> CardSetup in
            guard params.caller.role == .rider else { throw forbidden("cards are a rider's") }
            for (field, url) in [("success_url", params.successURL), ("cancel_url", params.cancelURL)] {
                guard let parts = URLComponents(string: url), ["http", "https"].contains(parts.scheme ?? ""), parts.host?.isEmpty == false
                else {
                    throw ServiceError.unprocessable("invalid_params", "\(field): expected an http(s) URL, got '\(url.prefix(100))'")
                }
            }
            return try await cardProvider {
                try await $0.cardSetup(riderID: params.caller.id, successURL: params.successURL, cancelURL: params.cancelURL)
            }
        }
        router.on(Ops.Orders.payoutOnboarding) { (params: CardOwnerParams, _) -> PayoutOnboarding in
            guard params.caller.role == .driver else { throw forbidden("payout accounts are a driver's") }
            return try await cardProvider { try await $0.payoutOnboarding(driverID: params.caller.id) }
        }
        // No caller: the signature is the provider's proof, checked against the endpoint secret.
        router.on(Ops.Orders.providerWebhook) { (params: ProviderWebhookParams, _) -> ProviderWebhookReceipt in
            try await cardProvider { try await $0.webhook(params) }
        }
    }

    /// `work` on the configured card provider; 409 with the ledger, 409 `payment_refused` when the provider refuses.
    func cardProvider<T: Sendable>(_ work: (any CardPaymentProvider) async throws -> T) async throws -> T {
        guard let provider = payments.provider as? any CardPaymentProvider else {
            throw ServiceError.conflict(
                "no_card_payments",
                "the platform's payment provider (\(payments.provider.name)) keeps no cards or payout accounts (ride-orders --payments stripe)"
            )
        }
        do {
            return try await work(provider)
        } catch let error as PaymentError {
            throw ServiceError.conflict("payment_refused", "\(error)")
        }
    }
}
