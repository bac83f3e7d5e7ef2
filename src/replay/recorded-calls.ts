import type { HttpRequest, HttpResponse, PortCallSite, PortHooks } from '../engine/index.js';
import type { HttpCapture, PortCapture } from '../records/decision-record.js';
import { canonicalJson } from './canonical-json.js';

/** Thrown into an HTTP_CALL node whose call has no recording: the call is not made. */
class UnrecordedCallError extends Error {
  readonly code = 'HTTP_CALL_NOT_RECORDED';

  constructor(site: PortCallSite, attempt: number) {
    super(
      `Replay: no recorded answer for HTTP_CALL node "${site.nodeId}"${site.callPath.length > 0 ? ` (called through ${site.callPath.join(' → ')})` : ''}, attempt ${attempt}; the call was not made`,
    );
  }
}

/** The key of a call site, as the recording keys it (src/records/run-capture.ts). */
export function siteKey(nodeId: string, callPath: readonly string[]): string {
  return `${callPath.join('\u0000')}\u0001${nodeId}`;
}

/**
 * The port hooks of one replayed run: every HTTP call is answered from the record's captures (the
 * answer, or the failure, recorded at the same node, call path and attempt) and never made. A call
 * the recording has no answer for is not made either: the node gets UnrecordedCallError and the run
 * is reported as unrecorded, whatever the node does with the error. Lookups have no hook: they read
 * today's collections.
 */
export class RecordedCalls implements PortHooks {
  /** Sites called with no recording, in call order. */
  readonly unrecorded: PortCallSite[] = [];
  served = 0;
  /** Served calls whose method, URL or body differ from what was recorded. */
  requestDiffers = 0;
  /** Both built at the first HTTP call: most replayed runs make none. */
  private bySite?: Map<string, HttpCapture[]>;
  private attempts?: Map<string, number>;

  constructor(private readonly captures: readonly PortCapture[]) {}

  async http(site: PortCallSite, request: HttpRequest): Promise<HttpResponse> {
    const key = siteKey(site.nodeId, site.callPath);
    this.attempts ??= new Map();
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    const recorded = this.recordedAt()
      .get(key)
      ?.find((capture) => capture.attempt === attempt);
    if (!recorded || (!recorded.response && !recorded.failure)) {
      this.unrecorded.push({ nodeId: site.nodeId, callPath: [...site.callPath] });
      throw new UnrecordedCallError(site, attempt);
    }
    this.served += 1;
    if (differs(recorded.request, request)) this.requestDiffers += 1;
    if (recorded.response) return { status: recorded.response.status, body: recorded.response.body };
    // What the port threw then, thrown again: the node retries, catches or fails exactly as it did.
    const failure = recorded.failure as NonNullable<HttpCapture['failure']>;
    throw Object.assign(new Error(failure.message), failure.code === undefined ? {} : { code: failure.code });
  }

  private recordedAt(): Map<string, HttpCapture[]> {
    this.bySite ??= indexBySite(this.captures);
    return this.bySite;
  }
}

function indexBySite(captures: readonly PortCapture[]): Map<string, HttpCapture[]> {
  const bySite = new Map<string, HttpCapture[]>();
  for (const capture of captures) {
    if (capture.kind !== 'HTTP_CALL') continue;
    const key = siteKey(capture.nodeId, capture.callPath);
    const atSite = bySite.get(key);
    if (atSite) atSite.push(capture);
    else bySite.set(key, [capture]);
  }
  return bySite;
}

function differs(recorded: HttpCapture['request'], request: HttpRequest): boolean {
  return (
    recorded.method !== request.method ||
    recorded.url !== request.url ||
    canonicalJson(recorded.body) !== canonicalJson(request.body)
  );
}
