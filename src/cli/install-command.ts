import { readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { writeSecretFile } from '../kernel/secret-files.js';
import { authorityClient, type AuthorityClient } from '../clients/installer/authority-client.js';
import { fileStateStore, isUnfinished, type StateStore } from '../clients/installer/install-state.js';
import { staticInventoryProvider, type InventoryProvider } from '../clients/installer/inventory.js';
import { planInstall } from '../clients/installer/plan.js';
import { ChecksFailedError, formatChecks, runPreflight, type CheckResult } from '../clients/installer/preflight.js';
import { runInstall, type InstallOptions, type ServiceManager } from '../clients/installer/run-install.js';
import { isOrchestrationHost, sshTransport } from '../clients/installer/ssh-transport.js';
import { tailscaleInventoryProvider } from '../clients/installer/tailscale.js';
import { directoryTransport } from '../clients/installer/transport.js';
import { CliError } from './cli-error.js';
import { parseCommandArgs, usageError } from './usage.js';
import { logLine } from './service-process.js';

const out = (line: unknown) => process.stdout.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);

/** Where `vigil` is installed on the VMs unless --vigil-exec says otherwise. */
const DEFAULT_VIGIL_EXEC = '/usr/local/bin/vigil';

/** The exit status of a run that stopped in a state `--resume` continues (EX_TEMPFAIL). */
export const EXIT_RESUMABLE = 75;

type Values = Record<string, string | boolean | string[] | undefined>;

const str = (values: Values, k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);

function need(values: Values, k: string, why = ''): string {
  const x = str(values, k);
  if (x === undefined) throw usageError('install', `install: --${k} is required${why}`);
  return x;
}

function readTokenFrom(source: string): string {
  const text = source === '-' ? readFileSync(0, 'utf8') : readFileSync(source, 'utf8');
  const token = text.trim();
  if (!/^(lst|lrc)_[A-Za-z0-9_-]{43}$/.test(token))
    throw new CliError('the token file must hold one lst_... setup token (or lrc_... recovery token)', 2);
  return token;
}

