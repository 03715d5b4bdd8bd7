import ArgumentParser
import Foundation
import Logging
import VerityServer

/// The project a command works on (`--project`) and where the data lives; shared by every command that names a
/// project.
struct ProjectOptions: ParsableArguments {
    @Option(name: .customLong("project"), help: "The project id (prj_…).")
    var id: String

    @OptionGroup var storage: StorageOptions
}
