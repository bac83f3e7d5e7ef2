import { parseScenarioDocument } from '../document/parse-document.js';
import type {
  DataLookupNodeSettings, DecisionNodeSettings, DecisionTableNodeSettings, Diagnostic, EndNodeSettings, GraphNode,
  HttpCallNodeSettings, MergeType, ModelNodeSettings, NodeType, ScenarioCallNodeSettings, ScenarioDocument, ScorecardNodeSettings,
  ScriptNodeSettings, StartNodeSettings, VariableInfo,
} from '../types.js';
import { checkGraph } from './graph-checks.js';
import { isReservedName, referencedIdentifiers, SANDBOX_GLOBALS } from './js-identifiers.js';
import { decisionTableFunction, expressionFunction, scorecardFunction, scriptFunction } from './node-codegen.js';
import { CellSyntaxError, parseCell, type CellTest } from './table-cells.js';
import { checkScorecardBins, checkScorecardOutputs } from './scorecard-checks.js';
import { scorecardOutputs } from './scorecard-outputs.js';
import { compileModelNode } from './model-node.js';

export type SyntaxChecker = (code: string, kind: 'statements' | 'expression') => { message: string; line?: number; column?: number } | null;

/** Host-side facts about one node of a compiled scenario. */
export interface NodePlan {
  index: number; id: string; name: string; type: NodeType; settings: unknown;
  defs: string[]; prefix: string; mergeType: MergeType;
}

export interface ScenarioPlan {
  /** evaluates in the sandbox to `function (rt) → { nodes, validators }` (the runtime's view of the program) */
  source: string;
  /** The ONNX files its MODEL nodes call, as [sha256, base64]: the hosts get them beside the source. */
  onnxModels?: [string, string][];
  startIndex: number;
  nodes: NodePlan[];
  inputs: VariableInfo[];
}

const KIND: Record<NodeType, number> = {
  START: 0, END: 1, SCRIPT: 2, DECISION: 3, DECISION_TABLE: 4, SCORECARD: 5, DATA_LOOKUP: 6, SCENARIO_CALL: 7, HTTP_CALL: 8, MODEL: 9,
};
/** An ONNX MODEL node, for the runtime (bootstrap-source.ts, step's case 10). */
const ONNX_MODEL_KIND = 10;
const MERGE_INDEX: Record<MergeType, number> = { OVERWRITE_ALL: 0, OVERWRITE_NULL: 1, OVERWRITE_NONE: 2, OVERWRITE_ERROR: 3 };
const TEMPLATE_VAR = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const q = JSON.stringify;

/** Names of variables a node defines, before the prefix; null when not known at compile time. */
function definedNames(node: GraphNode, settings: unknown): string[] | null {
  if (settings === undefined) return node.type === 'END' ? [] : null;
  switch (node.type) {
    case 'START': return (settings as StartNodeSettings).inputs.map((i) => i.name);
    case 'SCRIPT': return (settings as ScriptNodeSettings).outputs;
    case 'DECISION_TABLE': return (settings as DecisionTableNodeSettings).outputs.map((o) => o.name);
    case 'SCORECARD': return scorecardOutputs(settings as ScorecardNodeSettings);
    case 'DATA_LOOKUP': return [(settings as DataLookupNodeSettings).output];
    case 'SCENARIO_CALL': {
      const s = settings as ScenarioCallNodeSettings;
      return s.outputVariable ? [s.outputVariable] : s.outputs ?? null;
    }
    case 'HTTP_CALL': {
      const s = settings as HttpCallNodeSettings;
      return s.catchErrors ? [s.output, s.errorOutput ?? `${s.output}Error`] : [s.output];
    }
    case 'MODEL': return Object.values((settings as ModelNodeSettings).outputs);
    default: return [];
  }
}

export function templateVariables(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') for (const m of value.matchAll(TEMPLATE_VAR)) into.add(m[1]);
  else if (Array.isArray(value)) value.forEach((v) => templateVariables(v, into));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => templateVariables(v, into));
  return into;
}

