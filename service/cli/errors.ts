/** A mistake in how a command was called, or an input it cannot read: exit 2, one clear line, no stack trace. */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
