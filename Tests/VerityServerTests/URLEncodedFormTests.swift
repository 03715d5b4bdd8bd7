import Testing

@testable import VerityServer

@Suite("Form-encoded text")
struct URLEncodedFormTests {
    @Test("Pairs keep their order; + is a space, %XX a byte, a pair without = has an empty value")
    func pairs() throws {
        let pairs = URLEncodedForm.pairs("To=%2B1+415&Channel=sms&Empty&Name=Zo%C3%AB&Name=x%3Dy&&")
        #expect(pairs.map(\.name) == ["To", "Channel", "Empty", "Name", "Name"])
        #expect(pairs.map(\.value) == ["+1 415", "sms", "", "Zoë", "x=y"])
        #expect(URLEncodedForm.pairs("").isEmpty)
    }

    @Test("A broken name or value is nil, and validPairs refuses the whole text")
    func broken() throws {
        let pairs = URLEncodedForm.pairs("a=%ZZ&%FF=b&c=d")
        #expect(pairs.map(\.name) == ["a", nil, "c"])
        #expect(pairs.map(\.value) == [nil, "b", "d"])
        #expect(URLEncodedForm.validPairs("a=%ZZ&c=d") == nil)
        let valid = try #require(URLEncodedForm.validPairs("c=d&e=f+g"))
        #expect(valid.map(\.name) == ["c", "e"])
        #expect(valid.map(\.value) == ["d", "f g"])
    }
}
