import type {
  DataLookupNodeSettings,
  DecisionNodeSettings,
  DecisionTableNodeSettings,
  EndNodeSettings,
  HttpCallNodeSettings,
  ModelNodeSettings,
  NodeType,
  ScenarioCallNodeSettings,
  ScenarioDocument,
  ScorecardNodeSettings,
  ScriptNodeSettings,
  StartNodeSettings,
} from '../types.js';
import type { GraphShape } from './graph-checks.js';
import { compileModelNode } from './model-node.js';
import type { NodeContext } from './node-context.js';
import { decisionTableFunction, expressionFunction, scorecardFunction, scriptFunction } from './node-codegen.js';
import { checkScorecardBins, checkScorecardOutputs } from './scorecard-checks.js';
import { CellSyntaxError, parseCell, type CellTest } from './table-cells.js';

/** What a node's compiler writes into the node's entry of the program (see program-source.ts); absent: the default. */
export interface NodeFields {
  exec?: string;
  reads?: string;
  /** DECISION: the indexes of the nodes after true and after false. */
  t?: string;
  f?: string;
  /** END: the outputs it returns. */
  outputs?: string;
  /** The runtime's kind when it is not the node type's: an ONNX MODEL node (ONNX_MODEL_KIND). */
  k?: string;
}

export interface NodeCompileInput {
  ctx: NodeContext;
  settings: unknown;
  shape: GraphShape;
  /** Each node's index in the program. */
  index: Map<string, number>;
  doc: ScenarioDocument;
  /** START: its input validators' sources go here. */
  validators: string[];
  /** MODEL: the ONNX files the program calls go here, base64 by sha256. */
  onnxModels: Map<string, string>;
}

/** An ONNX MODEL node, for the runtime (bootstrap-source.ts, step's case 10): its runs are stopped at the node and scored together. */
const ONNX_MODEL_KIND = 10;

const TEMPLATE_VAR = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const q = JSON.stringify;

