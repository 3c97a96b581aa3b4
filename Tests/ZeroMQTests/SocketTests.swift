import Foundation
import Synchronization
import Testing

@testable import ZeroMQ

@Suite struct SocketTests {
    @Test func multipartMessagesArriveWhole() throws {
        let server = try Socket(.router)
        try server.bind("inproc://multipart")
        let client = try Socket(.dealer)
        try client.setRoutingID([0x41])
        try client.connect("inproc://multipart")
        try client.send(message: [[], Frame(frame: "a"), Frame(repeating: 7, count: 10_000)])
        let received = try #require(try server.receive())
        #expect(received == [[0x41], [], Frame(frame: "a"), Frame(repeating: 7, count: 10_000)])
        #expect(try server.receive(dontWait: true) == nil)
        server.close()
        client.close()
    }

    @Test func errorsCarryLibzmqsText() throws {
        let socket = try Socket(.pub)
        #expect(throws: ZMQError.self) { try socket.bind("nonsense") }
        do {
            try socket.connect("tcp://")
            Issue.record("connected to nothing")
        } catch let error as ZMQError {
            #expect(error.description.hasPrefix("connect PUB to tcp://: "))
            #expect(!error.message.isEmpty)
        }
    }

    @Test func aTakenAddressIsReportedAsSuch() throws {
        let first = try Socket(.router)
        try first.bind("tcp://127.0.0.1:*")
        let endpoint = try first.lastEndpoint
        let second = try Socket(.router)
        do {
            try second.bind(endpoint)
            Issue.record("bound twice")
        } catch let error as ZMQError {
            #expect(error.isAddressInUse)
            #expect(error.message == "Address already in use")
        }
    }

    @Test func forwardMovesWholeMessagesBetweenSockets() throws {
        let source = try Socket(.pull)
        try source.bind("inproc://forward-in")
        let sink = try Socket(.push)
        try sink.bind("inproc://forward-out")
        let producer = try Socket(.push)
        try producer.connect("inproc://forward-in")
        let consumer = try Socket(.pull)
        try consumer.connect("inproc://forward-out")
        try producer.send(message: [Frame(frame: "x"), Frame(frame: "y")])
        var moved = 0
        for _ in 0..<100 where moved == 0 { moved = try source.forward(to: sink) }
        #expect(moved == 2)
        #expect(try consumer.receive() == [Frame(frame: "x"), Frame(frame: "y")])
    }

    @Test func pollerAndWakerWakeAThreadFromAnother() async throws {
        let waker = Waker()
        let woken = StopFlag()
        let thread = OwnedThread(name: "poll-test") {
            var poller = Poller()
            poller.add(fileDescriptor: waker.fileDescriptor)
            _ = try? poller.poll(timeoutMilliseconds: 10_000)
            if poller.isReadable(0) { woken.request() }
            waker.drain()
        }
        waker.wake()
        await thread.join()
        #expect(woken.isRequested)
    }

    @Test func mailboxDeliversInOrderFromManyThreads() async throws {
        let mailbox = Mailbox<Int>()
        await withTaskGroup(of: Void.self) { group in
            for base in 0..<4 {
                group.addTask { for i in 0..<1000 { mailbox.post(base * 1000 + i) } }
            }
        }
        let all = mailbox.take()
        #expect(all.count == 4000)
        for base in 0..<4 {
            let mine = all.filter { $0 / 1000 == base }
            #expect(mine == mine.sorted(), "each sender's items keep their order")
        }
        #expect(mailbox.isEmpty)
    }

    @Test func loopExecutorRunsTasksOnTheLoopThread() async throws {
        let mailbox = Mailbox<String>()
        let executor = LoopExecutor(waker: mailbox.waker)
        let done = StopFlag()
        let loopThread = Mutex<UInt>(0)
        let thread = OwnedThread(name: "loop-exec-test") {
            loopThread.withLock { $0 = UInt(pthread_self()) }
            mailbox.waker.claimOwnership()
            var poller = Poller()
            poller.add(fileDescriptor: mailbox.waker.fileDescriptor)
            while !done.isRequested {
                _ = try? poller.poll(timeoutMilliseconds: executor.hasJobs ? 0 : 100)
                mailbox.waker.drain()
                executor.runQueuedJobs()
            }
        }
        let observed = await Task(executorPreference: executor) { () -> [UInt] in
            let before = UInt(pthread_self())
            await Task.yield()
            return [before, UInt(pthread_self())]
        }.value
        done.request()
        mailbox.waker.wake()
        await thread.join()
        let loop = loopThread.withLock { $0 }
        #expect(observed == [loop, loop], "the task ran, and resumed, on the loop's thread")
    }
}
