import Testing
import VerityCore

@Suite("The error catalogue")
struct ErrorCodeTests {
    @Test("Every error status maps to a generic code of the same class", arguments: ErrorCode.allCases)
    func genericCodeKeepsClass(code: ErrorCode) {
        #expect(ErrorCode(genericFor: code.httpStatus).httpStatus / 100 == code.httpStatus / 100)
    }

    @Test(
        "Statuses without a code of their own: the generic code for each",
        arguments: [
            (401, ErrorCode.unauthorized), (404, .notFound), (418, .invalidRequest), (429, .rateLimited),
            (502, .internalError), (503, .serviceUnavailable),
        ])
    func genericCodes(status: Int, code: ErrorCode) {
        #expect(ErrorCode(genericFor: status) == code)
    }
}
