import { Ajv2020, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { DataValidateFunction, SchemaValidateFunction } from 'ajv/dist/types/index.js';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import type { HeaderInfo, OperationInfo, ResponseInfo, ServedSpec } from './served-spec.js';

/**
 * Checks one HTTP response against what the served spec declares for its operation: the status (exact,
 * `4XX` range or `default`), the media type, the body against its schema (JSON, YAML, each line of
 * NDJSON, text as a string), and the declared headers.
 *
 * OpenAPI 3.1 schemas are JSON Schema 2020-12 (Ajv2020) plus what OpenAPI adds or means differently:
 * - the vocabulary keywords `discriminator`, `xml`, `externalDocs` and `example` are annotations;
 * - the formats `int32`, `int64`, `float`, `double`, `byte`, `binary` and `password`;
 * - `writeOnly` properties must not appear in a response;
 * - a string with `contentMediaType: application/json` and a `contentSchema` is JSON text whose parsed
 *   value must match that schema (JSON Schema leaves it an annotation; the kit checks it);
 * - references resolve inside the whole document (components, paths), which is registered as one schema.
 */

const DOCUMENT_ID = 'urn:contract-kit:served-openapi';
const OAS_DIALECTS = /^https:\/\/spec\.openapis\.org\/oas\/3\.1\/(dialect|schema)\//;

export interface CheckedResponse {
  status: number;
  headers: Headers;
  /** The raw body ('' when none). */
  text: string;
}

export interface CheckOutcome {
  /** The body parsed by its media type (JSON or YAML), or the text. */
  body: unknown;
  violations: string[];
}

const JSON_MEDIA = /^application\/(?:[\w.+-]*\+)?json$/;
const YAML_MEDIA = /^(?:application|text)\/(?:x-)?yaml$/;
/** Newline-delimited JSON: the schema describes one line. */
const NDJSON_MEDIA = /^application\/(?:x-ndjson|ndjson|jsonl|x-jsonlines)$/;

function loadAddFormats(): (ajv: Ajv2020) => void {
  const module = addFormatsModule as unknown as { default?: unknown };
  return (module.default ?? addFormatsModule) as (ajv: Ajv2020) => void;
}

/** Every `"$ref": "#…"` made absolute, so a schema compiled on its own resolves into the document. */
function anchored(schema: unknown): AnySchemaObject {
  return JSON.parse(JSON.stringify(schema ?? {}).replace(/"\$ref":"#/g, `"$ref":"${DOCUMENT_ID}#`)) as AnySchemaObject;
}

/** The document without `$schema` values naming OpenAPI's dialect, which Ajv does not know as a meta-schema. */
function withoutOasDialect(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutOasDialect);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, inner]) => !(key === '$schema' && typeof inner === 'string' && OAS_DIALECTS.test(inner)))
      .map(([key, inner]) => [key, withoutOasDialect(inner)]),
  );
}

function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false, verbose: false });
  loadAddFormats()(ajv);
  ajv.addVocabulary(['discriminator', 'xml', 'externalDocs', 'example']);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (value: number) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31,
  });
  ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isInteger(value) });
  ajv.addFormat('float', { type: 'number', validate: () => true });
  ajv.addFormat('double', { type: 'number', validate: () => true });
  ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
  ajv.addFormat('binary', true);
  ajv.addFormat('password', true);

  ajv.removeKeyword('writeOnly');
  const writeOnly: SchemaValidateFunction = (isWriteOnly: boolean) => {
    if (!isWriteOnly) return true;
    writeOnly.errors = [
      { keyword: 'writeOnly', message: 'is writeOnly: a response must not carry it', params: {} } as ErrorObject,
    ];
    return false;
  };
  ajv.addKeyword({ keyword: 'writeOnly', schemaType: 'boolean', validate: writeOnly, errors: true });

  ajv.removeKeyword('contentSchema');
  ajv.addKeyword({
    keyword: 'contentSchema',
    schemaType: ['object', 'boolean'],
    errors: true,
    compile(contentSchema: unknown, parentSchema: AnySchemaObject) {
      const mediaType = String(parentSchema.contentMediaType ?? '')
        .toLowerCase()
        .split(';')[0]
        .trim();
      if (!JSON_MEDIA.test(mediaType)) return () => true;
      let validateParsed: ValidateFunction | undefined;
      const check: DataValidateFunction = (data: unknown) => {
        if (typeof data !== 'string') return true;
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch {
          check.errors = [
            {
              keyword: 'contentSchema',
              message: `is not JSON text (contentMediaType ${mediaType})`,
              params: {},
            } as ErrorObject,
          ];
          return false;
        }
        // Compiled on first use: compiling inside this keyword's own compilation would recurse.
        validateParsed ??= ajv.compile(anchored(contentSchema));
        if (validateParsed(parsed)) return true;
        // Without instancePath, Ajv fills in where the string is; the message says where inside its JSON text.
        check.errors = (validateParsed.errors ?? []).map((error) => ({
          keyword: 'contentSchema',
          params: error.params,
          message: `(in the JSON text${error.instancePath ? ` at ${error.instancePath}` : ''}) ${error.message ?? 'is invalid'}`,
        }));
        return false;
      };
      return check;
    },
  });
  return ajv;
}

