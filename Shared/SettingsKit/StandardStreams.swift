import Glibc

/// Standard output and standard error, written with write(2) and nothing else.
///
/// Not `FileHandle.write(_:)`: it traps when the write fails, and a write fails whenever the reader
/// of a pipe is gone (`ride-bus | head`, or `ridectl up` killed while its children still log):
/// a log line must never crash a process. No stdio buffer and no lock either, so a line reaches a
/// pipe as it happens and a thread that is stuck cannot hold the others back.
public enum StandardStream: Int32, Sendable {
    case output = 1
    case error = 2

    public enum Outcome: Equatable, Sendable {
        case written
        /// The stream is a pipe nobody reads any more (EPIPE).
        case readerGone
        case failed(errno: Int32)
    }

    /// Writes all of `text`; if the stream fails, the rest is dropped and the outcome says why.
    @discardableResult
    public func write(_ text: String) -> Outcome {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(rawValue, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    let error = errno
                    if error == EINTR { continue }
                    return error == EPIPE ? .readerGone : .failed(errno: error)
                }
                offset += written
            }
            return .written
        }
    }
}
