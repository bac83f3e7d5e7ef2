import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import { loadSpec } from '../../src/http/api-docs.js';

/** The parts of spec/openapi.json these checks read. */
interface Response {
  $ref?: string;
  headers?: Record<string, { $ref?: string }>;
  content?: Record<string, { schema?: unknown; examples?: Record<string, { value: Record<string, unknown> }> }>;
}
interface Operation {
  operationId: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<Record<string, unknown>>;
  responses: Record<string, Response>;
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
}
interface Spec {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Record<string, unknown>>;
    responses: Record<string, Response>;
    parameters: Record<string, Record<string, unknown>>;
  };
}

const spec = loadSpec() as unknown as Spec;
const operations = Object.values(spec.paths).flatMap((item) => Object.values(item));
const operation = (id: string) => operations.find((candidate) => candidate.operationId === id) as Operation;
const resolved = (response: Response): Response =>
  response.$ref ? spec.components.responses[response.$ref.split('/').pop() as string] : response;

/** Every schema object of the document, with where it is. */
function* schemasIn(node: unknown, where = '#'): Generator<[string, Record<string, unknown>]> {
  if (!node || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  if ('type' in record || 'properties' in record) yield [where, record];
  for (const [key, value] of Object.entries(record)) yield* schemasIn(value, `${where}/${key}`);
}

describe('the spec as client generators read it', () => {
  let generated: string;

  beforeAll(async () => {
    // openapi-typescript with its default options, as a consumer runs it on the served /openapi.json.
    generated = astToString(await openapiTS(JSON.parse(JSON.stringify(spec))));
  }, 60_000);

  it('gives every anyOf/oneOf branch that stands for values a keyword generators read (swagger-typescript-api drops a bare one)', () => {
    // A branch holding only a description means "any value" to a validator, but swagger-typescript-api 13 drops it
    // and types the union as its other branches (a decision table's literal outputs became type errors).
    // Branches that only add `required` to the parent's properties are not values of their own.
    const valueKeywords = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'enum', 'const'];
    const bare: string[] = [];
    const visit = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
          value.forEach((branch: Record<string, unknown>, index) => {
            const keys = Object.keys(branch);
            if (
              !keys.some((keyword) => valueKeywords.includes(keyword)) &&
              !keys.every((keyword) => keyword === 'required')
            )
              bare.push(`${where}/${key}/${index}`);
          });
        }
        visit(value, `${where}/${key}`);
      }
    };
    visit(spec, '#');
    expect(bare).toEqual([]);
  });

  it('types every object by its schema: no bare {type: object}, so nothing is generated as Record<string, never>', () => {
    const bare = [...schemasIn(spec)].filter(
      ([, schema]) =>
        [schema.type].flat().includes('object') &&
        !schema.properties &&
        schema.additionalProperties === undefined &&
        !schema.$ref &&
        !schema.anyOf &&
        !schema.oneOf &&
        !schema.allOf,
    );
    expect(bare.map(([where]) => where)).toEqual([]);
    // (openapi-typescript itself writes `webhooks` and `$defs` of a document without them that way)
    const emptyObjects = generated
      .split('\n')
      .filter((line) => line.includes('Record<string, never>') && !/^export type (webhooks|\$defs) = /.test(line));
    expect(emptyObjects).toEqual([]);
  });

  it("types the objects an import accepts by their real schemas (the graph and each node's settings)", () => {
    const imported = spec.components.schemas.ScenarioImport.properties as Record<string, Record<string, unknown>>;
    expect(JSON.stringify(imported.content)).toContain('#/components/schemas/ScenarioGraph');
    expect(imported.nodeProperties.additionalProperties).toEqual({ $ref: '#/components/schemas/NodePropertiesImport' });
    expect(JSON.stringify(spec.components.schemas.NodePropertiesImport)).toContain('#/components/schemas/NodeSettings');
    expect(generated).toMatch(/content: string \| components\["schemas"\]\["ScenarioGraph"\]/);
  });

  it('puts no default on schema properties, so generated request types keep such fields optional', () => {
    const withDefault = Object.entries(spec.components.schemas)
      .flatMap(([name, schema]) => [...schemasIn(schema, name)])
      .flatMap(([where, schema]) =>
        Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)
          .filter(([, property]) => 'default' in property)
          .map(([key]) => `${where}.${key}`),
      );
    expect(withDefault).toEqual([]);
    expect(generated).toMatch(/ExpressionDto: \{[^}]*language\?: string;/);
    expect(generated).toMatch(/ScenarioTestCaseDto: \{[^}]*ignore\?: boolean;/);
  });

  it('declares context as a deepObject query parameter with a schema (not content), typed as AccessControlContext', () => {
    const context = spec.components.parameters.Context;
    expect(context).toMatchObject({
      in: 'query',
      style: 'deepObject',
      explode: true,
      schema: { $ref: '#/components/schemas/AccessControlContext' },
      example: {},
    });
    expect(context).not.toHaveProperty('content');
    expect(generated).toMatch(/Context: components\["schemas"\]\["AccessControlContext"\]/);
  });

  it('declares file parts as binary, so generated clients can take a Blob', () => {
    for (const id of ['createInputVariablesFromCsv', 'loadCollectionData']) {
      const schema = operation(id).requestBody?.content['multipart/form-data'].schema as {
        properties: Record<string, unknown>;
      };
      expect([id, schema.properties.file]).toEqual([
        id,
        expect.objectContaining({ type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' }),
      ]);
    }
  });

  it('declares X-Request-Id on every response, X-SCE-RunId on the synchronous score and X-SCE-RequestId on the async submission', () => {
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect([op.operationId, status, Object.keys(resolved(response).headers ?? {})]).toEqual([
          op.operationId,
          status,
          expect.arrayContaining(['X-Request-Id']),
        ]);
      }
    }
    expect(Object.keys(operation('scoreScenario').responses['200'].headers ?? {})).toContain('X-SCE-RunId');
    expect(Object.keys(operation('scoreAsync').responses['202'].headers ?? {})).toContain('X-SCE-RequestId');
  });

  it('lists the Score-Token header before the key query parameter wherever both are allowed', () => {
    for (const op of operations) {
      const schemes = (op.security ?? []).map((requirement) => Object.keys(requirement)[0]);
      if (schemes.includes('scoreTokenQuery'))
        expect([op.operationId, schemes]).toEqual([op.operationId, ['scoreTokenHeader', 'scoreTokenQuery']]);
    }
    // and among the security schemes themselves, which Swagger UI's Authorize dialog lists in document order
    const declared = Object.keys(
      (spec as unknown as { components: { securitySchemes: Record<string, unknown> } }).components.securitySchemes,
    );
    expect(declared.indexOf('scoreTokenHeader')).toBeLessThan(declared.indexOf('scoreTokenQuery'));
  });

  it('gives every error response examples with its own status and a code of ErrorCode, each a valid Error body', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const addFormats =
      (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
    (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
    ajv.addSchema({ $id: 'urn:scenario-scoring:spec-examples', components: { schemas: spec.components.schemas } });
    const isError = ajv.getSchema('urn:scenario-scoring:spec-examples#/components/schemas/Error');
    const codes = spec.components.schemas.ErrorCode.enum as string[];
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const examples = Object.values(resolved(response).content?.['application/json']?.examples ?? {});
        expect([op.operationId, status, examples.length > 0]).toEqual([op.operationId, status, true]);
        for (const { value } of examples) {
          expect([
            op.operationId,
            status,
            value.status,
            codes.includes(value.code as string),
            isError?.(value),
          ]).toEqual([op.operationId, status, Number(status), true, true]);
        }
      }
    }
  });

  it("has the interface's defaults: skip_validation, overwrite_develop and overwrite_deploy are false", () => {
    const defaultOf = (id: string, name: string) =>
      (
        operation(id).parameters?.find((parameter) => parameter.name === name)?.schema as
          | { default?: unknown }
          | undefined
      )?.default;
    expect([
      defaultOf('deployScenario', 'skip_validation'),
      defaultOf('importScenarios', 'overwrite_develop'),
      defaultOf('importScenarios', 'overwrite_deploy'),
    ]).toEqual([false, false, false]);
  });

  it("answers copy with 200 and declares every status of the interface's error table on its operation", () => {
    const table: Record<string, string[]> = {
      openScenario: ['200', '401', '403', '404'],
      listScenarioVersions: ['200', '401', '404'],
      getScenarioInput: ['200'],
      getScenarioInputVariableNames: ['200', '401', '404'],
      copyScenario: ['200', '401', '403', '404', '409'],
      renameScenario: ['200', '401', '403', '404', '409'],
      debugScenario: ['200', '401', '403', '404', '422'],
      validateScenario: ['204', '401', '403', '404', '422'],
      deployScenario: ['204', '401', '403', '404', '422'],
      createInputVariablesFromCsv: ['200', '401', '403'],
      importScenarios: ['200', '401', '403'],
      exportScenarios: ['200', '401'],
    };
    for (const [id, statuses] of Object.entries(table)) {
      const declared = Object.keys(operation(id).responses);
      expect([id, declared]).toEqual([id, expect.arrayContaining(statuses)]);
      expect([id, declared.filter((status) => status.startsWith('2'))]).toEqual([
        id,
        statuses.filter((status) => status.startsWith('2')),
      ]);
    }
  });
});
