import Testing
import VerityCore

@Suite("Hex")
struct HexTests {
    @Test("Two lowercase digits per byte, leading zeros kept")
    func encodes() {
        #expect(Hex.encode([]) == "")
        #expect(Hex.encode([0x00, 0x0f, 0xab, 0xff]) == "000fabff")
        let bytes = (0...255).map(UInt8.init)
        #expect(Hex.encode(bytes) == bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined())
    }
}
