import { existsSync, readFileSync, statSync } from 'node:fs';
import { generateKeyPair } from '../kernel/ed25519.js';
import { writeSecretFile, writeDurable } from '../kernel/secret-files.js';
import { loadLogKey, logKeyPath } from '../log/log-key.js';
import {
  verifyCheckpointConsistency,
  verifyExport,
  verifyRecordInclusion,
  openCheckpoint,
} from '../log/offline-verify.js';
import {
  COSIGNATURE_V1,
  parseSignerKey,
  parseVerifierKey,
  signerKeyString,
  validKeyName,
  verifierKeyString,
  verifierOf,
  type NoteVerifier,
} from '../log/signed-note.js';
import { cosignCheckpoint } from '../log/witness.js';
import { keyChain } from '../log/key-rotation.js';
import { logLine, stopOnSignals } from './service-process.js';
import { parseListen, startWitness } from './witness-serve.js';
import { CliError } from './cli-error.js';
import { parseCommandArgs, usageError } from './usage.js';
import { loadConfig } from './config-file.js';

/** The `vigil log` subcommands that never open a store (public-key reads only the key file). */
const COMMANDS = new Set(['public-key', 'verify-consistency', 'verify-inclusion', 'cosign', 'witness-key', 'witness']);

/** Whether argv (after `log`) is one of the offline proof commands. */
export function isLogProofCommand(args: readonly string[]): boolean {
  return (
    COMMANDS.has(args[0] ?? '') ||
    (args[0] === 'verify' && args.some((a) => a === '--export' || a.startsWith('--export=')))
  );
}

function read(path: string | undefined, what: string): string {
  if (!path) throw usageError('log', `log: ${what} is required`);
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new CliError(`cannot read ${what} ${path}`, 2);
  }
}

function verifierArg(text: string | undefined): NoteVerifier {
  const key = text === undefined ? undefined : parseVerifierKey(existsSync(text) ? readFileSync(text, 'utf8') : text);
  if (!key) throw new CliError('--key: expected a verifier key name+hash+key (or a file holding one)', 2);
  return key;
}

/** A proof given as a file (the API's JSON answer or a list of base64 hashes), or fetched from `url`. */
async function proofArg(
  file: string | undefined,
  url: string | undefined,
  path: string,
  field: string,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  let body: unknown;
  if (file) body = JSON.parse(read(file, '--proof'));
  else if (url) {
    const res = await fetch(new URL(path, url), {
      headers: env.VIGIL_TOKEN ? { authorization: `Bearer ${env.VIGIL_TOKEN}` } : {},
    });
    if (!res.ok) throw new CliError(`${url}${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`, 1);
    body = await res.json();
  } else return [];
  const list = Array.isArray(body) ? body : (body as Record<string, unknown>)[field];
  if (!Array.isArray(list) || !list.every((h) => typeof h === 'string'))
    throw new CliError(`the proof has no ${field} list`, 1);
  return list as string[];
}

/** Rotation notes from a JSON text: an array of notes, or the answer of `GET /api/v1/log/key-rotations`. */
function rotationNotes(body: unknown, from: string): string[] {
  const list = Array.isArray(body) ? body : (body as { rotations?: unknown } | null)?.rotations;
  const notes = Array.isArray(list)
    ? list.map((r: unknown) => (typeof r === 'string' ? r : (r as { note?: unknown } | null)?.note))
    : undefined;
  if (!notes || !notes.every((n) => typeof n === 'string'))
    throw new CliError(`${from}: expected a JSON array of rotation notes, or {rotations: [{note}]}`, 2);
  return notes as string[];
}

/**
 * The chain of `key` (docs/log.md, "Rotating the signing key"): the keys the rotation notes of `--rotations
 * FILE` and, with `--url`, of the instance's `GET /api/v1/log/key-rotations` link to it.
 */