/** The code generation and the node-specific checks of each node type (its references are checked through ctx). */
export const NODE_COMPILERS: Record<NodeType, (input: NodeCompileInput) => NodeFields> = {
  START: ({ ctx, settings, validators }) => {
    const id = ctx.node.id;
    const s = settings as StartNodeSettings;
    const inputNames = new Set(s.inputs.map((i) => i.name));
    (s.validators ?? []).forEach((validator, k) => {
      const path = `nodeProperties.${id}.content.validators[${k}]`;
      if (!inputNames.has(validator.variable)) {
        ctx.diagnostics.push({
          code: 'UNDEFINED_VARIABLE',
          message: `Validator ${k} of "${id}" checks "${validator.variable}", which is not an input`,
          nodeId: id,
          path: `${path}.variable`,
        });
      }
      const bound = ctx.expression(validator.expression, `${path}.expression`, inputNames);
      validators.push(
        `{ variable: ${q(validator.variable)}, message: ${q(validator.message)}, fn: ${expressionFunction(validator.expression, bound, ['value'])} }`,
      );
    });
    return {};
  },
  END: ({ ctx, settings }) => {
    const s = (settings ?? {}) as EndNodeSettings;
    s.outputs?.forEach((name, k) => {
      ctx.reference(name, `nodeProperties.${ctx.node.id}.content.outputs[${k}]`);
    });
    return { outputs: q(s.outputs ?? null) };
  },
  SCRIPT: ({ ctx, settings }) => {
    const id = ctx.node.id;
    const s = settings as ScriptNodeSettings;
    const path = `nodeProperties.${id}.content.code`;
    const bound = ctx.code(s.code, path, 'statements', new Set(s.outputs));
    for (const output of s.outputs) {
      if (new RegExp(`\\b(let|const|var)\\s+${output}\\b`).test(s.code)) {
        ctx.diagnostics.push({
          code: 'SCRIPT_OUTPUT_SHADOWED',
          message: `Script "${id}" declares its output "${output}" with let/const/var; assign it instead (the declared variable would be lost)`,
          nodeId: id,
          path,
        });
      }
    }
    return { exec: scriptFunction(s.code, bound, s.outputs), reads: q(bound) };
  },
  DECISION: ({ ctx, settings, shape, index }) => {
    const id = ctx.node.id;
    const s = settings as DecisionNodeSettings;
    const bound = ctx.code(s.condition, `nodeProperties.${id}.content.condition`, 'expression');
    const branch = shape.branches.get(id) ?? {};
    return {
      exec: expressionFunction(s.condition, bound),
      reads: q(bound),
      t: String(index.get(branch.whenTrue ?? '') ?? -1),
      f: String(index.get(branch.whenFalse ?? '') ?? -1),
    };
  },
  DECISION_TABLE: ({ ctx, settings }) => generated(compileTable(ctx, settings as DecisionTableNodeSettings)),
  SCORECARD: ({ ctx, settings }) => {
    const id = ctx.node.id;
    const s = settings as ScorecardNodeSettings;
    s.characteristics.forEach((c, k) => {
      ctx.reference(c.variable, `nodeProperties.${id}.content.characteristics[${k}].variable`);
    });
    ctx.diagnostics.push(...checkScorecardBins(id, s), ...checkScorecardOutputs(id, s));
    return { exec: scorecardFunction(s), reads: q([...new Set(s.characteristics.map((c) => c.variable))]) };
  },
  DATA_LOOKUP: ({ ctx, settings }) => {
    const s = settings as DataLookupNodeSettings;
    ctx.reference(s.joinVariable, `nodeProperties.${ctx.node.id}.content.joinVariable`);
    return {
      exec: `function ($$vars) { const key = $$vars[${q(s.joinVariable)}]; return { key: key === undefined ? null : key }; }`,
      reads: q([s.joinVariable]),
    };
  },
  SCENARIO_CALL: ({ ctx, settings }) => generated(compileCall(ctx, settings as ScenarioCallNodeSettings)),
  MODEL: ({ ctx, settings, doc, onnxModels }) => {
    const compiled = compileModelNode(ctx, settings as ModelNodeSettings, doc.models ?? {});
    if (compiled.onnx?.file === undefined) return generated(compiled);
    onnxModels.set(compiled.onnx.sha256, compiled.onnx.file);
    return { ...generated(compiled), k: String(ONNX_MODEL_KIND) };
  },
  HTTP_CALL: ({ ctx, settings }) => {
    const id = ctx.node.id;
    const s = settings as HttpCallNodeSettings;
    const names = [...templateVariables([s.url, s.headers ?? {}, s.bodyExpression ? null : (s.body ?? null)])];
    names.forEach((name) => {
      ctx.reference(name, `nodeProperties.${id}.content`);
    });
    const body = s.bodyExpression
      ? ctx.code(s.bodyExpression, `nodeProperties.${id}.content.bodyExpression`, 'expression')
      : null;
    const bodyFn = body ? expressionFunction(s.bodyExpression!, body) : 'null';
    return {
      exec: `(function () { const B = ${bodyFn}; return function ($$vars) { return { vars: { ${names.map((n) => `${n}: $$vars[${q(n)}] === undefined ? null : $$vars[${q(n)}]`).join(', ')} }, body: B ? B($$vars) : null }; }; })()`,
      reads: q([...new Set([...names, ...(body ?? [])])]),
    };
  },
};

/** The fields of a node whose code generator answers its source and the variables it reads. */
function generated(compiled: { source: string; reads: string[] }): NodeFields {
  return { exec: compiled.source, reads: q(compiled.reads) };
}

function templateVariables(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') for (const m of value.matchAll(TEMPLATE_VAR)) into.add(m[1]);
  else if (Array.isArray(value))
    value.forEach((v) => {
      templateVariables(v, into);
    });
  else if (value && typeof value === 'object')
    Object.values(value).forEach((v) => {
      templateVariables(v, into);
    });
  return into;
}

