import type { ResponseChecker } from './response-checker.js';
import type { JsonObject, OperationInfo, ParameterInfo, ServedSpec } from './served-spec.js';

/**
 * Calls operations by operationId, building each request from the served spec (path, parameter
 * styles, security schemes), and records every exchange with what the response checker found.
 */

export type Credential =
  | 'none'
  | 'bearer'
  | 'scoreTokenQuery'
  | 'scoreTokenHeader'
  | 'invalidBearer'
  | 'invalidScoreToken';

export interface Credentials {
  bearerToken?: string;
  scoreToken?: string;
}

export type RequestBody =
  | { json: unknown }
  | { yaml: string }
  | { multipart: { field: string; fileName: string; contentType: string; content: string } };

export interface CallOptions {
  /** What this call shows, for the report ("rows of a collection that does not exist"). */
  label: string;
  credential: Credential;
  path?: Record<string, string | number>;
  query?: Record<string, unknown>;
  headers?: Record<string, string>;
  body?: RequestBody;
  /** Statuses this call must end in (besides being declared by the spec). */
  expect?: number[];
  /** The media type a successful response must have (e.g. YAML when it was asked for). */
  expectMediaType?: string;
}

export interface Exchange {
  operationId: string;
  label: string;
  method: string;
  /** The URL without secrets. */
  url: string;
  status?: number;
  violations: string[];
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: unknown;
  /** False when the response broke the spec or the expectation. */
  ok: boolean;
}

/** A value as OpenAPI's query serialisation writes it: `[name, value]` pairs. */
function serializeQueryParameter(parameter: ParameterInfo, value: unknown): Array<[string, string]> {
  if (value === undefined || value === null) return [];
  if (parameter.contentType) return [[parameter.name, typeof value === 'string' ? value : JSON.stringify(value)]];
  if (Array.isArray(value)) {
    if (parameter.explode) return value.map((item) => [parameter.name, String(item)]);
    const joiner = parameter.style === 'pipeDelimited' ? '|' : parameter.style === 'spaceDelimited' ? ' ' : ',';
    return [[parameter.name, value.map(String).join(joiner)]];
  }
  if (typeof value === 'object') {
    if (parameter.style === 'deepObject') return deepObjectPairs(parameter.name, value as JsonObject);
    const entries = Object.entries(value as JsonObject).filter(([, inner]) => inner !== undefined);
    if (parameter.explode) return entries.map(([key, inner]) => [key, String(inner)]);
    return [[parameter.name, entries.flatMap(([key, inner]) => [key, String(inner)]).join(',')]];
  }
  return [[parameter.name, String(value)]];
}

/** `name[a][b]=v` for nested objects (the bracket convention every deepObject parser reads); `{}` sends nothing. */
function deepObjectPairs(prefix: string, value: JsonObject): Array<[string, string]> {
  return Object.entries(value).flatMap(([key, inner]): Array<[string, string]> => {
    if (inner === undefined || inner === null) return [];
    if (typeof inner === 'object' && !Array.isArray(inner))
      return deepObjectPairs(`${prefix}[${key}]`, inner as JsonObject);
    return [[`${prefix}[${key}]`, String(inner)]];
  });
}

function redact(url: URL): string {
  const copy = new URL(url);
  if (copy.searchParams.has('key')) copy.searchParams.set('key', '***');
  return `${copy.pathname}${copy.search}`.replace(/%2A%2A%2A/g, '***');
}

export class ContractClient {
  readonly exchanges: Exchange[] = [];

