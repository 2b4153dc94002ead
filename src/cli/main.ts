#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { CliError } from './cli-error.js';
import type { Config } from '../services/config-schema.js';
import { helpOf, isCommand, noMoreThan, overview, parseCommandArgs, usageError } from './usage.js';

/**
 * Nice steps the replay's write-side thread runs below its read side's worker (as `limits.readSideNice`'s default, the
 * other way round).
 */
const REPLAY_YIELD = 10;

const out = (line: unknown) => process.stdout.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
/** A progress line on stderr: rewritten in place on a terminal, one line per step otherwise. */
const progressLine = (line: string, done: boolean) => {
  if (process.stderr.isTTY) process.stderr.write(`\r${line}${done ? '\n' : ''}`);
  else process.stderr.write(`${line}\n`);
};

function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new CliError(`${name}: expected a non-negative integer`, 2);
  return Number(value);
}

/** The options of the commands this dispatcher runs itself (the other commands read their own). */
const OPTIONS = {
  serve: { config: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' } },
  'api-token-generate': {
    config: { type: 'string' },
    'expires-at': { type: 'string' },
    'collector-id': { type: 'string' },
  },
  credential: { config: { type: 'string' }, fingerprint: { type: 'string' } },
  replay: { config: { type: 'string' }, until: { type: 'string' }, out: { type: 'string' } },
  log: {
    config: { type: 'string' },
    archives: { type: 'string' },
    'archive-keys': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    raw: { type: 'boolean' },
    out: { type: 'string' },
    reason: { type: 'string' },
  },
  openapi: {},
} as const;

/** Which of the `log` options each store-reading subcommand takes (both take --config). */
const LOG_OPTIONS: Record<string, readonly string[]> = {
  verify: ['config', 'archives', 'archive-keys'],
  export: ['config', 'from', 'to', 'raw'],
  'quarantine-tail': ['config', 'out', 'reason'],
  'rotate-key': ['config'],
};

/**
 * Options that take a value and may stand before the command (`vigil --config F serve`): the command's name is the
 * first argument that is neither an option nor the value of one of these.
 */
const VALUE_OPTIONS = new Set(
  Object.values(OPTIONS).flatMap((o) =>
    Object.entries(o as Record<string, { type: string }>).flatMap(([name, d]) =>
      d.type === 'string' ? [`--${name}`] : [],
    ),
  ),
);

/** The command's name, where it stands in argv, and the first option before it (-1 and undefined when none). */
function locateCommand(argv: readonly string[]): { index: number; firstOption: string | undefined } {
  let firstOption: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return { index: i + 1 < argv.length ? i + 1 : -1, firstOption };
    if (!a.startsWith('-') || a === '-') return { index: i, firstOption };
    firstOption ??= a;
    if (VALUE_OPTIONS.has(a)) i++;
  }
  return { index: -1, firstOption };
}

/** Whether argv asks for help: --help or -h anywhere before a `--`. */
function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/**
 * Runs `vigil api-token-generate`: creates a credential in the registry (`registry()` loads the config naming it) and
 * prints it, with its token, once.
 */
async function apiTokenCommand(
  args: readonly string[],
  values: { 'expires-at'?: string | undefined; 'collector-id'?: string | undefined },
  registry: () => Promise<string>,
): Promise<number> {
  const [principal, role] = args;
  if (!principal || !role || args.length !== 2)
    throw usageError('api-token-generate', 'api-token-generate: expected a principal and a role');
  const credentialsFile = await registry();
  const { apiTokenGenerate } = await import('./credentials.js');
  out(
    apiTokenGenerate(credentialsFile, principal, role, {
      ...(values['expires-at'] !== undefined ? { expiresAt: values['expires-at'] } : {}),
      ...(values['collector-id'] !== undefined ? { collectorId: values['collector-id'] } : {}),
    }),
  );
  return 0;
}

/** Runs `vigil credential`: lists the registry's credentials (`registry()` names it), or disables or enables one. */
async function credentialCommand(
  args: readonly string[],
  values: { fingerprint?: string | undefined },
  registry: () => Promise<string>,
): Promise<number> {
  const [verb, id] = args;
  const { listCredentials, setCredentialDisabled } = await import('./credentials.js');
  if (verb === 'list' && args.length === 1) {
    out(listCredentials(await registry()));
    return 0;
  }
  if ((verb === 'disable' || verb === 'enable') && id && args.length === 2) {
    const n = setCredentialDisabled(await registry(), id, verb === 'disable', values.fingerprint);
    out({ id, disabled: verb === 'disable', credentials: n });
    return 0;
  }
  let problem = `credential ${verb}: expected <id>`;
  if (verb === undefined) problem = 'credential: expected list, disable <id> or enable <id>';
  else if (!['list', 'disable', 'enable'].includes(verb)) problem = `credential: unknown subcommand ${verb}`;
  else if (verb === 'list' || id) problem = `credential ${verb}: unexpected argument ${args[verb === 'list' ? 1 : 2]}`;
  throw usageError('credential', problem);
}

