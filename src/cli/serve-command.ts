import type { Config } from '../services/config-schema.js';
import { loadConfig, withListenOverrides, type ListenSource } from './config-file.js';
import { startInstance } from './instance/serve.js';
import { logLine, stopOnSignals } from './service-process.js';
import { StartupError } from './instance/startup-error.js';

/**
 * How long `vigil serve` may take to stop after an unexpected error before it kills itself (the graceful stop gives
 * connections 10 s).
 */
const UNEXPECTED_STOP_MS = 20_000;

/** What the start line says when requests from this machine need a token too. */
const LOOPBACK_OFF =
  'loopback administration is off (server.allowLoopbackAdmin is false in the config in force): every /api/v1 request ' +
  'needs a bearer token; create one with vigil api-token-generate <principal> <role>, or set ' +
  'server.allowLoopbackAdmin: true for local use';

/** A running instance, as `vigil serve` started it. */
type Running = Awaited<ReturnType<typeof startInstance>>;

/** The options of the command line that `vigil serve` reads. */
export interface ServeOptions {
  readonly config?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: string | undefined;
}

/** Ends the process after a storage failure, before it acknowledges more writes. */
function onFatal(err: Error): void {
  logLine({
    level: 'fatal',
    msg: 'storage failure: stopping without acknowledging more writes',
    error: err.message,
  });
  process.exit(70);
}

/**
 * Stops the instance (`running()`, once started) on an error nothing caught, then exits with status 70; returns
 * whether such a stop is under way.
 */
function stopOnUncaughtError(running: () => Running | undefined): () => boolean {
  // An error nothing caught (a bug) stops the process as SIGTERM does (requests in flight are
  // answered, the store closed), then with status 70. Exiting at once is no option: Node's exit
  // waits for LMDB's write thread, which waits for this thread inside a write transaction, for
  // minutes. Should the stop itself hang, the process kills itself: a supervisor restarts it.
  let dying = false;
  process.on('uncaughtException', (err) => {
    if (dying) return;
    dying = true;
    logLine({
      level: 'fatal',
      msg: 'unexpected error: stopping as on SIGTERM, then exiting with status 70 (please report this line)',
      error: err?.message ?? String(err),
      stack: String(err?.stack ?? '').slice(0, 2000),
    });
    setTimeout(() => {
      logLine({
        level: 'fatal',
        msg: `could not stop within ${UNEXPECTED_STOP_MS / 1000} s of the unexpected error: killing the process`,
      });
      process.kill(process.pid, 'SIGKILL');
    }, UNEXPECTED_STOP_MS).unref();
    void (running()?.stop() ?? Promise.resolve()).catch(() => undefined).finally(() => process.exit(70));
  });
  return () => dying;
}

/** Says where the instance listens, with the configuration in force, once it has started. */
function logListening(running: Running, served: Config, from: ListenSource, source: string): void {
  logLine({
    level: 'info',
    msg: 'listening',
    url: running.url,
    config: source === '(defaults)' ? '(none: built-in defaults)' : source,
    listenFrom: from,
    loopbackAdmin: served.server.allowLoopbackAdmin,
    store: served.storage.path,
    foldedAtStart: running.instance.folded,
    head: running.instance.log.head().seq,
    ...(served.server.allowLoopbackAdmin ? {} : { note: LOOPBACK_OFF }),
  });
}

/** Applies the config file's `monitoring` section again on SIGHUP. */
function reloadOnHangup(running: Running, configFile: string | undefined): void {
  // SIGHUP re-reads the config file and applies its `monitoring` section (docs/monitoring.md);
  // a file that no longer validates is reported and the settings in force are kept.
  process.on('SIGHUP', () => {
    try {
      running.reload(loadConfig(configFile, process.env, process.cwd()).config);
    } catch (err) {
      logLine({
        level: 'error',
        msg: 'config reload failed: keeping the settings in force',
        error: (err as Error)?.message,
      });
    }
  });
}

/**
 * Runs `vigil serve` with the configuration `loaded` from `source`: starts the instance, says where it listens, and
 * stops it on a signal or an unexpected error; never resolves (the process exits).
 */
export async function serveCommand(
  options: ServeOptions,
  loaded: { readonly config: Config; readonly source: string },
): Promise<number> {
  const { config: served, from } = withListenOverrides(loaded.config, options, process.env, loaded.source);
  let running: Running | undefined;
  const dying = stopOnUncaughtError(() => running);
  running = await startInstance(served, logLine, onFatal, from).catch((err: unknown) => {
    throw diskFull(err, served.storage.path) ?? err;
  });
  logListening(running, served, from, loaded.source);
  stopOnSignals(running, dying);
  reloadOnHangup(running, options.config);
  return await new Promise<number>(() => {});
}

/** The StartupError for a start that found the store's disk full, saying what to do; undefined for any other error. */
function diskFull(err: unknown, storePath: string): StartupError | undefined {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e?.code !== 'ENOSPC' && !/\bENOSPC\b|no space left on device/i.test(e?.message ?? '')) return undefined;
  return new StartupError(
    `the disk holding the store ${storePath} is full (no space left on device): free space there, or point ` +
      `storage.path at a disk with room, then start again`,
  );
}
