import fc from 'fast-check';
import { stringify as toYaml } from 'yaml';
import { routes, type RouteDefinition } from '../../../generated/routes.js';
import {
  brokenJsonTexts,
  brokenYamlTexts,
  caseVariant,
  deepJsonBodies,
  jsonNestings,
  deepYamlBodies,
  describeBody,
  headerSafe,
  hostileNumberTexts,
  encodeWire,
  hostileSegments,
  hostileStrings,
  hugeJsonBodies,
  wrongTypeValues,
  type FuzzBody,
} from './hostile-values.js';
import { jsonTextAroundANode, mutatedJson } from './json-mutation.js';
import { multipartUploads } from './multipart-bodies.js';
import { SchemaArbitraries } from './schema-arbitrary.js';
import type { TestUser } from '../test-app.js';

/**
 * The fuzzer's requests, derived from spec/openapi.json: for each operation, its path, query and
 * header parameters and its request bodies come from arbitraries built from the operation's
 * schemas (and from the data the fixtures arranged, so requests reach past "not found"), and each
 * part is sometimes replaced by a malformed variant: broken JSON and YAML, broken multipart, wrong
 * types, huge and deep values, hostile strings and path segments, wrong and missing credentials
 * (bearer JWTs and both score-token schemes). Used by test/http/fuzz.test.ts (bounded time, in the
 * default suite) and by scripts/fuzz.ts (`npm run fuzz -- --requests 10000`).
 */

export interface FuzzRequest {
  /** The operation this request was derived from. */
  operationId: string;
  /** What was made malformed (`auth:expired-jwt`, `path:case`, `body:broken-json`, …); empty for a well-formed request. */
  variants: string[];
  method: string;
  /** The path as sent (percent-encoded where needed). */
  path: string;
  /** The query string as sent, without `?`. */
  query: string;
  headers: Record<string, string>;
  body?: FuzzBody;
  /** False when the method was changed: the answer is then held to the Error schema only, not to the operation's responses. */
  addressesOperation: boolean;
}

/** A user the fixtures made with TestApp.newUser: its identity and credentials, which requests carry. */
export type FuzzUser = Omit<TestUser, 'context'>;

/** The users the fixtures make: the scenarios' owner, an admin, and a stranger who owns none of them. */
export const FUZZ_ROLES = ['owner', 'admin', 'stranger'] as const;
export type FuzzRole = (typeof FUZZ_ROLES)[number];

/** The data the fixtures arranged (a user per FuzzRole first), so that generated requests can name things that exist. */
export interface FuzzFixtures extends Record<FuzzRole, FuzzUser> {
  /** Bearer tokens that must not authenticate anyone (by name: `expired`, `wrong-secret`, …). */
  refusedAccessTokens: Record<string, string>;
  /** Bearer tokens that do not follow the house rules but are not forged (`no-exp`, a never-seen user). */
  oddAccessTokens: Record<string, string>;
  /** Scenario ids of the owner, then of other users. */
  scenarioIds: string[];
  strangerScenarioIds: string[];
  scenarioNames: string[];
  testCaseIds: string[];
  collections: string[];
  collectionColumns: string[];
  batchTaskIds: string[];
  requestIds: string[];
  /** Replays the owner started (getReplay, deploy's `replay`). */
  replayIds: string[];
  /** Valid bodies by operation id (score inputs, batch requests, import documents, test cases; CSV texts for uploads). */
  bodies: Partial<Record<string, unknown[]>>;
}

interface SpecParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Record<string, unknown>;
  content?: Record<string, { schema: Record<string, unknown> }>;
  style?: string;
}

interface SpecOperation {
  operationId: string;
  parameters?: Array<SpecParameter | { $ref: string }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, unknown>;
}

interface SpecDocument {
  paths: Record<string, Record<string, SpecOperation>>;
}

/** A generated piece of a request, with the label of what was made malformed (if anything). */
interface Part<T> {
  value: T;
  variant?: string;
}

const good = <T>(arbitrary: fc.Arbitrary<T>, weight: number): fc.WeightedArbitrary<Part<T>> => ({
  weight,
  arbitrary: arbitrary.map((value) => ({ value })),
});
const bad = <T>(variant: string, arbitrary: fc.Arbitrary<T>, weight = 1): fc.WeightedArbitrary<Part<T>> => ({
  weight,
  arbitrary: arbitrary.map((value) => ({ value, variant })),
});

interface Credential {
  user?: FuzzUser;
  headers: Record<string, string>;
  query: Array<[string, string]>;
}

/** Outbound targets the schemas may name (callbacks, HTTP nodes): never a real host on the internet. */
const SAFE_URLS = fc.constantFrom(
  'http://127.0.0.1:9/callback',
  'http://localhost:9/',
  'http://[::1]:9/',
  'http://[::127.0.0.1]:9/',
  'http://10.0.0.1/x',
  'http://169.254.169.254/latest/meta-data/',
  'https://fuzz.invalid/callback',
  'http://fuzz.invalid/{{a}}',
  'ftp://fuzz.invalid/',
  'http://user:pass@fuzz.invalid/',
  'http://0x7f000001/',
  'http://2130706433/',
);

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