/** Runs `vigil log verify` and `vigil log export` over the store (the offline commands run apart, without one). */
async function logCommand(
  args: readonly string[],
  values: Partial<Record<keyof (typeof OPTIONS)['log'], string | boolean>>,
  config: Config,
): Promise<number> {
  const { logExport, logVerify, readVerifierKeys } = await import('./log-commands.js');
  const { storeOptions } = await import('./instance/open.js');
  const { retryOnCut } = await import('../log/store-snapshot.js');
  if (args[0] === 'quarantine-tail') {
    const { logQuarantineTail } = await import('./signer-commands.js');
    out(await logQuarantineTail(config, values.out as string | undefined, values.reason as string | undefined));
    return 0;
  }
  if (args[0] === 'rotate-key') {
    const { logRotateKey } = await import('./rotate-key.js');
    out(await logRotateKey(config));
    return 0;
  }
  if (args[0] === 'verify') {
    const keysFile = values['archive-keys'] as string | undefined;
    const keys = keysFile ? readVerifierKeys(readFileSync(keysFile, 'utf8')) : [];
    const { instanceVerifier } = await import('./instance/head-signing.js');
    const key = await instanceVerifier(config);
    const result = await retryOnCut(() =>
      logVerify(config.storage.path, key, storeOptions(config), values.archives as string | undefined, keys),
    );
    out(result);
    return result.ok ? 0 : 1;
  }
  await logExport(
    config.storage.path,
    intOption(values.from as string | undefined, '--from') ?? 1,
    intOption(values.to as string | undefined, '--to'),
    (l) => process.stdout.write(l),
    storeOptions(config),
    values.raw === true,
  );
  return 0;
}

/**
 * An in-place replay's refusal of a store in use, with where to turn instead: the replay that
 * runs beside the service writes the read models as of a seq into a folder of their own.
 */
async function inPlace<T>(replaying: Promise<T>): Promise<T> {
  try {
    return await replaying;
  } catch (err) {
    if ((err as Error)?.name !== 'StoreLockedError') throw err;
    (err as Error).message +=
      '. A replay in place rewrites the read models; to see them as of a record while the service runs, use ' +
      '`vigil replay --until SEQ --out DIR`';
    throw err;
  }
}

/** Loads the instance configuration named by --config (else VIGIL_CONFIG, else ./vigil.config.json). */
async function instanceConfig(configPath: string | undefined) {
  const { loadConfig } = await import('./config-file.js');
  return loadConfig(configPath, process.env, process.cwd());
}

/** The credential registry's path, from the configuration, loaded once asked for (after the arguments are checked). */
const registryOf = (configPath: string | undefined) => async () =>
  (await instanceConfig(configPath)).config.auth.credentialsFile;

/** `vigil help [<command>]`. */
function helpCommand(args: readonly string[]): number {
  const { positionals } = parseCommandArgs('help', args, {});
  const [topic] = positionals;
  if (topic === undefined) out(overview());
  else if (isCommand(topic)) out(helpOf(topic));
  else throw usageError(undefined, `help: unknown command ${topic}`);
  return 0;
}

