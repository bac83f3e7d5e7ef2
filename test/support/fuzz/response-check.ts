import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { routes } from '../../../generated/routes.js';
import { createRouteMatcher } from '../../../src/http/route-matching.js';
import type { FuzzResponse } from './fuzz-client.js';
import type { FuzzRequest } from './fuzz-requests.js';

/**
 * What the fuzzer holds every answer to: never a 5xx; every error is a JSON body of the spec's
 * `Error` schema whose `status` is the HTTP status; and an answer to a request that addresses an
 * operation has a status the operation declares and a body of the declared schema (a 404
 * `ROUTE_NOT_FOUND` or 405 `METHOD_NOT_ALLOWED` is always allowed: a mangled path may address
 * nothing). Which operation a mangled path addresses is decided by the service's own route-matching
 * rule: `/api/scenario/1/records/` (an empty record id) is listDecisionRecords, not getDecisionRecord.
 */

const SPEC_ID = 'urn:scenario-scoring:fuzz';

interface SpecResponse {
  $ref?: string;
  content?: Record<string, { schema?: unknown; 'x-parsed-schema'?: unknown }>;
}

interface SpecDocument {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, SpecResponse> }>>;
  components: { schemas: Record<string, unknown>; responses?: Record<string, SpecResponse> };
}

export type FindingKind =
  | '5xx'
  | 'no-response'
  | 'non-json-error'
  | 'error-schema'
  | 'undeclared-status'
  | 'response-schema';

export interface Finding {
  kind: FindingKind;
  message: string;
  /** For a 5xx: the error the app logged for this request. */
  cause?: string;
}

export class ResponseChecker {
  private readonly ajv: Ajv2020;
  private readonly validateError: ValidateFunction;
  /** operationId → status → media type → validator (undefined: no body declared). */
  private readonly declared = new Map<string, Map<string, Map<string, ValidateFunction | undefined>>>();
  private readonly matchRoute = createRouteMatcher(routes);

