import { ResponseChecker } from '../../packages/contract-kit/src/response-checker.js';
import { ServedSpec } from '../../packages/contract-kit/src/served-spec.js';

/** A small OpenAPI 3.1 document with what the checker must understand. */
const document = {
  openapi: '3.1.0',
  info: { title: 'checker', version: '1' },
  paths: {
    '/things/{id}': {
      get: {
        operationId: 'getThing',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int32' } }],
        responses: {
          200: {
            description: 'A thing.',
            headers: {
              'X-Run': { required: true, schema: { type: 'integer', minimum: 1 } },
              'Content-Type': { required: true, schema: { type: 'string', const: 'never checked' } },
            },
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/Thing' } },
              'application/yaml': { schema: { $ref: '#/components/schemas/Thing' } },
            },
          },
          '4XX': { $ref: '#/components/responses/Problem' },
        },
      },
      delete: {
        operationId: 'deleteThing',
        responses: { 204: { description: 'Gone.' }, default: { $ref: '#/components/responses/Problem' } },
      },
    },
    '/typed-as-text': {
      get: {
        operationId: 'textThings',
        responses: {
          200: {
            description: 'Typed as text for generated clients; x-parsed-schema says what the text holds.',
            content: {
              'application/x-ndjson': {
                schema: { type: 'string' },
                'x-parsed-schema': { $ref: '#/components/schemas/Graph' },
              },
              'application/yaml': {
                schema: { type: 'string' },
                'x-parsed-schema': { type: 'array', items: { $ref: '#/components/schemas/Graph' } },
              },
            },
          },
        },
      },
    },
    '/things': {
      get: {
        operationId: 'streamThings',
        responses: {
          200: {
            description: 'One thing per line, or CSV.',
            content: {
              'application/x-ndjson': { schema: { $ref: '#/components/schemas/Graph' } },
              'text/csv': { schema: { type: 'string', pattern: '^nodes\\n' } },
            },
          },
        },
      },
    },
  },
  components: {
    responses: {
      Problem: {
        description: 'A problem.',
        content: {
          'application/json': {
            schema: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } },
          },
        },
      },
    },
    schemas: {
      Thing: {
        type: 'object',
        required: ['id', 'graph'],
        discriminator: { propertyName: 'kind' },
        example: { id: 1 },
        properties: {
          id: { type: 'integer', format: 'int32' },
          note: { type: ['string', 'null'] },
          secret: { type: 'string', writeOnly: true },
          graph: {
            type: 'string',
            contentMediaType: 'application/json',
            contentSchema: { $ref: '#/components/schemas/Graph' },
          },
        },
        unevaluatedProperties: false,
      },
      Graph: { type: 'object', required: ['nodes'], properties: { nodes: { type: 'array' } } },
    },
  },
};

const spec = new ServedSpec(document);
const checker = new ResponseChecker(spec);
const getThing = spec.operation('getThing')!;
const deleteThing = spec.operation('deleteThing')!;

function json(status: number, body: unknown, headers: Record<string, string> = { 'X-Run': '7' }) {
  return {
    status,
    headers: new Headers({ 'Content-Type': 'application/json; charset=utf-8', ...headers }),
    text: JSON.stringify(body),
  };
}

const good = { id: 1, note: null, graph: '{"nodes":[]}' };

