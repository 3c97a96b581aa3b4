import ArgumentParser
import PlatformLauncher
import SettingsKit

/// `--bin-dir`, for every command that starts the platform's executables.
struct BinDirectoryOption: ParsableArguments {
    @Option(
        name: .customLong("bin-dir"),
        help: helpWithEnv(
            "Directory holding the platform's executables (ride-*, ridectl)", env: "RIDE_BIN_DIR", default: "ridectl's own directory"))
    var flag: String?

    /// The directory: the flag, else `RIDE_BIN_DIR`, else ridectl's own.
    var path: String { binaryDirectory(flag) }
}
