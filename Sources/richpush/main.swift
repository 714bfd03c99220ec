import RichPushCLI

// Everything is in RichPushCLI: the command table, parsing, help and the exit status.
await RichPushCommand.main()
