import Foundation
import SQLKit
import VerityCore

/// A stored value the code does not understand: the database was edited by hand or by a newer version.
enum StoreError: Error, CustomStringConvertible {
    case corruptValue(column: String)

    var description: String {
        switch self {
        case .corruptValue(let column): "Unexpected stored value in column \(column)."
        }
    }
}
