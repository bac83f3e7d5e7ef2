import type {
  HttpRequest,
  HttpResponse,
  LookupRequest,
  LookupResult,
  PortCallSite,
  PortHooks,
} from '../engine/index.js';
import type { CaptureFailure, CaptureSite, HttpCapture, LookupCapture, PortCapture } from './decision-record.js';

/**
 * The port hooks of one recorded run: every lookup and HTTP call is made as usual (through
 * `proceed`) and what it answered or threw is kept, in call order, with its site and attempt. The
 * recorded captures are what a replay serves HTTP_CALL nodes from (docs/records.md).
 */
export class RunCapture implements PortHooks {
  readonly captures: PortCapture[] = [];
  /** Calls so far per site; made on the first call (most runs make none). */
  private attempts?: Map<string, number>;

  async lookup(
    site: PortCallSite,
    request: LookupRequest,
    proceed: (request: LookupRequest) => Promise<LookupResult>,
  ): Promise<LookupResult> {
    const { ownerId: _ownerId, ...asked } = request;
    const capture: LookupCapture = {
      seq: this.captures.length,
      kind: 'DATA_LOOKUP',
      ...this.place(site),
      request: asked,
    };
    this.captures.push(capture);
    try {
      capture.rows = await proceed(request);
      return capture.rows;
    } catch (error) {
      capture.failure = failureOf(error);
      throw error;
    }
  }

  async http(
    site: PortCallSite,
    request: HttpRequest,
    proceed: (request: HttpRequest) => Promise<HttpResponse>,
  ): Promise<HttpResponse> {
    // Headers are left out: node settings put credentials there.
    const sent: HttpCapture['request'] =
      request.body === undefined
        ? { method: request.method, url: request.url }
        : { method: request.method, url: request.url, body: request.body };
    const capture: HttpCapture = { seq: this.captures.length, kind: 'HTTP_CALL', ...this.place(site), request: sent };
    this.captures.push(capture);
    try {
      const response = await proceed(request);
      capture.response = { status: response.status, body: response.body };
      return response;
    } catch (error) {
      capture.failure = failureOf(error);
      throw error;
    }
  }

  /** The site as recorded, with the how-many-th call at that site this is. */
  private place(site: PortCallSite): CaptureSite {
    const key = `${site.callPath.join('\u0000')}\u0001${site.nodeId}`;
    this.attempts ??= new Map();
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    return { nodeId: site.nodeId, callPath: [...site.callPath], attempt };
  }
}

function failureOf(error: unknown): CaptureFailure {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? { code, message } : { message };
}
