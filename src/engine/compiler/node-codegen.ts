import type { DecisionTableNodeSettings, HitPolicy, ScorecardCharacteristic, ScorecardNodeSettings } from '../types.js';
import { reasonCodeOf } from './scorecard-outputs.js';
import { cellToJs, type CellTest } from './table-cells.js';

/**
 * Generated JavaScript for the sandbox. User code only ever enters generated source as a JSON string literal
 * handed to the sandbox's Function constructor (`F`), so it cannot break out of the function it is given.
 */

const q = JSON.stringify;

/** `let a = v.a, b = v.b;` for generated identifiers and validated variable names. */
function bindings(names: Iterable<string>): string {
  const list = [...names];
  return list.length ? `let ${list.map((n) => `${n} = $$vars[${q(n)}]`).join(', ')};\n` : '';
}

export function scriptFunction(code: string, bound: string[], outputs: string[]): string {
  // A plain block is faster than a closure; `return` (early exit) and `var` (would clash with the bindings) need the closure.
  const needsClosure = /\b(return|var|arguments)\b/.test(code);
  const run = needsClosure ? `(function () {\n${code}\n})();` : `{\n${code}\n}`;
  const body = `"use strict";\n${bindings(new Set([...bound, ...outputs]))}${run}\nreturn [${outputs.join(', ')}];`;
  return `F("$$vars", ${q(body)})`;
}

export function expressionFunction(expression: string, bound: string[], extraParams: string[] = []): string {
  const body = `"use strict";\n${bindings(bound)}return (\n${expression}\n);`;
  return `F(${['$$vars', ...extraParams].map((p) => q(p)).join(', ')}, ${q(body)})`;
}

export interface TableColumnSource {
  read: string /* JS expression over v */;
}

/**
 * A decision table as one generated function returning the output values in column order. `outputValues[r][k]`
 * is the JavaScript source of rule r's value for output k (a literal, or a call of a compiled expression), so
 * a value is only computed when its rule matched.
 */
export function decisionTableFunction(
  nodeId: string,
  settings: DecisionTableNodeSettings,
  columns: TableColumnSource[],
  cells: CellTest[][],
  outputValues: string[][],
  preamble: string[],
): string {
  const outputs = settings.outputs.map((o) => o.name);
  const lines: string[] = [];
  columns.forEach((c, k) => {
    lines.push(`const c${k} = ${c.read};`);
  });
  const condition = (rule: number): string => {
    const parts = cells[rule].map((cell, k) => (cell.kind === 'any' ? null : cellToJs(cell, `c${k}`))).filter(Boolean);
    return parts.length ? parts.join(' && ') : 'true';
  };
  const values = (rule: number): string[] => outputValues[rule];
  const policy: HitPolicy = settings.hitPolicy;
  const nulls = `[${outputs.map(() => 'null').join(', ')}]`;
  if (policy === 'FIRST') {
    settings.rules.forEach((_, r) => {
      lines.push(`if (${condition(r)}) { if (info) info.m = [${r}]; return [${values(r).join(', ')}]; }`);
    });
    lines.push(`if (info) info.m = []; return ${nulls};`);
  } else if (policy === 'UNIQUE') {
    lines.push('let hit = -1;');
    settings.rules.forEach((_, r) => {
      lines.push(
        `if (${condition(r)}) { if (hit >= 0) throw rt.err("UNIQUE_HIT_VIOLATION", ${q(`decision table '${nodeId}' has more than one matching rule (hit policy UNIQUE): rules `)} + hit + " and " + ${r}); hit = ${r}; }`,
      );
    });
    lines.push('if (info) info.m = hit >= 0 ? [hit] : [];');
    lines.push('switch (hit) {');
    settings.rules.forEach((_, r) => {
      lines.push(`case ${r}: return [${values(r).join(', ')}];`);
    });
    lines.push(`default: return ${nulls};`, '}');
  } else {
    lines.push('const m = [];', `const ${outputs.map((_, k) => `o${k} = []`).join(', ')};`);
    settings.rules.forEach((_, r) => {
      const vals = values(r);
      lines.push(`if (${condition(r)}) { m.push(${r}); ${vals.map((val, k) => `o${k}.push(${val});`).join(' ')} }`);
    });
    lines.push(`if (info) info.m = m; return [${outputs.map((_, k) => `o${k}`).join(', ')}];`);
  }
  return `(function () {\n${preamble.join('\n')}\nreturn function (v, info) {\n${lines.join('\n')}\n};\n})()`;
}

