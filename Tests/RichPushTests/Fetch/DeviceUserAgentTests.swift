import RichPush
import Testing

/// CFNetwork's User-Agent for the service extension's bundle.
@Suite struct DeviceUserAgentTests {
    @Test func defaultsToXcodesServiceExtensionTargetOnIOS17() {
        #expect(DeviceUserAgent().description == "NotificationService/1 CFNetwork/1496.0.7 Darwin/23.5.0")
        #expect(FetchPolicy().userAgent == DeviceUserAgent().description)
    }

    @Test func carriesTheBundlesNameAndBuild() {
        let agent = DeviceUserAgent(bundleName: "AcmeService", bundleVersion: "2024.7.1")
        #expect(agent.description == "AcmeService/2024.7.1 CFNetwork/1496.0.7 Darwin/23.5.0")
    }

    @Test func percentEncodesWhatAProductTokenCannotHold() {
        let agent = DeviceUserAgent(bundleName: "Acme Push/é", bundleVersion: "1 (2)")
        #expect(agent.description == "Acme%20Push%2F%C3%A9/1%20%282%29 CFNetwork/1496.0.7 Darwin/23.5.0")
    }

    @Test(arguments: [nil, "", "$(PRODUCT_NAME)", "$(EXECUTABLE_NAME)"])
    func anUnexpandedOrMissingNameGetsTheDefault(name: String?) {
        let agent = DeviceUserAgent(bundleName: name, bundleVersion: "$(CURRENT_PROJECT_VERSION)")
        #expect(agent.bundleName == "NotificationService" && agent.bundleVersion == "1")
    }
}
