import { randomBytes } from 'node:crypto';
import type { Pipeline } from '../commands/pipeline.js';
import type { AuthorityModels } from './models.js';
import { generateToken, hashToken } from '../auth/tokens.js';
import type { AccountRegistry } from './accounts.js';
import { decideCentralMissing, isOverdue } from './commands/mark-central-missing.js';
import { event } from './events.js';
import type { Mailer } from './mailer.js';
import type { DeploymentView } from './projections/deployments.js';
import type { RecoveryView } from './projections/recovery.js';
import { encryptToken, recoveryAad, type RecoveryKey } from './recovery-crypto.js';

/** The prefix of recovery tokens (spec 2.11). */
export const RECOVERY_TOKEN_PREFIX = 'lrc_';
/** Delivery attempts per recovery e-mail before the monitor gives up (the browser still shows the action). */
export const MAX_NOTICE_ATTEMPTS = 5;

/** What the monitor needs. */
export interface MonitorDeps {
  readonly pipeline: Pipeline<AuthorityModels>;
  readonly now: () => Date;
  readonly timeoutSeconds: number;
  readonly key: RecoveryKey;
  readonly accounts: AccountRegistry;
  readonly mailer?: Mailer;
  /** Where the owner sees the recovery action (the authority's public URL). */
  readonly publicUrl: () => string;
  readonly log: (line: Record<string, unknown>) => void;
}

/** The recovery monitor: `tick()` checks every heartbeat once; `start()` ticks on an interval. */
export interface RecoveryMonitor {
  tick(): Promise<{ marked: string[]; notices: number }>;
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

function noticeText(d: DeploymentView, url: string): string {
  return [
    `The central VM of deployment ${d.id} (${d.scope.central_vm_id}) has not reported since ${d.lastHeartbeatAt}.`,
    'The deployment is now central_missing and a single-use recovery token has been issued.',
    '',
    `Sign in at ${url}/sign-in and open the deployment to reveal the token, then run the installer in recovery mode`,
    'with a new deployment identity key. Remote collectors will have to enroll again against the reinstalled central ' +
      'VM.',
    '',
    'The token is not included in this message.',
  ].join('\n');
}

async function markOverdue(deps: MonitorDeps, d: DeploymentView, now: string): Promise<boolean> {
  const recoveryId = `rcv_${randomBytes(12).toString('base64url')}`;
  const token = generateToken(RECOVERY_TOKEN_PREFIX);
  const recovery = {
    recoveryId,
    tokenHash: hashToken(token),
    ciphertext: encryptToken(deps.key, token, recoveryAad(d.id, recoveryId)),
    keyId: deps.key.id,
  };
  const outcome = await deps.pipeline.dispatch({
    decide: (m) => decideCentralMissing(m, { deploymentId: d.id, now, timeoutSeconds: deps.timeoutSeconds, recovery }),
    ctx: { now, actor: { id: 'recovery-monitor', authentication: 'internal' } },
  });
  if (outcome.ok)
    deps.log({
      level: 'warn',
      msg: 'central VM missing',
      deploymentId: d.id,
      lastHeartbeatAt: d.lastHeartbeatAt,
      recoveryTokenIssued: outcome.result.issued,
    });
  return outcome.ok;
}

async function sendNotice(deps: MonitorDeps, mailer: Mailer, d: DeploymentView, r: RecoveryView): Promise<boolean> {
  const account = deps.accounts.find(d.tenantId, d.userId);
  if (!account) return false;
  const ctx = { now: deps.now().toISOString(), actor: { id: 'recovery-monitor', authentication: 'internal' } };
  try {
    const sent = await mailer.send({
      to: account.email,
      subject: `[Vigil] deployment ${d.id}: central VM missing, recovery available`,
      text: noticeText(d, deps.publicUrl()),
    });
    await deps.pipeline.record(
      [
        event('RecoveryNoticeSent', {
          deploymentId: d.id,
          recoveryId: r.id,
          to: account.email,
          messageId: sent.messageId,
        }),
      ],
      ctx,
    );
    return true;
  } catch (err) {
    const reason = String((err as Error)?.message ?? err).slice(0, 300);
    await deps.pipeline.record(
      [event('RecoveryNoticeFailed', { deploymentId: d.id, recoveryId: r.id, to: account.email, reason })],
      ctx,
    );
    deps.log({ level: 'error', msg: 'recovery e-mail not delivered', deploymentId: d.id, reason });
    return false;
  }
}

/** Creates the monitor over the authority's writer and read models. */
export function createRecoveryMonitor(deps: MonitorDeps): RecoveryMonitor {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<{ marked: string[]; notices: number }> | undefined;
  async function once(): Promise<{ marked: string[]; notices: number }> {
    const now = deps.now().toISOString();
    const marked: string[] = [];
    for (const d of Object.values(deps.pipeline.models.deployments.byId)) {
      if (isOverdue(d, now, deps.timeoutSeconds) && (await markOverdue(deps, d, now))) marked.push(d.id);
    }
    let notices = 0;
    if (deps.mailer) {
      const recovery = deps.pipeline.models.recovery;
      for (const r of Object.values(recovery.byId)) {
        const d = deps.pipeline.models.deployments.byId[r.deploymentId];
        if (!d || r.claimedAt || r.notice || r.noticeFailures >= MAX_NOTICE_ATTEMPTS || d.status !== 'central_missing')
          continue;
        if (await sendNotice(deps, deps.mailer, d, r)) notices++;
      }
    }
    return { marked, notices };
  }
  return {
    tick() {
      // One pass at a time: an interval tick during a slow SMTP exchange joins the running pass.
      running ??= once().finally(() => {
        running = undefined;
      });
      return running;
    },
    start(intervalMs) {
      timer = setInterval(() => {
        void this.tick().catch((err: Error) =>
          deps.log({ level: 'error', msg: 'recovery monitor pass failed', error: err.message }),
        );
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
