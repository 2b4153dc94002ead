import type { SubmittedEvent } from '../../events/collector-protocol/envelope.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';

/**
 * A locally normalized event in the submitted shape (spec 2.7): no category (the server derives it
 * from the class) and the outcome moved to `attributes.outcome`, which the server reads back.
 */
export function toSubmitted(e: NormalizedEvent): SubmittedEvent {
  const { category: _category, outcome, attributes, ...rest } = e;
  return { ...rest, attributes: { ...attributes, outcome } };
}
