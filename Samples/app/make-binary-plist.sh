#!/usr/bin/env bash
# make-binary-plist.sh - writes PersonalizedContent/Info.plist as a binary plist (bplist00), the form
# `plutil -convert binary1` gives on a Mac. Run by a developer; the output is committed. Needs python3.
set -euo pipefail
cd "$(dirname "$0")"
python3 - <<'PY'
import plistlib
plist = {
    "CFBundleIdentifier": "com.example.richpushdemo.PersonalizedContent",
    "NSExtension": {
        "NSExtensionPointIdentifier": "com.apple.usernotifications.content-extension",
        "NSExtensionMainStoryboard": "MainInterface",
        "NSExtensionAttributes": {
            "UNNotificationExtensionCategory": "personalized",
            "UNNotificationExtensionInitialContentSizeRatio": 1.0,
            "UNNotificationExtensionDefaultContentHidden": False,
        },
    },
}
with open("PersonalizedContent/Info.plist", "wb") as f:
    plistlib.dump(plist, f, fmt=plistlib.FMT_BINARY)
PY
