import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore

/// How to reach Meta's WhatsApp Cloud API: the business phone number, its access token and the authentication
/// template that carries codes.
public struct MetaWhatsAppConfiguration: Sendable, CustomStringConvertible {
    /// The WhatsApp Business phone number id that messages come from (a part of the request path).
    public var phoneNumberID: String
    /// A system-user access token with `whatsapp_business_messaging`, sent as a Bearer token. Never logged.
    public var accessToken: String
    /// The name of an approved authentication template with a copy-code button.
    public var templateName: String
    /// The template's language code for each message language; a language without one uses its own code.
    public var templateLanguages: [String: String]
    /// The Graph API version in the path, such as `v21.0`.
    public var apiVersion: String
    /// The API origin, without a trailing path; a local stand-in in tests.
    public var baseURL: String
    /// How long one request, response body included, may take before it counts as a transient failure.
    public var timeout: Duration

    /// The language codes Meta gives the authentication templates of Verity's message languages.
    public static let defaultTemplateLanguages = [
        "en": "en_US", "es": "es", "fr": "fr", "de": "de", "pt": "pt_BR", "ja": "ja",
    ]

    /// Creates a configuration.
    public init(
        phoneNumberID: String, accessToken: String, templateName: String,
        templateLanguages: [String: String] = defaultTemplateLanguages, apiVersion: String = "v21.0",
        baseURL: String = "https://graph.facebook.com", timeout: Duration = .seconds(15)
    ) {
        self.phoneNumberID = phoneNumberID
        self.accessToken = accessToken
        self.templateName = templateName
        self.templateLanguages = templateLanguages
        self.apiVersion = apiVersion
        self.baseURL = baseURL
        self.timeout = timeout
    }

    /// Describes the configuration with the access token redacted.
    public var description: String {
        "MetaWhatsAppConfiguration(phoneNumberID: \(phoneNumberID), accessToken: <redacted>, "
            + "templateName: \(templateName), apiVersion: \(apiVersion), baseURL: \(baseURL), timeout: \(timeout))"
    }
}
