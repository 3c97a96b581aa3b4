/// The platform's version: every executable's `--version`, the API document's `info.version`.
/// One number for all processes, since they are built and shipped together.
public enum PlatformVersion {
    public static let current = "0.21.0"
}
