#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config-file.js';
import { StartupError } from './instance/startup-error.js';
import { CliError, apiTokenGenerate, listCredentials, setCredentialDisabled } from './credentials.js';
import { logExport, logVerify, readVerifierKeys, replay } from './log-commands.js';
import { readFileSync } from 'node:fs';
import { isLogProofCommand, runLogProofCommand } from './log-proof-commands.js';
import { serveCommand } from './serve-command.js';
import { storeOptions } from './instance/open.js';
import { openApiDocument } from '../http/openapi.js';
import type { Config } from '../services/config-schema.js';
import { runSetupCommand } from './setup-commands.js';
import { runCollectorCommand } from './collector-commands.js';
import { runRulesCommand } from './rules-commands.js';

/**
 * Nice steps the replay's write-side thread runs below its read side's worker (as `limits.readSideNice`'s default, the
 * other way round).
 */
const REPLAY_YIELD = 10;

const USAGE = `usage: vigil <command> [options]

  serve [--host H] [--port N]             start the instance (HTTP API); --host/--port (else VIGIL_HOST/
                                          VIGIL_PORT) override server.host/server.port of the config
  api-token-generate <principal> <role>   create a credential; prints {token, credential} once
      [--expires-at ISO] [--collector-id ID]
  credential list | disable <id> | enable <id> [--fingerprint F]
  replay [--until SEQ]                    rebuild every read model from record 1
  log verify [--archives DIR]             check the hash chain, the Merkle tree and the checkpoints
      [--archive-keys FILE]               (from the retention cut; with DIR, the whole history;
                                          FILE: verifier keys of the nodes that wrote archives)
  log export [--from SEQ] [--to SEQ] [--raw]  records as JSON lines (--raw: with their stored bytes)
  log public-key                          the verifier key of the signed checkpoints
  log verify --export F --checkpoint F --key K | verify-consistency | verify-inclusion
                                          offline verification (no store; vigil log verify-consistency -h)
  log witness-key | cosign                a witness that cosigns consistent checkpoints
  openapi                                 print the OpenAPI document
  collector enroll|run|status ...         the collector agent (vigil collector --help)
  rules import DIR [--url URL]            import a Sigma rules directory over the API (token in VIGIL_TOKEN)
  collector-token create <collector_id>   single-use enrollment token [--expires-in 1h]
  setup-authority serve | account ...     the setup authority (see docs/setup-protocol.md)
  install --setup-url URL ...             the installer (see docs/installer.md)

  every command takes --config FILE (else VIGIL_CONFIG, else ./vigil.config.json)`;

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

/** Reads the options of the commands this dispatcher runs itself (the others read their own). */
function parseCommandLine(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      'expires-at': { type: 'string' },
      'collector-id': { type: 'string' },
      fingerprint: { type: 'string' },
      until: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      raw: { type: 'boolean' },
      archives: { type: 'string' },
      'archive-keys': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      host: { type: 'string' },
      port: { type: 'string' },
    },
  });
}

/** The options given on the command line, by name. */
type Options = ReturnType<typeof parseCommandLine>['values'];

/** Runs `vigil api-token-generate`: creates a credential in `credentialsFile` and prints it, with its token, once. */
function apiTokenCommand(args: readonly string[], values: Options, credentialsFile: string): number {
  const [principal, role] = args;
  if (!principal || !role || args.length !== 2)
    throw new CliError(
      'usage: vigil api-token-generate <principal_id> <role> [--expires-at ISO] [--collector-id ID]',
      2,
    );
  out(
    apiTokenGenerate(credentialsFile, principal, role, {
      ...(values['expires-at'] !== undefined ? { expiresAt: values['expires-at'] } : {}),
      ...(values['collector-id'] !== undefined ? { collectorId: values['collector-id'] } : {}),
    }),
  );
  return 0;
}