/** Checks everything about a document and, when there is nothing to report, generates its sandbox program. */
export function compileScenario(doc: ScenarioDocument, checkSyntax: SyntaxChecker): { plan: ScenarioPlan | null; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const parsed = parseScenarioDocument(doc);
  for (const problem of parsed.problems) {
    const nodeId = /^nodeProperties\.([A-Za-z][A-Za-z0-9_-]*)/.exec(problem.path)?.[1];
    diagnostics.push({ code: 'DOCUMENT_INVALID', message: `${problem.path} ${problem.message}`, path: problem.path, ...(nodeId ? { nodeId } : {}) });
  }
  const shape = checkGraph(parsed.graph, diagnostics);
  const nodeProperties = doc?.nodeProperties && typeof doc.nodeProperties === 'object' ? doc.nodeProperties : {};
  for (const node of shape.nodes.values()) {
    if (node.type !== 'END' && !nodeProperties[node.id]) {
      diagnostics.push({ code: 'NODE_PROPERTIES_MISSING', message: `${node.type} node "${node.id}" has no nodeProperties`, nodeId: node.id, path: `nodeProperties.${node.id}` });
    }
  }
  for (const key of Object.keys(nodeProperties)) {
    if (!shape.nodes.has(key)) diagnostics.push({ code: 'NODE_PROPERTIES_ORPHAN', message: `nodeProperties.${key} belongs to no graph node`, path: `nodeProperties.${key}` });
  }

  const onnxModels = new Map<string, string>();
  const inputs = shape.start ? ((parsed.settings.get(shape.start.id) as StartNodeSettings | undefined)?.inputs ?? []) : [];
  const seenInputs = new Set<string>();
  inputs.forEach((input, k) => {
    if (seenInputs.has(input.name)) diagnostics.push({ code: 'DUPLICATE_INPUT', message: `Input "${input.name}" is declared twice`, nodeId: shape.start!.id, path: `nodeProperties.${shape.start!.id}.content.inputs[${k}].name` });
    seenInputs.add(input.name);
  });

  // variables each node may see: union over all paths from START (and whether some upstream node defines unknown names)
  const defs = new Map<string, string[] | null>();
  for (const node of shape.nodes.values()) {
    const names = definedNames(node, parsed.settings.get(node.id));
    const prefix = node.type === 'START' ? '' : node.prefix ?? '';
    defs.set(node.id, names ? names.map((n) => prefix + n) : null);
    for (const name of names ?? []) {
      if (isReservedName(prefix + name)) {
        diagnostics.push({ code: 'INVALID_VARIABLE_NAME', message: `Node "${node.id}" defines "${prefix + name}", a reserved name in scenario code`, nodeId: node.id });
      }
    }
  }
  const allVariables = new Set<string>([...defs.values()].flatMap((d) => d ?? []));
  const scope = new Map<string, { vars: Set<string>; open: boolean }>();
  for (const id of shape.order) {
    const preds = (shape.predecessors.get(id) ?? []).filter((p) => scope.has(p));
    const vars = new Set<string>();
    let open = false;
    for (const p of preds) {
      const s = scope.get(p)!;
      s.vars.forEach((v) => vars.add(v));
      open ||= s.open;
      const d = defs.get(p);
      if (d === null) open = true;
      else d?.forEach((v) => vars.add(v));
    }
    scope.set(id, { vars, open });
  }

  const index = new Map(shape.order.map((id, i) => [id, i]));
  const nodePlans: NodePlan[] = [];
  const nodeSources: string[] = [];
  const validatorSources: string[] = [];
  for (const id of shape.order) {
    const node = shape.nodes.get(id)!;
    const settings = parsed.settings.get(id);
    const { vars, open } = scope.get(id)!;
    const ctx = new NodeContext(node, vars, open, allVariables, diagnostics, checkSyntax);
    const plan: NodePlan = {
      index: index.get(id)!, id, name: node.name ?? id, type: node.type, settings,
      defs: defs.get(id) ?? [], prefix: node.type === 'START' ? '' : node.prefix ?? '', mergeType: node.mergeType ?? 'OVERWRITE_ALL',
    };
    nodePlans.push(plan);
    if (settings === undefined && node.type !== 'END') continue;
    const fields: Record<string, string> = {};
    fields.next = String(index.get(shape.next.get(id) ?? '') ?? -1);
    switch (node.type) {
      case 'START': {
        const s = settings as StartNodeSettings;
        const inputNames = new Set(s.inputs.map((i) => i.name));
        (s.validators ?? []).forEach((validator, k) => {
          const path = `nodeProperties.${id}.content.validators[${k}]`;
          if (!inputNames.has(validator.variable)) {
            diagnostics.push({ code: 'UNDEFINED_VARIABLE', message: `Validator ${k} of "${id}" checks "${validator.variable}", which is not an input`, nodeId: id, path: `${path}.variable` });
          }
          const bound = ctx.expression(validator.expression, `${path}.expression`, inputNames);
          validatorSources.push(`{ variable: ${q(validator.variable)}, message: ${q(validator.message)}, fn: ${expressionFunction(validator.expression, bound, ['value'])} }`);
        });
        break;
      }
      case 'END': {
        const s = (settings ?? {}) as EndNodeSettings;
        s.outputs?.forEach((name, k) => ctx.reference(name, `nodeProperties.${id}.content.outputs[${k}]`));
        fields.outputs = q(s.outputs ?? null);
        break;
      }
      case 'SCRIPT': {
        const s = settings as ScriptNodeSettings;
        const path = `nodeProperties.${id}.content.code`;
        const bound = ctx.code(s.code, path, 'statements', new Set(s.outputs));
        for (const output of s.outputs) {
          if (new RegExp(`\\b(let|const|var)\\s+${output}\\b`).test(s.code)) {
            diagnostics.push({ code: 'SCRIPT_OUTPUT_SHADOWED', message: `Script "${id}" declares its output "${output}" with let/const/var; assign it instead (the declared variable would be lost)`, nodeId: id, path });
          }
        }
        fields.exec = scriptFunction(s.code, bound, s.outputs);
        fields.reads = q(bound);
        break;
      }
      case 'DECISION': {
        const s = settings as DecisionNodeSettings;
        const bound = ctx.code(s.condition, `nodeProperties.${id}.content.condition`, 'expression');
        fields.exec = expressionFunction(s.condition, bound);
        fields.reads = q(bound);
        const branch = shape.branches.get(id) ?? {};
        fields.t = String(index.get(branch.whenTrue ?? '') ?? -1);
        fields.f = String(index.get(branch.whenFalse ?? '') ?? -1);
        break;
      }
      case 'DECISION_TABLE': {
        const compiled = compileTable(ctx, settings as DecisionTableNodeSettings);
        fields.exec = compiled.source;
        fields.reads = q(compiled.reads);
        break;
      }
      case 'SCORECARD': {
        const s = settings as ScorecardNodeSettings;
        s.characteristics.forEach((c, k) => ctx.reference(c.variable, `nodeProperties.${id}.content.characteristics[${k}].variable`));
        diagnostics.push(...checkScorecardBins(id, s), ...checkScorecardOutputs(id, s));
        fields.exec = scorecardFunction(s);
        fields.reads = q([...new Set(s.characteristics.map((c) => c.variable))]);
        break;
      }
      case 'DATA_LOOKUP': {
        const s = settings as DataLookupNodeSettings;
        ctx.reference(s.joinVariable, `nodeProperties.${id}.content.joinVariable`);
        fields.exec = `function ($$vars) { const key = $$vars[${q(s.joinVariable)}]; return { key: key === undefined ? null : key }; }`;
        fields.reads = q([s.joinVariable]);
        break;
      }
      case 'SCENARIO_CALL': {
        const compiled = compileCall(ctx, settings as ScenarioCallNodeSettings);
        fields.exec = compiled.source;
        fields.reads = q(compiled.reads);
        break;
      }
      case 'MODEL': {
        const compiled = compileModelNode(ctx, settings as ModelNodeSettings, doc.models ?? {});
        if (compiled.onnx?.file !== undefined) {
          onnxModels.set(compiled.onnx.sha256, compiled.onnx.file);
          // the runtime's ONNX kind: its runs are stopped at the node and scored together (bootstrap-source.ts)
          fields.k = String(ONNX_MODEL_KIND);
        }
        fields.exec = compiled.source;
        fields.reads = q(compiled.reads);
        break;
      }
      case 'HTTP_CALL': {
        const s = settings as HttpCallNodeSettings;
        const names = [...templateVariables([s.url, s.headers ?? {}, s.bodyExpression ? null : s.body ?? null])];
        names.forEach((name) => ctx.reference(name, `nodeProperties.${id}.content`));
        const body = s.bodyExpression ? ctx.code(s.bodyExpression, `nodeProperties.${id}.content.bodyExpression`, 'expression') : null;
        const bodyFn = body ? expressionFunction(s.bodyExpression!, body) : 'null';
        fields.exec = `(function () { const B = ${bodyFn}; return function ($$vars) { return { vars: { ${names.map((n) => `${n}: $$vars[${q(n)}] === undefined ? null : $$vars[${q(n)}]`).join(', ')} }, body: B ? B($$vars) : null }; }; })()`;
        fields.reads = q([...new Set([...names, ...(body ?? [])])]);
        break;
      }
    }
    nodeSources.push(`{ id: ${q(id)}, name: ${q(plan.name)}, type: ${q(node.type)}, k: ${fields.k ?? KIND[node.type]}, m: ${MERGE_INDEX[plan.mergeType]}, ` +
      `defs: ${q(plan.defs)}, prefix: ${q(plan.prefix)}, reads: ${fields.reads ?? '[]'}, next: ${fields.next}, t: ${fields.t ?? -1}, f: ${fields.f ?? -1}, ` +
      `outputs: ${fields.outputs ?? 'null'}, exec: ${fields.exec ?? 'null'} }`);
  }
  if (diagnostics.length > 0 || !shape.start) return { plan: null, diagnostics };
  const source = `(function (rt) {\n"use strict";\nconst F = rt.F;\nconst nodes = [\n${nodeSources.join(',\n')}\n];\n` +
    `const validators = [\n${validatorSources.join(',\n')}\n];\nreturn { nodes: nodes, validators: validators };\n})`;
  const plan: ScenarioPlan = { source, startIndex: index.get(shape.start.id)!, nodes: nodePlans, inputs };
  if (onnxModels.size > 0) plan.onnxModels = [...onnxModels];
  return { plan, diagnostics };
}

