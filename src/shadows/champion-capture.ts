import type {
  HttpRequest,
  HttpResponse,
  LookupRequest,
  LookupResult,
  PortCallSite,
  PortHooks,
} from '../engine/index.js';
import type { HttpCapture } from '../records/decision-record.js';

/**
 * The port hooks of a champion run that has shadows: every HTTP answer (or failure) is kept, keyed by
 * site and attempt exactly as a recording keys it (src/records/run-capture.ts), so the shadows are
 * answered from it (replay's RecordedCalls) and never call out again. Each call is handed on to the
 * recording's hooks when the run is recorded, else made on the port.
 */
export class ChampionCapture implements PortHooks {
  readonly captures: HttpCapture[] = [];
  private attempts?: Map<string, number>;
  inner: PortHooks | undefined;

  lookup(
    site: PortCallSite,
    request: LookupRequest,
    proceed: (request: LookupRequest) => Promise<LookupResult>,
  ): Promise<LookupResult> {
    return this.inner?.lookup ? this.inner.lookup(site, request, proceed) : proceed(request);
  }

  async http(
    site: PortCallSite,
    request: HttpRequest,
    proceed: (request: HttpRequest) => Promise<HttpResponse>,
  ): Promise<HttpResponse> {
    const key = `${site.callPath.join('\u0000')}\u0001${site.nodeId}`;
    this.attempts ??= new Map();
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    const capture: HttpCapture = {
      seq: this.captures.length,
      kind: 'HTTP_CALL',
      nodeId: site.nodeId,
      callPath: [...site.callPath],
      attempt,
      request:
        request.body === undefined
          ? { method: request.method, url: request.url }
          : { method: request.method, url: request.url, body: request.body },
    };
    this.captures.push(capture);
    try {
      const response = this.inner?.http ? await this.inner.http(site, request, proceed) : await proceed(request);
      capture.response = { status: response.status, body: response.body };
      return response;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      capture.failure = {
        ...(typeof code === 'string' ? { code } : {}),
        message: error instanceof Error ? error.message : String(error),
      };
      throw error;
    }
  }
}
