import { StatusLabel } from '../../http/web/components/badges.js';
import { Table } from '../../http/web/components/table.js';
import { Timeline } from '../../http/web/components/timeline.js';
import { shortTime } from '../../http/web/components/url.js';
import { CSRF_FIELD } from '../../http/web/csrf.js';
import { PHASES } from '../phases.js';
import type { DeploymentView } from '../projections/deployments.js';
import { fleetOf } from '../projections/fleet.js';
import { FleetTable } from './fleet-table.js';
import type { RecoveryView } from '../projections/recovery.js';
import type { SessionView } from '../projections/setup-sessions.js';
import type { ReportedSystem, SessionPageData } from './page-data.js';

/** The id of the live region: the ES module re-fetches the page (or the `/live` fragment) and swaps it. */
export const LIVE_REGION_ID = 'session-live';

const STEPS = [
  { status: 'created', label: 'Session created', at: (s: SessionView) => s.createdAt },
  { status: 'connected', label: 'Installer connected', at: (s: SessionView) => s.connectedAt },
  { status: 'claimed', label: 'Deployment claimed', at: (s: SessionView) => s.claimedAt },
  { status: 'proven', label: 'Key possession proven', at: (s: SessionView) => s.provenAt },
  { status: 'completed', label: 'Completed', at: (s: SessionView) => s.completedAt },
] as const;

function Steps(props: { readonly session: SessionView }) {
  const reached = STEPS.findIndex((s) => s.status === props.session.status);
  return (
    <ol class="steps" aria-label="Session progress">
      {STEPS.map((step, i) => {
        const at = step.at(props.session);
        return (
          <li
            class={i <= reached ? 'step-done' : i === reached + 1 ? 'step-next' : 'step-todo'}
            aria-current={i === reached ? 'step' : undefined}
          >
            <span class="step-label">{step.label}</span>
            <span class="step-at">{at ? shortTime(at) : i === reached + 1 ? 'waiting' : ''}</span>
          </li>
        );
      })}
    </ol>
  );
}

function waitingHint(s: SessionView, now: string): string | undefined {
  if ((s.status === 'created' || s.status === 'connected') && s.expiresAt <= now)
    return 'The setup token has expired unused: create a new setup session.';
  if (s.status === 'created')
    return `Waiting for the installer to connect with the setup token (valid until ${shortTime(s.expiresAt)}).`;
  if (s.status === 'connected') return 'The installer connected; waiting for it to claim the deployment.';
  if (s.status === 'claimed') return 'Waiting for the installer to prove possession of the deployment key.';
  if (s.status === 'proven')
    return (
      'Provisioning: the installer reports each phase; the session completes after the central instance sends ' +
      'its first snapshot.'
    );
  return undefined;
}

function Phases(props: { readonly session: SessionView }) {
  const done = new Set(props.session.phases.map((p) => p.phase));
  const pending = PHASES.filter((p) => !done.has(p));
  return (
    <>
      <Timeline
        label="Installer phases"
        empty="No phase reported yet."
        entries={props.session.phases.map((p) => ({
          at: p.at,
          title: p.phase.replaceAll('_', ' '),
          ...(p.detail ? { detail: p.detail } : {}),
        }))}
      />
      {pending.length > 0 && props.session.status !== 'completed' ? (
        <p class="muted">Still to come: {pending.map((p) => p.replaceAll('_', ' ')).join(' → ')}</p>
      ) : null}
    </>
  );
}

function Systems(props: {
  readonly systems: readonly ReportedSystem[];
  readonly live: number;
  readonly deployment: DeploymentView;
}) {
  return (
    <>
      <div class="stats">
        <div class="stat">
          <b>{props.live}</b>
          <span>systems reporting live</span>
        </div>
        <div class="stat">
          <b>{props.systems.length}</b>
          <span>systems in the last snapshot</span>
        </div>
        <div class="stat">
          <b>{shortTime(props.deployment.lastHeartbeatAt) || '—'}</b>
          <span>last heartbeat</span>
        </div>
      </div>
      <Table<ReportedSystem>
        id="systems"
        rows={props.systems}
        rowKey={(s) => `${s.kind}:${s.id}`}
        empty={
          props.deployment.lastHeartbeatAt
            ? 'The last snapshot lists no system.'
            : 'No snapshot yet: the central instance reports once it runs.'
        }
        columns={[
          { header: 'System', cell: (s) => <code>{s.id}</code> },
          { header: 'Kind', cell: (s) => s.kind },
          {
            header: 'Live',
            cell: (s) => (s.live ? <span class="state-ready">live</span> : <span class="state-degraded">silent</span>),
          },
          { header: 'Last seen', cell: (s) => shortTime(s.last_seen_at) },
        ]}
      />
    </>
  );
}

