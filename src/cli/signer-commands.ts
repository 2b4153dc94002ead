/**
 * `vigil log quarantine-tail` and `vigil signer`: the operator's side of signed heads (docs/log.md,
 * "Signed heads").
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { generateKeyPair } from '../kernel/ed25519.js';
import { writeSecretFile } from '../kernel/secret-files.js';
import { openKeeperHost } from '../log/head-signer.js';
import { loadLogKey } from '../log/log-key.js';
import { openLmdbLog } from '../log/lmdb-log.js';
import { openLmdbStore } from '../log/lmdb-store.js';
import { quarantineTail, type QuarantinedTail } from '../log/quarantine-tail.js';
import { serveSigner } from '../log/signer-socket.js';
import { signerKeyString, verifierKeyString, verifierOf } from '../log/signed-note.js';
import type { Config } from '../services/config-schema.js';
import { CliError } from './cli-error.js';
import { noMoreThan, parseCommandArgs, usageError } from './usage.js';
import { openInstanceSigner } from './instance/head-signing.js';

/** The folder quarantined tails go to by default: beside the store folder, outside it. */
export function quarantineDir(config: Config): string {
  return join(dirname(resolve(config.storage.path)), 'quarantine');
}

/**
 * Sets the records past the last signed head aside (src/log/quarantine-tail.ts) and records that in
 * the log, signed by the instance's signer, with the operator as actor. The service must be stopped.
 */
export async function logQuarantineTail(
  config: Config,
  outDir: string = quarantineDir(config),
  reason?: string,
): Promise<{ quarantined: number } & Partial<QuarantinedTail>> {
  const now = new Date();
  const store = openLmdbStore(config.storage.path);
  let moved: QuarantinedTail | undefined;
  try {
    moved = await quarantineTail(store, outDir, now);
    if (!moved) return { quarantined: 0 };
    const log = openLmdbLog(store, undefined, { signer: await openInstanceSigner(config) });
    try {
      const resumed = await log.signing;
      const actor = { id: userInfo().username, authentication: 'local-cli' };
      await log.append([
        ...(resumed?.rewound
          ? [{ type: 'SignedHeadsRewound', at: now.toISOString(), actor, data: resumed.rewound }]
          : []),
        {
          type: 'LogTailQuarantined',
          at: now.toISOString(),
          actor,
          data: { ...moved, ...(reason !== undefined ? { reason } : {}) },
        },
      ]);
    } finally {
      await log.close();
    }
    return { quarantined: moved.toSeq - moved.fromSeq + 1, ...moved };
  } finally {
    await store.close();
  }
}

/**
 * `vigil signer key --out FILE`, `vigil signer rotate --key OLD --out NEW --state DIR` and
 * `vigil signer serve --key FILE --state DIR --socket PATH`.
 */
export async function runSignerCommand(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  out: (v: unknown) => void,
): Promise<number> {
  const { values, positionals } = parseCommandArgs('signer', args, {
    key: { type: 'string' },
    state: { type: 'string' },
    socket: { type: 'string' },
    out: { type: 'string' },
  });
  noMoreThan('signer', positionals, 1);
  const [verb] = positionals;
  if (verb === 'key') {
    if (!values.out) throw usageError('signer', 'signer key: --out FILE is required');
    if (existsSync(values.out)) throw new CliError(`signer key: ${values.out} exists; not overwriting a key`, 2);
    const signer = { name: `vigil.log/${randomBytes(16).toString('hex')}`, seed: generateKeyPair().seed };
    writeSecretFile(values.out, `${signerKeyString(signer)}\n`);
    out(verifierKeyString(verifierOf(signer)));
    return 0;
  }
  if (verb === 'rotate') {
    if (!values.key || !values.out || !values.state)
      throw usageError('signer', 'signer rotate: --key OLD, --out NEW and --state DIR are required');
    const { signerRotate } = await import('./rotate-key.js');
    out(signerRotate(values.key, values.out, values.state));
    return 0;
  }
  if (verb !== 'serve')
    throw usageError(
      'signer',
      verb === undefined ? 'signer: expected key, rotate or serve' : `signer: unknown subcommand ${verb}`,
    );
  const keyFile = values.key ?? (env.CREDENTIALS_DIRECTORY ? join(env.CREDENTIALS_DIRECTORY, 'log-signing.key') : '');
  const stateDir = values.state ?? env.STATE_DIRECTORY?.split(':')[0];
  if (!keyFile) throw usageError('signer', 'signer serve: --key FILE (or $CREDENTIALS_DIRECTORY/log-signing.key)');
  if (!stateDir) throw usageError('signer', 'signer serve: --state DIR (or $STATE_DIRECTORY)');
  if (!values.socket) throw usageError('signer', 'signer serve: --socket PATH is required');
  let host;
  try {
    host = openKeeperHost(loadLogKey(keyFile), stateDir);
  } catch (err) {
    throw new CliError((err as Error).message, 1);
  }
  const server = await serveSigner(host, values.socket);
  const line = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ at: new Date(), ...o })}\n`);
  line({
    level: 'info',
    msg: 'head signer listening',
    socket: values.socket,
    key: verifierKeyString(host.keeper.verifier),
    signed: host.keeper.current().size,
  });
  await new Promise<void>((done) => {
    const stop = () => server.close(() => done());
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  host.flush();
  line({ level: 'info', msg: 'head signer stopped', signed: host.keeper.current().size });
  return 0;
}
