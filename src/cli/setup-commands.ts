import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, posix, resolve } from 'node:path';
import * as v from 'valibot';
import { refuseForeignOwner, writeSecretFile } from '../kernel/secret-files.js';
import { generateToken, hashToken } from '../auth/tokens.js';
import { formatIssues } from '../kernel/issues.js';
import { authorityClient } from '../clients/installer/authority-client.js';
import { staticInventoryProvider, type InventoryProvider } from '../clients/installer/inventory.js';
import { runInstall, type ServiceManager } from '../clients/installer/run-install.js';
import { isOrchestrationHost, sshTransport } from '../clients/installer/ssh-transport.js';
import { tailscaleInventoryProvider } from '../clients/installer/tailscale.js';
import { directoryTransport } from '../clients/installer/transport.js';
import { execStart, privateTmpWarnings, renderUnit, UNIT_USERS } from '../clients/installer/units.js';
import { ACCOUNT_TOKEN_PREFIX, AccountSchema, readAccounts, writeAccounts } from '../setup/accounts.js';
import { AuthorityConfigSchema, type AuthorityConfig } from '../setup/config.js';
import { startAuthority } from '../setup/serve.js';
import { CliError } from './cli-error.js';
import { parseCommandArgs, usageError } from './usage.js';
import { logLine, stopOnSignals } from './service-process.js';

const out = (line: unknown) => process.stdout.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);

/** Where `vigil` is installed on the VMs unless --vigil-exec says otherwise. */
const DEFAULT_VIGIL_EXEC = '/usr/local/bin/vigil';

/** Loads the authority config; relative paths resolve against the file's folder. */
export function loadAuthorityConfig(path: string | undefined, cwd: string): AuthorityConfig {
  const full = path === undefined ? undefined : resolve(cwd, path);
  let raw: unknown = {};
  if (full !== undefined) {
    try {
      raw = JSON.parse(readFileSync(full, 'utf8'));
    } catch (err) {
      throw new CliError(`cannot read config ${full}: ${(err as Error).message}`);
    }
  }
  const parsed = v.safeParse(AuthorityConfigSchema, raw);
  if (!parsed.success)
    throw new CliError(
      `invalid setup authority configuration:\n  ${formatIssues(parsed.issues, 'config').join('\n  ')}`,
    );
  const c = parsed.output;
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(full ? dirname(full) : cwd, p));
  const pwd = c.email?.smtp.passwordFile;
  return {
    ...c,
    storage: { path: abs(c.storage.path) },
    accounts: { file: abs(c.accounts.file) },
    recovery: { ...c.recovery, keyFile: abs(c.recovery.keyFile) },
    ...(c.email
      ? { email: { ...c.email, smtp: { ...c.email.smtp, ...(pwd ? { passwordFile: abs(pwd) } : {}) } } }
      : {}),
  };
}

/**
 * A clock moved by a file holding a millisecond offset (`VIGIL_TEST_CLOCK_FILE`): end-to-end tests
 * use it to move the authority past the heartbeat timeout without waiting. Unset, the real clock.
 */
function clockFrom(env: NodeJS.ProcessEnv): () => Date {
  const file = env.VIGIL_TEST_CLOCK_FILE;
  if (!file) return () => new Date();
  let stamp = '';
  let offset = 0;
  return () => {
    const st = existsSync(file) ? statSync(file) : undefined;
    const next = st ? `${st.mtimeMs}:${st.size}` : '';
    if (next !== stamp) {
      stamp = next;
      offset = st ? Number.parseInt(readFileSync(file, 'utf8'), 10) || 0 : 0;
    }
    return new Date(Date.now() + offset);
  };
}

async function serveAuthority(config: AuthorityConfig, env: NodeJS.ProcessEnv): Promise<number> {
  const onFatal = (err: Error) => {
    logLine({ level: 'fatal', msg: 'storage failure', error: err.message });
    process.exit(70);
  };
  const running = await startAuthority(config, logLine, onFatal, clockFrom(env));
  logLine({
    level: 'info',
    msg: 'listening',
    url: running.url,
    store: config.storage.path,
    service: 'setup-authority',
  });
  stopOnSignals(running);
  return new Promise<number>(() => {});
}