async function keyChainArg(
  key: NoteVerifier,
  file: string | undefined,
  url: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<NoteVerifier[]> {
  const notes: string[] = [];
  if (file) {
    const text = read(file, '--rotations');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new CliError(`--rotations ${file}: not JSON`, 2);
    }
    notes.push(...rotationNotes(body, `--rotations ${file}`));
  }
  if (url) {
    const res = await fetch(new URL('/api/v1/log/key-rotations', url), {
      headers: env.VIGIL_TOKEN ? { authorization: `Bearer ${env.VIGIL_TOKEN}` } : {},
    });
    if (!res.ok)
      throw new CliError(`${url}/api/v1/log/key-rotations: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`, 1);
    notes.push(...rotationNotes(await res.json(), `${url}/api/v1/log/key-rotations`));
  }
  return keyChain([key], notes);
}

const sizeOf = (note: string, key: NoteVerifier | readonly NoteVerifier[]) => {
  const cp = openCheckpoint(note, key);
  if (!cp.ok) throw new CliError(cp.reason, 1);
  return cp.checkpoint.size;
};

/** Runs an offline proof command (argv after `log`); resolves with the exit code. */
export async function runLogProofCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  out: (line: unknown) => void,
): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'log',
    args,
    {
      config: { type: 'string' },
      export: { type: 'string' },
      checkpoint: { type: 'string' },
      key: { type: 'string' },
      proof: { type: 'string' },
      url: { type: 'string' },
      'witness-key': { type: 'string' },
      state: { type: 'string' },
      out: { type: 'string' },
      listen: { type: 'string' },
      rotations: { type: 'string' },
    },
    `log ${args[0]}`,
  );
  const [verb, a, b] = positionals;
  switch (verb) {
    case 'public-key': {
      const { config } = loadConfig(values.config, env, cwd);
      const { instanceVerifier, signerKeyFile } = await import('./instance/head-signing.js');
      const key = await instanceVerifier(config);
      if (!key)
        throw new CliError(
          config.log.signer.socket
            ? `no head signer answers at ${config.log.signer.socket}`
            : `no readable log signing key at ${signerKeyFile(config)}: \`vigil serve\` makes it at its first start`,
          1,
        );
      out(verifierKeyString(key));
      return 0;
    }
    case 'verify': {
      const lines = read(values.export, '--export').split('\n');
      const keys = await keyChainArg(verifierArg(values.key), values.rotations, undefined, env);
      const verdict = verifyExport(lines, read(values.checkpoint, '--checkpoint'), keys);
      out(verdict);
      return verdict.ok ? 0 : 1;
    }
    case 'verify-consistency': {
      const key = await keyChainArg(verifierArg(values.key), values.rotations, values.url, env);
      const [oldNote, newNote] = [read(a, 'OLD'), read(b, 'NEW')];
      const proof = await proofArg(
        values.proof,
        values.url,
        `/api/v1/log/proofs/consistency?from=${sizeOf(oldNote, key)}&to=${sizeOf(newNote, key)}`,
        'consistency_path',
        env,
      );
      const verdict = verifyCheckpointConsistency(oldNote, newNote, key, proof);
      out(verdict);
      return verdict.ok ? 0 : 1;
    }
    case 'verify-inclusion': {
      const key = await keyChainArg(verifierArg(values.key), values.rotations, values.url, env);
      const [line, note] = [read(a, 'RECORD').trim(), read(b, 'CHECKPOINT')];
      const seq = Number((JSON.parse(line) as { seq?: unknown }).seq);
      const proof = await proofArg(
        values.proof,
        values.url,
        `/api/v1/log/proofs/inclusion?seq=${seq}&size=${sizeOf(note, key)}`,
        'inclusion_path',
        env,
      );
      const verdict = verifyRecordInclusion(line, note, key, proof);
      out(verdict);
      return verdict.ok ? 0 : 1;
    }
    case 'witness-key': {
      if (!a || !validKeyName(a) || !values.out)
        throw new CliError('usage: vigil log witness-key NAME --out FILE (NAME without spaces or +)', 2);
      if (existsSync(values.out)) throw new CliError(`${values.out} exists; refusing to overwrite a key`, 2);
      const signer = { name: a, seed: generateKeyPair().seed, type: COSIGNATURE_V1 } as const;
      writeSecretFile(values.out, `${signerKeyString(signer)}\n`);
      out(verifierKeyString(verifierOf(signer)));
      return 0;
    }
    case 'cosign': {
      const key = verifierArg(values.key);
      const witness = parseSignerKey(read(values['witness-key'], '--witness-key'));
      if (!witness) throw new CliError('--witness-key: not a signed-note signer key', 2);
      if (!values.state) throw new CliError('--state FILE is required (the last checkpoint this witness cosigned)', 2);
      const note = read(a, 'CHECKPOINT');
      const last = existsSync(values.state) ? readFileSync(values.state, 'utf8') : undefined;
      const proof =
        last === undefined
          ? []
          : await proofArg(
              values.proof,
              values.url,
              `/api/v1/log/proofs/consistency?from=${sizeOf(last, key)}&to=${sizeOf(note, key)}`,
              'consistency_path',
              env,
            );
      const r = cosignCheckpoint({
        note,
        logKey: key,
        witness,
        time: Math.floor(Date.now() / 1000),
        ...(last !== undefined ? { last } : {}),
        proof,
      });
      if (!r.ok) throw new CliError(r.reason, 1);
      writeDurable(values.state, r.note);
      process.stdout.write(r.note);
      return 0;
    }
    case 'witness': {
      if (a !== 'serve') throw usageError('log', `log witness: expected serve, not ${a ?? 'nothing'}`);
      return serveWitness(values);
    }
    default:
      throw usageError('log', `log: unknown subcommand ${verb}`);
  }
}

