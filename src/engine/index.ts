/** Public API of the scenario engine (pure: no HTTP server, no SQL). */
export type {
  NodeType,
  MergeType,
  NodeProperties,
  ScenarioDocument,
  ScenarioGraph,
  GraphNode,
  GraphEdge,
  VariableType,
  VariableInfo,
  InputValidator,
  StartNodeSettings,
  EndNodeSettings,
  ScriptNodeSettings,
  DecisionNodeSettings,
  DecisionTableNodeSettings,
  ScorecardNodeSettings,
  DataLookupNodeSettings,
  ScenarioCallNodeSettings,
  HttpCallNodeSettings,
  Diagnostic,
  DocumentProblem,
  TraceEntry,
  RunBudget,
  RunContext,
  RunLane,
  RunResult,
  TestCaseSpec,
  TestCaseReport,
  ModelNodeSettings,
} from './types.js';
export { NODE_TYPES, modelReferenceKey } from './types.js';
export type { ModelDocument, ModelInputField, ModelOutputField } from './models/model-document.js';
export { onnxDocument, type OnnxDescription } from './models/onnx-document.js';
export { readPmml, ModelFileError } from './models/pmml-reader.js';
export { DEFAULT_XML_LIMITS, type XmlLimits } from './models/xml-parser.js';
export type {
  EnginePorts,
  LookupPort,
  LookupRequest,
  LookupResult,
  ScenarioPort,
  HttpPort,
  HttpRequest,
  HttpResponse,
  PortCallSite,
  PortHooks,
} from './ports.js';
export {
  normalizeScenarioDocument,
  DocumentNormalizationError,
  type ScenarioDocumentInput,
} from './document/normalize.js';
export { validateScenarioDocument, MAX_DOCUMENT_DEPTH } from './document/parse-document.js';
export { pathBeyondDepth } from './document/nesting-depth.js';
export { inputVariables, isPiiTagged } from './document/input-variables.js';
export { ScenarioEngine, type ScenarioEngineOptions } from './scenario-engine.js';
export type { EngineEvent, PoolStats } from './pool/engine-pool.js';
export { CompiledScenario } from './compiled-scenario.js';
export { ScenarioCompileError } from './errors/scenario-compile-error.js';
export { InputValidationError, type InputViolation } from './errors/input-validation-error.js';
export { ScenarioRunError, type RunErrorCode } from './errors/scenario-run-error.js';
export { PortUnavailableError } from './errors/port-unavailable-error.js';
