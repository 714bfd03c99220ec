// The POSIX layer is part of the library's API (its errors carry ``SystemError``, its stores hand out
// ``TemporaryFile``s, its sessions check a ``DescriptorBudget``): whoever imports RichPush sees it.
@_exported import POSIXKit