/** The log verifier keys of `--key`: a key, or a file holding one or more, one a line. */
function verifierListArg(text: string | undefined): NoteVerifier[] {
  const lines = text === undefined ? [] : (existsSync(text) ? readFileSync(text, 'utf8') : text).split('\n');
  const keys = lines.filter((l) => l.trim() !== '').map((l) => parseVerifierKey(l));
  if (keys.length === 0 || keys.some((k) => k === undefined))
    throw new CliError('--key: expected a log verifier key name+hash+key (or a file holding them, one a line)', 2);
  return keys as NoteVerifier[];
}

/** `vigil log witness serve`: a C2SP tlog-witness server over the state folder, until SIGTERM or SIGINT. */
async function serveWitness(values: { key?: string; 'witness-key'?: string; state?: string; listen?: string }) {
  const logKeys = verifierListArg(values.key);
  const keyFile = values['witness-key'];
  if (!keyFile) throw new CliError('--witness-key FILE is required (made by vigil log witness-key)', 2);
  // The key file alone must be owner-only: witness-key writes it 0600 wherever the operator asked.
  const mode = existsSync(keyFile) ? statSync(keyFile).mode & 0o777 : 0;
  if (mode & 0o077)
    throw new CliError(
      `refusing the witness key: ${keyFile} is readable by others (mode ${mode.toString(8)}); ` +
        `run: chmod 600 ${keyFile}`,
      1,
    );
  const witness = parseSignerKey(read(keyFile, '--witness-key'));
  if (!witness) throw new CliError('--witness-key: not a signed-note signer key', 2);
  if (!values.state) throw new CliError('--state DIR is required (the latest checkpoint cosigned per log)', 2);
  const listen = parseListen(values.listen ?? '127.0.0.1:4180');
  if (!listen) throw new CliError('--listen: expected HOST:PORT ([::1]:PORT for IPv6)', 2);
  const running = await startWitness({
    witness,
    logKeys,
    stateDir: values.state,
    ...listen,
    now: () => new Date(),
    log: logLine,
  });
  logLine({
    level: 'info',
    msg: 'listening',
    url: running.url,
    service: 'witness',
    witness: verifierKeyString(verifierOf(witness)),
    logs: logKeys.map((k) => k.name),
  });
  stopOnSignals(running);
  return new Promise<number>(() => {});
}
