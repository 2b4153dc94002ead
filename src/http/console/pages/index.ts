import type { PageRoute } from '../page-route.js';
import { alertDetailPages } from './alert.js';
import { alertQueuePages } from './alerts.js';
import { auditPages } from './audit.js';
import { eventPages } from './events.js';
import { exceptionPages } from './exceptions.js';
import { intelPages } from './intel.js';
import { graphPages } from './graph.js';
import { huntPages } from './hunt.js';
import { incidentPages } from './incidents.js';
import { overviewPages } from './overview.js';
import { planPages } from './plan.js';
import { rulePages } from './rules.js';

/** Every page of the console, in registration order. */
export const CONSOLE_PAGES: readonly PageRoute[] = [
  ...overviewPages,
  ...alertQueuePages,
  ...alertDetailPages,
  ...incidentPages,
  ...planPages,
  ...graphPages,
  ...eventPages,
  ...huntPages,
  ...rulePages,
  ...exceptionPages,
  ...intelPages,
  ...auditPages,
];
