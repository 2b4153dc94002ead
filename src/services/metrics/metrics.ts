import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The service's Prometheus metrics (`GET /metrics`, docs/shippers.md "Prometheus"). Every label
 * takes its values from a closed set (route templates, normalizer names, configured listener
 * names, fixed outcomes and buckets): never a token, an event value or anything a client sends.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Events accepted or rejected, by route template (or listener transport) and normalizer. */
  readonly ingested: Counter<'route' | 'normalizer' | 'outcome'>;
  /** Records per writer batch and the time from a command's submission to its durable commit. */
  readonly writerBatchRecords: Histogram<never>;
  readonly writerCommitSeconds: Histogram<never>;
  /** Syslog messages by listener and outcome, connections refused by reason, connections open. */
  readonly syslogMessages: Counter<'listener' | 'outcome'>;
  readonly syslogConnectionsRefused: Counter<'listener' | 'reason'>;
  readonly syslogConnections: Gauge<'listener'>;
  /** HTTP connections cut or refused: a request not received in time, or past the per-address cap. */
  readonly httpConnectionsRefused: Counter<'reason'>;
  /** HTTP request durations by method, route template and status class. */
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Sets where the point-in-time gauges read from (queue, log head, read side, alerts, collectors). */
  observe(sources: MetricSources): void;
}

/** Where the gauges read their values when scraped; each is optional (a test app has no log file). */
export interface MetricSources {
  readonly queue?: () => { readonly requests: number; readonly bytes: number; readonly records: number };
  readonly logHead?: () => { readonly seq: number; readonly bytes: number };
  readonly readSideApplied?: () => number;
  /** Severity (0 to 10) of every alert that is not dismissed. */
  readonly openAlertSeverities?: () => Iterable<number>;
  /** Links between alerts and affected systems kept, and the most kept (projections/alerts.ts). */
  readonly alertSystemLinks?: () => { readonly kept: number; readonly limit: number };
  /** When each enrolled collector was last heard from (ISO 8601), or null when never. */
  readonly collectorLastSeen?: () => Iterable<string | null>;
  /** Each configured export destination's delivery state (its name is from the configuration: a closed set). */
  readonly exports?: () => ReadonlyArray<{
    readonly name: string;
    readonly lagRecords: number;
    readonly state: string;
    readonly delivered: number;
  }>;
  /** Each rule's evaluations, matches and time (ms) since the process started (rule ids: the installed rules). */
  readonly ruleCosts?: () => Iterable<[string, { evaluations: number; matches: number; ms: number }]>;
  /** Seconds since the newest witness cosignature of the checkpoints; undefined when none (or no witness). */
  readonly witnessCosignatureAge?: () => number | undefined;
  readonly now?: () => Date;
}

/** Age buckets of collectors by when they last submitted: a closed label set. */
const AGE_BUCKETS: ReadonlyArray<[string, number]> = [
  ['5m', 5 * 60_000],
  ['1h', 3_600_000],
  ['24h', 86_400_000],
];

function ageBucket(lastSeen: string | null, nowMs: number): string {
  if (lastSeen === null) return 'never';
  const age = nowMs - Date.parse(lastSeen);
  for (const [name, ms] of AGE_BUCKETS) if (age < ms) return `under_${name}`;
  return 'over_24h';
}

