import Bus
import Foundation
import Logging
import SettingsKit
import Wire

/// How log lines look: `text` for a terminal, `json` (one object per line) for collectors.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

/// The platform's log handler: one line per record on standard error.
///
/// text: `2026-11-21T09:30:00.123Z info  ride-bus: users ready: 32 workers service=users workers=32`
/// json: `{"time":"…","level":"info","logger":"ride-bus","message":"users ready: 32 workers","service":"users",…}`
public struct RideLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let format: LogFormat
    private let colored: Bool

    public init(label: String, format: LogFormat, level: Logger.Level, colored: Bool) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.colored = colored
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let line =
            format == .json
            ? Self.jsonLine(time: Date(), level: event.level, label: label, message: "\(event.message)", metadata: merged)
            : Self.textLine(time: Date(), level: event.level, label: label, message: "\(event.message)", metadata: merged, colored: colored)
        StandardStream.error.write(line + "\n")
    }

    static func textLine(time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, colored: Bool)
        -> String
    {
        let levelText = level.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        var line = "\(RFC3339.format(time)) \(colored ? ANSI.level(level, levelText) : levelText) \(label): \(message)"
        for key in metadata.keys.sorted() {
            let value = "\(metadata[key]!)"
            let quoted = value.contains(" ") || value.isEmpty ? "\"\(value)\"" : value
            line += colored ? " \(ANSI.dim(key + "="))\(quoted)" : " \(key)=\(quoted)"
        }
        return line
    }

    static func jsonLine(time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var out: [UInt8] = Array(#"{"time":""#.utf8) + Array(RFC3339.format(time).utf8) + Array(#"","level":""#.utf8)
        out += Array(level.rawValue.utf8) + Array(#"","logger":"#.utf8)
        JSONText.appendQuoted(label, to: &out)
        out += Array(#","message":"#.utf8)
        JSONText.appendQuoted(message, to: &out)
        for key in metadata.keys.sorted() where !["time", "level", "logger", "message"].contains(key) {
            out.append(UInt8(ascii: ","))
            JSONText.appendQuoted(key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONText.appendQuoted("\(metadata[key]!)", to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}

/// Sets up logging for a process, once, from the resolved settings.
public enum RideLogging {
    /// - Parameter metadataProvider: metadata every line gains (the current trace's ids, docs/tracing.md).
    public static func bootstrap(label: String, format: LogFormat, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil)
        -> Logger
    {
        let colored = format == .text && ANSI.isTerminal(fileDescriptor: 2)
        LoggingSystem.bootstrap(
            { name, provider in
                var handler = RideLogHandler(label: name, format: format, level: level, colored: colored)
                handler.metadataProvider = provider
                return handler
            }, metadataProvider: metadataProvider)
        return Logger(label: label)
    }
}

extension ANSI {
    static func level(_ level: Logger.Level, _ text: String) -> String {
        switch level {
        case .trace, .debug: dim(text)
        case .info, .notice: green(text)
        case .warning: yellow(text)
        case .error, .critical: red(text)
        }
    }
}