export class FuzzRequestGenerator {
  private readonly schemas: SchemaArbitraries;
  private readonly operations: Array<{ route: RouteDefinition; operation: SpecOperation; parameters: SpecParameter[] }>;

  constructor(
    spec: SpecDocument,
    private readonly fixtures: FuzzFixtures,
  ) {
    this.schemas = new SchemaArbitraries({
      root: spec,
      maxDepth: 3,
      formats: { uri: SAFE_URLS },
      properties: { url: SAFE_URLS },
    });
    this.operations = routes.map((route) => {
      const operation = spec.paths[route.path][route.method];
      const parameters = (operation.parameters ?? []).map((parameter) =>
        '$ref' in parameter ? (this.schemas.resolve(parameter.$ref) as unknown as SpecParameter) : parameter,
      );
      return { route, operation, parameters };
    });
  }

  /** Requests to every operation of the spec, in equal shares. */
  requests(): fc.Arbitrary<FuzzRequest> {
    return fc.oneof(...this.operations.map(({ route }) => this.requestsTo(route.operationId)));
  }

  /** Requests derived from one operation. */
  requestsTo(operationId: string): fc.Arbitrary<FuzzRequest> {
    const entry = this.operations.find(({ route }) => route.operationId === operationId);
    if (!entry) throw new Error(`no operation ${operationId} in the spec`);
    const { route, operation, parameters } = entry;
    return this.credential(route).chain((credential) =>
      fc
        .record({
          path: this.path(
            route,
            parameters.filter((parameter) => parameter.in === 'path'),
          ),
          query: this.query(
            parameters.filter((parameter) => parameter.in === 'query'),
            credential,
          ),
          headers: this.headers(parameters.filter((parameter) => parameter.in === 'header')),
          body: this.body(operation),
          method: fc.oneof(
            good(fc.constant(route.method.toUpperCase()), 60),
            bad(
              'method:other',
              fc.constantFrom(...METHODS).filter((method) => method !== route.method.toUpperCase()),
            ),
          ),
        })
        .map(({ path, query, headers, body, method }): FuzzRequest => {
          const variants = [
            credential.variant,
            path.variant,
            ...query.map((item) => item.variant),
            ...headers.map((item) => item.variant),
            body.variant,
            method.variant,
          ].filter((variant): variant is string => Boolean(variant));
          const allHeaders: Record<string, string> = { ...credential.value.headers };
          for (const { value } of headers) Object.assign(allHeaders, value);
          if (body.value?.contentType !== undefined) allHeaders['content-type'] = body.value.contentType;
          const queryPairs = [...credential.value.query, ...query.flatMap((item) => item.value)];
          return {
            operationId,
            variants,
            method: method.value,
            path: path.value,
            query: queryPairs.map(([name, value]) => `${name}=${value}`).join('&'),
            headers: allHeaders,
            body: body.value?.body,
            addressesOperation: !method.variant,
          };
        }),
    );
  }

  // ── credentials ──

