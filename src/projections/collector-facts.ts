import type { CollectorSubmissionAccepted } from '../commands/collector-records.js';
import { addRelationship, own, relationshipId, touchEntity, touchRelationship, type GraphState } from './graph.js';

/**
 * Folds the facts of an accepted collector submission into the graph: each entity fact touches
 * its entity (kind as stated), each relationship fact its typed relationship and both ends, at
 * the record's time (`at`, an owned string: see `own`). Pure in `g` (mutated and owned by the fold).
 */
export function foldCollectorFacts(g: GraphState, data: CollectorSubmissionAccepted, at: string): GraphState {
  for (const f of data.facts) {
    if (f.fact === 'entity') {
      touchEntity(g, f.key, at, own(f.kind));
      continue;
    }
    const id = relationshipId(f);
    const r = g.relationships.get(id);
    if (r) touchRelationship(g, id, r, at);
    else addRelationship(g, { from: f.from, to: f.to, type: own(f.type), firstSeen: at, lastSeen: at, count: 1 });
  }
  return g;
}
