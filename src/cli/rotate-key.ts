/**
 * `vigil log rotate-key` (the embedded signer) and `vigil signer rotate` (a separate one): replacing the
 * log's signing key with a rotation note the old key cosigns (docs/log.md, "Rotating the signing key").
 */
import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { generateKeyPair } from '../kernel/ed25519.js';
import { renameKeepingOwner } from '../kernel/owned-files.js';
import { refuseForeignOwner, writeSecretFile } from '../kernel/secret-files.js';
import { embeddedHeadSigner, readRotations, recordRotation } from '../log/head-signer.js';
import { makeRotation, rotationsTo } from '../log/key-rotation.js';
import { loadLogKey } from '../log/log-key.js';
import { storedAttestation, openLmdbLog } from '../log/lmdb-log.js';
import { openLmdbStore, type LmdbStore } from '../log/lmdb-store.js';
import { rotationNotesIn } from '../log/rotation-records.js';
import { signerKeyString, verifierKeyString, verifierOf, type NoteSigner } from '../log/signed-note.js';
import type { Config } from '../services/config-schema.js';
import { CliError } from './cli-error.js';
import { signerKeyFile, signerStateDir } from './instance/head-signing.js';

/** What a rotation did: the keys, the note, and where the old key was kept (when this run moved it). */
export interface RotationReport {
  readonly old: string;
  readonly new: string;
  readonly note: string;
  readonly retired?: string;
  /** The seq of the `LogKeyRotated` record this run appended. */
  readonly recordedAt?: number;
  /** True when this run finished a rotation an earlier one had begun. */
  readonly finished?: true;
}

/** A new signing key for the log of `old`: the same name (the origin names the log), new key material. */
function nextKey(old: NoteSigner): NoteSigner {
  return { name: old.name, seed: generateKeyPair().seed };
}

const stamp = (at: Date) => at.toISOString().replace(/[:.]/g, '-');

/**
 * Rotates the embedded signer's key (the service stopped: the store's lock says so). In an order a rerun
 * can finish from any point: the new key is written beside the old (`<key>.next`); the rotation note is
 * recorded in the signer's state (its keeper trusts heads of the old key from then on); the old key is
 * copied aside (`<key>.retired-<time>`, 0600) and the new one renamed over it; then `LogKeyRotated` is
 * appended, signed by the new key. A rerun finds `<key>.next` (install it) or a rotation to the installed
 * key the log does not hold (record it), and otherwise rotates again.
 */
export async function logRotateKey(config: Config, now: Date = new Date()): Promise<RotationReport> {
  if (config.log.signer.socket)
    throw new CliError(
      'log.signer.socket names a separate signer: rotate its key where it runs (vigil signer rotate), then ' +
        'restart it with the new key; the instance records the rotation when it reconnects',
      1,
    );
  const keyFile = signerKeyFile(config);
  const stateDir = signerStateDir(config);
  const pendingFile = `${keyFile}.next`;
  // Before anything is written: a key or state of another user (the service's) is refused, naming whom to run as.
  for (const path of [keyFile, pendingFile, stateDir]) refuseForeignOwner(path);
  const store = openLmdbStore(config.storage.path);
  try {
    let current: NoteSigner;
    try {
      current = loadLogKey(keyFile);
    } catch (err) {
      throw new CliError((err as Error).message, 1);
    }
    refuseUnattestedTail(store);
    const inLog = rotationsInStore(store);
    const pending = existsSync(pendingFile);
    let note = rotationsTo(verifierOf(current), readRotations(stateDir)).at(-1);
    const unrecorded = note !== undefined && !inLog.includes(note);
    let retired: string | undefined;
    if (pending || !unrecorded) {
      // A new key, or the one an earlier run wrote before it stopped.
      if (!pending) writeSecretFile(pendingFile, `${signerKeyString(nextKey(current))}\n`);
      const next = loadLogKey(pendingFile);
      note = makeRotation(current, next);
      recordRotation(stateDir, note, now);
      retired = `${keyFile}.retired-${stamp(now)}`;
      writeSecretFile(retired, readFileSync(keyFile, 'utf8'));
      renameKeepingOwner(pendingFile, keyFile);
      current = next;
    }
    const recordedAt = await recordInLog(store, current, stateDir, inLog, now);
    return {
      old: note!.split('\n')[2]!.slice('old '.length),
      new: verifierKeyString(verifierOf(current)),
      note: note!,
      ...(retired ? { retired } : {}),
      ...(recordedAt !== undefined ? { recordedAt } : {}),
      ...(pending || unrecorded ? { finished: true as const } : {}),
    };
  } finally {
    await store.close();
  }
}

