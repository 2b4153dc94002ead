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
  'run the OpenTelemetry Collector on the Windows host with the windowseventlog receiver for the channel below and ' +
  'the otlphttp exporter to /api/v1/ingest/opentelemetry-log';

function windowsChannel(channel: string): string {
  return `Windows Event Log channel "${channel}": ${WINDOWS}`;
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
          : {
              describe: `${b} events from a collector`,
              how: 'enroll a collector agent on the host (`vigil collector enroll`, then `vigil collector run`)',
              doc: 'docs/collector-agent.md',
            };
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
        return { describe: `Windows Event Log channel ${b}`, how: windowsChannel(b), doc: 'docs/windows.md' };
      if (a === 'cat')
        return {
          describe: `Windows ${b} events (${windowsCategoryOrigin(b)})`,
          how: `${windowsCategoryOrigin(b)}: ${WINDOWS}`,
          doc: 'docs/windows.md',
        };
      return { describe: 'Windows Event Log records', how: WINDOWS, doc: 'docs/windows.md' };
    default:
      return { describe: key, how: 'no route produces this source', doc: 'docs/detections.md#logsource-mapping' };
  }
}

/** Where a Windows category comes from, in words. */
function windowsCategoryOrigin(category: string): string {
  if (category === 'process_creation')
    return 'Sysmon event 1 or Security 4688 (with "Audit Process Creation" and command-line auditing on)';
  if (category.startsWith('ps_classic')) return 'the "Windows PowerShell" channel';
  if (category.startsWith('ps_'))
    return 'PowerShell script block / module logging (Microsoft-Windows-PowerShell/Operational)';
  return 'Sysmon (Microsoft-Windows-Sysmon/Operational) with a configuration that logs these events';
}

/** The fix sentence for sources of which nothing was ever received. */
export function sourceFix(keys: readonly string[]): string {
  if (keys.length === 0) return 'no source';
  const guides = keys.map(sourceGuide);
  const lines = guides.map((g) => `${g.describe}: ${g.how} (see ${g.doc})`);
  return `nothing received yet from ${lines.length === 1 ? lines[0] : `any of: ${lines.join('; or ')}`}`;
}
