import Foundation
import Hummingbird

enum RequestBodyLimit {
    static let bytes = 64 * 1024
}
