import { StatusLabel } from '../../http/web/components/badges.js';
import { Table } from '../../http/web/components/table.js';
import { shortTime } from '../../http/web/components/url.js';
import { CSRF_FIELD } from '../../http/web/csrf.js';
import type { SessionView } from '../projections/setup-sessions.js';
import { sharedVms } from './overview-claims.js';
import type { DeploymentRow, OverviewData } from './page-data.js';
import { SetupShell, type SetupUser } from './shell.js';

const sessionHref = (id: string) => `/setup-sessions/${id}`;

/**
 * The overview: create a setup session, the tenant's deployments (those needing recovery first; abandoned ones only
 * when asked) with a warning for every VM two live deployments claim, and its sessions.
 */
export function OverviewPage(props: {
  readonly user: SetupUser;
  readonly data: OverviewData;
  readonly tokenTtlMinutes: number;
  readonly showAbandoned?: boolean;
}) {
  const { data } = props;
  const missing = data.deployments.filter((r) => r.deployment.status === 'central_missing').length;
  const abandoned = data.deployments.filter((r) => r.deployment.status === 'abandoned').length;
  const rows = props.showAbandoned
    ? data.deployments
    : data.deployments.filter((r) => r.deployment.status !== 'abandoned');
  const shared = sharedVms(data.deployments.map((r) => r.deployment));
  return (
    <SetupShell
      title="Deployments"
      current="/"
      user={props.user}
      notice={
        missing > 0
          ? {
              kind: 'error',
              text: `${missing} deployment${missing === 1 ? '' : 's'} lost the central VM: open it to recover.`,
            }
          : undefined
      }
    >
      <h1>Deployments</h1>
      <section class="panel">
        <h2>Set up a new deployment</h2>
        <p>
          A setup session gives you a single-use setup token (valid {props.tokenTtlMinutes} minutes) and the installer
          command to run on your orchestration host. The token is shown once.
        </p>
        <form method="post" action="/setup-sessions">
          <input type="hidden" name={CSRF_FIELD} value={props.user.csrf} />
          <button type="submit">Create setup session</button>
        </form>
      </section>
      <h2>Your tenant's deployments</h2>
      {shared.length > 0 ? (
        <div class="notice notice-error" role="alert" id="shared-vms">
          <p>Two deployments claim one VM: at most one of them is installed there. Abandon the others.</p>
          <ul>
            {shared.map((v) => (
              <li>
                <code>{v.vmId}</code>:{' '}
                {v.deploymentIds.map((id) => (
                  <code>{id} </code>
                ))}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {abandoned > 0 ? (
        <p class="muted">
          {props.showAbandoned ? (
            <a href="/">Hide abandoned deployments</a>
          ) : (
            <a href="/?abandoned=show">Show {abandoned} abandoned</a>
          )}
        </p>
      ) : null}
      <Table<DeploymentRow>
        id="deployments"
        rows={rows}
        rowKey={(r) => r.deployment.id}
        rowHref={(r) => sessionHref(r.deployment.sessionId)}
        keyboard
        empty="No deployment yet: create a setup session and run the installer."
        columns={[
          {
            header: 'Deployment',
            cell: (r) => (
              <a href={sessionHref(r.deployment.sessionId)}>
                <code>{r.deployment.id}</code>
              </a>
            ),
          },
          {
            header: 'Status',
            cell: (r) => (
              <>
                {<StatusLabel status={r.deployment.status} />}
                {r.recoveryOpen ? <span class="muted"> · recovery token waiting</span> : null}
              </>
            ),
          },
          { header: 'Central VM', cell: (r) => <code>{r.deployment.scope.central_vm_id}</code> },
          { header: 'VMs', class: 'num', cell: (r) => r.deployment.scope.vms.length },
          { header: 'Epoch', class: 'num', cell: (r) => r.deployment.epoch },
          {
            header: 'Last heartbeat',
            cell: (r) => shortTime(r.deployment.lastHeartbeatAt) || <span class="muted">none yet</span>,
          },
        ]}
      />
      <h2>Setup sessions</h2>
      <Table<SessionView>
        id="sessions"
        rows={data.sessions}
        rowKey={(s) => s.id}
        rowHref={(s) => sessionHref(s.id)}
        empty="No setup session yet."
        columns={[
          {
            header: 'Session',
            cell: (s) => (
              <a href={sessionHref(s.id)}>
                <code>{s.id}</code>
              </a>
            ),
          },
          { header: 'Kind', cell: (s) => s.kind },
          { header: 'Status', cell: (s) => <StatusLabel status={s.status} /> },
          { header: 'Phase', cell: (s) => s.phases.at(-1)?.phase.replaceAll('_', ' ') ?? <span class="muted">—</span> },
          { header: 'Created by', cell: (s) => s.userId },
          { header: 'Created', cell: (s) => shortTime(s.createdAt) },
        ]}
      />
      {data.moreSessions > 0 ? <p class="muted">{data.moreSessions} older sessions are not listed.</p> : null}
    </SetupShell>
  );
}