/** Creates the metrics of one instance in a registry of its own. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  let sources: MetricSources = {};
  const registers = [registry];
  const ingested = new Counter({
    name: 'vigil_ingest_events_total',
    help: 'Events accepted or rejected, by route template and normalizer.',
    labelNames: ['route', 'normalizer', 'outcome'] as const,
    registers,
  });
  const writerBatchRecords = new Histogram({
    name: 'vigil_writer_batch_records',
    help: 'Records appended per command batch.',
    buckets: [1, 2, 5, 10, 50, 100, 500, 1000, 5000, 10000],
    registers,
  });
  const writerCommitSeconds = new Histogram({
    name: 'vigil_writer_commit_seconds',
    help: 'Time from a command reaching the writer to its records being durable.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const syslogMessages = new Counter({
    name: 'vigil_syslog_messages_total',
    help: 'Syslog messages by listener and outcome (accepted, rejected, oversized, rate_limited, source_refused).',
    labelNames: ['listener', 'outcome'] as const,
    registers,
  });
  const syslogConnectionsRefused = new Counter({
    name: 'vigil_syslog_connections_refused_total',
    help: 'Syslog connections refused, by listener and reason.',
    labelNames: ['listener', 'reason'] as const,
    registers,
  });
  const httpConnectionsRefused = new Counter({
    name: 'vigil_http_connections_refused_total',
    help: 'HTTP connections cut (request_timeout: headers or body not received in time) or refused (per_address_cap).',
    labelNames: ['reason'] as const,
    registers,
  });
  const syslogConnections = new Gauge({
    name: 'vigil_syslog_connections',
    help: 'Open syslog connections by listener.',
    labelNames: ['listener'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'vigil_http_request_duration_seconds',
    help: 'HTTP request durations by method, route template and status class.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });

  new Gauge({
    name: 'vigil_ingest_queue',
    help: 'Ingest admitted and not yet answered, by unit (requests, bytes, records).',
    labelNames: ['unit'] as const,
    registers,
    collect() {
      const d = sources.queue?.();
      if (!d) return;
      this.set({ unit: 'requests' }, d.requests);
      this.set({ unit: 'bytes' }, d.bytes);
      this.set({ unit: 'records' }, d.records);
    },
  });
  new Gauge({
    name: 'vigil_log_head_seq',
    help: 'Sequence number of the last record in the log.',
    registers,
    collect() {
      const h = sources.logHead?.();
      if (h) this.set(h.seq);
    },
  });
  new Gauge({
    name: 'vigil_log_bytes',
    help: "Size of the log's database file in bytes.",
    registers,
    collect() {
      const h = sources.logHead?.();
      if (h) this.set(h.bytes);
    },
  });
  new Gauge({
    name: 'vigil_read_side_lag_records',
    help: 'Records in the log the read side has not folded yet.',
    registers,
    collect() {
      const h = sources.logHead?.();
      const applied = sources.readSideApplied?.();
      if (h && applied !== undefined) this.set(Math.max(0, h.seq - applied));
    },
  });
  new Gauge({
    name: 'vigil_alerts_open',
    help: 'Alerts not dismissed, by severity (0 to 10).',
    labelNames: ['severity'] as const,
    registers,
    collect() {
      const severities = sources.openAlertSeverities?.();
      if (!severities) return;
      const counts = new Array<number>(11).fill(0);
      for (const s of severities) counts[Math.min(10, Math.max(0, Math.round(s)))]!++;
      counts.forEach((n, s) => this.set({ severity: String(s) }, n));
    },
  });
  new Gauge({
    name: 'vigil_alert_system_links',
    help:
      'Links between alerts and affected systems kept in memory (kind=kept), and the most kept (kind=limit); ' +
      'past it, alerts keep no new systems.',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      const links = sources.alertSystemLinks?.();
      if (!links) return;
      this.set({ kind: 'kept' }, links.kept);
      this.set({ kind: 'limit' }, links.limit);
    },
  });
  new Gauge({
    name: 'vigil_collectors',
    help: 'Enrolled collectors by time since their last accepted submission.',
    labelNames: ['last_seen'] as const,
    registers,
    collect() {
      const seen = sources.collectorLastSeen?.();
      if (!seen) return;
      const nowMs = (sources.now?.() ?? new Date()).getTime();
      const counts = new Map<string, number>(
        ['under_5m', 'under_1h', 'under_24h', 'over_24h', 'never'].map((b) => [b, 0]),
      );
      for (const at of seen) {
        const b = ageBucket(at, nowMs);
        counts.set(b, counts.get(b)! + 1);
      }
      for (const [b, n] of counts) this.set({ last_seen: b }, n);
    },
  });
  new Gauge({
    name: 'vigil_export_lag_records',
    help: 'Log records not yet delivered to an export destination.',
    labelNames: ['destination'] as const,
    registers,
    collect() {
      for (const d of sources.exports?.() ?? []) this.set({ destination: d.name }, d.lagRecords);
    },
  });
  new Gauge({
    name: 'vigil_export_failing',
    help: '1 when an export destination is marked failing (docs/export.md), else 0.',
    labelNames: ['destination'] as const,
    registers,
    collect() {
      for (const d of sources.exports?.() ?? []) this.set({ destination: d.name }, d.state === 'failing' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'vigil_export_delivered_items',
    help: 'Items delivered to an export destination since the service started.',
    labelNames: ['destination'] as const,
    registers,
    collect() {
      for (const d of sources.exports?.() ?? []) this.set({ destination: d.name }, d.delivered);
    },
  });
  new Gauge({
    name: 'vigil_witness_cosignature_age_seconds',
    help: 'Seconds since the newest witness cosignature of the log checkpoints (absent: none, or no witness).',
    registers,
    collect() {
      const age = sources.witnessCosignatureAge?.();
      this.reset();
      if (age !== undefined) this.set(age);
    },
  });
  ruleCostMetrics(registers, () => sources);
  return {
    registry,
    ingested,
    writerBatchRecords,
    writerCommitSeconds,
    syslogMessages,
    syslogConnectionsRefused,
    httpConnectionsRefused,
    syslogConnections,
    httpDuration,
    observe(s) {
      sources = { ...sources, ...s };
    },
  };
}

/**
 * Per-rule cost (issue 57): evaluations, matches and CPU time of each rule since the process
 * started. The `rule` label is a rule id: a closed set, the rules a rule_admin installed.
 */
function ruleCostMetrics(registers: Registry[], sources: () => MetricSources): void {
  const series = [
    ['vigil_rule_evaluations_total', 'Times a rule was evaluated on an event.', 'evaluations'],
    ['vigil_rule_matches_total', 'Times a rule matched an event.', 'matches'],
    ['vigil_rule_seconds_total', 'Time spent evaluating a rule, in seconds.', 'ms'],
  ] as const;
  for (const [name, help, field] of series)
    new Counter({
      name,
      help,
      labelNames: ['rule'] as const,
      registers,
      collect() {
        const costs = sources().ruleCosts?.();
        if (!costs) return;
        this.reset();
        for (const [rule, cost] of costs) this.inc({ rule }, field === 'ms' ? cost.ms / 1000 : cost[field]);
      },
    });
}