/** Runs `vigil credential`: lists the credentials of `credentialsFile`, or disables or enables one. */
function credentialCommand(args: readonly string[], values: Options, credentialsFile: string): number {
  const [verb, id] = args;
  if (verb === 'list' && !id) {
    out(listCredentials(credentialsFile));
    return 0;
  }
  if ((verb === 'disable' || verb === 'enable') && id) {
    const n = setCredentialDisabled(credentialsFile, id, verb === 'disable', values.fingerprint);
    out({ id, disabled: verb === 'disable', credentials: n });
    return 0;
  }
  throw new CliError('usage: vigil credential list | disable <id> | enable <id> [--fingerprint F]', 2);
}

/** Runs `vigil log verify` and `vigil log export` over the store (the offline commands run apart, without one). */
async function logCommand(args: readonly string[], values: Options, config: Config): Promise<number> {
  if (args[0] === 'verify') {
    const keysFile = values['archive-keys'];
    const result = await logVerify(
      config.storage.path,
      storeOptions(config),
      values.archives,
      keysFile ? readVerifierKeys(readFileSync(keysFile, 'utf8')) : [],
    );
    out(result);
    return result.ok ? 0 : 1;
  }
  if (args[0] === 'export') {
    await logExport(
      config.storage.path,
      intOption(values.from, '--from') ?? 1,
      intOption(values.to, '--to'),
      (l) => process.stdout.write(l),
      storeOptions(config),
      values.raw === true,
    );
    return 0;
  }
  throw new CliError(
    'usage: vigil log verify | log export [--from SEQ] [--to SEQ] [--raw] | log public-key | log ' +
      'verify-consistency | log verify-inclusion | log cosign | log witness-key',
    2,
  );
}

/** The `vigil` command line: hands each command to what runs it, and resolves with the exit status. */
async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'setup-authority' || argv[0] === 'install') return runSetupCommand(argv, process.env, process.cwd());
  if (argv[0] === 'log' && isLogProofCommand(argv.slice(1)))
    return runLogProofCommand(argv.slice(1), process.env, process.cwd(), out);
  const collector = await runCollectorCommand(argv, process.env, out);
  if (collector !== undefined) return collector;
  const rules = await runRulesCommand(argv, process.env, out, progressLine);
  if (rules !== undefined) return rules;
  const { values, positionals } = parseCommandLine(argv);
  const [command, ...args] = positionals;
  if (!command || values.help) {
    out(USAGE);
    return command ? 0 : 2;
  }
  if (command === 'openapi') {
    out(JSON.stringify(openApiDocument(), null, 2));
    return 0;
  }
  const loaded = loadConfig(values.config, process.env, process.cwd());
  const { config } = loaded;
  if ((values.host !== undefined || values.port !== undefined) && command !== 'serve')
    throw new CliError('--host and --port are options of vigil serve', 2);
  switch (command) {
    case 'serve':
      return serveCommand(values, loaded);
    case 'api-token-generate':
      return apiTokenCommand(args, values, config.auth.credentialsFile);
    case 'credential':
      return credentialCommand(args, values, config.auth.credentialsFile);
    case 'replay':
      // A one-shot command: the thread that folds the write side yields to the read side's worker
      // (the longer fold) for the rest of the process.
      out(await replay(config.storage.path, intOption(values.until, '--until'), storeOptions(config), REPLAY_YIELD));
      return 0;
    case 'log':
      return logCommand(args, values, config);
    default:
      throw new CliError(`unknown command ${command}\n${USAGE}`, 2);
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
    const known =
      e instanceof CliError ||
      e instanceof ConfigError ||
      e instanceof StartupError ||
      e?.name === 'StoreLockedError' ||
      (e as { code?: string })?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
      /^refusing to start: /.test(e?.message ?? '');
    process.stderr.write(`vigil: ${known ? e.message : `unexpected error: ${e?.message ?? String(err)}`}\n`);
    process.exit(e instanceof CliError ? e.exitCode : 1);
  },
);
