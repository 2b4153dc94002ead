/** Writes one operational log line of a service on stdout, as JSON stamped with the time (never a secret). */
export const logLine = (line: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify({ at: new Date().toISOString(), ...line })}\n`);
};

/**
 * Stops a running service on SIGTERM or SIGINT and exits 0, unless `dying()` says an unexpected
 * error is already stopping it (that stop ends with its own status).
 */
export function stopOnSignals(running: { stop(): Promise<void> }, dying: () => boolean = () => false): void {
  const stop = (signal: string) => {
    if (dying()) return;
    logLine({ level: 'info', msg: 'stopping', signal });
    void running.stop().then(() => {
      logLine({ level: 'info', msg: 'stopped' });
      process.exit(0);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