/**
 * A scorecard as one generated function returning the values of `scorecardOutputs(settings)`, in that order:
 * the score, the reason codes (ranked by points lost against each characteristic's best bin, ties: the earlier
 * characteristic, at most `maxReasonCodes`), the breakdown when asked for, and the points of each characteristic
 * that names a `pointsVariable`. Reason codes are picked by repeated selection of the largest loss: no sort, no
 * comparator, no intermediate arrays beyond the losses and the codes returned.
 */
export function scorecardFunction(settings: ScorecardNodeSettings): string {
  const count = settings.characteristics.length;
  const codes = settings.characteristics.map(reasonCodeOf);
  const best = settings.characteristics.map((c) => Math.max(c.elsePoints, ...c.bins.map((b) => b.points)));
  const lines = [
    `let s = ${q(settings.baseScore)};`,
    `const L = [${settings.characteristics.map(() => '0').join(', ')}];`,
  ];
  settings.characteristics.forEach((c: ScorecardCharacteristic, k) => {
    const tests = c.bins.map((bin) => {
      const parts: string[] = [];
      if (bin.min !== undefined || bin.max !== undefined) {
        const range = ['typeof x === "number"'];
        if (bin.min !== undefined) range.push(`x ${bin.minInclusive === false ? '>' : '>='} ${q(bin.min)}`);
        if (bin.max !== undefined) range.push(`x ${bin.maxInclusive ? '<=' : '<'} ${q(bin.max)}`);
        parts.push(`(${range.join(' && ')})`);
      }
      // a bin with a range and values matches either
      if (bin.values) parts.push(`(${bin.values.map((value) => `x === ${q(value)}`).join(' || ')})`);
      return `(${parts.join(' || ')})`;
    });
    lines.push(`let p${k};`, `{ const x = v[${q(c.variable)}];`);
    c.bins.forEach((bin, b) => {
      lines.push(`${b === 0 ? '' : 'else '}if (${tests[b]}) p${k} = ${q(bin.points)};`);
    });
    lines.push(`else p${k} = ${q(c.elsePoints)};`);
    lines.push(`s += p${k}; if (p${k} < ${q(best[k])}) L[${k}] = ${q(best[k])} - p${k}; }`);
  });
  const limit = Math.min(count, settings.maxReasonCodes ?? count);
  lines.push('const reasons = [];');
  lines.push(`for (let r = 0; r < ${limit}; r++) {`);
  lines.push(`  let b = -1; for (let k = 0; k < ${count}; k++) if (L[k] > 0 && (b < 0 || L[k] > L[b])) b = k;`);
  lines.push('  if (b < 0) break; reasons.push(CODES[b]); L[b] = 0;');
  lines.push('}');
  const values = ['s', 'reasons'];
  if (settings.breakdownVariable !== undefined) {
    values.push(
      `[${settings.characteristics
        .map(
          (c, k) => `{ name: ${q(c.name)}, reasonCode: CODES[${k}], points: p${k}, pointsLost: ${q(best[k])} - p${k} }`,
        )
        .join(', ')}]`,
    );
  }
  settings.characteristics.forEach((c, k) => {
    if (c.pointsVariable !== undefined) values.push(`p${k}`);
  });
  lines.push(`return [${values.join(', ')}];`);
  return `(function () {\nconst CODES = ${q(codes)};\nreturn function (v, info) {\n${lines.join('\n')}\n};\n})()`;
}
