import Testing
import VerityKit
import VerityServer
