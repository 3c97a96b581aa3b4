import ArgumentParser
import Foundation
import ServiceKit

/// `ridectl keys`: the CURVE keys that secure the bus and the device ingest.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Make the CURVE keys that encrypt and authenticate the bus (--curve-keys, RIDE_CURVE_KEYS).",
        discussion: """
            A key directory holds server.key/server.pub (the bus and tracking's device ingest serve \
            with it) and clients/NAME.key/NAME.pub, one pair per client. The servers admit exactly \
            the keys in clients/*.pub, read again when that folder changes: `keys add` admits a new \
            client, deleting its .pub file shuts it out from its next connection.

            Examples:
              ridectl keys init ./keys          server + users, orders, trips, tracking, notifications, gateway, ridectl
              ridectl keys add ./keys fleet-7   one more client (e.g. a fleet of devices)
              ridectl up --secure               makes <data-dir>/keys when missing and uses it
            """,
        subcommands: [Init.self, Add.self])

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key directory: the server pair and one pair per client.")

        @Argument(help: "The directory to create (or fill).")
        var directory: String

        @Option(name: .customLong("client"), help: "A client to make a key for (repeatable). Default: every service and ridectl.")
        var clients: [String] = []

        func run() throws {
            let names = clients.isEmpty ? CurveKeyDirectory.standardClients : clients
            do {
                try CurveKeyDirectory.create(at: directory, clients: names)
            } catch let error as ConfigurationError {
                throw ValidationError(error.message)
            }
            print("CURVE keys in \(directory): server.key, server.pub; clients/ \(names.joined(separator: ", "))")
            print("Use them with --curve-keys \(directory) or RIDE_CURVE_KEYS=\(directory) on every process.")
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a key pair for one more client; the servers admit it at its next connection.")

        @Argument(help: "The key directory (made by `ridectl keys init`).")
        var directory: String

        @Argument(help: "The client's name (letters, digits, '-', '_'); its files are clients/NAME.key and NAME.pub.")
        var name: String

        func run() throws {
            guard FileManager.default.fileExists(atPath: "\(directory)/server.pub") else {
                throw ValidationError("\(directory) is not a key directory (no server.pub); make one with `ridectl keys init \(directory)`")
            }
            let publicKey: String
            do {
                publicKey = try CurveKeyDirectory(path: directory).addClient(name).publicKey
            } catch let error as ConfigurationError {
                throw ValidationError(error.message)
            }
            print("client '\(name)': \(directory)/clients/\(name).key (secret), public key \(publicKey)")
        }
    }
}
