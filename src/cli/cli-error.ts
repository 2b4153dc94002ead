/** A failure of a CLI command: printed without a stack, exit code 1 (2 for usage). */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
