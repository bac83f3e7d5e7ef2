import type { Diagnostic, ScorecardBin, ScorecardNodeSettings } from '../types.js';

/** Bins of a characteristic must not overlap: a value would otherwise score in two bins. */
export function checkScorecardBins(nodeId: string, settings: ScorecardNodeSettings): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  settings.characteristics.forEach((c, k) => {
    const path = (b: number) => `nodeProperties.${nodeId}.content.characteristics[${k}].bins[${b}]`;
    c.bins.forEach((bin, b) => {
      const ranged = bin.min !== undefined || bin.max !== undefined;
      if (!ranged && !bin.values) {
        diagnostics.push({
          code: 'SCORECARD_BIN_EMPTY',
          message: `Scorecard "${nodeId}", characteristic "${c.name}", bin ${b} has neither a range (min/max) nor values`,
          nodeId,
          path: path(b),
        });
      }
      if (bin.min !== undefined && bin.max !== undefined && isEmptyRange(bin)) {
        diagnostics.push({
          code: 'SCORECARD_RANGE_INVALID',
          message: `Scorecard "${nodeId}", characteristic "${c.name}", bin ${b} has an empty range`,
          nodeId,
          path: path(b),
        });
      }
    });
    for (let a = 0; a < c.bins.length; a++) {
      for (let b = a + 1; b < c.bins.length; b++) {
        const shared = rangesOverlap(c.bins[a], c.bins[b]) || sharedValue(c.bins[a], c.bins[b]);
        if (shared) {
          diagnostics.push({
            code: 'SCORECARD_BINS_OVERLAP',
            message: `Scorecard "${nodeId}", characteristic "${c.name}": bins ${a} and ${b} overlap (${shared})`,
            nodeId,
            path: path(b),
          });
        }
      }
    }
  });
  return diagnostics;
}

function isEmptyRange(bin: ScorecardBin): boolean {
  if (bin.min! < bin.max!) return false;
  return !(bin.min === bin.max && bin.minInclusive !== false && bin.maxInclusive === true);
}

function rangesOverlap(x: ScorecardBin, y: ScorecardBin): string | null {
  if ((x.min === undefined && x.max === undefined) || (y.min === undefined && y.max === undefined)) return null;
  const lower = (b: ScorecardBin) => ({ v: b.min ?? -Infinity, inc: b.min === undefined || b.minInclusive !== false });
  const upper = (b: ScorecardBin) => ({ v: b.max ?? Infinity, inc: b.max === undefined || b.maxInclusive === true });
  const lx = lower(x),
    ly = lower(y),
    ux = upper(x),
    uy = upper(y);
  const lo = lx.v > ly.v ? lx : ly.v > lx.v ? ly : { v: lx.v, inc: lx.inc && ly.inc };
  const hi = ux.v < uy.v ? ux : uy.v < ux.v ? uy : { v: ux.v, inc: ux.inc && uy.inc };
  if (lo.v < hi.v || (lo.v === hi.v && lo.inc && hi.inc))
    return `both contain ${lo.v === hi.v ? lo.v : `values in ${lo.v}..${hi.v}`}`;
  return null;
}

function sharedValue(x: ScorecardBin, y: ScorecardBin): string | null {
  const common = (x.values ?? []).find((v) => (y.values ?? []).includes(v));
  return common === undefined ? null : `both contain ${JSON.stringify(common)}`;
}

/** Each variable a scorecard writes must be a different one: two outputs of one name would silently keep only the last. */
export function checkScorecardOutputs(nodeId: string, settings: ScorecardNodeSettings): Diagnostic[] {
  const base = `nodeProperties.${nodeId}.content`;
  const outputs: Array<{ name: string; path: string }> = [
    { name: settings.scoreVariable ?? 'score', path: `${base}.scoreVariable` },
    { name: settings.reasonCodesVariable ?? 'reasonCodes', path: `${base}.reasonCodesVariable` },
  ];
  if (settings.breakdownVariable !== undefined)
    outputs.push({ name: settings.breakdownVariable, path: `${base}.breakdownVariable` });
  settings.characteristics.forEach((c, k) => {
    if (c.pointsVariable !== undefined)
      outputs.push({ name: c.pointsVariable, path: `${base}.characteristics[${k}].pointsVariable` });
  });
  const diagnostics: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const { name, path } of outputs) {
    if (seen.has(name)) {
      diagnostics.push({
        code: 'SCORECARD_DUPLICATE_OUTPUT',
        message: `Scorecard "${nodeId}" writes variable "${name}" twice (score, reason codes, breakdown and points variables must differ)`,
        nodeId,
        path,
      });
    }
    seen.add(name);
  }
  return diagnostics;
}