/** Per-node helpers that check references and code, recording diagnostics against the node. */
export class NodeContext {
  constructor(
    readonly node: GraphNode, private readonly vars: Set<string>, private readonly open: boolean,
    private readonly allVariables: Set<string>, readonly diagnostics: Diagnostic[], private readonly checkSyntax: SyntaxChecker,
  ) {}

  /** An explicit reference to a variable by name. */
  reference(name: string, path: string): void {
    if (this.open || this.vars.has(name)) return;
    this.diagnostics.push({ code: 'UNDEFINED_VARIABLE', message: `Node "${this.node.id}" reads variable "${name}", which no upstream node defines`, nodeId: this.node.id, path });
  }

  /** Checks a code snippet; returns the variable names to bind for it. */
  code(code: string, path: string, kind: 'statements' | 'expression', own: Set<string> = new Set()): string[] {
    const problem = this.checkSyntax(code, kind);
    if (problem) {
      const code_ = kind === 'statements' ? 'SCRIPT_SYNTAX_ERROR' : 'EXPRESSION_SYNTAX_ERROR';
      this.diagnostics.push({ code: code_, message: `Syntax error in node "${this.node.id}": ${problem.message}`, nodeId: this.node.id, path, ...(problem.line ? { line: problem.line, column: problem.column } : {}) });
      return [];
    }
    const bound: string[] = [];
    for (const name of referencedIdentifiers(code)) {
      if (own.has(name)) continue;
      if (this.vars.has(name)) bound.push(name);
      else if (this.open) { if (!SANDBOX_GLOBALS.has(name) && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !isReservedName(name)) bound.push(name); }
      else if (this.allVariables.has(name)) {
        this.diagnostics.push({ code: 'UNDEFINED_VARIABLE', message: `Node "${this.node.id}" reads variable "${name}", which no upstream node defines`, nodeId: this.node.id, path });
      }
    }
    return bound;
  }

