/** The parts of an OpenAPI 3.1 document the generator reads, and `$ref` resolution within it. */

export const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
export type Method = (typeof METHODS)[number];

export type Ref = { $ref: string };
export type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  contentMediaType?: string;
  properties?: Record<string, Schema>;
  enum?: string[];
};

export interface SpecParameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
}

export interface SpecHeader {
  required?: boolean;
}

/**
 * A media type of a response. `x-parsed-schema`: what a text answer holds once parsed (each line of NDJSON; the
 * document of YAML), while `schema` types the answer as text for generated clients; handlers give the parsed form.
 */
export interface SpecMediaType {
  schema?: Schema;
  'x-parsed-schema'?: Schema & { items?: Schema };
}

export interface SpecResponse {
  headers?: Record<string, SpecHeader | Ref>;
  content?: Record<string, SpecMediaType>;
}

export interface SpecOperation {
  operationId: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<SpecParameter | Ref>;
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> } | Ref;
  responses: Record<string, SpecResponse | Ref>;
}

export interface Spec {
  paths: Record<string, Partial<Record<Method, SpecOperation>>>;
  components: { schemas: Record<string, Schema> } & Record<string, Record<string, unknown>>;
}

/** Every operation with its path and method, in the spec's order. */
export function operationsOf(spec: Spec): Array<{ path: string; method: Method; operation: SpecOperation }> {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item[method];
      return operation ? [{ path, method, operation }] : [];
    }),
  );
}

/** `value` itself, or what its local `$ref` (`#/components/…`) points at. */
export function resolve<T>(spec: Spec, value: T | Ref): T {
  if (value && typeof value === 'object' && '$ref' in value && typeof value.$ref === 'string') {
    const target = value.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], spec);
    if (target === undefined) throw new Error(`unresolved $ref ${value.$ref}`);
    return resolve(spec, target as T | Ref);
  }
  return value as T;
}
