/**
 * The events of both services: one schema per stored type, the unions inferred from them, and the one way in from the
 * log.
 */
export * from './access-events.js';
export * from './collector-events.js';
export * from './console-events.js';
export * from './detection-events.js';
export * from './evidence-events.js';
export * from './exception-events.js';
export * from './intel-events.js';
export * from './setup-events.js';
export * from './union.js';
export { asAuthorityRecord, asInstanceRecord, asStoredInstanceEvent } from './read.js';
export { hitsRecordedFromLegacy } from './upcast.js';
