import ArgumentParser
import Foundation
import ServiceKit
import SettingsKit

/// `ridectl keys`: the CURVE keys that secure the bus and the device ingest.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Make the CURVE keys that encrypt and authenticate the bus (--curve-keys, RIDE_CURVE_KEYS).",
        discussion: """
            A key directory holds server.key/server.pub (the bus and tracking's device ingest serve \
            with it) and clients/NAME.key/NAME.pub, a pair per process. A key's name is its role on \
            the bus: `orders`, or the part before the first '-' (`operator-ana` is an operator), so \
            every process has a key of its own. The bus admits exactly the keys in clients/*.pub, read \
            again when that folder changes: `keys add` admits a new client, deleting its .pub file \
            shuts it out from its next connection. Give each process only server.pub and its own \
            clients/NAME.key; the bus also server.key and clients/*.pub; tracking also server.key \
            (docs/operations.md, Securing the bus).

            Examples:
              ridectl keys init ./keys              server + \(CurveKeyDirectory.standardClients.joined(separator: ", "))
              ridectl keys add ./keys operator-ana  one more operator, with a key of her own
              ridectl up --secure                   makes <data-dir>/keys when missing and uses it
              ridectl keys compose deploy/compose-secrets   every secret docker-compose.yml mounts (make compose-secrets)
            """,
        subcommands: [Init.self, Add.self, Compose.self])

    struct Compose: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make every secret docker-compose.yml mounts, each random, in one folder; what is there already is kept.",
            discussion: """
                The folder gets curve/ (a key directory, as `keys init`), token-secret, \
                gateway-secret-key (the dashboard's and the HyperTrack routes' password), \
                postgres-password and database-url (its URL with that password). The compose file \
                runs in production mode, which refuses the development values this repository ships.
                """)

        @Argument(help: "The folder docker-compose.yml reads its secrets from (deploy/compose-secrets).")
        var folder: String

        func run() throws {
            let made: [String]
            do {
                made = try ComposeSecrets(folder: folder).make()
            } catch let error as ConfigurationError {
                throw ValidationError(error.message)
            }
            print(
                made.isEmpty
                    ? "\(folder) has every secret already (remove one to make it again)"
                    : "made in \(folder): \(made.joined(separator: ", "))")
        }
    }

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key directory: the server pair and one pair per client.")

        @Argument(help: "The directory to create (or fill).")
        var directory: String

        @Option(
            name: .customLong("client"),
            help: "A client to make a key for (repeatable). Default: one per role, named after it (every service, operator, bench).")
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
        static let configuration = CommandConfiguration(
            abstract: "Make a key pair for one more client; the servers admit it at its next connection.")

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