function accountCommand(
  config: AuthorityConfig,
  args: string[],
  values: { 'display-name'?: string | undefined; email?: string | undefined },
): number {
  const file = config.accounts.file;
  const [verb, tenantId, userId] = args;
  // A registry the service user owns is refused before it is read (0600: only its owner can), naming that user.
  refuseForeignOwner(file);
  const accounts = readAccounts(file);
  if (verb === 'list') {
    if (args.length > 1)
      throw usageError('setup-authority', `setup-authority account list: unexpected argument ${args[1]}`);
    out(accounts.map(({ tokenHash, ...a }) => ({ ...a, fingerprint: tokenHash.slice(0, 12) })));
    return 0;
  }
  if (!tenantId || !userId || args.length > 3)
    throw usageError('setup-authority', `setup-authority account ${verb}: expected <tenant> <user>`);
  if (verb === 'add') {
    const token = generateToken(ACCOUNT_TOKEN_PREFIX);
    const parsed = v.safeParse(AccountSchema, {
      tenantId,
      userId,
      displayName: values['display-name'] ?? userId,
      email: values.email,
      tokenHash: hashToken(token),
      disabled: false,
    });
    if (!parsed.success) throw new CliError(`invalid account: ${formatIssues(parsed.issues).join('; ')}`, 2);
    if (accounts.some((a) => a.tenantId === tenantId && a.userId === userId))
      throw new CliError(`account ${tenantId}/${userId} exists`);
    writeAccounts(file, [...accounts, parsed.output]);
    const { tokenHash: _hash, ...shown } = parsed.output;
    out({ token, account: shown });
    return 0;
  }
  if (verb === 'disable' || verb === 'enable') {
    if (!accounts.some((a) => a.tenantId === tenantId && a.userId === userId))
      throw new CliError(`no account ${tenantId}/${userId}`);
    writeAccounts(
      file,
      accounts.map((a) =>
        a.tenantId === tenantId && a.userId === userId ? { ...a, disabled: verb === 'disable' } : a,
      ),
    );
    out({ tenantId, userId, disabled: verb === 'disable' });
    return 0;
  }
  throw usageError('setup-authority', `setup-authority account: unknown subcommand ${verb}`);
}

function readTokenFrom(source: string): string {
  const text = source === '-' ? readFileSync(0, 'utf8') : readFileSync(source, 'utf8');
  const token = text.trim();
  if (!/^(lst|lrc)_[A-Za-z0-9_-]{43}$/.test(token))
    throw new CliError('the token file must hold one lst_... setup token (or lrc_... recovery token)', 2);
  return token;
}

function inventoryFrom(values: Values): InventoryProvider {
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const file = str('inventory');
  const tailnet = str('tailscale-tailnet');
  if ((file === undefined) === (tailnet === undefined))
    throw usageError('install', 'install: name one discovery source: --inventory FILE or --tailscale-tailnet NAME');
  if (file !== undefined) return staticInventoryProvider(resolve(file));
  const apiKeyFile = str('tailscale-api-key-file');
  if (!apiKeyFile)
    throw new CliError(
      '--tailscale-api-key-file FILE is required with --tailscale-tailnet (the API key is never taken from the ' +
        'command line)',
      2,
    );
  const apiUrl = str('tailscale-api-url');
  return tailscaleInventoryProvider({
    tailnet: tailnet!,
    apiKeyFile: resolve(apiKeyFile),
    ...(apiUrl ? { apiUrl } : {}),
  });
}

function collectorFiles(given: unknown): string[] {
  const files = Array.isArray(given) ? given.map(String) : [];
  for (const f of files)
    if (!f.startsWith('/') || posix.normalize(f) !== f)
      throw new CliError(`--collector-file ${f}: expected a normalized absolute path on the VMs`, 2);
  if (files.length > 64) throw new CliError('--collector-file: at most 64 files', 2);
  return files;
}

