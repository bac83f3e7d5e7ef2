import type { ScenarioDocument } from './types.js';

/**
 * What the engine needs from the rest of the service; implemented by internal-data (lookups), scenarios (scenario calls) and outbound (HTTP).
 * A port whose backing service is down throws PortUnavailableError (errors/port-unavailable-error.ts): the run is abandoned, not failed.
 */

export interface LookupRequest {
  ownerId: number; collection: string; keyColumn: string; key: unknown; columns?: string[]; mode: 'ONE' | 'ALL';
}
export type LookupResult = Record<string, unknown> | Record<string, unknown>[] | null;

export interface LookupPort {
  lookup(req: LookupRequest): Promise<LookupResult>;
  describe(req: { ownerId: number; collection: string }): Promise<{ columns: string[]; indexedColumns: string[] } | null>;
}

export interface ScenarioPort {
  resolveDeployed(req: { ownerId: number; name: string }): Promise<{ cacheKey: string; document: ScenarioDocument } | null>;
}

export interface HttpRequest { method: string; url: string; headers: Record<string, string>; body?: unknown; timeoutMs: number }
export interface HttpResponse { status: number; body: unknown }
export interface HttpPort { request(req: HttpRequest): Promise<HttpResponse> }

export interface EnginePorts { lookups: LookupPort; scenarios: ScenarioPort; http: HttpPort }
