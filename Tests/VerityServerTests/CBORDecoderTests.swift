import Foundation
import Testing

@testable import VerityServer

@Suite("CBOR decoder")
struct CBORDecoderTests {
    let decoder = CBORDecoder()

    @Test("Integers, strings, arrays, maps and simple values decode to what they encode")
    func wellFormed() throws {
        #expect(try decoder.decode(Data([0x00])) == .unsigned(0))
        #expect(try decoder.decode(Data([0x18, 0xFF])) == .unsigned(255))
        #expect(try decoder.decode(Data([0x38, 0x63])) == CBORValue(-100))
        #expect(try decoder.decode(Data([0x39, 0x01, 0x00])) == CBORValue(-257))
        #expect(try decoder.decode(Data([0x43, 1, 2, 3])) == .bytes(Data([1, 2, 3])))
        #expect(try decoder.decode(Data([0x62, 0x68, 0x69])) == .text("hi"))
        #expect(try decoder.decode(Data([0x82, 0xF5, 0xF6])) == .array([.bool(true), .null]))
        let map = try decoder.decode(Data([0xA2, 0x01, 0x02, 0x20, 0x61, 0x78]))
        #expect(map[1] == .unsigned(2))
        #expect(map[-1] == .text("x"))
        #expect(try decoder.decode(Data([0xF4])) == .bool(false))
        #expect(try decoder.decode(Data([0xF7])) == .undefined)
    }

    @Test(
        "Malformed or unsupported input is a typed error",
        arguments: [
            ([UInt8](), CBORError.truncated),
            ([0x18], .truncated),
            ([0x43, 1, 2], .truncated),
            ([0x01, 0x02], .trailingBytes),
            ([0x5F, 0x41, 0x00, 0xFF], .indefiniteLength),
            ([0x9F, 0xFF], .indefiniteLength),
            ([0xBF, 0xFF], .indefiniteLength),
            ([0x1C], .reservedAdditionalInformation),
            ([0xA2, 0x01, 0x00, 0x01, 0x01], .duplicateMapKey),
            ([0xA2, 0x61, 0x61, 0x00, 0x61, 0x61, 0x01], .duplicateMapKey),
            ([0x62, 0xC3, 0x28], .invalidUTF8),
            ([0xF9, 0x3C, 0x00], .unsupported),
            ([0xFB, 0, 0, 0, 0, 0, 0, 0, 0], .unsupported),
            ([0xC1, 0x00], .unsupported),
            ([0xE0], .unsupported),
            // Counts far beyond the bytes left are refused before anything is allocated.
            ([0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .truncated),
            ([0xBB, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00], .truncated),
            ([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00], .truncated),
        ])
    func refused(bytes: [UInt8], error: CBORError) {
        #expect(throws: error) { try decoder.decode(Data(bytes)) }
    }

    @Test("Nesting deeper than the cap and inputs larger than the cap are refused")
    func caps() throws {
        let deep = Data(repeating: 0x81, count: 16) + Data([0x00])
        #expect(throws: CBORError.tooDeep) { try decoder.decode(deep) }
        let shallowEnough = Data(repeating: 0x81, count: 15) + Data([0x00])
        #expect(try decoder.decode(shallowEnough).array != nil)
        let small = CBORDecoder(maximumSize: 8, maximumDepth: 4)
        #expect(throws: CBORError.tooLarge) { try small.decode(Data([0x49]) + Data(count: 9)) }
        #expect(throws: CBORError.tooDeep) { try small.decode(Data([0x81, 0x81, 0x81, 0x81, 0x00])) }
    }

    @Test("decodePrefix says how many bytes the first item took")
    func prefix() throws {
        let (value, length) = try decoder.decodePrefix(Data([0x82, 0x01, 0x02, 0xFF, 0xFF]))
        #expect(value == .array([.unsigned(1), .unsigned(2)]))
        #expect(length == 3)
    }

    @Test("Property: random values round-trip, and every proper prefix of their encoding is refused as truncated")
    func randomValuesAndTruncations() throws {
        var random = SeededGenerator(seed: 0x5EED_CB0A)
        for _ in 0..<400 {
            let value = Self.randomValue(depth: 0, using: &random)
            let encoded = CBOREncoder.encode(value)
            #expect(try decoder.decode(encoded) == value)
            for cut in 0..<encoded.count {
                #expect(throws: CBORError.truncated) { try decoder.decode(encoded.prefix(cut)) }
            }
            #expect(throws: CBORError.trailingBytes) { try decoder.decode(encoded + Data([0x00])) }
        }
    }

    @Test("Property: random bytes and random mutations of valid items never crash: a value or a CBORError")
    func randomBytes() {
        var random = SeededGenerator(seed: 0xF022_1234)
        var outcomes = (values: 0, errors: 0)
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round.isMultiple(of: 2) {
                bytes = Self.randomBytes(upTo: 48, using: &random)
            } else {
                bytes = [UInt8](CBOREncoder.encode(Self.randomValue(depth: 0, using: &random)))
                for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            do {
                _ = try decoder.decode(Data(bytes))
                outcomes.values += 1
            } catch {
                outcomes.errors += 1
            }
            // The same bytes read as authenticator data or a COSE key: a value or a typed error, never a trap.
            _ = try? AuthenticatorData(Data(repeating: 0, count: 32) + Data([0xC1, 0, 0, 0, 1]) + bytes)
            _ = try? COSEPublicKey(cbor: bytes)
        }
        #expect(outcomes.values > 0)
        #expect(outcomes.errors > 0)
    }

    static func randomValue(depth: Int, using random: inout SeededGenerator) -> CBORValue {
        let kinds = depth < 4 ? 9 : 7
        switch Int.random(in: 0..<kinds, using: &random) {
        case 0: return .unsigned(random.next() >> UInt64.random(in: 0...63, using: &random))
        case 1: return .negative(random.next() >> UInt64.random(in: 0...63, using: &random))
        case 2: return .bytes(Data(randomBytes(upTo: 40, using: &random)))
        case 3: return .text(String((0..<Int.random(in: 0...30, using: &random)).map { _ in randomCharacter(&random) }))
        case 4: return .bool(Bool.random(using: &random))
        case 5: return .null
        case 6: return .undefined
        case 7:
            return .array(
                (0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            var entries: [CBORValue: CBORValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                entries[randomValue(depth: 4, using: &random)] = randomValue(depth: depth + 1, using: &random)
            }
            return .map(entries)
        }
    }

    static func randomBytes(upTo count: Int, using random: inout SeededGenerator) -> [UInt8] {
        (0..<Int.random(in: 0...count, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// One- to four-byte UTF-8 characters.
    static func randomCharacter(_ random: inout SeededGenerator) -> Character {
        "aé€😀z".randomElement(using: &random) ?? "a"
    }
}
