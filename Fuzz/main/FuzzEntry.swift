import Foundation
import ProtocolFuzzing

/// libFuzzer's entry point: a broken property stops the process, which libFuzzer reports as a crash
/// (and saves the input). Built by `make fuzz` (`RIDE_FUZZ=1`, see Package.swift).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let violations = ProtocolFuzz.violations(of: Array(UnsafeBufferPointer(start: data, count: size)))
    if !violations.isEmpty {
        fatalError("property broken:\n" + violations.joined(separator: "\n"))
    }
    return 0
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// SwiftPM names an executable's entry point `<module>_main` and calls it from its own `main`;
/// libFuzzer's driver takes over from there.
@_cdecl("ride_fuzz_main")
public func rideFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return runFuzzerDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) }
}
#else
/// Without libFuzzer (a plain `swift build`): replays the inputs named on the command line — files,
/// or folders of them, such as a crash libFuzzer saved — and prints what each breaks.
@main
enum ReplayInputs {
    static func main() {
        let paths = CommandLine.arguments.dropFirst()
        guard !paths.isEmpty else {
            print("usage: ride-fuzz <input file or folder>...   (the libFuzzer build: make fuzz)")
            exit(64)
        }
        var broken = 0
        for path in paths.flatMap(files) {
            guard let input = FileManager.default.contents(atPath: path) else {
                print("\(path): cannot read")
                broken += 1
                continue
            }
            let violations = ProtocolFuzz.violations(of: Array(input))
            print("\(path): \(violations.isEmpty ? "ok" : violations.joined(separator: "\n  "))")
            if !violations.isEmpty { broken += 1 }
        }
        exit(broken == 0 ? 0 : 1)
    }

    static func files(_ path: String) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { (path as NSString).appendingPathComponent($0) }
    }
}
#endif
