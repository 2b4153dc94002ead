import type { ExportItem } from './items.js';

/**
 * OTLP severity numbers for Sigma levels (OpenTelemetry log data model: INFO 9, INFO2 10, WARN 13, ERROR 17, FATAL 21).
 */
const LEVEL_SEVERITY: Readonly<Record<string, [number, string]>> = {
  informational: [9, 'INFO'],
  low: [10, 'INFO2'],
  medium: [13, 'WARN'],
  high: [17, 'ERROR'],
  critical: [21, 'FATAL'],
};

type AnyValue = { stringValue: string } | { intValue: string };
const str = (key: string, value: string) => ({ key, value: { stringValue: value } as AnyValue });

function severityOf(item: ExportItem): [number, string] {
  const level = (item.data as { level?: unknown } | null)?.level;
  return (typeof level === 'string' ? LEVEL_SEVERITY[level] : undefined) ?? [9, 'INFO'];
}

function unixNanos(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? (BigInt(ms) * 1_000_000n).toString() : '0';
}

/**
 * An OTLP/HTTP JSON `ExportLogsServiceRequest` carrying `items`: one log record per item, its
 * body the item's data as JSON text, its attributes the item's id, type and sequence, so a
 * receiver can deduplicate and route without parsing the body.
 */
export function otlpRequest(items: readonly ExportItem[], origin: string): unknown {
  return {
    resourceLogs: [
      {
        resource: { attributes: [str('service.name', 'vigil'), str('vigil.origin', origin)] },
        scopeLogs: [
          {
            scope: { name: 'vigil.export', version: '1' },
            logRecords: items.map((item) => {
              const [severityNumber, severityText] = severityOf(item);
              return {
                timeUnixNano: unixNanos(item.at),
                observedTimeUnixNano: unixNanos(item.at),
                severityNumber,
                severityText,
                body: { stringValue: JSON.stringify(item.data) },
                attributes: [
                  str('vigil.item.id', item.id),
                  str('vigil.item.type', item.type),
                  { key: 'vigil.seq', value: { intValue: String(item.seq) } },
                  ...(item.actor
                    ? [str('vigil.actor', item.actor.id), str('vigil.actor.authentication', item.actor.authentication)]
                    : []),
                ],
              };
            }),
          },
        ],
      },
    ],
  };
}