function inventoryFrom(values: Values): InventoryProvider {
  const file = str(values, 'inventory');
  const tailnet = str(values, 'tailscale-tailnet');
  if ((file === undefined) === (tailnet === undefined))
    throw usageError('install', 'install: name one discovery source: --inventory FILE or --tailscale-tailnet NAME');
  if (file !== undefined) return staticInventoryProvider(resolve(file));
  const apiKeyFile = str(values, 'tailscale-api-key-file');
  if (!apiKeyFile)
    throw new CliError(
      '--tailscale-api-key-file FILE is required with --tailscale-tailnet (the API key is never taken from the ' +
        'command line)',
      2,
    );
  const apiUrl = str(values, 'tailscale-api-url');
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

/** The check table on stderr and one JSON line a check on stdout. */
function reportChecks(results: readonly CheckResult[]): void {
  process.stderr.write(`${formatChecks(results)}\n`);
  for (const r of results) out({ msg: 'check', ...r });
}

/** The run's options from the command line (the token is read only when the run claims). */
function installOptions(values: Values, state: StateStore, client: AuthorityClient, setupUrl: string): InstallOptions {
  const transport = need(values, 'transport');
  const ssh = transport === 'ssh';
  if (!ssh && !transport.startsWith('directory:')) throw new CliError('--transport: ssh or directory:DIR', 2);
  const serviceManager = (values['service-manager'] ?? (ssh ? 'systemd' : 'none')) as ServiceManager;
  if (serviceManager !== 'systemd' && serviceManager !== 'none')
    throw new CliError('--service-manager: systemd or none', 2);
  const sshKey = ssh ? resolve(need(values, 'ssh-key')) : '';
  const workDir = resolve(need(values, 'work-dir'));
  const knownHosts = str(values, 'known-hosts') ? resolve(str(values, 'known-hosts')!) : join(workDir, 'known_hosts');
  const [host, port] = (str(values, 'central-listen') ?? '0.0.0.0:4173').split(/:(?=\d+$)/);
  const progress = (line: Record<string, unknown>) => logLine({ level: 'info', ...line });
  const resume = values.resume === true;
  const checkOnly = values.check === true;
  return {
    client,
    setupUrl,
    token: resume || checkOnly ? undefined : readTokenFrom(need(values, 'token-file')),
    recovery: values.recovery === true,
    resume,
    state,
    inventory: inventoryFrom(values),
    confirm: confirmer(values),
    reportChecks,
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
    vigilExec: str(values, 'vigil-exec') ?? DEFAULT_VIGIL_EXEC,
    serviceManager,
    collectorFiles: collectorFiles(values['collector-file']),
    centralListen: { host: host ?? '0.0.0.0', port: Number(port ?? 4173) },
    snapshotIntervalSeconds: Number(values['snapshot-interval'] ?? 60),
    waitMs: Number(values['wait-seconds'] ?? 900) * 1000,
    pollMs: 1000,
    progress,
    onConsoleCredential: (deploymentId, credential) => {
      const file = join(workDir, `${deploymentId}.console-credential.json`);
      writeSecretFile(file, `${JSON.stringify(credential, null, 2)}\n`);
      progress({ msg: 'console credential written', file });
    },
  };
}

/** `--check`: discovery, the authority and every VM of the proposed scope; claims nothing, spends no token. */
async function checkCommand(o: InstallOptions): Promise<number> {
  let vms: Awaited<ReturnType<InventoryProvider['list']>>;
  let plan: ReturnType<typeof planInstall>;
  try {
    vms = await o.inventory.list();
    plan = planInstall(vms, o.isOrchestrationHost);
  } catch (err) {
    reportChecks([{ check: 'discovery', status: 'fail', detail: (err as Error).message }]);
    return 1;
  }
  process.stderr.write(`Checking ${plan.scope.vms.join(', ')} (nothing is claimed or changed).\n`);
  const t = o.transport(plan.scope.vms, vms);
  const results = await runPreflight({
    client: o.client,
    plan,
    vms,
    probeVms: plan.scope.vms,
    probe: t.probe,
    serviceManager: o.serviceManager,
    centralPort: o.centralListen.port === 0 ? 4173 : o.centralListen.port,
    portMayBeOurs: o.recovery,
  });
  reportChecks(results);
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}

/** `--abandon`: gives up the run kept in the work dir at the authority (recorded there), and marks the state so. */
async function abandonCommand(values: Values, state: StateStore): Promise<number> {
  const s = state.load();
  if (!s || !isUnfinished(s)) throw new CliError(`no unfinished install to abandon in ${state.path}`);
  const reason = need(values, 'reason', ' with --abandon (one line: why)');
  const client = authorityClient(str(values, 'setup-url') ?? s.setupUrl);
  const r = await client.post(`/v1/setup-sessions/${s.sessionId}/abandon`, { reason }, s.sessionToken);
  s.status = 'abandoned';
  state.save(s);
  out({ msg: 'abandoned', ...(r as object), session_id: s.sessionId, state_file: state.path });
  return 0;
}

async function install(values: Values): Promise<number> {
  const modes = ['check', 'resume', 'abandon'].filter((k) => values[k] === true);
  if (modes.length > 1) throw usageError('install', `install: --${modes[0]} and --${modes[1]} exclude each other`);
  const workDir = resolve(need(values, 'work-dir'));
  const state = fileStateStore(join(workDir, 'install-state.json'));
  if (values.abandon === true) return abandonCommand(values, state);
  const kept = values.resume === true ? state.load() : undefined;
  const setupUrl = str(values, 'setup-url') ?? kept?.setupUrl ?? need(values, 'setup-url');
  const o = installOptions(values, state, authorityClient(setupUrl), setupUrl);
  if (values.check === true) return checkCommand(o);
  const result = await runInstall(o).catch((err: Error) => {
    if (err instanceof CliError) throw err;
    const kept = err instanceof ChecksFailedError ? undefined : state.load();
    throw new CliError(
      `install stopped: ${err.message}` +
        (kept && isUnfinished(kept)
          ? `\nThe run is kept in ${state.path}: fix the cause and run again with --resume, or give it up with ` +
            `--abandon --reason TEXT.`
          : ''),
    );
  });
  const { consoleCredential, notInstalled, toStart, ...summary } = result;
  if (result.status === 'awaiting_services') {
    process.stderr.write(
      `Files are in place. Start these services, then run the same command with --resume (it waits for the first ` +
        `snapshot):\n${toStart.map((s) => `  ${s.vm}: ${s.unit}: ${s.execStart.join(' ')}`).join('\n')}\n`,
    );
  } else if (result.status === 'awaiting_snapshot') {
    process.stderr.write(
      `No snapshot from the central instance yet: check that it runs and reaches the authority, then run the same ` +
        `command with --resume.\n`,
    );
  }
  out({
    ...summary,
    notInstalled: notInstalled.map((e) => ({ vm: e.vmId, os: e.os, reason: e.action })),
    ...(toStart.length > 0 ? { toStart } : {}),
    consoleCredentialId: consoleCredential.id,
    consoleCredentialFile: join(workDir, `${result.deploymentId}.console-credential.json`),
    stateFile: state.path,
  });
  return result.status === 'completed' ? 0 : EXIT_RESUMABLE;
}

/** `vigil install ...` (argv after the command). */
export function runInstallCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('install', argv, {
    'setup-url': { type: 'string' },
    'token-file': { type: 'string' },
    inventory: { type: 'string' },
    transport: { type: 'string' },
    'work-dir': { type: 'string' },
    recovery: { type: 'boolean' },
    check: { type: 'boolean' },
    resume: { type: 'boolean' },
    abandon: { type: 'boolean' },
    reason: { type: 'string' },
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
