import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as HttpJsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as HttpProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { apiToken, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { decodeExportResponseProto, decodeStatusProto } from '../../src/normalizers/otlp/otlp-codec.js';

interface StoredEvent {
  id: string;
  severity?: number;
  attributes: Record<string, unknown>;
  source: { adapter: string; instance: string };
}


/** Log records as the stock SDK makes them: a LoggerProvider with a resource, one logger, emitted records. */
function sdkRecords(service: string, run: string): ReadableLogRecord[] {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': 'app-01', 'test.run': run }),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  });
  const logger = provider.getLogger('shipper-test', '1.2.3');
  logger.emit({ severityNumber: SeverityNumber.WARN, severityText: 'WARN', body: `login failed ${run}`, attributes: { 'user.name': 'alice', 'client.address': '203.0.113.7', attempts: 3, ratio: 0.5, admin: false, tags: ['a', 'b'] } });
  logger.emit({ severityNumber: SeverityNumber.ERROR2, severityText: 'ERROR', body: `disk full ${run}`, attributes: { 'disk.free_bytes': 12345 } });
  logger.emit({ severityNumber: SeverityNumber.INFO, body: { structured: true, count: 2 }, attributes: {} });
  return memory.getFinishedLogRecords();
}

function exportWith(exporter: HttpJsonExporter | HttpProtoExporter, records: ReadableLogRecord[]): Promise<{ code: number; error?: Error }> {
  return new Promise((resolve) => exporter.export(records, resolve));
}

async function eventsOf(url: string, viewer: string, run: string): Promise<StoredEvent[]> {
  const res = await fetch(`${url}/api/v1/events?adapter=opentelemetry-log&limit=1000`, { headers: { authorization: `Bearer ${viewer}` } });
  assert.equal(res.status, 200);
  const page = await res.json() as { events: StoredEvent[] };
  return page.events.filter((e) => (e.attributes.resource as Record<string, unknown> | undefined)?.['test.run'] === run);
}

describe('OTLP/HTTP from the stock OpenTelemetry JS SDK exporters to vigil serve', () => {
  let serve: ServeProcess;
  let ingestor: string;
  let viewer: string;
  const dir = tempDir();
  before(async () => {
    const config = writeTestConfig(dir.path, { limits: { bodyBytes: 64 * 1024 } });
    ingestor = apiToken(config, 'otel-shipper', 'ingestor');
    viewer = apiToken(config, 'reader', 'viewer');
    serve = await startServe(config, dir.path);
  });
  after(async () => {
    serve.proc.kill('SIGTERM');
    await serve.exited;
    dir.cleanup();
  });

  const checkStored = async (run: string) => {
    const events = await eventsOf(serve.url, viewer, run);
    assert.equal(events.length, 3, 'one event per emitted record');
    const warn = events.find((e) => String(e.attributes.body).startsWith('login failed'))!;
    assert.equal(warn.attributes.attempts, 3, 'an int attribute stays a number');
    assert.equal(warn.attributes.ratio, 0.5);
    assert.equal(warn.attributes.admin, false);
    assert.deepEqual(warn.attributes.tags, ['a', 'b']);
    assert.equal(warn.attributes['user.name'], 'alice');
    assert.equal(warn.severity, 4, 'WARN maps to severity 4 (docs/normalizers/opentelemetry-log.md)');
    assert.equal(warn.source.instance, 'app-01', 'the instance is the resource host.name');
    const resource = warn.attributes.resource as Record<string, unknown>;
    assert.equal(resource['service.name'], 'otlp-test');
    assert.equal(resource['host.name'], 'app-01');
    assert.deepEqual(warn.attributes.scope, { name: 'shipper-test', version: '1.2.3' });
    const error = events.find((e) => String(e.attributes.body).startsWith('disk full'))!;
    assert.equal(error.severity, 7, 'ERROR2 maps to severity 7');
    assert.equal(error.attributes['disk.free_bytes'], 12345);
    const info = events.find((e) => typeof e.attributes.body === 'object')!;
    assert.deepEqual(info.attributes.body, { structured: true, count: 2 });
    assert.equal(info.severity, 2);
  };

  it('accepts the OTLP/JSON exporter at /api/v1/otlp/v1/logs, gzip-compressed, and stores typed records', async () => {
    const exporter = new HttpJsonExporter({ url: `${serve.url}/api/v1/otlp/v1/logs`, headers: { authorization: `Bearer ${ingestor}` }, compression: 'gzip' as never });
    const result = await exportWith(exporter, sdkRecords('otlp-test', 'json-gzip'));
    assert.equal(result.code, 0, `export failed: ${result.error?.message}`);
    await exporter.shutdown();
    await checkStored('json-gzip');
  });

  it('accepts the OTLP/protobuf exporter, plain and gzip-compressed', async () => {
    for (const compression of ['none', 'gzip']) {
      const exporter = new HttpProtoExporter({ url: `${serve.url}/api/v1/otlp/v1/logs`, headers: { authorization: `Bearer ${ingestor}` }, compression: compression as never });
      const result = await exportWith(exporter, sdkRecords('otlp-test', `proto-${compression}`));
      assert.equal(result.code, 0, `export failed: ${result.error?.message}`);
      await exporter.shutdown();
      await checkStored(`proto-${compression}`);
    }
  });

  it('accepts the JSON exporter pointed at /api/v1/ingest/opentelemetry-log (the request as the whole body)', async () => {
    const exporter = new HttpJsonExporter({ url: `${serve.url}/api/v1/ingest/opentelemetry-log`, headers: { authorization: `Bearer ${ingestor}` } });
    const result = await exportWith(exporter, sdkRecords('otlp-test', 'ingest-route'));
    assert.equal(result.code, 0, `export failed: ${result.error?.message}`);
    await exporter.shutdown();
    await checkStored('ingest-route');
  });

  it('reports failure to the exporter without a valid credential', async () => {
    const exporter = new HttpProtoExporter({ url: `${serve.url}/api/v1/otlp/v1/logs`, headers: { authorization: 'Bearer vgl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
    const result = await exportWith(exporter, sdkRecords('otlp-test', 'unauthenticated'));
    assert.equal(result.code, 1);
    await exporter.shutdown();
    assert.equal((await eventsOf(serve.url, viewer, 'unauthenticated')).length, 0);
  });

  const post = (body: Uint8Array | string, headers: Record<string, string>) => fetch(`${serve.url}/api/v1/otlp/v1/logs`, {
    method: 'POST', body, headers: { authorization: `Bearer ${ingestor}`, ...headers },
  });

  it('answers a malformed protobuf body with a 400 google.rpc.Status in protobuf', async () => {
    const res = await post(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), { 'content-type': 'application/x-protobuf' });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('content-type'), 'application/x-protobuf');
    const status = decodeStatusProto(new Uint8Array(await res.arrayBuffer()));
    assert.equal(status.code, 3, 'INVALID_ARGUMENT');
    assert.match(status.message, /malformed protobuf/);
  });

  it('answers a gzip bomb with 413 and a google.rpc.Status, in either encoding', async () => {
    const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    assert.ok(bomb.length < 64 * 1024, 'the bomb itself fits the body limit');
    const proto = await post(bomb, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    assert.equal(proto.status, 413);
    const status = decodeStatusProto(new Uint8Array(await proto.arrayBuffer()));
    assert.equal(status.code, 8, 'RESOURCE_EXHAUSTED');
    assert.match(status.message, /decompressed body exceeds/);
    const json = await post(bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    assert.equal(json.status, 413);
    const body = await json.json() as { code: number; message: string; error: string };
    assert.equal(body.code, 8);
    assert.match(body.error, /decompressed body exceeds/);
  });

  it('answers malformed JSON with a 400 Status that is also an ErrorResponse', async () => {
    const res = await post('{"resourceLogs": [', { 'content-type': 'application/json' });
    assert.equal(res.status, 400);
    const body = await res.json() as { code: number; message: string; error: string };
    assert.equal(body.code, 3);
    assert.equal(body.error, 'malformed JSON');
  });

  it('keeps the readable records of an export and reports the others in partialSuccess', async () => {
    const good = { timeUnixNano: '1700000000000000000', severityNumber: 9, body: { stringValue: 'partial ok' }, attributes: [{ key: 'n', value: { intValue: '7' } }] };
    const bad = { timeUnixNano: 'yesterday', body: { stringValue: 'partial bad' } };
    const request = { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'partial' } }, { key: 'test.run', value: { stringValue: 'partial' } }] }, scopeLogs: [{ logRecords: [good, bad] }] }] };
    const res = await post(JSON.stringify(request), { 'content-type': 'application/json' });
    assert.equal(res.status, 200);
    const body = await res.json() as { partialSuccess: { rejectedLogRecords: string; errorMessage: string } };
    assert.equal(body.partialSuccess.rejectedLogRecords, '1');
    assert.match(body.partialSuccess.errorMessage, /logRecords\[1\].*timeUnixNano/);
    const events = await eventsOf(serve.url, viewer, 'partial');
    assert.deepEqual(events.map((e) => [e.attributes.body, e.attributes.n]), [['partial ok', 7]]);
  });

  it('answers protobuf success with an ExportLogsServiceResponse in protobuf', async () => {
    const res = await post(new Uint8Array(0), { 'content-type': 'application/x-protobuf' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-protobuf');
    assert.deepEqual(decodeExportResponseProto(new Uint8Array(await res.arrayBuffer())), {});
  });
});
