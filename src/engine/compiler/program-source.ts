import type { MergeType, NodeType } from '../types.js';
import type { NodePlan } from './compile-scenario.js';
import type { NodeFields } from './node-compilers.js';

const KIND: Record<NodeType, number> = {
  START: 0,
  END: 1,
  SCRIPT: 2,
  DECISION: 3,
  DECISION_TABLE: 4,
  SCORECARD: 5,
  DATA_LOOKUP: 6,
  SCENARIO_CALL: 7,
  HTTP_CALL: 8,
  MODEL: 9,
};
const MERGE_INDEX: Record<MergeType, number> = {
  OVERWRITE_ALL: 0,
  OVERWRITE_NULL: 1,
  OVERWRITE_NONE: 2,
  OVERWRITE_ERROR: 3,
};
const q = JSON.stringify;

/** One node's entry in the program's `nodes` array: `next` is the index of the node after it (-1: none). */
export function nodeSource(plan: NodePlan, next: string, fields: NodeFields): string {
  return (
    `{ id: ${q(plan.id)}, name: ${q(plan.name)}, type: ${q(plan.type)}, k: ${fields.k ?? KIND[plan.type]}, m: ${MERGE_INDEX[plan.mergeType]}, ` +
    `defs: ${q(plan.defs)}, prefix: ${q(plan.prefix)}, reads: ${fields.reads ?? '[]'}, next: ${next}, t: ${fields.t ?? -1}, f: ${fields.f ?? -1}, ` +
    `outputs: ${fields.outputs ?? 'null'}, exec: ${fields.exec ?? 'null'} }`
  );
}

/** The sandbox program: evaluates to `function (rt) → { nodes, validators }`. */
export function programSource(nodeSources: string[], validatorSources: string[]): string {
  return (
    `(function (rt) {\n"use strict";\nconst F = rt.F;\nconst nodes = [\n${nodeSources.join(',\n')}\n];\n` +
    `const validators = [\n${validatorSources.join(',\n')}\n];\nreturn { nodes: nodes, validators: validators };\n})`
  );
}
