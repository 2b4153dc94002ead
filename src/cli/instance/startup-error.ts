/** A known reason `vigil serve` cannot start, with what to do about it: printed without a stack. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Where the listen address came from, to name it in a refusal: `server.port in FILE`, `--port`, `VIGIL_PORT`. */
export interface ListenOrigin {
  readonly host: string;
  readonly port: string;
}

/**
 * The StartupError for a failure to listen on host:port, saying what to change; undefined for an
 * error that is not one of the known ones.
 */
export function listenFailure(
  err: NodeJS.ErrnoException,
  host: string,
  port: number,
  origin: ListenOrigin,
): StartupError | undefined {
  const change =
    'choose another port with --port N or VIGIL_PORT=N (0 picks a free one) or server.port in the config file';
  switch (err.code) {
    case 'EADDRINUSE':
      return new StartupError(
        `port ${port} on ${host} is already in use (the port comes from ${origin.port}): stop the process that holds ` +
          `it (another vigil serve?) or ${change}`,
      );
    case 'EACCES':
      return new StartupError(
        `not allowed to listen on port ${port} on ${host} (the port comes from ${origin.port}): ports below 1024 ` +
          `need privileges; ${change}`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `cannot listen on ${host}: it is not an address of this machine (the host comes from ${origin.host}); use ` +
          `127.0.0.1, 0.0.0.0 or one of this machine's addresses with --host or VIGIL_HOST, or change server.host`,
      );
    default:
      return undefined;
  }
}
