import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import * as v from 'valibot';
import { refuseForeignOwner } from '../kernel/secret-files.js';
import { generateToken, hashToken } from '../auth/tokens.js';
import { formatIssues } from '../kernel/issues.js';
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
    const { runInstallCommand } = await import('./install-command.js');
    return runInstallCommand(argv.slice(1));
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
