/** The hunting query language (docs/hunting.md): parse, print, compile, and save as a Sigma rule. */
export type {
  HuntAgg,
  HuntExpr,
  HuntParse,
  HuntPipe,
  HuntQuery,
  HuntRangeOp,
  HuntSyntaxError,
  HuntValue,
} from './ast.js';
export { HUNT_FIELDS, HUNT_LIMITS } from './ast.js';
export type { CompiledHunt, HuntAggregator, HuntOrder } from './compile.js';
export { compileHunt } from './compile.js';
export { compareCells, type Cell } from './cells.js';
export type { HuntIndexTerms } from './index-terms.js';
export { parseHunt } from './parse.js';
export { printHunt } from './print.js';
export { huntToSigma } from './to-sigma.js';