  private credential(route: RouteDefinition): fc.Arbitrary<Part<Credential>> {
    const fx = this.fixtures;
    const bearerOf = (token: string, user?: FuzzUser): Credential => ({
      user,
      headers: { authorization: `Bearer ${token}` },
      query: [],
    });
    const headerToken = (token: string, user?: FuzzUser): Credential => ({
      user,
      headers: { 'score-token': headerSafe(token) },
      query: [],
    });
    const queryToken = (token: string, user?: FuzzUser): Credential => ({
      user,
      headers: {},
      query: [['key', encodeWire(token)]],
    });
    const none: Credential = { headers: {}, query: [] };
    if (route.security.includes('bearerAuth')) {
      return fc.oneof(
        good(fc.constant(bearerOf(fx.owner.accessToken, fx.owner)), 24),
        good(fc.constant(bearerOf(fx.admin.accessToken, fx.admin)), 3),
        good(fc.constant(bearerOf(fx.stranger.accessToken, fx.stranger)), 3),
        bad('auth:missing', fc.constant(none)),
        bad(
          'auth:refused-jwt',
          fc.constantFrom(...Object.entries(fx.refusedAccessTokens)).map(([, token]) => bearerOf(token)),
        ),
        bad(
          'auth:odd-jwt',
          fc.constantFrom(...Object.values(fx.oddAccessTokens)).map((token) => bearerOf(token, fx.owner)),
        ),
        bad(
          'auth:malformed',
          fc
            .constantFrom(
              { authorization: 'Bearer' },
              { authorization: 'Bearer ' },
              { authorization: 'Bearer a.b.c' },
              { authorization: 'Bearer ....' },
              { authorization: `bearer ${fx.owner.accessToken}` },
              { authorization: `Bearer  ${fx.owner.accessToken}` },
              { authorization: `Bearer ${fx.owner.accessToken} extra` },
              { authorization: `Basic ${Buffer.from(`${fx.owner.username}:x`).toString('base64')}` },
              { authorization: `Bearer ${fx.owner.scoreToken}` },
              { authorization: fx.owner.accessToken },
              { authorization: `Bearer ${'x'.repeat(8000)}` },
              { authorization: `Bearer ${fx.owner.accessToken.split('.').slice(0, 2).join('.')}.` },
            )
            .map((headers) => ({ headers, query: [] }) as Credential),
        ),
        bad(
          'auth:score-token-instead',
          fc.constantFrom(headerToken(fx.owner.scoreToken), queryToken(fx.owner.scoreToken)),
        ),
        bad(
          'auth:jwt-in-query',
          fc.constant<Credential>({
            headers: {},
            query: [
              ['access_token', fx.owner.accessToken],
              ['key', fx.owner.accessToken],
            ],
          }),
        ),
      );
    }
    const tokens = fc.constantFrom(
      fx.owner.scoreToken,
      fx.owner.scoreToken,
      fx.owner.scoreToken,
      fx.owner.scoreToken,
      fx.admin.scoreToken,
      fx.stranger.scoreToken,
    );
    const userOf = (token: string) => [fx.owner, fx.admin, fx.stranger].find((user) => user.scoreToken === token);
    const schemes: Array<fc.WeightedArbitrary<Part<Credential>>> = [];
    if (route.security.includes('scoreTokenHeader'))
      schemes.push(
        good(
          tokens.map((token) => headerToken(token, userOf(token))),
          12,
        ),
      );
    if (route.security.includes('scoreTokenQuery'))
      schemes.push(
        good(
          tokens.map((token) => queryToken(token, userOf(token))),
          12,
        ),
      );
    const wrong = fc.oneof(
      fc.constantFrom(
        '',
        'wrong',
        fx.owner.scoreToken.toUpperCase(),
        `${fx.owner.scoreToken} `,
        fx.owner.scoreToken.slice(0, -1),
        fx.owner.accessToken,
        'x'.repeat(8000),
      ),
      hostileStrings,
    );
    return fc.oneof(
      ...schemes,
      bad('auth:missing', fc.constant(none)),
      bad(
        'auth:wrong-score-token',
        fc.oneof(
          wrong.map((token) => headerToken(token)),
          wrong.map((token) => queryToken(token)),
        ),
      ),
      bad(
        'auth:two-score-tokens',
        fc.constantFrom<Credential>(
          { user: fx.owner, headers: { 'score-token': fx.owner.scoreToken }, query: [['key', 'wrong']] },
          { headers: { 'score-token': 'wrong' }, query: [['key', fx.owner.scoreToken]] },
          { headers: { 'score-token': '' }, query: [['key', fx.owner.scoreToken]] },
          {
            headers: {},
            query: [
              ['key', 'wrong'],
              ['key', fx.owner.scoreToken],
            ],
          },
          {
            headers: {},
            query: [
              ['key', fx.owner.scoreToken],
              ['key', fx.owner.scoreToken],
            ],
          },
          { headers: {}, query: [['KEY', fx.owner.scoreToken]] },
          { headers: {}, query: [['key[]', fx.owner.scoreToken]] },
          { headers: {}, query: [['key', `${fx.owner.scoreToken}%`]] },
        ),
      ),
      bad('auth:bearer-instead', fc.constant<Credential>(bearerOf(fx.owner.accessToken))),
    );
  }

  // ── path ──