/** Asks on stdin (the plan goes to stderr); refuses when stdin carries the token, which then needs --yes. */
function confirmer(values: Values): (planText: string) => Promise<boolean> {
  return async (planText) => {
    process.stderr.write(`${planText}\n`);
    if (values.yes === true) return true;
    if (values['token-file'] === '-')
      throw new CliError('the token came on stdin, so there is no one to ask: review the plan and pass --yes', 2);
    process.stderr.write('Claim this scope and install? [y/N] ');
    const answer = await new Promise<string>((done) => {
      let text = '';
      const onData = (c: Buffer) => {
        text += c.toString();
        if (text.includes('\n')) finish();
      };
      const finish = () => {
        process.stdin.off('data', onData);
        process.stdin.off('end', finish);
        process.stdin.pause();
        done(text.split('\n')[0] ?? '');
      };
      process.stdin.on('data', onData);
      process.stdin.once('end', finish);
    });
    return /^y(es)?$/i.test(answer.trim());
  };
}

type Values = Record<string, string | boolean | string[] | undefined>;

async function install(values: Values): Promise<number> {
  const need = (k: string) => {
    const x = values[k];
    if (typeof x !== 'string') throw usageError('install', `install: --${k} is required`);
    return x;
  };
  const transport = need('transport');
  const workDir = resolve(need('work-dir'));
  const ssh = transport === 'ssh';
  if (!ssh && !transport.startsWith('directory:')) throw new CliError('--transport: ssh or directory:DIR', 2);
  const serviceManager = (values['service-manager'] ?? (ssh ? 'systemd' : 'none')) as ServiceManager;
  if (serviceManager !== 'systemd' && serviceManager !== 'none')
    throw new CliError('--service-manager: systemd or none', 2);
  const sshKey = ssh ? resolve(need('ssh-key')) : '';
  const knownHosts =
    typeof values['known-hosts'] === 'string' ? resolve(values['known-hosts']) : join(workDir, 'known_hosts');
  const [host, port] = (typeof values['central-listen'] === 'string' ? values['central-listen'] : '0.0.0.0:4173').split(
    /:(?=\d+$)/,
  );
  const progress = (line: Record<string, unknown>) => logLine({ level: 'info', ...line });
  const result = await runInstall({
    client: authorityClient(need('setup-url')),
    token: readTokenFrom(need('token-file')),
    recovery: values.recovery === true,
    inventory: inventoryFrom(values),
    confirm: confirmer(values),
    isOrchestrationHost,
    transport: ssh
      ? (approved, vms) =>
          sshTransport({
            approved,
            inventory: vms,
            identityFile: sshKey,
            knownHostsFile: knownHosts,
            trustOnFirstUse: values['trust-on-first-use'] === true,
            report: progress,
          })
      : () => directoryTransport(resolve(transport.slice('directory:'.length))),
    vigilExec: typeof values['vigil-exec'] === 'string' ? values['vigil-exec'] : DEFAULT_VIGIL_EXEC,
    serviceManager,
    collectorFiles: collectorFiles(values['collector-file']),
    centralListen: { host: host ?? '0.0.0.0', port: Number(port ?? 4173) },
    snapshotIntervalSeconds: Number(values['snapshot-interval'] ?? 60),
    waitMs: Number(values['wait-seconds'] ?? 900) * 1000,
    pollMs: 1000,
    progress,
  }).catch((err: Error) => {
    throw err instanceof CliError ? err : new CliError(`install stopped: ${err.message}`);
  });
  writeSecretFile(
    join(workDir, `${result.deploymentId}.console-credential.json`),
    `${JSON.stringify(result.consoleCredential, null, 2)}\n`,
  );
  const { consoleCredential, notInstalled, ...summary } = result;
  out({
    ...summary,
    notInstalled: notInstalled.map((e) => ({ vm: e.vmId, os: e.os, reason: e.action })),
    consoleCredentialId: consoleCredential.id,
    consoleCredentialFile: join(workDir, `${result.deploymentId}.console-credential.json`),
  });
  return 0;
}