function Deployment(props: { readonly d: DeploymentView; readonly session: SessionView }) {
  const d = props.d;
  return (
    <div class="grid">
      <dl class="facts panel">
        <dt>Deployment</dt>
        <dd>
          <code>{d.id}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <StatusLabel status={d.status} />
        </dd>
        <dt>Central VM</dt>
        <dd>
          <code>{d.scope.central_vm_id}</code>
        </dd>
        <dt>Approved VMs</dt>
        <dd>
          {d.scope.vms.map((vm, i) => (
            <>
              {i > 0 ? ', ' : ''}
              <code>{vm}</code>
            </>
          ))}
        </dd>
        <dt>Identity key</dt>
        <dd>
          <code>{d.keyFingerprint}</code>
        </dd>
        <dt>Enrollment epoch</dt>
        <dd>{d.epoch}</dd>
        <dt>Console credential</dt>
        <dd>
          {d.consoleCredential ? <code>{d.consoleCredential.id}</code> : <span class="muted">after the proof</span>}
        </dd>
        <dt>Fleet bootstrap key</dt>
        <dd>
          {props.session.bootstrapKey ? (
            <code>{props.session.bootstrapKey.fingerprint}</code>
          ) : (
            <span class="muted">not published</span>
          )}
        </dd>
      </dl>
      <div>
        <Timeline
          label="Deployment status history"
          empty=""
          entries={d.statusHistory.map((h) => ({ at: h.at, title: h.status.replaceAll('_', ' ') }))}
        />
      </div>
    </div>
  );
}

function Recovery(props: { readonly d: DeploymentView; readonly r: RecoveryView; readonly csrf: string }) {
  const { d, r } = props;
  if (r.claimedAt)
    return (
      <p>
        Recovery <code>{r.id}</code> was claimed {shortTime(r.claimedAt)}
        {r.claimSessionId ? (
          <>
            {' '}
            by session{' '}
            <a href={`/setup-sessions/${r.claimSessionId}`}>
              <code>{r.claimSessionId}</code>
            </a>
          </>
        ) : null}
        .
      </p>
    );
  return (
    <section class="panel recovery" aria-labelledby="recovery-title">
      <h2 id="recovery-title">Recovery: the central VM stopped reporting</h2>
      <p>
        The last heartbeat was {shortTime(d.lastHeartbeatAt) || 'never'}. A single recovery token was issued{' '}
        {shortTime(r.issuedAt)}. Reinstall the central VM with it: the deployment keeps its id and scope; its identity
        key, console credential and collector enrollments are replaced.
      </p>
      <p class="muted">
        {r.notice
          ? `E-mailed ${r.notice.to} at ${shortTime(r.notice.sentAt)} (the e-mail carries no token).`
          : r.noticeFailures > 0
            ? `The e-mail notice failed ${r.noticeFailures} times.`
            : 'No e-mail notice (none configured, or not sent yet).'}
        {r.revealedAt ? ` Last revealed ${shortTime(r.revealedAt)}.` : ''}
      </p>
      <form method="post" action={`/deployments/${d.id}/recovery-token`}>
        <input type="hidden" name={CSRF_FIELD} value={props.csrf} />
        <label>
          <input type="checkbox" name="confirm" value="reveal" required /> I am about to reinstall the central VM: show
          the recovery token once. Revealing it is recorded.
        </label>
        <button type="submit">Reveal recovery token</button>
      </form>
    </section>
  );
}

/** The live part of the session page: progress, phases, deployment, systems, recovery and the console link. */
export function SessionLive(props: { readonly data: SessionPageData; readonly now: string; readonly csrf: string }) {
  const { session, deployment, recovery } = props.data;
  const hint = waitingHint(session, props.now);
  return (
    <div
      id={LIVE_REGION_ID}
      data-live="2"
      data-live-src={`/setup-sessions/${session.id}/live`}
      aria-live="polite"
      data-status={session.status}
      data-deployment-status={deployment?.status}
    >
      <p>
        Session <StatusLabel status={session.status} />
        {deployment ? (
          <>
            {' '}
            · deployment <StatusLabel status={deployment.status} />
          </>
        ) : null}
      </p>
      <Steps session={session} />
      {hint ? <p class="muted">{hint}</p> : null}
      {props.data.dashboardUrl ? (
        deployment?.status === 'central_missing' ? (
          <p class="muted">
            Setup completed {shortTime(session.completedAt)}; the console at{' '}
            <a id="dashboard-link" href={props.data.dashboardUrl} rel="noreferrer">
              {props.data.dashboardUrl}
            </a>{' '}
            is not reporting now.
          </p>
        ) : (
          <p class="notice notice-ok">
            Setup completed {shortTime(session.completedAt)}.{' '}
            <a id="dashboard-link" href={props.data.dashboardUrl} rel="noreferrer">
              Open the console
            </a>{' '}
            (<code>{props.data.dashboardUrl}</code>) and sign in with the console credential the installer wrote to its
            work folder.
          </p>
        )
      ) : null}
      {deployment && recovery && !recovery.claimedAt ? (
        <Recovery d={deployment} r={recovery} csrf={props.csrf} />
      ) : null}
      <h2>Installer phases</h2>
      <Phases session={session} />
      {deployment ? (
        <>
          <h2>
            Systems reporting <span class="muted">(as of the last snapshot)</span>
          </h2>
          <Systems systems={props.data.systems} live={props.data.systemsLive} deployment={deployment} />
          <FleetTable d={deployment} fleet={fleetOf(deployment)} now={props.now} />
          <h2>Deployment</h2>
          <Deployment d={deployment} session={session} />
          {recovery?.claimedAt ? <Recovery d={deployment} r={recovery} csrf={props.csrf} /> : null}
        </>
      ) : (
        <p class="muted">The deployment appears here once the installer claims it.</p>
      )}
    </div>
  );
}