  private path(route: RouteDefinition, parameters: SpecParameter[]): fc.Arbitrary<Part<string>> {
    const segments: Record<string, fc.Arbitrary<Part<string>>> = {};
    for (const parameter of parameters) segments[parameter.name] = this.pathSegment(parameter);
    return fc
      .record({
        values: fc.record(segments),
        mutation: fc.oneof(
          good(fc.constant('none'), 80),
          bad('path:case', fc.constant('case'), 2),
          bad('path:trailing-slash', fc.constant('trailing-slash')),
          bad('path:double-slash', fc.constant('double-slash')),
          bad('path:dot-segments', fc.constantFrom('dot', 'dot-dot')),
          bad('path:encoded-slash', fc.constant('encoded-slash')),
          bad('path:encoded-letter', fc.constant('encoded-letter')),
          bad('path:backslash', fc.constant('backslash')),
        ),
        flips: fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        where: fc.nat(),
      })
      .map(({ values, mutation, flips, where }) => {
        const variants = Object.values(values)
          .map((part) => part.variant)
          .filter(Boolean);
        let path = route.path.replace(/\{([^}]+)\}/g, (_match, name: string) => values[name].value);
        const slashes = [...path.matchAll(/\//g)].map((match) => match.index);
        const at = slashes[where % slashes.length];
        switch (mutation.value) {
          case 'case':
            path = caseVariant(path, flips);
            break;
          case 'trailing-slash':
            path += '/';
            break;
          case 'double-slash':
            path = `${path.slice(0, at)}/${path.slice(at)}`;
            break;
          case 'dot':
            path = `${path.slice(0, at)}/.${path.slice(at)}`;
            break;
          case 'dot-dot':
            path = `${path.slice(0, at)}/x/..${path.slice(at)}`;
            break;
          case 'encoded-slash':
            path = at > 0 ? `${path.slice(0, at)}%2F${path.slice(at + 1)}` : path;
            break;
          case 'encoded-letter':
            path = path.replace(/[a-z]/, (letter) => `%${letter.charCodeAt(0).toString(16)}`);
            break;
          case 'backslash':
            path = `${path.slice(0, at)}\\${path.slice(at + 1)}`;
            break;
          default:
            break;
        }
        return { value: path, variant: [mutation.variant, ...variants].filter(Boolean).join(' ') || undefined };
      });
  }

  private pathSegment(parameter: SpecParameter): fc.Arbitrary<Part<string>> {
    const known = this.knownValues(parameter.name);
    const fromSchema = this.schemas.of(parameter.schema ?? true).map((value) => encodeWire(String(value)));
    // Ids are decimal strings or integers: either way, numbers out of every range.
    const numeric = parameter.schema?.type === 'integer' || /id$/i.test(parameter.name);
    return fc.oneof(
      ...(known.length > 0
        ? [
            good(
              fc.constantFrom(...known).map((value) => encodeWire(String(value))),
              12,
            ),
          ]
        : []),
      good(fromSchema, 4),
      bad(
        `path:${parameter.name}:hostile`,
        hostileStrings.map((value) => encodeWire(value)),
      ),
      bad(`path:${parameter.name}:segment`, hostileSegments),
      ...(numeric
        ? [
            bad(
              `path:${parameter.name}:number`,
              hostileNumberTexts.map((value) => encodeWire(value)),
              2,
            ),
          ]
        : []),
    );
  }

  /** Values the fixtures made that a parameter of this name can take. */
  private knownValues(name: string): Array<string | number> {
    const fx = this.fixtures;
    switch (name) {
      case 'id':
        return [...fx.scenarioIds, ...fx.scenarioIds, ...fx.strangerScenarioIds];
      case 'testCaseId':
        return fx.testCaseIds;
      case 'name':
      case 'currentName':
        return fx.scenarioNames;
      case 'copiedScenarioName':
      case 'newName':
        return [...fx.scenarioNames, 'fuzz-copy', 'fuzz-renamed'];
      case 'batchTaskId':
        return fx.batchTaskIds;
      case 'collection_name':
        return fx.collections;
      case 'X-SCE-RequestId':
        return fx.requestIds;
      case 'replayId':
      case 'replay':
        return fx.replayIds;
      default:
        return [];
    }
  }

  // ── query ──

  private query(
    parameters: SpecParameter[],
    credential: Part<Credential>,
  ): fc.Arbitrary<Array<Part<Array<[string, string]>>>> {
    const each = parameters.map((parameter) =>
      this.queryParameter(parameter, credential.value.user ?? this.fixtures.owner),
    );
    const extra = fc.oneof(
      good(fc.constant<Array<[string, string]>>([]), 30),
      bad(
        'query:unknown-parameter',
        fc.constantFrom<Array<[string, string]>>(
          [['foo', 'bar']],
          [['__proto__[x]', '1']],
          [['constructor', '1']],
          [['', '']],
          [['a', '%zz']],
        ),
      ),
      bad(
        'query:many-parameters',
        fc.constant(Array.from({ length: 1500 }, (_unused, index): [string, string] => [`p${index}`, '1'])),
      ),
    );
    return fc.tuple(...each, extra);
  }

  private queryParameter(parameter: SpecParameter, user: FuzzUser): fc.Arbitrary<Part<Array<[string, string]>>> {
    const name = parameter.name;
    const one = (value: string): Array<[string, string]> => [[name, value]];
    if (name === 'context') return this.contextParameter(name, user, parameter.required === true);
    if (parameter.style === 'deepObject') return this.filterParameter(name);
    const encoded = (value: unknown) => encodeWire(String(value));
    const valid =
      name === 'indexes'
        ? fc.constantFrom(
            'customer_id,true',
            'customer_id,false',
            'segment,false;customer_id,true',
            'id,true',
            'segment,false',
          )
        : name === 'name' && this.fixtures.scenarioNames.length > 0
          ? fc.oneof(
              { weight: 4, arbitrary: fc.constantFrom(...this.fixtures.scenarioNames) },
              { weight: 1, arbitrary: this.schemas.of(parameter.schema ?? true).map(String) },
            )
          : this.schemas.of(parameter.schema ?? true).map(String);
    const absent = fc.constant<Array<[string, string]>>([]);
    return fc.oneof(
      parameter.required
        ? good(
            valid.map((value) => one(encoded(value))),
            12,
          )
        : good(
            fc.oneof(
              absent,
              valid.map((value) => one(name === 'indexes' ? value : encoded(value))),
            ),
            12,
          ),
      ...(parameter.required ? [bad(`query:${name}:missing`, absent)] : []),
      bad(
        `query:${name}:hostile`,
        fc.oneof(hostileStrings, hostileNumberTexts).map((value) => one(encoded(value))),
      ),
      bad(`query:${name}:raw`, hostileSegments.map(one)),
      bad(
        `query:${name}:repeated`,
        valid.map(
          (value) =>
            [
              [name, encoded(value)],
              [name, encoded(value)],
            ] as Array<[string, string]>,
        ),
      ),
      bad(
        `query:${name}:bracketed`,
        valid.map((value) => [[`${name}[a]`, encoded(value)]] as Array<[string, string]>),
      ),
    );
  }

  /**
   * The access-control `context` (AccessControlContext): deepObject fields or the whole context as
   * JSON, naming the requester and maybe another resource owner, in the 1.9 and the older shape.
   */
  private contextParameter(
    name: string,
    user: FuzzUser,
    required: boolean,
  ): fc.Arbitrary<Part<Array<[string, string]>>> {
    const fx = this.fixtures;
    type Pairs = Array<[string, string]>;
    const json = (value: unknown): Pairs => [[name, encodeWire(JSON.stringify(value))]];
    /** deepObject fields: `context[actors][requester][username]=…` for every leaf of `value`. */
    const fields = (value: unknown, prefix = name): Pairs =>
      value && typeof value === 'object'
        ? Object.entries(value).flatMap(([key, child]) => fields(child, `${prefix}[${key}]`))
        : [[encodeWire(prefix), encodeWire(String(value))]];
    const both = (value: unknown) => fc.constantFrom(json(value), fields(value));
    const others = [fx.owner, fx.admin, fx.stranger];
    const self = { actors: { requester: { username: user.username } } };
    return fc.oneof(
      good(both(self), 16),
      good(fc.constant<Pairs>([]), 4),
      good(fc.constantFrom<Pairs>(json({}), [[name, '']]), 2),
      good(both({ actors: { requester: { id: String(user.id) } } }), 2),
      good(
        fc
          .constantFrom(...others)
          .chain((owner) =>
            both({ actors: { requester: { username: user.username }, resourceOwner: { username: owner.username } } }),
          ),
        3,
      ),
      good(
        fc.constantFrom(...others).chain((owner) => both({ resourceOwnerOrRequester: { id: String(owner.id) } })),
        1,
      ),
      good(
        fc
          .constantFrom(...others)
          .map((owner) => json({ requester: { username: user.username }, owner: { username: owner.username } })),
        2,
      ),
      bad(
        'query:context:other-requester',
        fc
          .constantFrom(...others)
          .chain((requester) => both({ actors: { requester: { username: requester.username } } })),
      ),
      bad(
        'query:context:unknown-owner',
        fc
          .constantFrom(
            { username: 'nobody-here' },
            { id: '2147483647' },
            { id: '99999999999999999999' },
            { id: 'abc' },
            { username: user.username.toUpperCase() },
          )
          .chain((owner) => both({ actors: { requester: { username: user.username }, resourceOwner: owner } })),
      ),
      bad(
        'query:context:two-owners',
        fc.constant(
          json({
            actors: { resourceOwner: { username: fx.owner.username } },
            resourceOwnerOrRequester: { username: fx.stranger.username },
          }),
        ),
      ),
      bad(
        'query:context:schema',
        this.schemas
          .of('#/components/schemas/AccessControlContext')
          .chain((value) => fc.constantFrom(json(value), fields(value))),
      ),
      bad(
        'query:context:wrong-type',
        wrongTypeValues.chain((value) => fc.constantFrom(json(value), fields({ actors: { requester: value } }))),
      ),
      bad(
        'query:context:hostile',
        fc.oneof(hostileStrings, hostileNumberTexts).map((value) => [[name, encodeWire(value)]] as Pairs),
      ),
      bad(
        'query:context:broken-json',
        brokenJsonTexts.map((value) => [[name, encodeWire(value)]] as Pairs),
      ),
      bad(
        'query:context:deep',
        fc
          .constantFrom(100, 5000)
          .chain((depth) =>
            fc.constantFrom<Pairs>(
              [
                [
                  name,
                  encodeWire(
                    `${'{"actors":'.repeat(depth)}{"requester":{"username":"${user.username}"}}${'}'.repeat(depth)}`,
                  ),
                ],
              ],
              [[`${name}${'[a]'.repeat(depth)}`, 'x']],
            ),
          ),
      ),
      bad('query:context:both-encodings', fc.constant<Pairs>([...json(self), ...fields(self)])),
      bad(
        'query:context:repeated',
        fc.constant<Pairs>([...json(self), ...json({ actors: { requester: { username: fx.admin.username } } })]),
      ),
      bad(
        'query:context:field-holding-json',
        fc.constant<Pairs>([
          [encodeWire(`${name}[actors]`), encodeWire(JSON.stringify({ requester: { username: user.username } }))],
        ]),
      ),
      bad(
        'query:context:odd-brackets',
        fc.constantFrom<Pairs>(
          [[`${name}[`, 'x']],
          [[`${name}[]`, 'x']],
          [[`${name}[actors][]`, 'x']],
          [[`${name}[__proto__][polluted]`, 'x']],
          [[`${name}[actors][constructor][prototype]`, 'x']],
        ),
      ),
      ...(required ? [] : [good(fc.constant<Pairs>([]), 4)]),
    );
  }

  /** `filter[column]=value` (deepObject). */
  private filterParameter(name: string): fc.Arbitrary<Part<Array<[string, string]>>> {
    const columns =
      this.fixtures.collectionColumns.length > 0
        ? fc.constantFrom(...this.fixtures.collectionColumns)
        : fc.constant('id');
    const entry = fc
      .tuple(columns, fc.oneof(fc.string({ maxLength: 10 }), fc.integer().map(String)))
      .map(([column, value]): [string, string] => [`${name}[${encodeWire(column)}]`, encodeWire(value)]);
    return fc.oneof(
      good(fc.constant<Array<[string, string]>>([]), 8),
      good(fc.array(entry, { minLength: 1, maxLength: 3 }), 6),
      bad(
        `query:${name}:hostile-column`,
        fc
          .tuple(hostileStrings, hostileStrings)
          .map(([column, value]) => [[`${name}[${encodeWire(column)}]`, encodeWire(value)]] as Array<[string, string]>),
      ),
      bad(
        `query:${name}:shape`,
        fc.constantFrom<Array<[string, string]>>(
          [[name, 'plain']],
          [[`${name}[]`, 'x']],
          [[`${name}[a][b]`, 'c']],
          [[`${name}[`, 'x']],
          [[`${name}]`, 'x']],
          [
            [`${name}[a]`, 'x'],
            [`${name}[a]`, 'y'],
          ],
          [[`${name}[${'a'.repeat(300)}]`, 'x']],
          [[`${name}[__proto__]`, 'x']],
          [[`${name}[constructor][prototype]`, 'x']],
          [[`${name}[a]`, '%zz']],
        ),
      ),
      bad(
        `query:${name}:many`,
        fc.constant(Array.from({ length: 200 }, (_unused, index): [string, string] => [`${name}[c${index}]`, '1'])),
      ),
    );
  }

  // ── headers ──

  private headers(parameters: SpecParameter[]): fc.Arbitrary<Array<Part<Record<string, string>>>> {
    const each = parameters.map((parameter) => this.headerParameter(parameter));
    const extra = fc.oneof(
      good(fc.constant<Record<string, string>>({}), 40),
      good(
        fc.constantFrom<Record<string, string>>(
          { accept: 'application/json' },
          { accept: '*/*' },
          { 'x-request-id': 'fuzz-request' },
          { accept: 'application/x-ndjson' },
          { accept: 'text/csv' },
        ),
        4,
      ),
      bad(
        'header:accept',
        fc.constantFrom<Record<string, string>>(
          { accept: 'application/yaml' },
          { accept: 'text/html' },
          { accept: 'image/png' },
          { accept: '' },
          { accept: ';;;' },
        ),
      ),
      bad(
        'header:request-id',
        hostileStrings.map((value) => ({ 'x-request-id': headerSafe(value) })),
      ),
      bad(
        'header:large',
        fc.constantFrom(4_000, 20_000, 70_000).map((size) => ({ 'x-padding': 'x'.repeat(size) })),
      ),
      bad(
        'header:many',
        fc.constant(Object.fromEntries(Array.from({ length: 150 }, (_unused, index) => [`x-h${index}`, 'v']))),
      ),
    );
    return fc.tuple(...each, extra);
  }

  private headerParameter(parameter: SpecParameter): fc.Arbitrary<Part<Record<string, string>>> {
    const name = parameter.name.toLowerCase();
    const known = this.knownValues(parameter.name);
    const valid =
      parameter.name === 'X-SCE-RequestId'
        ? fc.oneof(
            fc.constantFrom(...(known.length > 0 ? known.map(String) : ['r-1'])),
            fc.uuid(),
            this.schemas.of(parameter.schema ?? true).map(String),
          )
        : this.schemas.of(parameter.schema ?? true).map(String);
    const absent = fc.constant<Record<string, string>>({});
    return fc.oneof(
      parameter.required
        ? good(
            valid.map((value) => ({ [name]: headerSafe(value) })),
            12,
          )
        : good(
            fc.oneof(
              absent,
              absent,
              valid.map((value) => ({ [name]: headerSafe(value) })),
            ),
            12,
          ),
      ...(parameter.required ? [bad(`header:${parameter.name}:missing`, absent)] : []),
      bad(
        `header:${parameter.name}:hostile`,
        fc.oneof(hostileStrings, hostileNumberTexts).map((value) => ({ [name]: headerSafe(value) })),
      ),
      bad(`header:${parameter.name}:long`, fc.constant({ [name]: 'a'.repeat(3000) })),
    );
  }

  // ── body ──

  private body(operation: SpecOperation): fc.Arbitrary<Part<{ contentType?: string; body?: FuzzBody } | undefined>> {
    const content = operation.requestBody?.content;
    if (!content) {
      return fc.oneof(
        good(fc.constant(undefined), 30),
        bad(
          'body:unexpected',
          fc.constantFrom(
            { contentType: 'application/json', body: { text: '{}' } as FuzzBody },
            { contentType: 'application/json', body: { text: '{' } as FuzzBody },
            { contentType: 'application/yaml', body: { text: 'a: [' } as FuzzBody },
            { contentType: 'text/plain', body: { text: 'hello' } as FuzzBody },
            {
              contentType: 'application/json',
              body: { repeat: { head: '"', unit: 'x', count: 2_000_000, tail: '"' } } as FuzzBody,
            },
          ),
        ),
      );
    }
    const choices: Array<fc.WeightedArbitrary<Part<{ contentType?: string; body?: FuzzBody }>>> = [];
    if (content['application/json'])
      choices.push(...this.jsonBodies(operation.operationId, content['application/json'].schema));
    if (content['application/yaml'])
      choices.push(...this.yamlBodies(operation.operationId, content['application/yaml'].schema));
    if (content['multipart/form-data']) {
      const csvSeeds = this.seedsFor(operation.operationId).filter((seed): seed is string => typeof seed === 'string');
      choices.push({
        weight: 14,
        arbitrary: multipartUploads(csvSeeds).map(({ contentType, body, variant }) => ({
          value: { contentType, body },
          variant,
        })),
      });
    }
    choices.push(
      bad('body:missing', fc.constantFrom({}, { contentType: 'application/json' })),
      bad(
        'body:content-type',
        fc
          .tuple(
            fc.constantFrom(
              'text/plain',
              'application/xml',
              'application/x-www-form-urlencoded',
              'application/octet-stream',
              'application/json; charset=utf-16',
              'application/json; charset=latin1',
              'application/merge-patch+json',
              'application/vnd.fuzz+json',
              'APPLICATION/JSON',
              'application/json;;',
              'application/',
              '*/*',
              'multipart/form-data',
              'text/yaml; charset=ascii',
              'ünïcode/type',
            ),
            fc.constantFrom('{}', '{"a":1}', 'a: 1', 'a=1&b=2', '<a/>'),
          )
          .map(([contentType, text]) => ({ contentType: headerSafe(contentType), body: { text } as FuzzBody })),
      ),
      bad(
        'body:no-content-type',
        fc.constantFrom({ body: { text: '{"a":1}' } as FuzzBody }, { body: { text: 'name: x' } as FuzzBody }),
      ),
    );
    return fc.oneof(...choices);
  }

  private seedsFor(operationId: string): unknown[] {
    return this.fixtures.bodies[operationId] ?? [];
  }

  private jsonBodies(
    operationId: string,
    schema: Record<string, unknown>,
  ): Array<fc.WeightedArbitrary<Part<{ contentType?: string; body?: FuzzBody }>>> {
    const json = (value: unknown) => ({
      contentType: 'application/json',
      body: { text: JSON.stringify(value) ?? '' } as FuzzBody,
    });
    const seeds = this.seedsFor(operationId);
    const seeded = seeds.length > 0 ? fc.constantFrom(...seeds) : this.schemas.of(schema);
    const mutated =
      seeds.length > 0
        ? fc.oneof(...seeds.map((seed) => mutatedJson(seed)))
        : this.schemas.of(schema).chain((value) => mutatedJson(value));
    const around =
      seeds.length > 0
        ? fc.oneof(...seeds.map((seed) => jsonTextAroundANode(seed)))
        : this.schemas.of(schema).chain((value) => jsonTextAroundANode(value));
    return [
      good(seeded.map(json), 10),
      bad('body:json:mutated', mutated.map(json), 8),
      bad('body:json:from-schema', this.schemas.of(schema).map(json), 4),
      bad('body:json:wrong-type', wrongTypeValues.map(json), 2),
      bad(
        'body:json:broken',
        brokenJsonTexts.map((text) => ({ contentType: 'application/json', body: { text } as FuzzBody })),
        2,
      ),
      bad(
        'body:json:cut-short',
        fc.tuple(seeded, fc.double({ min: 0, max: 1, noNaN: true })).map(([value, cut]) => {
          const text = JSON.stringify(value) ?? '';
          return {
            contentType: 'application/json',
            body: { text: text.slice(0, Math.floor(text.length * cut)) } as FuzzBody,
          };
        }),
      ),
      bad(
        'body:json:deep',
        deepJsonBodies.map((body) => ({ contentType: 'application/json', body })),
      ),
      bad(
        'body:json:deep-inside',
        fc.tuple(around, jsonNestings).map(([{ before, after }, { depth, open, leaf, close }]) => ({
          contentType: 'application/json',
          body: {
            repeat: { head: before, unit: open, count: depth, tail: leaf, closing: close, end: after },
          } as FuzzBody,
        })),
      ),
      bad(
        'body:json:huge',
        hugeJsonBodies.map((body) => ({ contentType: 'application/json', body })),
      ),
      bad(
        'body:json:huge-inside',
        fc.tuple(around, fc.constantFrom(100_000, 900_000, 2_000_000)).map(([{ before, after }, size]) => ({
          contentType: 'application/json',
          body: { repeat: { head: `${before}"`, unit: 'x', count: size, tail: '"', end: after } } as FuzzBody,
        })),
      ),
      bad(
        'body:json:bytes',
        fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => ({
          contentType: 'application/json',
          body: { bytes: Buffer.from(bytes).toString('base64') } as FuzzBody,
        })),
      ),
      bad(
        'body:json:invalid-utf8',
        fc.constantFrom('{"a":"\xff\xfe"}', '{"\xc3":1}', '\xef\xbb\xbf{"a":1}').map((latin1) => ({
          contentType: 'application/json',
          body: { bytes: Buffer.from(latin1, 'latin1').toString('base64') } as FuzzBody,
        })),
      ),
    ];
  }

