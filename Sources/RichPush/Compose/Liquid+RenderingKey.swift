extension Liquid.Document {
    /// The attributes this document's tags read, each name once, in the order first read.
    struct ReadAttributes: Sendable {
        var standard: [String] = []
        var custom: [String] = []
        var campaign = false
    }

    /// What rendering reads of a user: the only part of the user its rendering depends on.
    var readAttributes: ReadAttributes {
        var read = ReadAttributes()
        var seenStandard: Set<String> = []
        var seenCustom: Set<String> = []
        var pending: [Liquid.Document] = [self]
        while let document = pending.popLast() {
            switch document {
            case .plain: continue
            case .object(let members): pending += members.map(\.value)
            case .array(let items): pending += items
            case .text(let template, _):
                for case .tag(let tag) in template.segments {
                    switch tag.expression?.variable {
                    case .standard(let name)?: if seenStandard.insert(name).inserted { read.standard.append(name) }
                    case .custom(let name)?: if seenCustom.insert(name).inserted { read.custom.append(name) }
                    case .campaign?: read.campaign = true
                    case nil: continue
                    }
                }
            }
        }
        return read
    }
}

extension Liquid.Document.ReadAttributes {
    /// The values `user` gives the attributes read, as the renderer looks them up (the last member of
    /// a name wins; `user_id` falls back to `external_id`; a campaign tag reads the user's `campaign`),
    /// as bytes: two users with the same key render the same payload, warnings and refusal included.
    func key(for user: JSONValue) -> [UInt8] {
        func last(_ name: String, in value: JSONValue?) -> JSONValue? {
            guard case .object(let members)? = value else { return nil }
            return members.last { $0.key == name }?.value
        }
        var key: [UInt8] = []
        func add(_ value: JSONValue?) {
            if let value { key += value.utf8 } else { key.append(0) }
            key.append(1)
        }
        for name in standard {
            var value = last(name, in: user)
            if value == nil, name == "user_id" { value = last("external_id", in: user) }
            add(value)
        }
        let custom = last("custom_attributes", in: user)
        for name in self.custom { add(last(name, in: custom)) }
        if campaign { add(last("campaign", in: user)) }
        return key
    }
}

extension Composer.Request {
    /// A key for what composing reads of `user` (``Liquid/Document/ReadAttributes/key(for:)``): users
    /// with equal keys get the same result, so a caller composing many users can reuse it. Nil for a
    /// request without Liquid to render, or without a user.
    package func renderingKey(for user: JSONValue?) -> [UInt8]? {
        guard let user, let readAttributes else { return nil }
        return readAttributes.key(for: user)
    }
}
