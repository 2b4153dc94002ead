import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import * as v from 'valibot';
import { hashToken, generateToken } from '../auth/tokens.js';
import { CollectorId } from '../events/collector-protocol/envelope.js';
import { startAgent } from '../clients/collector/agent.js';
import { AgentConfigSchema, type AgentConfig } from '../clients/collector/config.js';
import { EnrollmentRefused, enroll, needsEnrollment } from '../clients/collector/enroll.js';
import { loadKey } from '../clients/collector/keys.js';
import { StateDirInUse, lockStateDir } from '../clients/collector/state-files.js';
import { NoStateDirectory, agentStatus } from '../clients/collector/status.js';
import { decideIssueEnrollmentToken } from '../commands/collector-enrollment.js';
import { TOKEN_LIFETIME, parseLifetime } from '../commands/collector-token-lifetime.js';
import { formatIssues } from '../kernel/issues.js';
import { refuseForeignOwner } from '../kernel/owned-files.js';
import { ENROLLMENT_TOKEN_PREFIX } from '../http/routes/collectors.js';
import { openInstanceStore, storeOptions } from './instance/open.js';
import { openInstanceSigner } from './instance/head-signing.js';
import { CliError } from './cli-error.js';
import { parseCommandArgs, usageError } from './usage.js';
import { loadConfig } from './config-file.js';

type Out = (line: unknown) => void;

/** Reads a secret from a file that only its owner can read; the value never appears in argv. */
function readSecretFile(path: string, what: string): string {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    throw new CliError(`${what}: cannot read ${path}`);
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0)
    throw new CliError(`${what}: ${path} is readable by group or others; run: chmod 600 ${path}`);
  return readFileSync(path, 'utf8').trim();
}

/** Loads an agent config file; relative paths resolve against its folder. */
export function loadAgentConfig(path: string): AgentConfig {
  const full = resolve(path);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(full, 'utf8'));
  } catch (err) {
    throw new CliError(`cannot read agent config ${full}: ${(err as Error).message}`);
  }
  const parsed = v.safeParse(AgentConfigSchema, raw);
  if (!parsed.success)
    throw new CliError(`invalid agent config ${full}:\n  ${formatIssues(parsed.issues).join('\n  ')}`);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(dirname(full), p));
  const c = parsed.output;
  return {
    ...c,
    stateDir: abs(c.stateDir),
    files: c.files.map(abs),
    ...(c.bearerTokenFile ? { bearerTokenFile: abs(c.bearerTokenFile) } : {}),
    ...(c.enrollmentTokenFile ? { enrollmentTokenFile: abs(c.enrollmentTokenFile) } : {}),
  };
}

/** What to do after an enrollment refusal of this HTTP status. */
function enrollmentHint(status: number, collectorId: string): string {
  if (status === 401)
    return (
      `the enrollment token is unknown, used or expired: ask an admin for a new one (vigil collector-token ` +
      `create ${collectorId}, or POST /api/v1/collector/enrollment-tokens) and enroll again`
    );
  if (status === 403 || status === 409)
    return (
      `the token was issued for another collector id, or this key is already enrolled: check collectorId ` +
      `(${collectorId}) and use a token issued for it`
    );
  if (status === 429) return 'too many attempts: wait a minute and try again';
  if (status === 400)
    return (
      'the server did not accept the request: check --server (the instance URL), the collector id and the token ' +
      'file (it holds the token exactly as issued)'
    );
  return "see the instance's log for this request";
}

/** Runs `fn` holding the agent's state directory; another agent or enrollment holding it is a CLI error. */
async function holdingStateDir<T>(stateDir: string, fn: () => Promise<T>): Promise<T> {
  let release: () => void;
  try {
    release = lockStateDir(stateDir);
  } catch (err) {
    if (err instanceof StateDirInUse) throw new CliError(err.message);
    throw err;
  }
  try {
    return await fn();
  } finally {
    release();
  }
}

/** Enrolls, turning a refusal or an unreachable server into a message that says what to do. */
async function enrollOrExplain(o: Parameters<typeof enroll>[0]): Promise<unknown> {
  try {
    return await enroll(o);
  } catch (err) {
    if (err instanceof EnrollmentRefused)
      throw new CliError(`${err.message}\n${enrollmentHint(err.status, o.collectorId)}`);
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    if (err instanceof TypeError || cause !== undefined) {
      throw new CliError(
        `cannot reach the instance at ${o.server}${cause ? ` (${cause})` : ''}: is vigil serve running there, and is ` +
          `--server (or server in the agent config) its URL?`,
      );
    }
    throw err;
  }
}

