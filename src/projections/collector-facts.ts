import type { CollectorSubmissionAccepted } from '../events/collector-records.js';
import { own } from '../log/evidence-fields.js';
import { addRelationship, relationshipId, touchEntity, touchRelationship, type GraphState } from './graph.js';

/**
 * Folds the facts of an accepted collector submission into the graph: each entity fact touches
 * its entity (kind as stated), each relationship fact its typed relationship and both ends, at
 * the record's time (`at`, a string of its own: see `own`). The facts may come decoded whole by
 * msgpackr (a record the read side's own reader leaves to it), so the strings the graph keeps of
 * them are made its own here. Pure in `g` (mutated and owned by the fold).
 */
export function foldCollectorFacts(g: GraphState, data: CollectorSubmissionAccepted, at: string): GraphState {
  for (const f of data.facts) {
    if (f.fact === 'entity') {
      touchEntity(g, own(f.key), at, own(f.kind));
      continue;
    }
    const id = relationshipId(f);
    const r = g.relationships.get(id);
    if (r) touchRelationship(g, id, r, at);
    else
      addRelationship(g, {
        from: own(f.from),
        to: own(f.to),
        type: own(f.type),
        firstSeen: at,
        lastSeen: at,
        count: 1,
      });
  }
  return g;
}