  /** An expression over a fixed set of names (validators). */
  expression(code: string, path: string, names: Set<string>): string[] {
    const problem = this.checkSyntax(code, 'expression');
    if (problem) {
      this.diagnostics.push({ code: 'EXPRESSION_SYNTAX_ERROR', message: `Syntax error in node "${this.node.id}": ${problem.message}`, nodeId: this.node.id, path, ...(problem.line ? { line: problem.line, column: problem.column } : {}) });
      return [];
    }
    return [...referencedIdentifiers(code)].filter((n) => names.has(n));
  }
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
    bound.forEach((b) => reads.add(b));
    preamble.push(`const E${k} = ${expressionFunction(column.expression, bound)};`);
    return { read: `E${k}(v)` };
  });
  const inputNames = new Map(s.inputs.map((c, k) => [c.name, k]));
  const outputNames = new Set(s.outputs.map((o) => o.name));
  for (const [list, label] of [[s.inputs, 'input'], [s.outputs, 'output']] as const) {
    const seen = new Set<string>();
    list.forEach((c, k) => {
      if (seen.has(c.name)) ctx.diagnostics.push({ code: 'TABLE_DUPLICATE_COLUMN', message: `Decision table "${id}" has two ${label} columns named "${c.name}"`, nodeId: id, path: `${base}.${label}s[${k}].name` });
      seen.add(c.name);
    });
  }
  const cells: CellTest[][] = s.rules.map((rule, r) => {
    const row: CellTest[] = s.inputs.map(() => ({ kind: 'any' }));
    for (const [key, cell] of Object.entries(rule.when ?? {})) {
      const k = inputNames.get(key);
      const path = `${base}.rules[${r}].when.${key}`;
      if (k === undefined) {
        ctx.diagnostics.push({ code: 'TABLE_UNKNOWN_COLUMN', message: `Rule ${r} of decision table "${id}" tests "${key}", which is not an input column`, nodeId: id, path });
        continue;
      }
      try {
        row[k] = parseCell(cell, s.inputs[k].type ?? 'ANY');
      } catch (error) {
        if (!(error instanceof CellSyntaxError)) throw error;
        ctx.diagnostics.push({ code: 'TABLE_CELL_INVALID', message: `Decision table "${id}", rule ${r}, column "${key}": ${error.message}`, nodeId: id, path });
      }
    }
    for (const key of Object.keys(rule.then ?? {})) {
      if (!outputNames.has(key)) {
        ctx.diagnostics.push({ code: 'TABLE_UNKNOWN_COLUMN', message: `Rule ${r} of decision table "${id}" sets "${key}", which is not an output column`, nodeId: id, path: `${base}.rules[${r}].then.${key}` });
      }
    }
    return row;
  });
  const outputValues = s.rules.map((rule, r) => s.outputs.map((output, k) => {
    const value = rule.then?.[output.name];
    if (!isOutputExpression(value)) return q(value ?? null);
    const path = `${base}.rules[${r}].then.${output.name}`;
    if (typeof value.expr !== 'string' || value.expr.trim() === '') {
      ctx.diagnostics.push({ code: 'TABLE_CELL_INVALID', message: `Decision table "${id}", rule ${r}, output "${output.name}": {expr} must hold a JavaScript expression (a non-empty string)`, nodeId: id, path: `${path}.expr` });
      return 'null';
    }
    const bound = ctx.code(value.expr, `${path}.expr`, 'expression');
    bound.forEach((b) => reads.add(b));
    preamble.push(`const O${r}_${k} = ${expressionFunction(value.expr, bound)};`);
    return `O${r}_${k}(v)`;
  }));
  return { source: decisionTableFunction(id, s, columns, cells, outputValues, preamble), reads: [...reads] };
}

/**
 * An output value marked as code: an object whose only key is `expr`. Every other value, strings included,
 * is a literal, so text can never become code by accident.
 */
function isOutputExpression(value: unknown): value is { expr: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && 'expr' in value;
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
      bound.forEach((b) => reads.add(b));
      preamble.push(`const I${k} = ${expressionFunction(expression, bound)};`);
      parts.push(`${q(callee)}: I${k}($$vars)`);
    });
    inputs = `{ ${parts.join(', ')} }`;
  }
  const source = `(function () {\n${preamble.join('\n')}\nreturn function ($$vars) { const name = ${name}; const inputs = ${inputs}; return { name: name === undefined ? null : name, inputs: inputs === undefined ? null : inputs }; };\n})()`;
  return { source, reads: [...reads] };
}