  constructor(spec: SpecDocument) {
    this.ajv = new Ajv2020({ allErrors: false, strict: false });
    const addFormats =
      (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema({ $id: SPEC_ID, components: { schemas: spec.components.schemas } });
    this.validateError = this.ajv.compile({ $ref: `${SPEC_ID}#/components/schemas/Error` });
    for (const item of Object.values(spec.paths)) {
      for (const operation of Object.values(item)) {
        const byStatus = new Map<string, Map<string, ValidateFunction | undefined>>();
        for (const [status, declaredResponse] of Object.entries(operation.responses)) {
          const response = declaredResponse.$ref
            ? (spec.components.responses?.[declaredResponse.$ref.split('/').pop() as string] ?? {})
            : declaredResponse;
          const media = new Map<string, ValidateFunction | undefined>();
          // A text answer's parsed form (NDJSON lines, a YAML document) is held to `x-parsed-schema` when it names one.
          for (const [type, declaredMedia] of Object.entries(response.content ?? {})) {
            const schema = declaredMedia['x-parsed-schema'] ?? declaredMedia.schema;
            media.set(type, schema ? this.ajv.compile(anchored(schema)) : undefined);
          }
          byStatus.set(status, media);
        }
        this.declared.set(operation.operationId, byStatus);
      }
    }
  }

  check(request: FuzzRequest, response: FuzzResponse): Finding[] {
    if (response.error) return [{ kind: 'no-response', message: response.error }];
    const findings: Finding[] = [];
    const type = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (response.status >= 500) findings.push({ kind: '5xx', message: `${response.status} ${excerpt(response.body)}` });
    let errorCode: string | undefined;
    if (response.status >= 400) {
      const parsed = type === 'application/json' ? parseJson(response.body) : undefined;
      if (!parsed) {
        findings.push({
          kind: 'non-json-error',
          message: `${response.status} with ${type || 'no content type'}: ${excerpt(response.body)}`,
        });
        return findings;
      }
      const body = parsed.value as { status?: unknown; code?: string };
      errorCode = body.code;
      if (!this.validateError(body))
        findings.push({
          kind: 'error-schema',
          message: `${this.ajv.errorsText(this.validateError.errors)}: ${excerpt(response.body)}`,
        });
      else if (body.status !== response.status)
        findings.push({
          kind: 'error-schema',
          message: `body status ${String(body.status)} but HTTP status ${response.status}`,
        });
    }
    if (response.status >= 500 || !request.addressesOperation || addressesNothing(response.status, errorCode))
      return findings;
    // A path mangled into another operation's path (or none) is held to what it addresses.
    const operationId = this.matchRoute(request.method.toUpperCase(), request.path)?.operationId ?? request.operationId;
    const media = this.declared.get(operationId)?.get(String(response.status));
    if (!media) {
      findings.push({
        kind: 'undeclared-status',
        message: `${operationId} does not declare ${response.status}: ${excerpt(response.body)}`,
      });
      return findings;
    }
    if (response.status < 400) findings.push(...this.checkSuccess(operationId, response, type, media));
    return findings;
  }

  private checkSuccess(
    operationId: string,
    response: FuzzResponse,
    type: string,
    media: Map<string, ValidateFunction | undefined>,
  ): Finding[] {
    if (media.size === 0) {
      return response.body.length === 0
        ? []
        : [
            {
              kind: 'response-schema',
              message: `${operationId} ${response.status} declares no body but got ${excerpt(response.body)}`,
            },
          ];
    }
    if (!media.has(type))
      return [
        {
          kind: 'response-schema',
          message: `${operationId} ${response.status} answered ${type || 'no content type'}, not ${[...media.keys()].join(' or ')}`,
        },
      ];
    const validate = media.get(type);
    const values = parseBody(type, response.body);
    if (!values)
      return [
        {
          kind: 'response-schema',
          message: `${operationId} ${response.status}: the body is not ${type}: ${excerpt(response.body)}`,
        },
      ];
    const broken = validate ? values.findIndex((value) => !validate(value)) : -1;
    if (broken >= 0)
      return [
        {
          kind: 'response-schema',
          message: `${operationId} ${response.status}${values.length > 1 ? ` (line ${broken + 1})` : ''}: ${this.ajv.errorsText(validate?.errors)}`,
        },
      ];
    return [];
  }
}

function addressesNothing(status: number, code: string | undefined): boolean {
  return (status === 404 && code === 'ROUTE_NOT_FOUND') || (status === 405 && code === 'METHOD_NOT_ALLOWED');
}

function anchored(schema: unknown): object {
  return JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, `"${SPEC_ID}#/components/`)) as object;
}

/** The values a success body holds, by media type: one JSON or YAML document, one per NDJSON line, or the text itself. */
function parseBody(type: string, body: Buffer): unknown[] | undefined {
  if (type === 'application/yaml') return wrap(parseYamlText(body));
  if (type === 'application/x-ndjson') {
    const lines = body
      .toString('utf8')
      .split('\n')
      .filter((line) => line.trim() !== '');
    const parsed = lines.map((line) => parseJson(Buffer.from(line, 'utf8')));
    return parsed.every(Boolean) ? parsed.map((each) => (each as { value: unknown }).value) : undefined;
  }
  if (type.startsWith('text/')) return [body.toString('utf8')];
  return wrap(parseJson(body));
}

function wrap(parsed: { value: unknown } | undefined): unknown[] | undefined {
  return parsed ? [parsed.value] : undefined;
}

function parseJson(body: Buffer): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(body.toString('utf8')) as unknown };
  } catch {
    return undefined;
  }
}

function parseYamlText(body: Buffer): { value: unknown } | undefined {
  try {
    return { value: parseYaml(body.toString('utf8')) as unknown };
  } catch {
    return undefined;
  }
}

function excerpt(body: Buffer): string {
  const text = body.toString('utf8');
  return text.length > 400 ? `${text.slice(0, 400)}…` : text || '(empty body)';
}