  constructor(
    private readonly baseUrl: string,
    private readonly spec: ServedSpec,
    private readonly checker: ResponseChecker,
    private readonly credentials: Credentials,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  has(operationId: string): boolean {
    return this.spec.operation(operationId) !== undefined;
  }

  operation(operationId: string): OperationInfo {
    const operation = this.spec.operation(operationId);
    if (!operation) throw new Error(`the served spec has no operation ${operationId}`);
    return operation;
  }

  /** Records a failure that is not tied to one response (a step that could not go on). */
  fail(operationId: string, label: string, message: string): void {
    const operation = this.spec.operation(operationId);
    this.exchanges.push({
      operationId,
      label,
      method: operation?.method.toUpperCase() ?? '',
      url: operation?.path ?? '',
      violations: [message],
    });
  }

  async call(operationId: string, options: CallOptions): Promise<CallResult> {
    const operation = this.spec.operation(operationId);
    if (!operation) {
      this.fail(operationId, options.label, `the served spec has no operation ${operationId}`);
      return { status: 0, headers: new Headers(), body: undefined, ok: false };
    }
    const url = this.urlFor(operation, options);
    const headers = new Headers(options.headers);
    this.authenticate(operation, options.credential, url, headers);
    const body = this.encodeBody(options.body, headers);
    const exchange: Exchange = {
      operationId,
      label: options.label,
      method: operation.method.toUpperCase(),
      url: redact(url),
      violations: [],
    };
    this.exchanges.push(exchange);
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method: operation.method.toUpperCase(),
        headers,
        body,
        redirect: 'manual',
      });
    } catch (error) {
      exchange.violations.push(`no response: ${(error as Error).message}`);
      return { status: 0, headers: new Headers(), body: undefined, ok: false };
    }
    const text = await response.text();
    exchange.status = response.status;
    const outcome = this.checker.check(operation, { status: response.status, headers: response.headers, text });
    exchange.violations.push(...outcome.violations);
    if (options.expect && !options.expect.includes(response.status)) {
      const error = outcome.body as { code?: unknown; message?: unknown } | undefined;
      const said =
        typeof error?.code === 'string'
          ? ` ${error.code}${typeof error.message === 'string' ? `: ${error.message.slice(0, 300)}` : ''}`
          : '';
      exchange.violations.push(`expected ${options.expect.join(' or ')}, got ${response.status}${said}`);
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (options.expectMediaType && response.status < 300 && mediaType !== options.expectMediaType) {
      exchange.violations.push(`expected ${options.expectMediaType}, got ${mediaType || 'no Content-Type'}`);
    }
    return {
      status: response.status,
      headers: response.headers,
      body: outcome.body,
      ok: exchange.violations.length === 0,
    };
  }

  private urlFor(operation: OperationInfo, options: CallOptions): URL {
    const path = operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
      const value = options.path?.[name];
      if (value === undefined) throw new Error(`${operation.operationId}: no value for path parameter ${name}`);
      return encodeURIComponent(String(value));
    });
    const url = new URL(path.replace(/^\//, ''), this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      const declared = operation.parameters.find((parameter) => parameter.in === 'query' && parameter.name === name);
      // A parameter the served spec does not declare for this operation (e.g. `context` where it has none) is not sent.
      if (!declared) continue;
      for (const [key, text] of serializeQueryParameter(declared, value)) url.searchParams.append(key, text);
    }
    return url;
  }

  /** Sends the credential the way one of the operation's security schemes says. */
  private authenticate(operation: OperationInfo, credential: Credential, url: URL, headers: Headers): void {
    if (credential === 'none') return;
    const schemes = operation.security.map((name) => ({ name, scheme: this.spec.securitySchemes[name] }));
    const bearer = schemes.find(({ scheme }) => scheme?.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer');
    if (credential === 'bearer' || credential === 'invalidBearer') {
      const token = credential === 'bearer' ? this.credentials.bearerToken : 'not-a-valid-token';
      if (!bearer || !token) throw new Error(`${operation.operationId}: takes no bearer token, or none was given`);
      headers.set('Authorization', `Bearer ${token}`);
      return;
    }
    const wanted = credential === 'scoreTokenHeader' ? 'header' : 'query';
    const apiKey = schemes.find(
      ({ scheme }) =>
        scheme?.type === 'apiKey' && scheme.in === (credential === 'invalidScoreToken' ? scheme.in : wanted),
    );
    const token = credential === 'invalidScoreToken' ? 'not-a-valid-score-token' : this.credentials.scoreToken;
    if (!apiKey?.scheme?.name || !token)
      throw new Error(`${operation.operationId}: takes no score token in the ${wanted}, or none was given`);
    if (apiKey.scheme.in === 'header') headers.set(apiKey.scheme.name, token);
    else url.searchParams.set(apiKey.scheme.name, token);
  }

  private encodeBody(body: RequestBody | undefined, headers: Headers): string | FormData | undefined {
    if (!body) return undefined;
    if ('json' in body) {
      headers.set('Content-Type', 'application/json');
      return JSON.stringify(body.json);
    }
    if ('yaml' in body) {
      headers.set('Content-Type', 'application/yaml');
      return body.yaml;
    }
    const form = new FormData();
    form.append(
      body.multipart.field,
      new Blob([body.multipart.content], { type: body.multipart.contentType }),
      body.multipart.fileName,
    );
    return form;
  }
}
