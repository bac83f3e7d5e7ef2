/** Shapes of the scenario document and of what the engine reports. Mirrors the schemas in spec/openapi.json. */
import type { components } from '../../generated/api-types.js';
import type { ModelDocument } from './models/model-document.js';
import type { PortHooks } from './ports.js';

type SpecSchemas = components['schemas'];

/** The node kinds of the spec's NodeType, once: the list parse-document checks types against, and the union. */
export const NODE_TYPES = [
  'START',
  'END',
  'SCRIPT',
  'DECISION',
  'DECISION_TABLE',
  'SCORECARD',
  'DATA_LOOKUP',
  'SCENARIO_CALL',
  'HTTP_CALL',
  'MODEL',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export type MergeType = 'OVERWRITE_ALL' | 'OVERWRITE_NULL' | 'OVERWRITE_NONE' | 'OVERWRITE_ERROR';

export interface NodeProperties {
  id: string;
  type: NodeType;
  content: string;
}
export interface ScenarioDocument {
  content: string;
  nodeProperties: Record<string, NodeProperties>;
  /**
   * The models its MODEL nodes name, by `modelReferenceKey` ("name@3", "name@latest"): the engine does no
   * I/O, so whoever compiles a document that has MODEL nodes resolves them first (the service: src/models/).
   * Not part of a stored or exported document.
   */
  models?: Record<string, ModelDocument>;
}

export interface GraphNode {
  id: string;
  type: NodeType;
  name?: string;
  mergeType?: MergeType;
  prefix?: string;
}
export interface GraphEdge {
  from: string;
  to: string;
  when?: boolean;
}
export interface ScenarioGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export type VariableType =
  | { type: 'STRING' }
  | { type: 'DOUBLE' }
  | { type: 'INTEGER' }
  | { type: 'BOOLEAN' }
  | { type: 'DICTIONARY'; name: string; options: string[] }
  | { type: 'MAP' }
  | { type: 'VECTOR' };

export interface VariableInfo {
  name: string;
  type: VariableType;
  required: boolean;
  description?: string;
  tags?: string[];
}

export interface InputValidator {
  variable: string;
  expression: string;
  message: string;
}
export interface StartNodeSettings {
  inputs: VariableInfo[];
  validators?: InputValidator[];
}
export interface EndNodeSettings {
  outputs?: string[];
}
export interface ScriptNodeSettings {
  language: 'javascript';
  code: string;
  outputs: string[];
}
export interface DecisionNodeSettings {
  language: 'javascript';
  condition: string;
}

export type HitPolicy = 'FIRST' | 'UNIQUE' | 'COLLECT' | 'RULE_ORDER';
/** How a decision table's input column compares its cells (not a collection's column type: internal data's CollectionColumnType). */
export type TableColumnType = 'ANY' | 'NUMBER' | 'STRING' | 'BOOLEAN';
interface TableInputColumn {
  name: string;
  expression?: string;
  type?: TableColumnType;
}
interface TableOutputColumn {
  name: string;
}
export type CellCondition = string | number | boolean | null | Record<string, unknown>;
interface TableRule {
  description?: string;
  when?: Record<string, CellCondition>;
  then?: Record<string, unknown>;
}
export interface DecisionTableNodeSettings {
  hitPolicy: HitPolicy;
  inputs: TableInputColumn[];
  outputs: TableOutputColumn[];
  rules: TableRule[];
}

/** A scorecard's bin and characteristic: the spec's own schemas (type-only: the engine imports no code of generated/). */
export type ScorecardBin = SpecSchemas['ScorecardBin'];
export type ScorecardCharacteristic = SpecSchemas['ScorecardCharacteristic'];
export interface ScorecardNodeSettings {
  baseScore: number;
  scoreVariable?: string;
  reasonCodesVariable?: string;
  maxReasonCodes?: number;
  /** variable that receives, per characteristic, `{name, reasonCode, points, pointsLost}` */
  breakdownVariable?: string;
  characteristics: ScorecardCharacteristic[];
}

export interface DataLookupNodeSettings {
  collection: string;
  keyColumn: string;
  joinVariable: string;
  columns?: string[];
  mode: 'ONE' | 'ALL';
  output: string;
}

export interface ScenarioCallNodeSettings {
  scenario?: string;
  scenarioVariable?: string;
  inputs?: Record<string, string>;
  inputVariable?: string;
  outputs?: string[];
  outputVariable?: string;
}

export type HttpCallNodeSettings = SpecSchemas['HttpCallNodeSettings'];

export interface ModelNodeSettings {
  model: string;
  /** a version number, or "latest" (the default): the newest version when the scenario is compiled */
  version?: number | 'latest';
  /** model input field → the variable it reads; an input not listed reads the variable of its own name */
  inputs?: Record<string, string>;
  /** model output field → the variable it writes */
  outputs: Record<string, string>;
}

/** The key of a MODEL node's model in `ScenarioDocument.models`. */
export function modelReferenceKey(settings: Pick<ModelNodeSettings, 'model' | 'version'>): string {
  return `${settings.model}@${settings.version ?? 'latest'}`;
}

export type Diagnostic = SpecSchemas['Diagnostic'];
export interface DocumentProblem {
  path: string;
  message: string;
}

export interface TraceEntry {
  nodeId: string;
  name: string;
  type: NodeType;
  read: Record<string, unknown>;
  wrote: Record<string, unknown>;
  branch?: boolean;
  matchedRules?: number[];
  durationMicros: number;
}

/** Run time spent against a limit (milliseconds of sandbox time; waiting for lookups, HTTP or a worker is not counted). */
export interface RunBudget {
  usedMs: number;
  limitMs: number;
}

export interface RunContext {
  /** The tenant: whose scenario runs, whose collections and scenarios it reaches, whose sandbox it runs in. */
  ownerId: number;
  callStack?: string[];
  /** Time spent so far by this run and the scenarios it calls: one limit covers them all (set by the engine). */
  budget?: RunBudget;
  /** A budget shared by several runs (validation): each run's limit is at most what is left of it, and uses it up. */
  shared?: RunBudget;
  /** The host's hooks around this run's lookups and HTTP calls, its called scenarios' included (see PortHooks). */
  portHooks?: PortHooks;
  /** SCENARIO_CALL node ids from the outermost run to this one (set by the engine for called scenarios). */
  callPath?: string[];
  /** Which queue of the engine pool the run (and the scenarios it calls) waits in; default live. */
  lane?: RunLane;
}

/**
 * The engine pool's queues, first served first. `live`: someone waits for the run (sync and async
 * scores, debug). `validation`: test cases and validation data of a validate or deploy (a person waits,
 * but a scenario's test cases may loop for their whole budget, so they never hold up scores). `bulk`: one
 * of many (batch elements): a free host takes it only when no live or validation run waits, so a batch
 * never holds up scores, its owner's included, by more than the message a host is running. `background`:
 * nobody waits (replays): after all of them, and never on every host at once. A tenant holds at most
 * ENGINE_HOSTS_PER_TENANT hosts across all four.
 */
export type RunLane = 'live' | 'validation' | 'bulk' | 'background';
/** What a run that ended answers: its outputs, and its trace when asked for (a stored run's outcome is execution's RunOutcome). */
export interface RunResult {
  result: Record<string, unknown>;
  trace?: TraceEntry[];
}

export interface TestCaseSpec {
  id?: number;
  name?: string;
  variables: Record<string, unknown>;
  expression: { code: string; language: 'javascript' };
  ignore?: boolean;
}
export interface TestCaseReport {
  id: number | null;
  name: string | null;
  passed: boolean;
  skipped: boolean;
  actual: Record<string, unknown> | null;
  reason?: string;
}

export interface EngineLimits {
  timeoutMs: number;
  memoryMb: number;
  maxCallDepth: number;
  testCasesBudgetMs: number;
}