describe("the contract kit's response checker", () => {
  it('passes a response that keeps every promise', () => {
    expect(checker.check(getThing, json(200, good)).violations).toEqual([]);
  });

  it('reports a status the operation does not declare', () => {
    expect(checker.check(deleteThing, { status: 204, headers: new Headers(), text: '' }).violations).toEqual([]);
    expect(checker.check(getThing, json(500, { code: 'X' })).violations).toEqual([
      'status 500 is not declared (declared: 200, 4XX)',
    ]);
  });

  it('matches a status to its declared range and to default', () => {
    expect(checker.check(getThing, json(404, { code: 'NOT_FOUND' })).violations).toEqual([]);
    expect(checker.check(getThing, json(404, { nope: 1 })).violations).toEqual([
      expect.stringMatching(/^body \(application\/json, response 4XX\): \(root\) must have required property 'code'/),
    ]);
    expect(checker.check(deleteThing, json(503, { code: 'DOWN' })).violations).toEqual([]);
  });

  it('reports a body that breaks the schema, naming the field', () => {
    expect(checker.check(getThing, json(200, { ...good, id: 'one' })).violations).toEqual([
      expect.stringContaining('/id must be integer'),
    ]);
    expect(checker.check(getThing, json(200, { ...good, id: 2 ** 31 })).violations).toEqual([
      expect.stringContaining('/id must match format "int32"'),
    ]);
    expect(checker.check(getThing, json(200, { ...good, extra: true })).violations).toEqual([
      expect.stringContaining('must NOT have unevaluated properties (extra)'),
    ]);
  });

  it('reports a writeOnly property in a response', () => {
    expect(checker.check(getThing, json(200, { ...good, secret: 's3cret' })).violations).toEqual([
      expect.stringContaining('/secret is writeOnly: a response must not carry it'),
    ]);
  });

  it('checks JSON text against its contentSchema', () => {
    expect(checker.check(getThing, json(200, { ...good, graph: '{"edges":[]}' })).violations).toEqual([
      expect.stringContaining("/graph (in the JSON text) must have required property 'nodes'"),
    ]);
    expect(checker.check(getThing, json(200, { ...good, graph: 'not json' })).violations).toEqual([
      expect.stringContaining('/graph is not JSON text'),
    ]);
  });

  it('reports a missing required header and a header of the wrong type, and ignores Content-Type header objects', () => {
    expect(checker.check(getThing, json(200, good, {})).violations).toEqual([
      'header x-run is required for 200 but missing',
    ]);
    expect(checker.check(getThing, json(200, good, { 'X-Run': 'zero' })).violations).toEqual([
      expect.stringMatching(/^header x-run: \(root\) must be integer/),
    ]);
    expect(checker.check(getThing, json(200, good, { 'X-Run': '0' })).violations).toEqual([
      expect.stringMatching(/^header x-run: \(root\) must be >= 1/),
    ]);
  });

  it('parses and checks a YAML body, and reports an undeclared media type', () => {
    const yaml = (text: string, type = 'application/yaml') => ({
      status: 200,
      headers: new Headers({ 'Content-Type': type, 'X-Run': '1' }),
      text,
    });
    expect(checker.check(getThing, yaml('id: 1\ngraph: \'{"nodes":[]}\'\n')).violations).toEqual([]);
    expect(checker.check(getThing, yaml('id: x\ngraph: \'{"nodes":[]}\'\n')).violations).toEqual([
      expect.stringContaining('/id must be integer'),
    ]);
    expect(checker.check(getThing, yaml('<thing/>', 'application/xml')).violations).toEqual([
      'Content-Type application/xml is not declared for 200 (declared: application/json, application/yaml)',
    ]);
  });

  it('reports a body where none is declared and no body where one is', () => {
    expect(
      checker.check(deleteThing, { status: 204, headers: new Headers({ 'Content-Type': 'text/plain' }), text: 'gone' })
        .violations,
    ).toEqual(['204 declares no body but 4 bytes of text/plain were sent']);
    expect(
      checker.check(getThing, { status: 200, headers: new Headers({ 'X-Run': '1' }), text: '' }).violations,
    ).toEqual(['200 declares a body (application/json, application/yaml) but none was sent']);
  });

  it('checks an answer typed as text against what it holds once parsed (x-parsed-schema)', () => {
    const textThings = spec.operation('textThings')!;
    const body = (type: string, text: string) => ({
      status: 200,
      headers: new Headers({ 'Content-Type': type }),
      text,
    });
    expect(checker.check(textThings, body('application/x-ndjson', '{"nodes":[]}\n{"nodes":[1]}\n')).violations).toEqual(
      [],
    );
    expect(checker.check(textThings, body('application/x-ndjson', '{"edges":[]}\n')).violations).toEqual([
      expect.stringMatching(/line 1: \(root\) must have required property 'nodes'/),
    ]);
    expect(checker.check(textThings, body('application/yaml', '- nodes: []\n')).violations).toEqual([]);
    expect(checker.check(textThings, body('application/yaml', '- edges: []\n')).violations).toEqual([
      expect.stringMatching(/must have required property 'nodes'/),
    ]);
  });

  it('checks each line of an NDJSON body, and a text body as a string', () => {
    const streamThings = spec.operation('streamThings')!;
    const body = (type: string, text: string) => ({
      status: 200,
      headers: new Headers({ 'Content-Type': type }),
      text,
    });
    expect(
      checker.check(streamThings, body('application/x-ndjson', '{"nodes":[]}\n{"nodes":[1]}\n')).violations,
    ).toEqual([]);
    expect(
      checker.check(streamThings, body('application/x-ndjson', '{"nodes":[]}\n{"edges":[]}\n')).violations,
    ).toEqual([
      expect.stringMatching(
        /^body \(application\/x-ndjson, response 200\), line 2: \(root\) must have required property 'nodes'/,
      ),
    ]);
    expect(checker.check(streamThings, body('application/x-ndjson', '{"nodes":[]}\nnot json\n')).violations).toEqual([
      expect.stringMatching(/^the body is not valid application\/x-ndjson/),
    ]);
    expect(checker.check(streamThings, body('text/csv', 'nodes\n1\n')).violations).toEqual([]);
    expect(checker.check(streamThings, body('text/csv', 'edges\n1\n')).violations).toEqual([
      expect.stringContaining('must match pattern'),
    ]);
  });

  it('refuses a document that is not OpenAPI 3.1', () => {
    expect(() => new ServedSpec({ openapi: '3.0.3', paths: {} })).toThrow(
      /OpenAPI "3.0.3"; this kit checks OpenAPI 3.1 documents/,
    );
  });
});
