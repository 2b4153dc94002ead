import { accept, type Decision } from './decision.js';
import { eventOf } from '../events/union.js';
import type { RecordedPolicy, RetentionState } from '../projections/retention.js';

/**
 * Records the retention policy in force when it differs from the last one recorded (a first start
 * with retention off records nothing: nothing ever expired).
 */
export function decideRetentionPolicy(s: RetentionState, policy: RecordedPolicy): Decision<{ changed: boolean }> {
  if (JSON.stringify(s.policy) === JSON.stringify(policy) || (s.policy === undefined && !policy.enabled))
    return accept([], { changed: false });
  return accept([eventOf('RetentionPolicyRecorded', policy)], { changed: true });
}
