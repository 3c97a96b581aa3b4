// swift-tools-version:6.1
// The ridesharing platform: separate executables that talk JSON over ZeroMQ.
// Layout (fixed by the design card): Shared/ libraries, Services/ one folder per executable,
// Tools/ridectl, Tests/.
import CompilerPluginSupport
import Foundation
import PackageDescription

// RIDE_WIRE_MACROS: the `@WireModel` macros (Shared/WireMacros) already built as a library against
// the toolchain's own swift-syntax, which `make` does in seconds (docs/contributing.md#the-macros):
// every target loads it and swift-syntax is not compiled from source. Without it (a plain `swift
// build`) the macros are a `.macro` target here, built with swift-syntax like any macro package.
let environment = ProcessInfo.processInfo.environment
let builtMacros = environment["RIDE_WIRE_MACROS"].flatMap { $0.isEmpty ? nil : $0 }
let loadsBuiltMacros: [SwiftSetting] = builtMacros.map { [.unsafeFlags(["-load-plugin-library", $0])] } ?? []
let wireMacros: [Target] =
    builtMacros != nil
    ? []
    : [
        .macro(
            name: "WireMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ],
            path: "Shared/WireMacros"
        )
    ]
let swiftSyntax: [Package.Dependency] =
    builtMacros != nil ? [] : [.package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.0")]

// `make fuzz` builds with RIDE_FUZZ=1: libFuzzer's and AddressSanitizer's instrumentation on the
// targets the fuzzer exercises, set here per target rather than by `--sanitize` on the command line,
// which would also instrument the macro plugin (a host tool) and link libFuzzer's `main` into it.
let fuzzing = environment["RIDE_FUZZ"] == "1"
let fuzzed: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"]), .define("FUZZING")] : []
// swift-crypto (a BoringSSL of 366 C files) is left out of the fuzz build: of the fuzzed targets only
// the IPC proof (ZeroMQ) and the request table's hashes and sealing (BusModel) use it, which the
// fuzzer never reaches; built with FUZZING, they say they are not there (Fuzz/README.md).
let cryptoUnlessFuzzing: [Target.Dependency] = fuzzing ? [] : [.product(name: "Crypto", package: "swift-crypto")]

let package = Package(
    name: "Ridesharing",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ride-bus", targets: ["ride-bus"]),
        .executable(name: "ride-tracking", targets: ["ride-tracking"]),
        .executable(name: "ride-users", targets: ["ride-users"]),
        .executable(name: "ride-orders", targets: ["ride-orders"]),
        .executable(name: "ride-trips", targets: ["ride-trips"]),
        .executable(name: "ride-gateway", targets: ["ride-gateway"]),
        .executable(name: "ride-notifications", targets: ["ride-notifications"]),
        .executable(name: "ridectl", targets: ["ridectl"]),
        .library(name: "TrackingSDK", targets: ["TrackingSDK"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // One trait, not the default two: SwiftPM writes a package's traits into its compile commands
        // in a new order each time it plans, and a changed command compiles the package again
        // (docs/contributing.md#run-one-suite). ConfigurationSupport (swift-configuration) is unused.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.2.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // 4 for jwt-kit (users' access tokens); 3 still allowed for the rest.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        // TLS settings of the push services' client (notifications), and the local stand-in of APNs (HTTP/2 over TLS).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        // Tracing (docs/tracing.md): the API every layer records spans with, and the OTLP exporter
        // ServiceKit bootstraps when OTEL_EXPORTER_OTLP_ENDPOINT is set. Only the HTTP exporter: the
        // gRPC one would bring grpc-swift into every build.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
    ] + swiftSyntax,
    targets: wireMacros + [
        // MARK: Shared libraries
        .systemLibrary(
            name: "CZeroMQ",
            path: "Shared/CZeroMQ",
            // No pkgConfig: Debian's libzmq.pc adds Kerberos -isystem flags that SwiftPM refuses (a
            // warning on every build); the header and library are on the default paths.
            providers: [.apt(["libzmq3-dev"]), .brew(["zeromq"])]
        ),
        // What the platform asks of the operating system that Swift cannot call directly (thread
        // names and priorities, the allocator's slack): a header, nothing to link.
        .systemLibrary(name: "CLinux", path: "Shared/CLinux"),
        .target(
            name: "ZeroMQ", dependencies: ["CZeroMQ", "CLinux"] + cryptoUnlessFuzzing, path: "Shared/ZeroMQ",
            swiftSettings: fuzzed),
        // Wire: JSON as the platform writes and reads it, and `@WireModel`, which derives a type's
        // fast codec and schema from its declaration. Below everything else.
        .target(name: "Wire", dependencies: wireMacros.map { .target(name: $0.name) }, path: "Shared/Wire", swiftSettings: fuzzed),
        // BusModel: the bus's values without its sockets (CloudEvents, topics, service errors, trace
        // headers, the events and request logs' types), for what stores them.
        .target(
            name: "BusModel",
            dependencies: ["Wire", .product(name: "Tracing", package: "swift-distributed-tracing")] + cryptoUnlessFuzzing,
            path: "Shared/BusModel", swiftSettings: fuzzed),
        .target(
            name: "Bus",
            dependencies: [
                "Wire",
                "BusModel",
                "ZeroMQ",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Shared/Bus",
            swiftSettings: fuzzed
        ),
        // Starting the platform's processes on one machine and waiting for them: `ridectl up`, the
        // benchmarks and the integration tests share it.
        .target(
            name: "PlatformLauncher", dependencies: ["SettingsKit", .product(name: "AsyncHTTPClient", package: "async-http-client")],
            path: "Shared/PlatformLauncher"),
        // SettingsKit: a setting from a flag, its variable or a default, with the errors that name it;
        // HOST:PORT; standard streams that never trap. What a command line needs, and no server.
        .target(
            name: "SettingsKit", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Shared/SettingsKit"),
        .target(
            name: "ServiceKit",
            dependencies: [
                "Wire", "Bus", "SettingsKit",
                "ZeroMQ",
                "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            path: "Shared/ServiceKit"
        ),

        .target(name: "Geo", dependencies: ["Wire"], path: "Shared/Geo", swiftSettings: fuzzed),
        .target(name: "RideModels", dependencies: ["Wire", "Geo"], path: "Shared/RideModels", swiftSettings: fuzzed),
        // Roads: routes along a road network (`RouteProvider` and its implementations), above Geo.
        // Data/ (the built-in road graph and its ODbL attribution, docs/roads.md) ships as its resource bundle.
        .target(
            name: "Roads", dependencies: ["Geo", .product(name: "Logging", package: "swift-log")], path: "Shared/Roads",
            resources: [.copy("Data")]),
        // RoadServers: route providers that ask a server (PostgreSQL with pgRouting, OSRM) and the route-provider setting.
        .target(
            name: "RoadServers",
            dependencies: [
                "SettingsKit",
                "Roads", "Geo", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Shared/RoadServers"
        ),
        // Cities: one city's roads, street map and places, built in (Helsinki) or a bundle (`--city`, docs/cities.md).
        .target(
            name: "Cities",
            dependencies: [
                "SettingsKit", "Roads", "Places", "Geo", "Wire", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Shared/Cities"
        ),
        // Places: search and reverse geocoding over streets, addresses and named places from OpenStreetMap (docs/places.md).
        .target(
            name: "Places", dependencies: ["Geo"], path: "Shared/Places", exclude: ["Data/ATTRIBUTION.md"],
            resources: [.copy("Data/helsinki.places")]),
        // Providers: the wire formats and credentials of the services outside this machine that the
        // platform and its stand-ins (ridectl fake-push, fake-stripe) both speak — APNs and FCM keys and
        // push options, Stripe's form encoding and signatures.
        .target(
            name: "Providers",
            dependencies: [
                "SettingsKit", "Wire", "RideModels", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Shared/Providers"),
        // The contract: every op and event kind of the platform, declared once (docs/design.md).
        .target(
            name: "RideContract", dependencies: ["Bus", "RideModels", "Wire"], path: "Shared/RideContract", swiftSettings: loadsBuiltMacros),
        // Storage: the databases (SQLite, PostgreSQL), the outbox, the request and cursor tables; no sockets.
        .target(
            name: "Storage",
            dependencies: [
                "Wire", "BusModel", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Shared/Storage"
        ),
        // A stateful service's store on the bus: opening it at start-up (the --database-url option, the
        // store, its publisher), the outbox relay that publishes what it commits, and event reactors.
        .target(
            name: "ServiceStorage",
            dependencies: [
                "SettingsKit",
                "Wire", "Bus", "ServiceKit", "Storage", .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Shared/ServiceStorage"
        ),
        .target(
            name: "TrackingSDK",
            dependencies: [
                "Wire", "Geo", "RideModels", "ZeroMQ", .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            path: "Shared/TrackingSDK"
        ),

        // MARK: Services (logic in a library, a thin main)
        .target(
            name: "BusService",
            dependencies: [
                "SettingsKit",
                "Wire", "Bus", "RideContract", "ServiceKit", "ZeroMQ", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Services/bus/BusService"),
        .executableTarget(name: "ride-bus", dependencies: ["BusService", "ServiceKit"], path: "Services/bus/main"),
        .target(
            name: "TrackingService",
            dependencies: [
                "SettingsKit",
                "ServiceStorage", "RideContract", "Wire", "Bus", "Geo", "RideModels", "ServiceKit", "Storage", "ZeroMQ",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"), .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/tracking/TrackingService"
        ),
        .executableTarget(name: "ride-tracking", dependencies: ["TrackingService", "ServiceKit"], path: "Services/tracking/main"),
        .target(
            name: "OrdersService",
            dependencies: [
                "SettingsKit", "Providers",
                "ServiceStorage", "RideContract", "Wire", "Bus", "Geo", "RideModels", "Roads", "RoadServers", "Cities", "ServiceKit",
                "Storage",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Services/orders/OrdersService"
        ),
        .target(
            name: "TripsService",
            dependencies: [
                "SettingsKit",
                "ServiceStorage", "RideContract", "Wire", "Bus", "Geo", "RideModels", "Roads", "RoadServers", "Cities", "ServiceKit",
                "Storage",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/trips/TripsService"
        ),
        .executableTarget(name: "ride-trips", dependencies: ["TripsService", "ServiceKit"], path: "Services/trips/main"),
        .executableTarget(name: "ride-orders", dependencies: ["OrdersService", "ServiceKit"], path: "Services/orders/main"),
        .target(
            name: "UsersService",
            dependencies: [
                "SettingsKit",
                "ServiceStorage", "RideContract", "Wire", "Bus", "RideModels", "ServiceKit", "Storage",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/users/UsersService"
        ),
        .executableTarget(name: "ride-users", dependencies: ["UsersService", "ServiceKit"], path: "Services/users/main"),
        .target(
            name: "GatewayService",
            dependencies: [
                "SettingsKit",
                "RideContract", "Wire", "Bus", "RideModels", "ServiceKit", "Places", "Roads", "Cities", "Geo",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/gateway/GatewayService"
        ),
        .executableTarget(name: "ride-gateway", dependencies: ["GatewayService", "ServiceKit"], path: "Services/gateway/main"),
        .target(
            name: "NotificationsService",
            dependencies: [
                "SettingsKit", "Providers",
                "ServiceStorage", "RideContract", "Wire", "Bus", "RideModels", "ServiceKit", "Storage",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Services/notifications/NotificationsService"
        ),
        .executableTarget(
            name: "ride-notifications", dependencies: ["NotificationsService", "ServiceKit"], path: "Services/notifications/main"),

        // MARK: Tools
        .target(
            name: "RideCtlKit",
            dependencies: [
                "SettingsKit",
                "Cities",
                "PlatformLauncher", "RideContract", "Wire", "Bus", "ServiceKit", "RideModels", "TrackingSDK", "Geo", "Roads", "ZeroMQ",
                "RoadServers", "Providers", .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tools/ridectl/RideCtlKit"
        ),
        .executableTarget(name: "ridectl", dependencies: ["RideCtlKit", "ServiceKit"], path: "Tools/ridectl/main"),
        .executableTarget(
            name: "driver-example", dependencies: ["SettingsKit", "TrackingSDK", "ServiceKit"], path: "Tools/driver-example",
            exclude: ["drive.gpx"]),

        // MARK: Fuzzing (Fuzz/README.md): libFuzzer's target over what arrives from sockets. Light on
        // purpose (the bus, the contract and the models only), so its instrumented build fits in `make test`.
        .target(
            name: "ProtocolFuzzing", dependencies: ["RideContract", "Bus", "RideModels", "Wire", "ZeroMQ"], path: "Fuzz/ProtocolFuzzing",
            swiftSettings: fuzzed),
        .executableTarget(
            name: "ride-fuzz", dependencies: ["ProtocolFuzzing"], path: "Fuzz/main", swiftSettings: fuzzed,
            linkerSettings: fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []
        ),

        // MARK: Tests
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"], path: "Tests/ZeroMQTests"),
        .testTarget(
            name: "BusTests", dependencies: ["Wire", "Bus", "ZeroMQ", .product(name: "Logging", package: "swift-log")],
            path: "Tests/BusTests"),
        .testTarget(
            name: "ServiceKitTests",
            dependencies: ["SettingsKit", "ServiceKit", "Bus", "ZeroMQ", "TestProcess", .product(name: "Logging", package: "swift-log")],
            path: "Tests/ServiceKitTests"),
        .testTarget(
            name: "RideCtlTests",
            dependencies: [
                "SettingsKit",
                "Wire", "RideCtlKit", "Bus", "PlatformLauncher", "Geo", "RideModels", "Roads", "RideContract", "ServiceKit",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/RideCtlTests"),
        .testTarget(
            name: "DocsTests", dependencies: ["Bus", "RideContract", "RideCtlKit", "ServiceKit", "GatewayService", "TestProcess"],
            path: "Tests/DocsTests"),
        .testTarget(name: "WireTests", dependencies: ["Wire", "Bus", "RideContract", "TripsService"], path: "Tests/WireTests"),
        .testTarget(name: "GeoTests", dependencies: ["Geo"], path: "Tests/GeoTests"),
        .testTarget(name: "CitiesTests", dependencies: ["Cities", "Roads", "Geo"], path: "Tests/CitiesTests"),
        .testTarget(name: "PlacesTests", dependencies: ["Places", "Geo", "TestProcess"], path: "Tests/PlacesTests"),
        .testTarget(name: "RoadsTests", dependencies: ["Roads", "Geo", "TestProcess"], path: "Tests/RoadsTests"),
        .testTarget(
            name: "TrackingTests",
            dependencies: [
                "Wire", "TrackingService", "TrackingSDK", "RideModels", "Geo", "Bus", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TrackingTests"),
        .testTarget(
            name: "TripsTests",
            dependencies: ["SettingsKit", "Wire", "TripsService", "RideModels", "Geo", "Bus", "Roads", "RideContract", "ServiceKit"],
            path: "Tests/TripsTests"),
        .testTarget(
            name: "OrdersTests",
            dependencies: [
                "Wire", "RideContract", "OrdersService", "UsersService", "RideModels", "Storage", "Bus", "Geo", "ServiceKit", "Providers",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/OrdersTests"),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "RideModels", "RideContract", "BusModel",
                "Wire", "GatewayService", "Bus", "ServiceKit", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ], path: "Tests/GatewayTests"),
        .testTarget(
            name: "NotificationsTests",
            dependencies: [
                "Wire", "NotificationsService", "Providers", "RideModels", "Bus", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ], path: "Tests/NotificationsTests"),
        .target(
            name: "TestPostgres", dependencies: ["PlatformLauncher", "ServiceKit", "Storage", "TestProcess"], path: "Tests/TestPostgres"),
        .target(name: "TestProcess", path: "Tests/TestProcess"),
        // The storage suite: every store's behaviour, on SQLite and on PostgreSQL.
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "ServiceStorage", "Wire", "Storage", "TestPostgres", "UsersService", "OrdersService", "TripsService",
                "NotificationsService",
                "TrackingService",
                "Geo", "RideModels", "Bus", "RideContract",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/StorageTests"),
        .testTarget(
            name: "RoadServersTests",
            dependencies: [
                "RoadServers", "Roads", "Geo", "TestPostgres", "TestProcess", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"), .product(name: "PostgresNIO", package: "postgres-nio"),
            ], path: "Tests/RoadServersTests"),
        .testTarget(
            name: "UsersTests",
            dependencies: ["UsersService", "Storage", "RideModels", "Bus", "TestProcess", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/UsersTests"),
        .testTarget(name: "FuzzTests", dependencies: ["Wire", "ProtocolFuzzing", "Bus", "RideContract", "RideModels"], path: "Fuzz/Tests"),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "PlatformLauncher", "RideContract", "Wire", "Bus", "ServiceKit", "ZeroMQ", "RideModels", "TrackingSDK", "Storage",
                "TestPostgres", "TestProcess", "Geo",
                .product(name: "Yams", package: "Yams"), .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                // The local identity provider of the social sign-in tests.
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // The push tests reach the stand-in APNs and FCM over TLS with their own certificate.
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // HyperTrack's webhook signatures, as the tests' HyperTrack makes them.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/IntegrationTests",
            exclude: ["interop", "Hosts/delayline.py"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Where the macros come built, every target that could expand them loads them.
for target in package.targets where builtMacros != nil && target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + loadsBuiltMacros
}
