import { parse as parseYaml } from 'yaml';

/**
 * An OpenAPI 3.1 document indexed by operationId: the one a deployment serves at /openapi.json, or the pinned
 * contract a consumer generated its client from (`--spec`). The kit reads everything it sends and checks from
 * here (paths, parameter styles, response schemas), never from the service's repository.
 */

/** GET a JSON document; an unreachable host or a non-200 answer is an error naming the URL. */
async function fetchDocument(url: URL, fetchImpl: typeof fetch, hint: string): Promise<JsonObject> {
  let response: Response;
  try {
    response = await fetchImpl(url, { headers: { Accept: 'application/json' } });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
  }
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}; ${hint}`);
  try {
    return (await response.json()) as JsonObject;
  } catch (error) {
    throw new Error(`GET ${url} did not answer JSON: ${(error as Error).message}`);
  }
}

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch' | 'head' | 'options';
const METHODS: readonly HttpMethod[] = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export type JsonObject = Record<string, unknown>;

export interface ParameterInfo {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required: boolean;
  schema?: JsonObject;
  /** OpenAPI's serialisation: `form` (query default), `deepObject`, `simple` (path and header default), … */
  style: string;
  explode: boolean;
  /** Set when the parameter is declared with `content` (e.g. JSON text) instead of a schema. */
  contentType?: string;
}

export interface HeaderInfo {
  required: boolean;
  /** JSON pointer of the header's schema in the document, when it has one. */
  schemaPointer?: string;
  schema?: JsonObject;
}

export interface ResponseInfo {
  /** Media type → JSON pointer of its schema (undefined when the media type has none). */
  content: Record<string, string | undefined>;
  headers: Record<string, HeaderInfo>;
}

export interface OperationInfo {
  operationId: string;
  method: HttpMethod;
  path: string;
  parameters: ParameterInfo[];
  requestMediaTypes: string[];
  /** Status (`200`, `4XX`, `default`) → what may be answered. */
  responses: Record<string, ResponseInfo>;
  /** Security schemes, any one of which authenticates (empty: public). */
  security: string[];
}

export interface SecuritySchemeInfo {
  type: string;
  in?: string;
  name?: string;
  scheme?: string;
}

/** `~` and `/` escaped as JSON pointers require. */
function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

export class ServedSpec {
  readonly operations = new Map<string, OperationInfo>();
  readonly securitySchemes: Record<string, SecuritySchemeInfo>;

  constructor(readonly document: JsonObject) {
    const version = String(document.openapi ?? '');
    if (!version.startsWith('3.1.'))
      throw new Error(`the served document is OpenAPI "${version || '?'}"; this kit checks OpenAPI 3.1 documents`);
    const components = (document.components ?? {}) as JsonObject;
    this.securitySchemes = (components.securitySchemes ?? {}) as Record<string, SecuritySchemeInfo>;
    const globalSecurity = (document.security ?? []) as Array<Record<string, string[]>>;
    for (const [path, rawItem] of Object.entries((document.paths ?? {}) as Record<string, JsonObject>)) {
      const itemPointer = `/paths/${pointerToken(path)}`;
      const { value: item } = this.resolve(rawItem, itemPointer);
      for (const method of METHODS) {
        const operation = item[method] as JsonObject | undefined;
        if (!operation) continue;
        const operationPointer = `${itemPointer}/${method}`;
        const operationId = String(operation.operationId ?? `${method.toUpperCase()} ${path}`);
        const security = ((operation.security ?? globalSecurity) as Array<Record<string, string[]>>).flatMap(
          (requirement) => Object.keys(requirement),
        );
        this.operations.set(operationId, {
          operationId,
          method,
          path,
          parameters: this.parametersOf(item, operation, itemPointer, operationPointer),
          requestMediaTypes: Object.keys(
            (this.resolve(operation.requestBody ?? {}, `${operationPointer}/requestBody`).value.content ??
              {}) as JsonObject,
          ),
          responses: this.responsesOf(operation, operationPointer),
          security,
        });
      }
    }
  }

  /** Fetches `<baseUrl>/openapi.json`. */
  static async fetch(baseUrl: string, fetchImpl: typeof fetch = fetch): Promise<ServedSpec> {
    const url = new URL('/openapi.json', baseUrl);
    return new ServedSpec(await fetchDocument(url, fetchImpl, "is --base-url the service's root?"));
  }

  /** A pinned contract: a file (JSON, or YAML by its extension) or an http(s) URL. */
  static async load(
    source: string,
    fetchImpl: typeof fetch = fetch,
    readFile: (path: string) => Promise<string>,
  ): Promise<ServedSpec> {
    if (/^https?:\/\//.test(source))
      return new ServedSpec(
        await fetchDocument(new URL(source), fetchImpl, 'is --spec the URL of an OpenAPI document?'),
      );
    let text: string;
    try {
      text = await readFile(source);
    } catch (error) {
      throw new Error(`cannot read --spec ${source}: ${(error as Error).message}`);
    }
    try {
      return new ServedSpec((/\.ya?ml$/i.test(source) ? parseYaml(text) : JSON.parse(text)) as JsonObject);
    } catch (error) {
      throw new Error(`--spec ${source} is not an OpenAPI document: ${(error as Error).message}`);
    }
  }

  operation(operationId: string): OperationInfo | undefined {
    return this.operations.get(operationId);
  }

  /** The value at a JSON pointer of the document. */
  at(pointer: string): unknown {
    return pointer
      .split('/')
      .slice(1)
      .reduce<unknown>((node, token) => {
        const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
        return node && typeof node === 'object' ? (node as JsonObject)[key] : undefined;
      }, this.document);
  }

  /** Follows `$ref` chains inside the document; answers the object and where it lives. */
  resolve(value: unknown, pointer: string): { value: JsonObject; pointer: string } {
    let current = value as JsonObject;
    let where = pointer;
    for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops += 1) {
      const ref = current.$ref as string;
      if (!ref.startsWith('#'))
        throw new Error(`${where}: only references inside the document are supported, not ${ref}`);
      where = ref.slice(1);
      current = this.at(where) as JsonObject;
      if (current === undefined) throw new Error(`${pointer}: ${ref} points at nothing`);
    }
    return { value: current ?? {}, pointer: where };
  }

  /** A schema with its `$ref`s followed (for reading property names, not for validation). */
  schemaAt(pointer: string): JsonObject {
    return this.resolve(this.at(pointer), pointer).value;
  }

  private parametersOf(
    item: JsonObject,
    operation: JsonObject,
    itemPointer: string,
    operationPointer: string,
  ): ParameterInfo[] {
    const byKey = new Map<string, ParameterInfo>();
    const add = (list: unknown, pointer: string) => {
      ((list ?? []) as unknown[]).forEach((raw, index) => {
        const { value } = this.resolve(raw, `${pointer}/parameters/${index}`);
        const location = value.in as ParameterInfo['in'];
        const content = value.content as Record<string, { schema?: JsonObject }> | undefined;
        const contentType = content ? Object.keys(content)[0] : undefined;
        const style =
          (value.style as string | undefined) ?? (location === 'query' || location === 'cookie' ? 'form' : 'simple');
        byKey.set(`${location}:${String(value.name)}`, {
          name: String(value.name),
          in: location,
          required: value.required === true,
          schema:
            (value.schema as JsonObject | undefined) ?? (contentType ? content?.[contentType]?.schema : undefined),
          style,
          explode: (value.explode as boolean | undefined) ?? style === 'form',
          contentType,
        });
      });
    };
    // Operation parameters override path-item parameters of the same name and location.
    add(item.parameters, itemPointer);
    add(operation.parameters, operationPointer);
    return [...byKey.values()];
  }

  private responsesOf(operation: JsonObject, operationPointer: string): Record<string, ResponseInfo> {
    const responses: Record<string, ResponseInfo> = {};
    for (const [status, raw] of Object.entries((operation.responses ?? {}) as JsonObject)) {
      const { value, pointer } = this.resolve(raw, `${operationPointer}/responses/${pointerToken(status)}`);
      const content: Record<string, string | undefined> = {};
      for (const [mediaType, media] of Object.entries((value.content ?? {}) as Record<string, JsonObject>)) {
        // `x-parsed-schema`: what a text answer holds once parsed (each NDJSON line, the YAML document), where
        // `schema` types it as text for generated clients; the kit checks the parsed body against it.
        const key =
          media['x-parsed-schema'] !== undefined
            ? 'x-parsed-schema'
            : media.schema !== undefined
              ? 'schema'
              : undefined;
        content[mediaType.toLowerCase()] =
          key === undefined ? undefined : `${pointer}/content/${pointerToken(mediaType)}/${key}`;
      }
      const headers: Record<string, HeaderInfo> = {};
      for (const [name, rawHeader] of Object.entries((value.headers ?? {}) as JsonObject)) {
        // Content-Type is described by `content`; a header object of that name is ignored (OpenAPI 3.1, 4.8.17.2).
        if (name.toLowerCase() === 'content-type') continue;
        const header = this.resolve(rawHeader, `${pointer}/headers/${pointerToken(name)}`);
        const headerContent = header.value.content as Record<string, JsonObject> | undefined;
        const schemaPointer =
          header.value.schema !== undefined
            ? `${header.pointer}/schema`
            : headerContent
              ? `${header.pointer}/content/${pointerToken(Object.keys(headerContent)[0])}/schema`
              : undefined;
        headers[name.toLowerCase()] = {
          required: header.value.required === true,
          schemaPointer,
          schema: schemaPointer ? this.schemaAt(schemaPointer) : undefined,
        };
      }
      responses[status] = { content, headers };
    }
    return responses;
  }
}
