import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spec } from '../helpers/decider-spec.js';
import { decideExportConfiguration, decideExportCursor, decideExportState, type ExportObservation } from '../../src/commands/export-state.js';
import type { ExportDestinationSummary, ExportsState } from '../../src/projections/exports.js';
import type { WriteModels } from '../../src/projections/models.js';
import { eventOf } from '../../src/events/union.js';

const NOW = '2026-11-23T08:00:00.000Z';
const hook: ExportDestinationSummary = { name: 'hook', kind: 'webhook', target: 'https://tickets.example/hook', carries: ['alerts'], includeRaw: false };
const failing: ExportObservation = { destination: 'hook', kind: 'webhook', state: 'failing', reason: 'no delivery for 300 s', lagRecords: 42 };
const exportsOf = (m: WriteModels) => m.exports;
const configure = (m: WriteModels, destinations: ExportDestinationSummary[]) => decideExportConfiguration(exportsOf(m), destinations);
const observe = (m: WriteModels, o: ExportObservation) => decideExportState(exportsOf(m), o, { now: NOW });

/** The state-change event a destination's observation records (decided against no prior state). */
const changed = (state: 'failing' | 'delivering') => {
  const d = decideExportState({ configuration: undefined, failing: new Map(state === 'delivering' ? [['hook', NOW]] : []), cursors: new Map() }, { ...failing, state }, { now: NOW });
  if (!d.ok || !d.events[0]) throw new Error('expected an event');
  return d.events[0];
};

describe('export configuration and destination state (decider specs)', () => {
  it('records nothing on a first start without export', () => {
    spec(configure).given([]).when([]).then([], { changed: false });
  });

  it('records the configuration when export is first enabled', () => {
    spec(configure).given([]).when([hook]).then([eventOf('ExportConfigurationRecorded', { destinations: [hook] })], { changed: true });
  });

  it('records nothing when the configuration in force is unchanged', () => {
    spec(configure).given([eventOf('ExportConfigurationRecorded', { destinations: [hook] })]).when([hook]).then([]);
  });

  it('records a change and the disabling of export', () => {
    const given = [eventOf('ExportConfigurationRecorded', { destinations: [hook] })];
    spec(configure).given(given).when([{ ...hook, includeRaw: true }]).then([eventOf('ExportConfigurationRecorded', { destinations: [{ ...hook, includeRaw: true }] })]);
    spec(configure).given(given).when([]).then([eventOf('ExportConfigurationRecorded', { destinations: [] })]);
  });

  it('records a destination turning failing, with a detectable vigil/export event', () => {
    spec(observe).given([]).when(failing).thenAccepts((events) => {
      assert.equal(events.length, 1);
      const e = events[0] as { type: string; data: { state: string; lagRecords: number; event: { activity: string; outcome: string; source: { adapter: string; instance: string }; attributes: Record<string, unknown> } } };
      assert.equal(e.type, 'ExportDestinationStateChanged');
      assert.equal(e.data.state, 'failing');
      assert.equal(e.data.lagRecords, 42);
      assert.deepEqual([e.data.event.activity, e.data.event.outcome, e.data.event.source.adapter, e.data.event.source.instance], ['destination_failing', 'failure', 'vigil', 'export']);
      assert.equal(e.data.event.attributes.destination, 'hook');
    });
  });

  it('records nothing when the log already says the destination is failing', () => {
    spec(observe).given([changed('failing')]).when(failing).then([]);
  });

  it('records nothing for a destination that delivers and was never failing', () => {
    spec(observe).given([]).when({ ...failing, state: 'delivering' }).then([]);
  });

  it('records the recovery of a failing destination', () => {
    spec(observe).given([changed('failing')]).when({ ...failing, state: 'delivering', reason: 'delivered again' }).thenAccepts((events) => {
      assert.equal(events.length, 1);
      assert.equal((events[0]!.data as { state: string }).state, 'delivering');
    });
  });

  it('records a delivered cursor only when it moves forward, per destination', () => {
    const deliver = (m: WriteModels, o: { destination: string; seq: number }) => decideExportCursor(exportsOf(m), o.destination, o.seq);
    spec(deliver).given([]).when({ destination: 'hook', seq: 12 }).then([eventOf('ExportCursorRecorded', { destination: 'hook', seq: 12 })], { changed: true });
    spec(deliver).given([]).when({ destination: 'hook', seq: 0 }).then([], { changed: false });
    const given = [eventOf('ExportCursorRecorded', { destination: 'hook', seq: 12 })];
    spec(deliver).given(given).when({ destination: 'hook', seq: 12 }).then([], { changed: false });
    spec(deliver).given(given).when({ destination: 'hook', seq: 7 }).then([], { changed: false });
    spec(deliver).given(given).when({ destination: 'hook', seq: 13 }).then([eventOf('ExportCursorRecorded', { destination: 'hook', seq: 13 })], { changed: true });
    spec(deliver).given(given).when({ destination: 'siem', seq: 3 }).then([eventOf('ExportCursorRecorded', { destination: 'siem', seq: 3 })], { changed: true });
  });
});
