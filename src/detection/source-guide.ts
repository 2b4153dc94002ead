import { SYSMON_CHANNEL, WINDOWS_CATEGORIES, WINDOWS_SERVICE_CHANNELS } from './windows-logsources.js';

/**
 * For each detection source key (logsources.ts), what it is and how to get it: the route or shipper,
 * the configuration, and the doc section. The detection plan's fixes are written from this table.
 */

/** What a source is and what to do to start sending it. */
export interface SourceGuide {
  readonly describe: string;
  readonly how: string;
  readonly doc: string;
}

const JOURNAL =
  'POST `journalctl -o json` entries to /api/v1/ingest/linux-journal, send syslog (RFC 5424) to ' +
  '/api/v1/ingest/syslog-rfc5424, or run the collector agent (`vigil collector run`, journal and files sources)';
const ZEEK = (log: string) =>
  `POST Zeek ${log}.log records written as JSON (LogAscii::use_json=T) to ` +
  `/api/v1/ingest/network-monitor?logType=${log}`;
const WINDOWS =
  "ship the channel with the OpenTelemetry Collector's windowseventlog receiver to /api/v1/ingest/opentelemetry-log";

/** Windows channel names as Windows spells them, by their lower-cased source key part. */
const CHANNEL_NAMES: ReadonlyMap<string, string> = new Map(
  [
    ...Object.values(WINDOWS_SERVICE_CHANNELS).flat(),
    ...Object.values(WINDOWS_CATEGORIES).flatMap((c) => c.map((x) => x.channel)),
  ].map((c) => [c.toLowerCase(), c]),
);

function channelName(key: string): string {
  return CHANNEL_NAMES.get(key) ?? key;
}

function windowsChannel(channel: string): string {
  return channel === 'security' ? `turn on the auditing the rules need (docs/windows.md); ${WINDOWS}` : WINDOWS;
}

/**
 * Linux categories Vigil maps (`product: linux, category: ...` read `linux:class:<category>`) but that no source Vigil
 * ships produces: the collector agent sends journal entries, tailed syslog files and host facts, never process
 * executions, connections or file events. Their fix says so plainly and names what would produce them.
 */
const LINUX_UNPRODUCED: Readonly<Record<string, SourceGuide>> = {
  process_creation: {
    describe: 'Linux process executions (product: linux, category: process_creation)',
    how:
      'no Vigil collector source produces Linux process executions yet: the collector agent sends journal entries, ' +
      'tailed syslog files and host facts, not process executions, so enrolling one does not unblock these rules. ' +
      'What would: auditd EXECVE records (run auditd with an execve rule, e.g. `-a always,exit -F arch=b64 -S ' +
      'execve -k exec`, and ship them through the journal or syslog: they arrive today as `product: linux, ' +
      'service: auditd` events with type EXECVE, which rules written for auditd match, but not these ' +
      'process_creation rules), or Sysmon through the OpenTelemetry Collector (the opentelemetry-log route takes ' +
      "Sysmon's Windows Event Log records from the windowseventlog receiver, which feed `product: windows` " +
      'process_creation rules; nothing maps Sysmon for Linux records to this category). Until a collector submits ' +
      'events of class process_creation (collector protocol), these rules stay stored and cannot fire',
    doc: 'docs/detections.md#the-detection-plan',
  },
  network_connection: {
    describe: 'Linux network connections per process (product: linux, category: network_connection)',
    how:
      'no Vigil collector source produces per-process Linux network connections yet (the collector agent sends ' +
      'journal entries, tailed syslog files and host facts). Zeek conn records (network-monitor logType=conn) feed ' +
      'the generic `category: firewall` rules, not these; until a collector submits events of class ' +
      'network_connection (collector protocol), these rules stay stored and cannot fire',
    doc: 'docs/detections.md#the-detection-plan',
  },
  file_event: {
    describe: 'Linux file events (product: linux, category: file_event)',
    how:
      'no Vigil collector source produces Linux file creation events yet (the collector agent tails log files, it ' +
      'does not watch file creation); auditd file watches (`-w <path> -p wa`) arrive as `product: linux, service: ' +
      'auditd` events, which rules written for auditd match, not these. Until a collector submits events of class ' +
      'file_event (collector protocol), these rules stay stored and cannot fire',
    doc: 'docs/detections.md#the-detection-plan',
  },
};