function compileTable(ctx: NodeContext, s: DecisionTableNodeSettings): { source: string; reads: string[] } {
  const id = ctx.node.id;
  const base = `nodeProperties.${id}.content`;
  const preamble: string[] = [];
  const reads = new Set<string>();
  const columns = s.inputs.map((column, k) => {
    if (column.expression === undefined) {
      ctx.reference(column.name, `${base}.inputs[${k}].name`);
      reads.add(column.name);
      return { read: `v[${q(column.name)}]` };
    }
    const bound = ctx.code(column.expression, `${base}.inputs[${k}].expression`, 'expression');
    bound.forEach((b) => {
      reads.add(b);
    });
    preamble.push(`const E${k} = ${expressionFunction(column.expression, bound)};`);
    return { read: `E${k}(v)` };
  });
  const inputNames = new Map(s.inputs.map((c, k) => [c.name, k]));
  const outputNames = new Set(s.outputs.map((o) => o.name));
  for (const [list, label] of [
    [s.inputs, 'input'],
    [s.outputs, 'output'],
  ] as const) {
    const seen = new Set<string>();
    list.forEach((c, k) => {
      if (seen.has(c.name))
        ctx.diagnostics.push({
          code: 'TABLE_DUPLICATE_COLUMN',
          message: `Decision table "${id}" has two ${label} columns named "${c.name}"`,
          nodeId: id,
          path: `${base}.${label}s[${k}].name`,
        });
      seen.add(c.name);
    });
  }
  const cells: CellTest[][] = s.rules.map((rule, r) => {
    const row: CellTest[] = s.inputs.map(() => ({ kind: 'any' }));
    for (const [key, cell] of Object.entries(rule.when ?? {})) {
      const k = inputNames.get(key);
      const path = `${base}.rules[${r}].when.${key}`;
      if (k === undefined) {
        ctx.diagnostics.push({
          code: 'TABLE_UNKNOWN_COLUMN',
          message: `Rule ${r} of decision table "${id}" tests "${key}", which is not an input column`,
          nodeId: id,
          path,
        });
        continue;
      }
      try {
        row[k] = parseCell(cell, s.inputs[k].type ?? 'ANY');
      } catch (error) {
        if (!(error instanceof CellSyntaxError)) throw error;
        ctx.diagnostics.push({
          code: 'TABLE_CELL_INVALID',
          message: `Decision table "${id}", rule ${r}, column "${key}": ${error.message}`,
          nodeId: id,
          path,
        });
      }
    }
    for (const key of Object.keys(rule.then ?? {})) {
      if (!outputNames.has(key)) {
        ctx.diagnostics.push({
          code: 'TABLE_UNKNOWN_COLUMN',
          message: `Rule ${r} of decision table "${id}" sets "${key}", which is not an output column`,
          nodeId: id,
          path: `${base}.rules[${r}].then.${key}`,
        });
      }
    }
    return row;
  });
  const outputValues = s.rules.map((rule, r) =>
    s.outputs.map((output, k) => {
      const value = rule.then?.[output.name];
      if (!isOutputExpression(value)) return q(value ?? null);
      const path = `${base}.rules[${r}].then.${output.name}`;
      if (typeof value.expr !== 'string' || value.expr.trim() === '') {
        ctx.diagnostics.push({
          code: 'TABLE_CELL_INVALID',
          message: `Decision table "${id}", rule ${r}, output "${output.name}": {expr} must hold a JavaScript expression (a non-empty string)`,
          nodeId: id,
          path: `${path}.expr`,
        });
        return 'null';
      }
      const bound = ctx.code(value.expr, `${path}.expr`, 'expression');
      bound.forEach((b) => {
        reads.add(b);
      });
      preamble.push(`const O${r}_${k} = ${expressionFunction(value.expr, bound)};`);
      return `O${r}_${k}(v)`;
    }),
  );
  return { source: decisionTableFunction(id, s, columns, cells, outputValues, preamble), reads: [...reads] };
}

/**
 * An output value marked as code: an object whose only key is `expr`. Every other value, strings included,
 * is a literal, so text can never become code by accident.
 */
function isOutputExpression(value: unknown): value is { expr: unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    'expr' in value
  );
}

function compileCall(ctx: NodeContext, s: ScenarioCallNodeSettings): { source: string; reads: string[] } {
  const base = `nodeProperties.${ctx.node.id}.content`;
  const reads = new Set<string>();
  const preamble: string[] = [];
  let name = q(s.scenario ?? null);
  if (s.scenarioVariable) {
    ctx.reference(s.scenarioVariable, `${base}.scenarioVariable`);
    reads.add(s.scenarioVariable);
    name = `$$vars[${q(s.scenarioVariable)}]`;
  }
  let inputs = '{}';
  if (s.inputVariable) {
    ctx.reference(s.inputVariable, `${base}.inputVariable`);
    reads.add(s.inputVariable);
    inputs = `$$vars[${q(s.inputVariable)}]`;
  } else if (s.inputs) {
    const parts: string[] = [];
    Object.entries(s.inputs).forEach(([callee, expression], k) => {
      const bound = ctx.code(expression, `${base}.inputs.${callee}`, 'expression');
      bound.forEach((b) => {
        reads.add(b);
      });
      preamble.push(`const I${k} = ${expressionFunction(expression, bound)};`);
      parts.push(`${q(callee)}: I${k}($$vars)`);
    });
    inputs = `{ ${parts.join(', ')} }`;
  }
  const source = `(function () {\n${preamble.join('\n')}\nreturn function ($$vars) { const name = ${name}; const inputs = ${inputs}; return { name: name === undefined ? null : name, inputs: inputs === undefined ? null : inputs }; };\n})()`;
  return { source, reads: [...reads] };
}