/** Refuses a store with records past its last signed head before anything changes (the new key would not sign on). */
function refuseUnattestedTail(store: LmdbStore): void {
  const meta = store.db<unknown, string>('log-meta');
  const head = (meta.get('head') as { seq?: number } | undefined)?.seq ?? 0;
  const attested = storedAttestation(store).size;
  if (head > attested)
    throw new CliError(
      `records ${attested + 1} to ${head} are past the last signed head: run vigil log quarantine-tail first`,
      1,
    );
}

/** The rotation notes the store's log holds. */
function rotationsInStore(store: LmdbStore): string[] {
  const records = store.db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
  return [...records.getRange({})].flatMap(({ value }) => rotationNotesIn(value));
}

/**
 * Opens the log with the new key's signer (which takes the store up through the rotation) and appends a
 * `LogKeyRotated` for each rotation that led to it and that the log does not hold; the seq of the last.
 */
async function recordInLog(
  store: LmdbStore,
  key: NoteSigner,
  stateDir: string,
  inLog: readonly string[],
  now: Date,
): Promise<number | undefined> {
  const log = openLmdbLog(store, undefined, { signer: embeddedHeadSigner(key, stateDir) });
  try {
    const resumed = await log.signing.catch((err: Error) => {
      throw new CliError(`${err.message}; the new key is installed: run vigil log rotate-key again once fixed`, 1);
    });
    const tail = log.unattestedTail();
    if (tail)
      throw new CliError(
        `records ${tail.from} to ${tail.to} are past the last signed head: run vigil log quarantine-tail, then ` +
          'vigil log rotate-key again to record the rotation',
        1,
      );
    const missing = (resumed?.rotations ?? []).filter((n) => !inLog.includes(n));
    if (missing.length === 0) return undefined;
    const actor = { id: userInfo().username, authentication: 'local-cli' };
    const at = now.toISOString();
    const appended = await log.append([
      ...(resumed?.rewound ? [{ type: 'SignedHeadsRewound', at, actor, data: resumed.rewound }] : []),
      ...missing.map((note) => ({ type: 'LogKeyRotated', at, actor, data: { note } })),
    ]);
    return appended.at(-1)!.seq;
  } finally {
    await log.close();
  }
}

/**
 * `vigil signer rotate --key OLD --out NEW --state DIR`: writes NEW (0600; an existing NEW is never
 * overwritten: one of the same log is taken as a rotation stopped half-way and finished), and records the
 * rotation note in the signer's state. The operator then restarts `vigil signer serve --key NEW`.
 */
export function signerRotate(
  oldFile: string,
  newFile: string,
  stateDir: string,
  now: Date = new Date(),
): RotationReport {
  let old: NoteSigner;
  let next: NoteSigner;
  const finished = existsSync(newFile);
  try {
    old = loadLogKey(oldFile);
    if (!finished) writeSecretFile(newFile, `${signerKeyString(nextKey(old))}\n`);
    next = loadLogKey(newFile);
  } catch (err) {
    throw new CliError((err as Error).message, 1);
  }
  let note: string;
  try {
    note = makeRotation(old, next);
  } catch (err) {
    throw new CliError(
      `signer rotate: ${newFile} exists and is not a new key of this log: ${(err as Error).message}`,
      2,
    );
  }
  recordRotation(stateDir, note, now);
  return {
    old: verifierKeyString(verifierOf(old)),
    new: verifierKeyString(verifierOf(next)),
    note,
    ...(finished ? { finished: true as const } : {}),
  };
}