/**
 * Whether Vigil ships something that produces a source key: false for the Linux categories above, which only a
 * third-party collector could send. A rule reading only such keys is `logsource_unsupported` in the plan.
 */
export function producedByVigil(key: string): boolean {
  const m = /^linux:class:(.+)$/.exec(key);
  return !(m && Object.hasOwn(LINUX_UNPRODUCED, m[1]!));
}

/** The guide for one source key; unknown keys get a generic one. */
export function sourceGuide(key: string): SourceGuide {
  const [kind, a, ...rest] = key.split(':');
  const b = rest.join(':');
  switch (kind) {
    case 'zeek': {
      const log = a ?? 'conn';
      return {
        describe: a ? `network-monitor logType=${a}` : 'network-monitor (any Zeek log)',
        how: ZEEK(a ? log : '<log>'),
        doc: 'docs/normalizers/network-monitor.md',
      };
    }
    case 'linux':
      if (a === 'prog')
        return {
          describe: `linux-journal or syslog-rfc5424 records from ${b}`,
          how: `${JOURNAL}; on the host, ${b} must log to the journal or syslog`,
          doc: 'docs/normalizers/linux-journal.md',
        };
      if (a === 'auth')
        return {
          describe: 'linux-journal or syslog-rfc5424 authentication records (sshd, sudo, su, useradd, ...)',
          how: `${JOURNAL}; with the collector, tail /var/log/auth.log (or /var/log/secure)`,
          doc: 'docs/collector-agent.md#sources',
        };
      if (a === 'auditd')
        return {
          describe: 'Linux audit records in the journal (_TRANSPORT=audit)',
          how: `run auditd with journald collecting audit records (systemd-journald-audit.socket), then ${JOURNAL}`,
          doc: 'docs/detections.md#logsource-mapping',
        };
      if (a === 'class') {
        return b === 'firewall'
          ? {
              describe: 'firewall events (kernel netfilter log lines)',
              how: `log firewall verdicts (ufw logging on, or an nftables/iptables LOG rule), then ${JOURNAL}`,
              doc: 'docs/normalizers/linux-messages.md',
            }
          : (LINUX_UNPRODUCED[b] ?? {
              describe: `Linux ${b} events (class ${b}) from a collector`,
              how:
                `no Vigil collector source produces class ${b} yet; Vigil takes such events from any collector ` +
                'that submits them through the collector protocol',
              doc: 'docs/collector-protocol.md',
            });
      }
      return {
        describe: 'linux-journal or syslog-rfc5424 records',
        how: JOURNAL,
        doc: 'docs/normalizers/linux-journal.md',
      };
    case 'tailscale':
      return {
        describe: a ? `mesh-vpn-logs logType=${a}` : 'mesh-vpn-logs',
        how:
          `POST Tailscale ${a === 'network' ? 'network flow' : 'configuration audit'} logs to ` +
          `/api/v1/ingest/mesh-vpn-logs?logType=${a ?? 'network'}`,
        doc: 'docs/normalizers/mesh-vpn-logs.md',
      };
    case 'vigil':
      if (a === 'api')
        return {
          describe: "Vigil's own API access events",
          how: 'nothing to configure: produced by every API request',
          doc: 'docs/detections.md#the-built-in-pack',
        };
      if (a === 'export')
        return {
          describe: "Vigil's own export events",
          how: 'configure export.destinations: Vigil then watches every destination itself',
          doc: 'docs/export.md',
        };
      return {
        describe: `Vigil's own ${a} events`,
        how:
          'enroll a collector agent and let it send (`vigil collector enroll`, then `vigil collector run`): Vigil ' +
          'then watches every submission itself',
        doc: 'docs/collector-agent.md',
      };
    case 'otel':
      return {
        describe: 'opentelemetry-log records',
        how: 'export OTLP logs (JSON) to /api/v1/ingest/opentelemetry-log',
        doc: 'docs/normalizers/opentelemetry-log.md',
      };
    case 'win':
      if (a === 'ch')
        return {
          describe: `Windows Event Log channel ${channelName(b)}`,
          how: windowsChannel(b),
          doc: 'docs/windows.md',
        };
      if (a === 'cat')
        return {
          describe: `Windows ${b} events (${windowsCategoryEvents(b)})`,
          how: `${windowsCategoryOrigin(b)}; ${WINDOWS}`,
          doc: 'docs/windows.md',
        };
      return { describe: 'Windows Event Log records', how: WINDOWS, doc: 'docs/windows.md' };
    default:
      return { describe: key, how: 'no route produces this source', doc: 'docs/detections.md#logsource-mapping' };
  }
}

