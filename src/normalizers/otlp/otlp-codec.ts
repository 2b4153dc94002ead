import protobuf from 'protobufjs';
import { OTLP_LOGS_PROTO } from './otlp-logs-proto.js';

/**
 * OTLP/HTTP logs in binary protobuf: requests decoded into the OTLP/JSON shape the
 * `opentelemetry-log` normalizer reads (camelCase names, int64 as decimal text, trace and span ids
 * as hex, bytes as base64), and responses encoded (ExportLogsServiceResponse, google.rpc.Status).
 */

const root = protobuf.parse(OTLP_LOGS_PROTO, { keepCase: false }).root;
const ExportRequest = root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
const ExportResponse = root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse');
const RpcStatus = root.lookupType('opentelemetry.proto.collector.logs.v1.RpcStatus');

/** Decodes a protobuf ExportLogsServiceRequest into its OTLP/JSON form, or says why it cannot be read. */
export function decodeExportRequest(
  bytes: Uint8Array,
): { ok: true; request: Record<string, unknown> } | { ok: false; error: string } {
  try {
    const message = ExportRequest.decode(bytes);
    const json = ExportRequest.toObject(message, {
      longs: String,
      enums: Number,
      bytes: String,
      defaults: false,
      arrays: false,
      oneofs: false,
    });
    hexIds(json);
    return { ok: true, request: json };
  } catch (err) {
    // protobufjs names the offset ("index out of range: 12 + 10 > 15"), never the content; deep nesting exhausts the
    // stack.
    const why =
      err instanceof RangeError && /call stack/i.test(err.message)
        ? 'nested too deeply'
        : err instanceof Error
          ? err.message.slice(0, 200)
          : 'unreadable';
    return { ok: false, error: `malformed protobuf ExportLogsServiceRequest: ${why}` };
  }
}

/** OTLP/JSON writes trace and span ids as hex (not base64 like other bytes fields). */
function hexIds(request: Record<string, unknown>): void {
  for (const rl of list(request['resourceLogs'])) {
    for (const sl of list(rl['scopeLogs'])) {
      for (const lr of list(sl['logRecords'])) {
        for (const field of ['traceId', 'spanId']) {
          const v = lr[field];
          if (typeof v === 'string') lr[field] = Buffer.from(v, 'base64').toString('hex');
        }
      }
    }
  }
}

function list(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value)
    ? value.filter((x): x is Record<string, unknown> => x !== null && typeof x === 'object')
    : [];
}

/** The ExportLogsServiceResponse, with `partialSuccess` when some records were rejected. */
export interface ExportResult {
  readonly rejectedLogRecords: number;
  readonly errorMessage: string;
}

/** An ExportLogsServiceResponse in OTLP/JSON (an empty object when everything was accepted). */
export function exportResponseJson(r: ExportResult): Record<string, unknown> {
  return r.rejectedLogRecords > 0 || r.errorMessage !== ''
    ? { partialSuccess: { rejectedLogRecords: String(r.rejectedLogRecords), errorMessage: r.errorMessage } }
    : {};
}

/** An ExportLogsServiceResponse in binary protobuf. */
export function exportResponseProto(r: ExportResult): Uint8Array {
  const body =
    r.rejectedLogRecords > 0 || r.errorMessage !== ''
      ? { partialSuccess: { rejectedLogRecords: r.rejectedLogRecords, errorMessage: r.errorMessage } }
      : {};
  return ExportResponse.encode(ExportResponse.fromObject(body)).finish();
}

/** A google.rpc.Status in binary protobuf. */
export function statusProto(code: number, message: string): Uint8Array {
  return RpcStatus.encode(RpcStatus.fromObject({ code, message })).finish();
}

/** Decodes a google.rpc.Status (for tests and clients of this module). */
export function decodeStatusProto(bytes: Uint8Array): { code: number; message: string } {
  const s = RpcStatus.toObject(RpcStatus.decode(bytes), { defaults: true }) as { code: number; message: string };
  return { code: s.code, message: s.message };
}

/** Decodes an ExportLogsServiceResponse (for tests and clients of this module). */
export function decodeExportResponseProto(bytes: Uint8Array): Record<string, unknown> {
  return ExportResponse.toObject(ExportResponse.decode(bytes), { longs: Number, defaults: false });
}

/** The google.rpc.Code for an HTTP status (OTLP/HTTP answers with both). */
export function rpcCodeOf(status: number): number {
  switch (status) {
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 413:
    case 429:
      return 8; // RESOURCE_EXHAUSTED
    case 503:
      return 14; // UNAVAILABLE
    case 500:
      return 13; // INTERNAL
    default:
      return 3; // INVALID_ARGUMENT
  }
}