/** `vigil setup-authority unit`: the authority's sandboxed systemd unit for this config. */
function authorityUnit(configPath: string | undefined, config: AuthorityConfig, vigilExec: string): string {
  if (!configPath) throw new CliError('--config FILE is required: the unit starts the authority with it', 2);
  const writable = [...new Set([dirname(config.storage.path), dirname(config.recovery.keyFile)])];
  const unit = { vigilExec, configFile: resolve(configPath), writable, user: UNIT_USERS['setup-authority'] };
  execStart('setup-authority', unit);
  const warnings = privateTmpWarnings({
    '--config': unit.configFile,
    '--vigil-exec': vigilExec,
    'storage.path': config.storage.path,
    'accounts.file': config.accounts.file,
    'recovery.keyFile': config.recovery.keyFile,
    'email.smtp.passwordFile': config.email?.smtp.passwordFile,
  });
  for (const w of warnings) process.stderr.write(`${w}\n`);
  return renderUnit('setup-authority', unit);
}

/** Dispatches `vigil setup-authority ...` and `vigil install ...` (argv without the program). */
export async function runSetupCommand(argv: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  if (argv[0] === 'install') {
    const { values, positionals } = parseCommandArgs('install', argv.slice(1), {
      'setup-url': { type: 'string' },
      'token-file': { type: 'string' },
      inventory: { type: 'string' },
      transport: { type: 'string' },
      'work-dir': { type: 'string' },
      recovery: { type: 'boolean' },
      'central-listen': { type: 'string' },
      'snapshot-interval': { type: 'string' },
      'wait-seconds': { type: 'string' },
      'tailscale-tailnet': { type: 'string' },
      'tailscale-api-key-file': { type: 'string' },
      'tailscale-api-url': { type: 'string' },
      'ssh-key': { type: 'string' },
      'known-hosts': { type: 'string' },
      'trust-on-first-use': { type: 'boolean' },
      yes: { type: 'boolean' },
      'service-manager': { type: 'string' },
      'vigil-exec': { type: 'string' },
      'collector-file': { type: 'string', multiple: true },
    });
    if (positionals.length > 0) throw usageError('install', `install: unexpected argument ${positionals[0]}`);
    return install(values);
  }
  const { values, positionals } = parseCommandArgs('setup-authority', argv.slice(1), {
    config: { type: 'string' },
    'display-name': { type: 'string' },
    email: { type: 'string' },
    'vigil-exec': { type: 'string' },
  });
  const [sub, ...rest] = positionals;
  if (sub !== 'serve' && sub !== 'account' && sub !== 'unit')
    throw usageError(
      'setup-authority',
      sub === undefined
        ? 'setup-authority: expected serve, account or unit'
        : `setup-authority: unknown subcommand ${sub}`,
    );
  if (sub === 'account' && !['add', 'list', 'disable', 'enable'].includes(rest[0] ?? ''))
    throw usageError(
      'setup-authority',
      rest[0] === undefined
        ? 'setup-authority account: expected add, list, disable or enable'
        : `setup-authority account: unknown subcommand ${rest[0]}`,
    );
  if (sub !== 'account' && rest.length > 0)
    throw usageError('setup-authority', `setup-authority ${sub}: unexpected argument ${rest[0]}`);
  const config = loadAuthorityConfig(values.config, cwd);
  if (sub === 'serve') return serveAuthority(config, env);
  if (sub === 'account') return accountCommand(config, rest, values);
  process.stdout.write(
    authorityUnit(
      values.config,
      config,
      typeof values['vigil-exec'] === 'string' ? values['vigil-exec'] : DEFAULT_VIGIL_EXEC,
    ),
  );
  return 0;
}
