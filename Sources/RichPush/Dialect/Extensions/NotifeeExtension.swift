import Foundation

/// notifee's extension helper (`invertase/notifee`, `ios/NotifeeCore/NotifeeCoreExtensionHelper.m@b73c76d`)
/// as it chooses its media. Every rule is in `docs/sdks.md`.
///
/// - `L43-L69`: no `notifee_options`, the content as sent; a value that is not a dictionary raises
///   when it is copied and written to.
/// - `NotifeeCoreExtensionHelper.m@b73c76d:L75-L113`: `ios` is read as a dictionary
///   (`options[@"ios"][@"communicationInfo"]`): another type raises.
/// - `L115-L130`: a non-empty `ios.attachments` array decides with its element 0 (a string or number
///   raises at `count`); only when that gives nothing (an empty array or an empty dictionary as
///   element 0) is `image` used, which must be longer than one UTF-16 unit and is not type-checked
///   (a number raises at `length`); with an empty element 0, writing `image` into it raises.
/// - `L160-L166,L211-L215`: inside `@try`, a missing or non-string `url`, or a nil `NSURL`, is caught:
///   the rebuilt content is delivered without media.
enum NotifeeExtension {
    static let raised = "the extension dies and iOS shows the notification as sent"

    static func read(_ root: JSONValue) -> MediaReading {
        guard let options = root["notifee_options"] else {
            return .none("the payload has no 'notifee_options', the key notifee's extension reads", hint: nil)
        }
        guard case .object = options else {
            return .raises(
                "'notifee_options' is \(options.typeName), not a dictionary: notifee copies it and writes to it, "
                    + "which raises; \(raised).", item: nil)
        }
        if let ios = options["ios"], !ios.isNull, !ios.isObject {
            return .raises(
                "'notifee_options.ios' is \(ios.typeName), not a dictionary: reading it raises; \(raised).", item: nil)
        }
        var emptyFirst = false
        if case .array(let attachments)? = options["ios"]?["attachments"], let first = attachments.first {
            switch first {
            case .object(let members) where members.isEmpty:
                emptyFirst = true
            case .object:
                guard case .string(let url)? = first["url"] else {
                    return .refused(
                        .attachmentURLMissing,
                        "'notifee_options.ios.attachments[0]' has no string 'url'; it decides over 'image', and notifee "
                            + "catches the error and delivers its content without media.", hint: nil, item: nil)
                }
                return .items([MediaItem(id: first["id"]?.stringValue, url: url)], warnings: [])
            case .array(let inner) where !inner.isEmpty:
                return .refused(
                    .attachmentNotAnObject,
                    "'notifee_options.ios.attachments[0]' is an array, not a dictionary: notifee catches the error and "
                        + "delivers its content without media.", hint: nil, item: nil)
            case .array:
                emptyFirst = true
            default:
                return .raises(
                    "'notifee_options.ios.attachments[0]' is \(first.typeName), not a dictionary: notifee asks it for "
                        + "its count, which raises; \(raised).", item: nil)
            }
        }
        guard let image = options["image"], !image.isNull else {
            return .none("the payload has no 'notifee_options.image' and no 'ios.attachments[0]'", hint: nil)
        }
        guard case .string(let url) = image else {
            return .raises(
                "'notifee_options.image' is \(image.typeName), not a string: notifee asks it for its length, which "
                    + "raises; \(raised).", item: nil)
        }
        guard url.utf16.count > 1 else {
            return .none(
                "'notifee_options.image' is \(url.isEmpty ? "empty" : "one character"): notifee skips it", hint: nil)
        }
        if emptyFirst {
            return .raises(
                "'notifee_options.ios.attachments[0]' is empty and immutable, and notifee writes 'image' into it, "
                    + "which raises; \(raised).", item: nil)
        }
        return .items([MediaItem(url: url)], warnings: [])
    }
}
