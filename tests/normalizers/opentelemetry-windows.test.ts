import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { opentelemetryLog } from '../../src/normalizers/opentelemetry-log.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { indexKeysForEvent } from '../../src/detection/logsources.js';
import { fixturePath } from '../helpers/paths.js';
import { anyValue, exportRequest, jsonDocuments, receiverBody } from '../helpers/windows-events.js';

/** Windows Event Log records as the OpenTelemetry Collector's windowseventlog receiver sends them. */

const sysmon1 = jsonDocuments(readFileSync(fixturePath('sigmahq', 'regression_data', 'rules', 'windows', 'process_creation', 'proc_creation_win_wmic_recon_process', '221b251a-357a-49a9-920a-271802777cc0.json'), 'utf8'))[0]!;

function normalize(body: Record<string, unknown>): NormalizedEvent {
  const r = opentelemetryLog.normalize(exportRequest([body]), { ingestedAt: '2026-11-23T00:00:00Z' });
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r));
  assert.equal(r.events.length, 1);
  return r.events[0]!;
}

describe('opentelemetry-log: Windows Event Log records (windowseventlog receiver)', () => {
  it('keeps Sigma field names: the event data by name, EventID, Channel, Provider_Name, Computer', () => {
    for (const shape of ['map', 'array'] as const) {
      const e = normalize(receiverBody(sysmon1, shape));
      assert.equal(e.class, 'process_creation');
      assert.equal(e.activity, 'event_1');
      assert.equal(e.category, 'system');
      assert.equal(e.attributes['EventID'], 1);
      assert.equal(e.attributes['Channel'], 'Microsoft-Windows-Sysmon/Operational');
      assert.equal(e.attributes['Provider_Name'], 'Microsoft-Windows-Sysmon');
      assert.match(String(e.attributes['Image']), /\\WMIC\.exe$/i);
      assert.match(String(e.attributes['CommandLine']), /process/i);
      assert.ok(e.entityKeys.some((k) => k.startsWith('host:')), 'the computer is an entity');
      assert.deepEqual(indexKeysForEvent(e), ['otel', 'win', 'win:ch:microsoft-windows-sysmon/operational', 'win:cat:process_creation']);
      assert.ok(typeof e.attributes['body'] === 'object', 'the receiver body stays as sent');
    }
  });

  it('reads the newest receiver shape: anonymous <Data> as param1.., name and binary kept', () => {
    const body = { ...receiverBody(sysmon1), channel: 'System', event_id: { id: 7045, qualifiers: 16384 }, event_data: { name: 'x', binary: '00FF', param1: 'svc', param2: 'C:\\evil.exe', ServiceName: 'evil' } };
    const e = normalize(body);
    assert.equal(e.class, 'windows_event');
    assert.equal(e.attributes['param2'], 'C:\\evil.exe');
    assert.equal(e.attributes['ServiceName'], 'evil');
    assert.equal(e.attributes['EventID'], 7045);
    assert.deepEqual(indexKeysForEvent(e), ['otel', 'win', 'win:ch:system']);
  });

  it('an event-data field never displaces an OTLP attribute, and a body that is not a Windows record is left alone', () => {
    const e = normalize({ ...receiverBody(sysmon1), event_data: { body: 'shadow', scope: 'x', Image: 'C:\\a.exe' } });
    assert.equal(typeof e.attributes['body'], 'object');
    assert.equal(e.attributes['Image'], 'C:\\a.exe');
    const plain = opentelemetryLog.normalize({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: anyValue({ channel: 'x', message: 'no event id' }) }] }] }] }, { ingestedAt: '2026-11-23T00:00:00Z' });
    assert.ok(plain.ok);
    assert.equal(plain.events[0]!.class, 'log_record');
    assert.equal(plain.events[0]!.attributes['Channel'], undefined);
  });

  it('reads user_data (receivers since March 2026): leaf values by element name, attributes left out, event data first', () => {
    const body = {
      ...receiverBody(sysmon1), channel: 'Microsoft-Windows-WMI-Activity/Operational', event_id: { id: 5858, qualifiers: 0 },
      event_data: { User: 'from-event-data' },
      user_data: { Operation_ClientFailure: { '#attributes': { xmlns: 'http://manifests.microsoft.com/win/2006/windows/WMI' }, xmlns: 'x', Operation: 'ExecMethod cleareventlog', User: 'from-user-data', Nested: { Deeper: { Deepest: { TooDeep: 'no' } }, Inner: 'yes' } } },
    };
    const e = normalize(body);
    assert.equal(e.attributes['Operation'], 'ExecMethod cleareventlog');
    assert.equal(e.attributes['User'], 'from-event-data', 'event data wins a clash');
    assert.equal(e.attributes['Inner'], 'yes');
    assert.equal(e.attributes['TooDeep'], undefined, 'user_data is followed four levels deep');
    assert.equal(e.attributes['xmlns'], undefined);
    assert.equal(e.attributes['#attributes'], undefined);
  });

  it('Sysmon registry events are categorised by EventType', () => {
    const base = receiverBody(sysmon1);
    const at = (id: number, eventType: string) => indexKeysForEvent(normalize({ ...base, event_id: { id, qualifiers: 0 }, event_data: { EventType: eventType, TargetObject: 'HKLM\\x' } })).filter((k) => k.startsWith('win:cat:'));
    assert.deepEqual(at(12, 'CreateKey'), ['win:cat:registry_add', 'win:cat:registry_event']);
    assert.deepEqual(at(12, 'DeleteValue'), ['win:cat:registry_delete', 'win:cat:registry_event']);
    assert.deepEqual(at(13, 'SetValue'), ['win:cat:registry_set', 'win:cat:registry_event']);
  });
});
