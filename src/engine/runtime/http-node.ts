import type { HttpPort } from '../ports.js';
import type { HttpCallNodeSettings } from '../types.js';

const TEMPLATE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const EXACT_TEMPLATE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;

export interface HttpNodeFailure {
  code: string;
  message: string;
  status?: number;
  body?: unknown;
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function fillUrl(template: string, vars: Record<string, unknown>): string {
  return template.replace(TEMPLATE, (_, name: string) => encodeURIComponent(text(vars[name])));
}

function fillText(template: string, vars: Record<string, unknown>): string {
  return template.replace(TEMPLATE, (_, name: string) => text(vars[name]));
}

/** Body template: strings get `{{var}}` substituted; a string that is exactly `{{var}}` becomes the value itself. */
function fillBody(template: unknown, vars: Record<string, unknown>): unknown {
  if (typeof template === 'string') {
    const exact = EXACT_TEMPLATE.exec(template);
    return exact ? (vars[exact[1]] ?? null) : fillText(template, vars);
  }
  if (Array.isArray(template)) return template.map((t) => fillBody(t, vars));
  if (template && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fillBody(v, vars)]));
  }
  return template;
}

/**
 * Performs the call with retries (network errors and 5xx). Returns {status, body} on 2xx–3xx;
 * otherwise a failure description (refusals by the target policy are never retried).
 */
export async function performHttpCall(
  port: HttpPort,
  settings: HttpCallNodeSettings,
  request: { vars: Record<string, unknown>; body: unknown },
): Promise<{ ok: true; response: { status: number; body: unknown } } | { ok: false; failure: HttpNodeFailure }> {
  const url = fillUrl(settings.url, request.vars);
  const headers = Object.fromEntries(
    Object.entries(settings.headers ?? {}).map(([k, v]) => [k, fillText(v, request.vars)]),
  );
  const body = settings.bodyExpression
    ? request.body
    : settings.body === undefined
      ? undefined
      : fillBody(settings.body, request.vars);
  const attempts = 1 + (settings.retries ?? 0);
  let failure: HttpNodeFailure = { code: 'HTTP_CALL_FAILED', message: 'not attempted' };
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await port.request({
        method: settings.method,
        url,
        headers,
        body,
        timeoutMs: settings.timeoutMs ?? 5000,
      });
      if (response.status < 400) return { ok: true, response };
      failure = {
        code: 'HTTP_STATUS',
        message: `${settings.method} ${url} answered ${response.status}`,
        status: response.status,
        body: response.body,
      };
      if (response.status < 500) break;
    } catch (error) {
      const code =
        (error as { code?: string }).code === 'HTTP_TARGET_REFUSED' ? 'HTTP_TARGET_REFUSED' : 'HTTP_CALL_FAILED';
      failure = { code, message: (error as Error).message };
      if (code === 'HTTP_TARGET_REFUSED') break;
    }
  }
  return { ok: false, failure };
}
