/** How long the exit after a storage failure waits for the read side's worker to stop between two folds. */
export const READ_SIDE_HALT_MS = 2000;

/**
 * The end of the fatal path of a storage failure: halts the read side (`haltOf` gives how, once the store is open),
 * then calls `onFatal`, which ends the process.
 */
export function exitAfterReadSideHalt(
  haltOf: () => (() => Promise<boolean>) | undefined,
  log: (line: Record<string, unknown>) => void,
  onFatal: (err: Error) => void,
): (err: Error) => void {
  // A storage failure ends the process without closing the store: the read side's worker is first
  // stopped between two transactions, as the exit ending it inside one hangs in lmdb-js's clean-up.
  // A worker that does not stop in time is not waited for: the process is killed instead (exit
  // status 137, not 70) rather than left hanging, answering nothing, with its port closed.
  return (err) => {
    void (haltOf()?.() ?? Promise.resolve(true)).then((halted) => {
      if (!halted) {
        log({
          level: 'fatal',
          msg:
            `the read side did not stop within ${READ_SIDE_HALT_MS} ms: killing the process, whose exit would ` +
            `wait for it forever`,
          error: err.message,
        });
        process.kill(process.pid, 'SIGKILL');
      }
      onFatal(err);
    });
  };
}