/** The events of a Windows category, short: `Sysmon event 1 or Security 4688`, `PowerShell 4104`. */
function windowsCategoryEvents(category: string): string {
  const sources = Object.hasOwn(WINDOWS_CATEGORIES, category) ? WINDOWS_CATEGORIES[category]! : [];
  const names = sources.map((s) => {
    const channel =
      s.channel === SYSMON_CHANNEL
        ? 'Sysmon event'
        : s.channel.endsWith('PowerShell/Operational') || s.channel === 'PowerShellCore/Operational'
          ? 'PowerShell'
          : s.channel;
    return `${channel} ${s.ids.join('/')}`;
  });
  return [...new Set(names)].join(' or ') || 'Windows Event Log';
}

/** Where a Windows category comes from, in words. */
function windowsCategoryOrigin(category: string): string {
  if (category === 'process_creation')
    return 'install Sysmon (event 1), or turn on "Audit Process Creation" with command lines (Security 4688)';
  if (category.startsWith('ps_classic')) return 'the "Windows PowerShell" channel';
  if (category.startsWith('ps_')) return 'turn on PowerShell script block and module logging';
  return `install Sysmon with a configuration that logs ${windowsCategoryEvents(category).replace('Sysmon ', '')}`;
}

/** The programs of `linux:prog:<program>` keys, or undefined when some key is of another kind. */
function programsOf(keys: readonly string[]): string[] | undefined {
  const programs = keys.map((k) => /^linux:prog:(.+)$/.exec(k)?.[1]);
  return programs.every((p) => p !== undefined) ? (programs as string[]) : undefined;
}

/** Channels of `win:ch:<channel>` keys, or undefined when some key is of another kind. */
function channelsOf(keys: readonly string[]): string[] | undefined {
  const channels = keys.map((k) => /^win:ch:(.+)$/.exec(k)?.[1]);
  return channels.every((c) => c !== undefined) ? channels.map((c) => channelName(c!)) : undefined;
}

function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/**
 * Any of `keys`, in words, said once: `linux-journal or syslog-rfc5424 records from cron, crond or anacron`,
 * `Windows Event Log channel A or B`.
 */
export function describeSources(keys: readonly string[]): string {
  if (keys.length > 1) {
    const programs = programsOf(keys);
    if (programs) return `linux-journal or syslog-rfc5424 records from ${orList(programs)}`;
    const channels = channelsOf(keys);
    if (channels) return `Windows Event Log channel ${orList(channels)}`;
  }
  return keys.map((k) => sourceGuide(k).describe).join(' or ');
}

/**
 * What to do to get any of `keys`, said once for every rule that needs them (the plan's `fixes`): one source's `how`,
 * or each one's, for a rule that any of several sources feeds.
 */
export function sourceAction(keys: readonly string[]): string {
  if (keys.length > 1) {
    const programs = programsOf(keys);
    if (programs) return `${JOURNAL}; on the host, ${orList(programs)} must log to the journal or syslog`;
    const channels = channelsOf(keys);
    if (channels) return WINDOWS;
  }
  const guides = keys.map(sourceGuide);
  if (guides.length === 1) return guides[0]!.how;
  return `any of: ${guides.map((g) => `${g.describe}: ${g.how}`).join('; or ')}`;
}
