import ArgumentParser
import Bus
import Foundation
import Geo
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import SettingsKit
import Synchronization
import Wire
import ZeroMQ

/// Counts events on a topic prefix with a raw SUB socket on a thread of its own (no decoding: this
/// measures delivery, not JSON).
final class EventCounter: Sendable {
    private final class Count: Sendable { let value = Atomic<UInt64>(0) }
    private let counter = Count()
    private let stopFlag = StopFlag()
    private let thread: OwnedThread

    init(endpoint: String, prefix: String) {
        let (counter, stopFlag) = (self.counter, self.stopFlag)
        thread = OwnedThread(name: "bench-counter") {
            guard let socket = try? Socket(.sub) else { return }
            try? socket.setReceiveHighWaterMark(0)
            try? socket.setReceiveTimeout(milliseconds: 100)
            try? socket.subscribe(prefix)
            try? socket.connect(endpoint)
            while !stopFlag.isRequested {
                if (try? socket.receive()) != nil { counter.value.add(1, ordering: .relaxed) }
            }
            socket.close()
        }
    }

    var count: UInt64 { counter.value.load(ordering: .relaxed) }

    func stop() {
        stopFlag.request()
        thread.joinBlocking()
    }
}
