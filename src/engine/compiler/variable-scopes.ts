import type {
  DataLookupNodeSettings,
  DecisionTableNodeSettings,
  Diagnostic,
  GraphNode,
  HttpCallNodeSettings,
  ModelNodeSettings,
  ScenarioCallNodeSettings,
  ScorecardNodeSettings,
  ScriptNodeSettings,
  StartNodeSettings,
} from '../types.js';
import type { GraphShape } from './graph-checks.js';
import { isReservedName } from './js-identifiers.js';
import { scorecardOutputs } from './scorecard-outputs.js';

/** What a node may read: every variable some path from START defines before it; open when some such node defines names not known at compile time. */
export interface Scope {
  vars: Set<string>;
  open: boolean;
}

/** The prefix of the variables a node defines (START's inputs have none). */
export function prefixOf(node: GraphNode): string {
  return node.type === 'START' ? '' : (node.prefix ?? '');
}

/** Names of variables a node defines, before the prefix; null when not known at compile time. */
function definedNames(node: GraphNode, settings: unknown): string[] | null {
  if (settings === undefined) return node.type === 'END' ? [] : null;
  switch (node.type) {
    case 'START':
      return (settings as StartNodeSettings).inputs.map((i) => i.name);
    case 'SCRIPT':
      return (settings as ScriptNodeSettings).outputs;
    case 'DECISION_TABLE':
      return (settings as DecisionTableNodeSettings).outputs.map((o) => o.name);
    case 'SCORECARD':
      return scorecardOutputs(settings as ScorecardNodeSettings);
    case 'DATA_LOOKUP':
      return [(settings as DataLookupNodeSettings).output];
    case 'SCENARIO_CALL': {
      const s = settings as ScenarioCallNodeSettings;
      return s.outputVariable ? [s.outputVariable] : (s.outputs ?? null);
    }
    case 'HTTP_CALL': {
      const s = settings as HttpCallNodeSettings;
      return s.catchErrors ? [s.output, s.errorOutput ?? `${s.output}Error`] : [s.output];
    }
    case 'MODEL':
      return Object.values((settings as ModelNodeSettings).outputs);
    default:
      return [];
  }
}

/** Pass: the variables each node defines, prefixed (null: not known at compile time); reserved names are reported. */
export function definedVariables(
  shape: GraphShape,
  settings: Map<string, unknown>,
  diagnostics: Diagnostic[],
): Map<string, string[] | null> {
  const defs = new Map<string, string[] | null>();
  for (const node of shape.nodes.values()) {
    const names = definedNames(node, settings.get(node.id));
    const prefix = prefixOf(node);
    defs.set(node.id, names ? names.map((n) => prefix + n) : null);
    for (const name of names ?? []) {
      if (isReservedName(prefix + name)) {
        diagnostics.push({
          code: 'INVALID_VARIABLE_NAME',
          message: `Node "${node.id}" defines "${prefix + name}", a reserved name in scenario code`,
          nodeId: node.id,
        });
      }
    }
  }
  return defs;
}

/** Pass: the scope of each node reachable from START, in program order (the union over all paths from START). */
export function variableScopes(shape: GraphShape, defs: Map<string, string[] | null>): Map<string, Scope> {
  const scope = new Map<string, Scope>();
  for (const id of shape.order) {
    const preds = (shape.predecessors.get(id) ?? []).filter((p) => scope.has(p));
    const vars = new Set<string>();
    let open = false;
    for (const p of preds) {
      const s = scope.get(p)!;
      s.vars.forEach((v) => {
        vars.add(v);
      });
      open ||= s.open;
      const d = defs.get(p);
      if (d === null) open = true;
      else
        d?.forEach((v) => {
          vars.add(v);
        });
    }
    scope.set(id, { vars, open });
  }
  return scope;
}