  private yamlBodies(
    operationId: string,
    schema: Record<string, unknown>,
  ): Array<fc.WeightedArbitrary<Part<{ contentType?: string; body?: FuzzBody }>>> {
    const types = fc.constantFrom(
      'application/yaml',
      'application/x-yaml',
      'text/yaml',
      'application/yaml; charset=utf-8',
    );
    const yaml = (value: unknown, contentType = 'application/yaml') => ({
      contentType,
      body: { text: yamlText(value) } as FuzzBody,
    });
    const seeds = this.seedsFor(operationId);
    const seeded = seeds.length > 0 ? fc.constantFrom(...seeds) : this.schemas.of(schema);
    return [
      good(
        fc.tuple(seeded, types).map(([value, type]) => yaml(value, type)),
        6,
      ),
      bad(
        'body:yaml:mutated',
        (seeds.length > 0 ? fc.oneof(...seeds.map((seed) => mutatedJson(seed))) : this.schemas.of(schema)).map(
          (value) => yaml(value),
        ),
        4,
      ),
      bad(
        'body:yaml:broken',
        brokenYamlTexts.map((text) => ({ contentType: 'application/yaml', body: { text } as FuzzBody })),
        2,
      ),
      bad(
        'body:yaml:deep',
        deepYamlBodies.map((body) => ({ contentType: 'application/yaml', body })),
      ),
      bad(
        'body:yaml:deep-inside',
        fc
          .tuple(
            seeds.length > 0
              ? fc.oneof(...seeds.map((seed) => jsonTextAroundANode(seed)))
              : fc.constant({ before: '', after: '' }),
            jsonNestings,
          )
          .map(([{ before, after }, { depth, open, leaf, close }]) => ({
            contentType: 'application/yaml',
            body: {
              repeat: { head: before, unit: open, count: depth, tail: leaf, closing: close, end: after },
            } as FuzzBody,
          })),
      ),
      bad(
        'body:yaml:cut-short',
        fc.tuple(seeded, fc.double({ min: 0, max: 1, noNaN: true })).map(([value, cut]) => {
          const text = yamlText(value);
          return {
            contentType: 'application/yaml',
            body: { text: text.slice(0, Math.floor(text.length * cut)) } as FuzzBody,
          };
        }),
      ),
    ];
  }
}

/** YAML text of `value`; JSON text (also YAML) when it is nested too deep for the YAML writer. */
function yamlText(value: unknown): string {
  if (value === undefined) return '';
  try {
    return toYaml(value, { aliasDuplicateObjects: false });
  } catch {
    return JSON.stringify(value);
  }
}

/** The request as a shell command (for reproducing a failure), with large bodies summarized. */
export function describeRequest(request: FuzzRequest, baseUrl = 'http://127.0.0.1:8080'): string {
  const url = `${baseUrl}${request.path}${request.query ? `?${request.query}` : ''}`;
  const headers = Object.entries(request.headers).map(
    ([name, value]) =>
      `-H ${shellQuote(`${name}: ${value.length > 200 ? `${value.slice(0, 200)}…(${value.length} chars)` : value}`)}`,
  );
  const shownUrl = url.length > 2000 ? `${url.slice(0, 2000)}…(${url.length} chars)` : url;
  return [
    `${request.operationId} [${request.variants.join(', ') || 'well-formed'}]`,
    `curl -X ${request.method} ${shellQuote(shownUrl)} ${headers.join(' ')}`,
    `body: ${describeBody(request.body)}`,
  ].join('\n');
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
