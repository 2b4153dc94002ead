import { Table } from '../../http/web/components/table.js';
import { shortTime } from '../../http/web/components/url.js';
import type { DeploymentView } from '../projections/deployments.js';
import type { Fleet, FleetRow } from '../projections/fleet.js';

/** How long before `now` an instant was, for a person: `just now`, `4 min ago`, `3 h ago`, `2 d ago`. */
export function relativeTime(iso: string, now: string): string {
  const s = Math.round((Date.parse(now) - Date.parse(iso)) / 1000);
  if (!Number.isFinite(s)) return '';
  if (s < 60) return s < -60 ? 'ahead of this clock' : 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

function When(props: { readonly at: string; readonly now: string }) {
  return (
    <>
      <time datetime={props.at}>{shortTime(props.at)}</time>{' '}
      <span class="muted">({relativeTime(props.at, props.now)})</span>
    </>
  );
}

function Enrolled(props: { readonly row: FleetRow; readonly epoch: number; readonly now: string }) {
  const r = props.row;
  if (r.role === 'central') return <span class="muted">central instance (reports the snapshot)</span>;
  if (r.enrolledAt !== undefined)
    return (
      <>
        <span class="state-ready">yes, epoch {props.epoch}</span> · <When at={r.enrolledAt} now={props.now} />
      </>
    );
  const stale = r.staleEpoch === undefined ? '' : ` (last enrolled in epoch ${r.staleEpoch})`;
  return (
    <span class="state-degraded">
      not yet in epoch {props.epoch}
      {stale}
    </span>
  );
}

function LastEvidence(props: { readonly row: FleetRow; readonly now: string }) {
  const at = props.row.lastEvidenceAt;
  if (at === undefined) return <span class="muted">not reported</span>;
  if (at === null) return <span class="muted">none yet</span>;
  return <When at={at} now={props.now} />;
}

function Silent(props: { readonly row: FleetRow }) {
  if (props.row.silent === undefined) return <span class="muted">not reported</span>;
  return props.row.silent ? <span class="state-degraded">silent</span> : <span>no</span>;
}

/** The recovery's progress: which collectors replaced their enrollment in the new epoch and which have not yet. */
function Reenrollment(props: { readonly fleet: Fleet }) {
  const f = props.fleet;
  const total = f.enrolled + f.waiting.length;
  if (total === 0) return null;
  return f.waiting.length === 0 ? (
    <p class="notice notice-ok" id="reenrollment">
      Every collector in scope ({total}) enrolled again in epoch {f.epoch}.
    </p>
  ) : (
    <p class="notice" id="reenrollment">
      {f.enrolled} of {total} collectors enrolled again in epoch {f.epoch}; still to enroll:{' '}
      {f.waiting.map((vm, i) => (
        <>
          {i > 0 ? ', ' : ''}
          <code>{vm}</code>
        </>
      ))}
      . Each must enroll with its new-epoch token; its old enrollment is refused.
    </p>
  );
}

/**
 * Every VM of the deployment as of the last snapshot: whether its collector enrolled in the current epoch, its last
 * evidence and whether the instance holds it silent; after a recovery, which collectors re-enrolled.
 */
export function FleetTable(props: { readonly d: DeploymentView; readonly fleet: Fleet; readonly now: string }) {
  const { d, fleet } = props;
  return (
    <section aria-labelledby="fleet-title">
      <h2 id="fleet-title">
        Fleet{' '}
        <span class="muted">
          {fleet.asOf ? `(as of the snapshot of ${shortTime(fleet.asOf)})` : '(no snapshot yet)'}
        </span>
      </h2>
      {d.epoch > 1 ? <Reenrollment fleet={fleet} /> : null}
      <Table<FleetRow>
        id="fleet"
        rows={fleet.rows}
        rowKey={(r) => `${r.role}:${r.vmId}:${r.collectorId ?? ''}`}
        empty="No VM in scope."
        columns={[
          {
            header: 'VM',
            cell: (r) => (
              <>
                <code>{r.vmId}</code>
                {r.inScope ? null : <span class="muted"> (not in the approved scope)</span>}
              </>
            ),
          },
          { header: 'Role', cell: (r) => r.role },
          {
            header: `Enrolled in epoch ${fleet.epoch}`,
            cell: (r) => <Enrolled row={r} epoch={d.epoch} now={props.now} />,
          },
          { header: 'Last evidence', cell: (r) => <LastEvidence row={r} now={props.now} /> },
          { header: 'Silent', cell: (r) => <Silent row={r} /> },
        ]}
      />
      {fleet.omitted > 0 ? (
        <p class="muted">The snapshot left out {fleet.omitted} further collectors (its bound).</p>
      ) : null}
    </section>
  );
}
