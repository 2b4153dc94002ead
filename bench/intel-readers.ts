import { readIndicatorList } from '../src/detection/intel/lists.js';
import type { Figure } from './foundation.js';

const LINES = 1_000_000;

/** A mixed list of `n` distinct values: domains, IPv4 and IPv6 addresses, CIDR ranges, hashes, URLs, e-mail. */
function mixedList(n: number): string {
  const hex = (i: number, len: number) => i.toString(16).padStart(len, '0');
  const lines: string[] = ['# a mixed indicator list, one value a line'];
  for (let i = 0; i < n; i++) {
    switch (i % 7) {
      case 0:
        lines.push(`host${i}.bad-domain${i % 97}.example`);
        break;
      case 1:
        lines.push(`${10 + (i >>> 16)}.${(i >>> 8) & 255}.${i & 255}.${i % 251}`);
        break;
      case 2:
        lines.push(`2001:db8:${hex(i >>> 16, 1)}:${hex(i & 0xffff, 1)}::1`);
        break;
      case 3:
        lines.push(`${100 + (i >>> 16)}.${(i >>> 8) & 255}.${i & 255}.0/24`);
        break;
      case 4:
        lines.push(hex(i, 32));
        break;
      case 5:
        lines.push(`https://cdn${i}.bad.example/payload/${i}.bin?x=${i}`);
        break;
      default:
        lines.push(`user${i}@phish${i % 31}.example`);
    }
  }
  return lines.join('\n');
}

/**
 * Reading a 1,000,000-line mixed list (issue 60: "import of a 1,000,000-indicator list: time reported"): the list
 * declared `auto` (each value's type guessed, then normalized), and the domains alone declared `domain`.
 */
export async function intelReadersBench(): Promise<Figure[]> {
  const text = mixedList(LINES);
  const figures: Figure[] = [];
  const runs: number[] = [];
  let count = 0;
  for (let run = 0; run < 3; run++) {
    const t0 = performance.now();
    const set = readIndicatorList(text, 'auto');
    runs.push(performance.now() - t0);
    count = set.indicators.length;
    if (set.unsupported.length > 0) throw new Error(`refused: ${JSON.stringify(set.unsupported.slice(0, 3))}`);
  }
  runs.sort((a, b) => a - b);
  figures.push({
    name: `read a ${LINES.toLocaleString('en')}-line mixed list (auto), median of 3`,
    value: Math.round(runs[1]!),
    unit: 'ms',
    note: `${count} indicators; ${Math.round(LINES / (runs[1]! / 1000)).toLocaleString('en')} lines/s`,
  });
  const domains = Array.from({ length: LINES }, (_, i) => `host${i}.bad-domain${i % 97}.example`).join('\n');
  const t0 = performance.now();
  const set = readIndicatorList(domains, 'domain');
  figures.push({
    name: `read a ${LINES.toLocaleString('en')}-line domain list (declared type)`,
    value: Math.round(performance.now() - t0),
    unit: 'ms',
    note: `${set.indicators.length} indicators`,
  });
  return figures;
}
