/// A named value of a `/users/track` object: an event property or an attribute.
package struct TrackField: Sendable, Equatable, Codable {
    package var key: String
    package var value: AnalyticsValue

    package init(key: String, value: AnalyticsValue) {
        self.key = key
        self.value = value
    }
}