async function issueToken(
  collectorId: string,
  expiresIn: string | undefined,
  configPath: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, unknown>> {
  if (!v.is(CollectorId, collectorId))
    throw new CliError('collector id: 1-128 characters, letters, digits, . _ @ -', 2);
  const lifetime = expiresIn === undefined ? TOKEN_LIFETIME.defaultMs : parseLifetime(expiresIn);
  if (lifetime === undefined)
    throw new CliError('--expires-in: expected a lifetime from 1m to 7d such as 15m, 1h, 2d', 2);
  const { config } = loadConfig(configPath, env, process.cwd());
  // A JetStream node's store is a copy of the stream: a record appended to it here would be in no other copy.
  if (config.storage.backend === 'jetstream')
    throw new CliError(
      'storage.backend is "jetstream": issue the token through the admin API of a running node (POST ' +
        '/api/v1/collector/enrollment-tokens)',
      2,
    );
  // Writes through the store, so it needs the instance stopped (one process per store); the admin API route does the
  // same online.
  const inst = await openInstanceStore(config.storage.path, {
    ...storeOptions(config),
    signer: await openInstanceSigner(config),
  });
  try {
    const token = generateToken(ENROLLMENT_TOKEN_PREFIX);
    const now = new Date();
    const cmd = {
      tokenId: randomBytes(8).toString('hex'),
      collectorId,
      tokenHash: hashToken(token),
      expiresAt: new Date(now.getTime() + lifetime).toISOString(),
    };
    const outcome = await inst.pipeline.dispatch({
      decide: () => decideIssueEnrollmentToken(cmd),
      ctx: { now: now.toISOString(), actor: { id: 'local-cli', authentication: 'local' } },
    });
    if (!outcome.ok) throw new CliError(outcome.rejection.message);
    return { ...outcome.result, token };
  } finally {
    await inst.close();
  }
}

async function run(config: AgentConfig, env: NodeJS.ProcessEnv, out: Out): Promise<number> {
  const bearer = config.bearerTokenFile
    ? readSecretFile(config.bearerTokenFile, 'bearerTokenFile')
    : env.VIGIL_COLLECTOR_TOKEN;
  if (!bearer) throw new CliError('no bearer token: set bearerTokenFile in the agent config or VIGIL_COLLECTOR_TOKEN');
  const log = (level: string, msg: string, extra: Record<string, unknown> = {}) =>
    out({ at: new Date().toISOString(), level, msg, ...extra });
  if (config.enrollmentTokenFile) {
    const enrollmentToken = readSecretFile(config.enrollmentTokenFile, 'enrollmentTokenFile');
    if (needsEnrollment(config.stateDir, config.server, enrollmentToken)) {
      const state = await enroll({
        server: config.server,
        collectorId: config.collectorId,
        stateDir: config.stateDir,
        enrollmentToken,
        now: () => new Date(),
      });
      log('info', 'enrolled', {
        collectorId: state.collectorId,
        epoch: state.epoch,
        keyFingerprint: state.keyFingerprint,
      });
    }
  }
  const agent = startAgent({ config, bearer, key: loadKey(config.stateDir), log });
  log('info', 'collector running', {
    collectorId: config.collectorId,
    server: config.server,
    files: config.files,
    journal: config.journal.enabled,
  });
  await new Promise<void>((done) => {
    const stop = (signal: string) => {
      log('info', 'stopping', { signal });
      void agent.stop().then(done);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  log('info', 'stopped');
  return 0;
}

/**
 * The `vigil collector ...` and `vigil collector-token ...` commands; undefined for any other
 * command, so main.ts can dispatch here first.
 */
export async function runCollectorCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  out: Out,
): Promise<number | undefined> {
  if (argv[0] !== 'collector' && argv[0] !== 'collector-token') return undefined;
  if (argv[0] === 'collector-token') {
    const { values, positionals } = parseCommandArgs('collector-token', argv.slice(1), {
      config: { type: 'string' },
      'expires-in': { type: 'string' },
    });
    const [verb, ...rest] = positionals;
    if (verb !== 'create')
      throw usageError(
        'collector-token',
        verb === undefined ? 'collector-token: expected create' : `collector-token: unknown subcommand ${verb}`,
      );
    if (rest.length !== 1) throw usageError('collector-token', 'collector-token create: expected one collector id');
    out(await issueToken(rest[0]!, values['expires-in'], values.config, env));
    return 0;
  }
  const { values, positionals } = parseCommandArgs('collector', argv.slice(1), {
    config: { type: 'string' },
    server: { type: 'string' },
    'collector-id': { type: 'string' },
    'token-file': { type: 'string' },
    'state-dir': { type: 'string' },
  });
  const [verb, ...rest] = positionals;
  if (verb !== 'enroll' && verb !== 'run' && verb !== 'status')
    throw usageError(
      'collector',
      verb === undefined ? 'collector: expected enroll, run or status' : `collector: unknown subcommand ${verb}`,
    );
  if (rest.length > 0) throw usageError('collector', `collector ${verb}: unexpected argument ${rest[0]}`);
  const agentConfig = values.config !== undefined ? loadAgentConfig(values.config) : undefined;
  switch (verb) {
    case 'enroll': {
      const server = values.server ?? agentConfig?.server;
      const collectorId = values['collector-id'] ?? agentConfig?.collectorId;
      const stateDir = values['state-dir'] ? resolve(values['state-dir']) : agentConfig?.stateDir;
      if (!server || !collectorId || !stateDir || !values['token-file'])
        throw usageError(
          'collector',
          'collector enroll: --token-file, and --server, --collector-id and --state-dir (or an agent --config ' +
            'giving them) are required',
        );
      // The state directory is the agent's (vigil-collector's): another user's is refused before the token is spent.
      refuseForeignOwner(stateDir);
      const enrollmentToken = readSecretFile(values['token-file'], '--token-file');
      out(
        await holdingStateDir(stateDir, () =>
          enrollOrExplain({ server, collectorId, stateDir, enrollmentToken, now: () => new Date() }),
        ),
      );
      return 0;
    }
    case 'run':
      if (!agentConfig) throw usageError('collector', 'collector run: --config F (the agent config) is required');
      return holdingStateDir(agentConfig.stateDir, () => run(agentConfig, env, out));
    case 'status': {
      const stateDir = values['state-dir'] ? resolve(values['state-dir']) : agentConfig?.stateDir;
      if (!stateDir) throw usageError('collector', 'collector status: --config F or --state-dir D is required');
      try {
        out(agentStatus(stateDir));
      } catch (err) {
        if (err instanceof NoStateDirectory) throw new CliError(err.message);
        throw err;
      }
      return 0;
    }
  }
}