/** The `vigil` command line: hands each command to what runs it, and resolves with the exit status. */
async function main(argv: string[]): Promise<number> {
  const { index, firstOption } = locateCommand(argv);
  const command = index < 0 ? undefined : argv[index]!;
  if (command !== undefined && !isCommand(command)) throw usageError(undefined, `unknown command ${command}`);
  if (wantsHelp(argv)) {
    out(command === undefined ? overview() : helpOf(command));
    return 0;
  }
  if (command === undefined)
    throw usageError(undefined, firstOption === undefined ? 'no command given' : `unknown option ${firstOption}`);
  // The command's own arguments: those after it, and the options that stood before it.
  const rest = [...argv.slice(0, index), ...argv.slice(index + 1)];
  switch (command) {
    case 'help':
      return helpCommand(rest);
    case 'openapi': {
      noMoreThan('openapi', parseCommandArgs('openapi', rest, OPTIONS.openapi).positionals, 0);
      const { openApiDocument } = await import('../http/openapi.js');
      out(JSON.stringify(openApiDocument(), null, 2));
      return 0;
    }
    case 'setup-authority':
    case 'install': {
      const { runSetupCommand } = await import('./setup-commands.js');
      return runSetupCommand([command, ...rest], process.env, process.cwd());
    }
    case 'collector':
    case 'collector-token': {
      const { runCollectorCommand } = await import('./collector-commands.js');
      return (await runCollectorCommand([command, ...rest], process.env, out))!;
    }
    case 'signer': {
      const { runSignerCommand } = await import('./signer-commands.js');
      return runSignerCommand(rest, process.env, out);
    }
    case 'search': {
      const { runSearchCommand } = await import('./search-command.js');
      return runSearchCommand(rest, process.env, out, (line) => process.stderr.write(`${line}\n`));
    }
    case 'rules': {
      const { runRulesCommand } = await import('./rules-commands.js');
      return (await runRulesCommand([command, ...rest], process.env, out, progressLine))!;
    }
    case 'serve': {
      const { values, positionals } = parseCommandArgs('serve', rest, OPTIONS.serve);
      noMoreThan('serve', positionals, 0);
      const loaded = await instanceConfig(values.config);
      const { serveCommand } = await import('./serve-command.js');
      return serveCommand(values, loaded);
    }
    case 'api-token-generate': {
      const { values, positionals } = parseCommandArgs(command, rest, OPTIONS[command]);
      return apiTokenCommand(positionals, values, registryOf(values.config));
    }
    case 'credential': {
      const { values, positionals } = parseCommandArgs(command, rest, OPTIONS.credential);
      return credentialCommand(positionals, values, registryOf(values.config));
    }
    case 'replay': {
      const { values, positionals } = parseCommandArgs('replay', rest, OPTIONS.replay);
      noMoreThan('replay', positionals, 0);
      const until = intOption(values.until, '--until');
      const { config } = await instanceConfig(values.config);
      if (values.out !== undefined) {
        const { replayOut } = await import('./replay-out.js');
        const limits = { entities: config.limits.graphEntities, relationships: config.limits.graphRelationships };
        out(await replayOut(config.storage.path, until, values.out, limits));
        return 0;
      }
      const [{ replay }, { storeOptions }] = await Promise.all([
        import('./log-commands.js'),
        import('./instance/open.js'),
      ]);
      // A one-shot command: the thread that folds the write side yields to the read side's worker
      // (the longer fold) for the rest of the process.
      out(await inPlace(replay(config.storage.path, until, storeOptions(config), REPLAY_YIELD)));
      return 0;
    }
    case 'log': {
      // The subcommand first, as the offline commands expect it (`vigil log --config F public-key` too).
      const at = locateCommand(rest).index;
      const args = at < 0 ? rest : [rest[at]!, ...rest.slice(0, at), ...rest.slice(at + 1)];
      const { isLogProofCommand, runLogProofCommand } = await import('./log-proof-commands.js');
      if (isLogProofCommand(args)) return runLogProofCommand(args, process.env, process.cwd(), out);
      const { values, positionals } = parseCommandArgs('log', args, OPTIONS.log, at < 0 ? 'log' : `log ${args[0]}`);
      const [verb] = positionals;
      const allowed = LOG_OPTIONS[verb ?? ''];
      if (allowed === undefined)
        throw usageError('log', verb === undefined ? 'log: expected a subcommand' : `log: unknown subcommand ${verb}`);
      noMoreThan(`log`, positionals, 1);
      const stray = Object.keys(values).find((k) => !allowed.includes(k));
      if (stray !== undefined) throw usageError('log', `log ${verb}: unknown option --${stray}`);
      const { config } = await instanceConfig(values.config as string | undefined);
      return logCommand(positionals, values, config);
    }
    default:
      throw usageError(undefined, `unknown command ${command}`);
  }
}

// A reader that closed the pipe (`vigil log export | head -1`) ended the output normally: what is
// left to write is dropped, the command finishes (closing the store) and exits with its own status.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
});

main(process.argv.slice(2)).then(
  // Exit once stdout is flushed: a large `log export` into a pipe must not be cut short.
  (code) => process.stdout.write('', () => process.exit(code)),
  (err: unknown) => {
    const e = err as Error;
    // Known failures say what to do; "refusing to start:" is how start-up checks (secret files, grants, keys) refuse.
    // (Compared by name: the modules that define them are loaded only by the commands that use them.)
    const known =
      e instanceof CliError ||
      [
        'ConfigError',
        'StartupError',
        'StoreLockedError',
        'SnapshotError',
        'CutDuringReadError',
        'ForeignOwnerError',
      ].includes(e?.name) ||
      /^refusing to start: /.test(e?.message ?? '');
    process.stderr.write(`vigil: ${known ? e.message : `unexpected error: ${e?.message ?? String(err)}`}\n`);
    process.exit(e instanceof CliError ? e.exitCode : 1);
  },
);
