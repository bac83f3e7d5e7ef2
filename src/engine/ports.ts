import type { ScenarioDocument } from './types.js';

/**
 * What the engine needs from the rest of the service; implemented by internal-data (lookups), scenarios (scenario calls) and outbound (HTTP).
 * A port whose backing service is down throws PortUnavailableError (errors/port-unavailable-error.ts): the run is abandoned, not failed.
 */

export interface LookupRequest {
  ownerId: number;
  collection: string;
  keyColumn: string;
  key: unknown;
  columns?: string[];
  mode: 'ONE' | 'ALL';
}
export type LookupResult = Record<string, unknown> | Record<string, unknown>[] | null;

export interface LookupPort {
  lookup(req: LookupRequest): Promise<LookupResult>;
  describe(req: {
    ownerId: number;
    collection: string;
  }): Promise<{ columns: string[]; indexedColumns: string[] } | null>;
}

export interface ScenarioPort {
  resolveDeployed(req: {
    ownerId: number;
    name: string;
  }): Promise<{ cacheKey: string; document: ScenarioDocument } | null>;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
}
export interface HttpResponse {
  status: number;
  body: unknown;
}
export interface HttpPort {
  request(req: HttpRequest): Promise<HttpResponse>;
}

export interface EnginePorts {
  lookups: LookupPort;
  scenarios: ScenarioPort;
  http: HttpPort;
}

/**
 * Where in a run a port is called: the node, and the SCENARIO_CALL nodes that led to the scenario
 * holding it, outermost first (`[]` for a node of the scenario being run).
 */
export interface PortCallSite {
  nodeId: string;
  callPath: readonly string[];
}

/**
 * Per-run hooks around the ports, passed by the host in `RunContext.portHooks` (and handed on to every
 * scenario the run calls). Each hook receives the call's site, the request, and `proceed`, which makes
 * the call on the engine's port: a hook may watch the call (call `proceed`, keep what it answered or
 * threw, answer the same: recording, src/records/) or answer it itself without calling `proceed`
 * (serving a recorded answer: replay). What a hook answers or throws is what the node gets, exactly as
 * if the port had answered or thrown it. Calls of one run are made one after another, in node order.
 */
export interface PortHooks {
  lookup?(
    site: PortCallSite,
    request: LookupRequest,
    proceed: (request: LookupRequest) => Promise<LookupResult>,
  ): Promise<LookupResult>;
  http?(
    site: PortCallSite,
    request: HttpRequest,
    proceed: (request: HttpRequest) => Promise<HttpResponse>,
  ): Promise<HttpResponse>;
}