function describe(errors: ErrorObject[] | null | undefined): string {
  return (
    (errors ?? [])
      .slice(0, 8)
      .map((error) => {
        const where = error.instancePath || '(root)';
        const extra =
          error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties'
            ? ` (${String((error.params as { additionalProperty?: string; unevaluatedProperty?: string }).additionalProperty ?? (error.params as { unevaluatedProperty?: string }).unevaluatedProperty)})`
            : error.keyword === 'enum'
              ? ` (${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)})`
              : '';
        return `${where} ${error.message ?? 'is invalid'}${extra}`;
      })
      .join('; ') + ((errors?.length ?? 0) > 8 ? `; … ${(errors?.length ?? 0) - 8} more` : '')
  );
}

/** The declared response for a status: exact, then its range (`4XX`), then `default`. */
function declaredResponse(
  operation: OperationInfo,
  status: number,
): { key: string; response: ResponseInfo } | undefined {
  const candidates = [String(status), `${Math.floor(status / 100)}XX`, `${Math.floor(status / 100)}xx`, 'default'];
  for (const key of candidates) {
    const response = operation.responses[key];
    if (response) return { key, response };
  }
  return undefined;
}

/** The declared media type matching a Content-Type: exact, then `type/*`, then `*\/*`. */
function matchMediaType(declared: string[], contentType: string): string | undefined {
  const [type] = contentType.split('/');
  return (
    declared.find((candidate) => candidate === contentType) ??
    declared.find((candidate) => candidate === `${type}/*`) ??
    declared.find((candidate) => candidate === '*/*')
  );
}

/** A header value as the type its schema names (headers travel as text). */
function headerValue(raw: string, header: HeaderInfo): unknown {
  const type = header.schema?.type;
  const types = Array.isArray(type) ? type : [type];
  if ((types.includes('integer') || types.includes('number')) && raw.trim() !== '' && !Number.isNaN(Number(raw)))
    return Number(raw);
  if (types.includes('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

export class ResponseChecker {
  private readonly ajv = createAjv();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(spec: ServedSpec) {
    this.ajv.addSchema({ ...(withoutOasDialect(spec.document) as object), $id: DOCUMENT_ID } as AnySchemaObject);
  }

  /** Validates `value` against the schema at `pointer` of the served document; answers what is wrong, or undefined. */
  validate(pointer: string, value: unknown): string | undefined {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate(value) ? undefined : describe(validate.errors);
  }

  check(operation: OperationInfo, response: CheckedResponse): CheckOutcome {
    const violations: string[] = [];
    const contentType = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const body = parseBody(contentType, response.text, violations);
    const declared = declaredResponse(operation, response.status);
    if (!declared) {
      violations.push(
        `status ${response.status} is not declared (declared: ${Object.keys(operation.responses).join(', ')})`,
      );
      return { body, violations };
    }

    for (const [name, header] of Object.entries(declared.response.headers)) {
      const raw = response.headers.get(name);
      if (raw === null) {
        if (header.required) violations.push(`header ${name} is required for ${declared.key} but missing`);
        continue;
      }
      if (header.schemaPointer) {
        const problem = this.validate(header.schemaPointer, headerValue(raw, header));
        if (problem) violations.push(`header ${name}: ${problem}`);
      }
    }

    const mediaTypes = Object.keys(declared.response.content);
    if (response.text.length === 0) {
      if (mediaTypes.length > 0 && response.status !== 204 && operation.method !== 'head') {
        violations.push(`${declared.key} declares a body (${mediaTypes.join(', ')}) but none was sent`);
      }
      return { body, violations };
    }
    if (mediaTypes.length === 0) {
      violations.push(
        `${declared.key} declares no body but ${response.text.length} bytes of ${contentType || 'unknown type'} were sent`,
      );
      return { body, violations };
    }
    const mediaType = matchMediaType(mediaTypes, contentType);
    if (!mediaType) {
      violations.push(
        `Content-Type ${contentType || '(none)'} is not declared for ${declared.key} (declared: ${mediaTypes.join(', ')})`,
      );
      return { body, violations };
    }
    const schemaPointer = declared.response.content[mediaType];
    if (!schemaPointer) return { body, violations };
    if (NDJSON_MEDIA.test(contentType) && Array.isArray(body)) {
      body.forEach((line: unknown, index) => {
        const problem = this.validate(schemaPointer, line);
        if (problem) violations.push(`body (${mediaType}, response ${declared.key}), line ${index + 1}: ${problem}`);
      });
    } else if (JSON_MEDIA.test(contentType) || YAML_MEDIA.test(contentType) || contentType.startsWith('text/')) {
      // Text bodies are checked as the string they are (a schema such as `{type: string, maxLength}`).
      const problem = this.validate(schemaPointer, body);
      if (problem) violations.push(`body (${mediaType}, response ${declared.key}): ${problem}`);
    }
    return { body, violations };
  }
}

function parseBody(contentType: string, text: string, violations: string[]): unknown {
  if (text.length === 0) return undefined;
  try {
    if (JSON_MEDIA.test(contentType)) return JSON.parse(text) as unknown;
    if (YAML_MEDIA.test(contentType)) return parseYaml(text) as unknown;
    if (NDJSON_MEDIA.test(contentType))
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as unknown);
  } catch (error) {
    violations.push(`the body is not valid ${contentType}: ${(error as Error).message}`);
  }
  return text;
}
