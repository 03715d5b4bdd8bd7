import Testing
import VerityCore

@Suite("Percent-encoding")
struct PercentEncodingTests {
    @Test("keeps ASCII letters, digits and RFC 3986's unreserved marks; encodes every other UTF-8 byte in upper case")
    func unreserved() {
        #expect(PercentEncoding.encode("Acme Inc.") == "Acme%20Inc.")
        #expect(PercentEncoding.encode("a-b_c.d~e") == "a-b_c.d~e")
        #expect(PercentEncoding.encode("alice@example.com:+1/?#&=") == "alice%40example.com%3A%2B1%2F%3F%23%26%3D")
        #expect(PercentEncoding.encode("é") == "%C3%A9")
        #expect(PercentEncoding.encode("") == "")
    }

    @Test("a form body keeps *-._, writes a space as + and encodes ~ and +")
    func form() {
        let encoded = PercentEncoding.encode("+1 415*~a.b_c-d", keeping: "*-._", spaceAsPlus: true)
        #expect(encoded == "%2B1+415*%7Ea.b_c-d")
    }
}
