import { afterAll, describe, expect, it } from '@jest/globals';
import {
  ScenarioEngine,
  type HttpRequest,
  type LookupRequest,
  type PortCallSite,
  type PortHooks,
  type ScenarioDocument,
} from '../../src/engine/index.js';
import { chain, fakePorts, input, memoryLookups, script } from './support/scenario-builder.js';

/** The per-run hooks around lookups and HTTP calls (RunContext.portHooks): what recording and replay build on. */

const calls: string[] = [];
const callee: ScenarioDocument = chain(
  [input('id', 'INTEGER')],
  [
    {
      id: 'inner',
      type: 'DATA_LOOKUP',
      settings: { collection: 'customers', keyColumn: 'id', joinVariable: 'id', mode: 'ONE', output: 'customer' },
    },
  ],
  { outputs: ['customer'] },
);
const engine = new ScenarioEngine({
  ports: fakePorts({
    lookups: memoryLookups({
      customers: {
        indexed: ['id'],
        rows: [
          { id: 1, tier: 'GOLD' },
          { id: 2, tier: 'SILVER' },
        ],
      },
    }),
    scenarios: {
      resolveDeployed: async ({ name }) =>
        name === 'customer' ? { cacheKey: 'hooks-callee', document: callee } : null,
    },
    http: {
      async request(request) {
        calls.push(`${request.method} ${request.url}`);
        if (request.url.endsWith('/flaky') && calls.filter((c) => c.endsWith('/flaky')).length === 1)
          return { status: 503, body: 'busy' };
        return { status: 200, body: { score: 42 } };
      },
    },
  }),
});
afterAll(() => engine.dispose());

const scenario = engine.compile(
  'hooks-caller',
  chain(
    [input('id', 'INTEGER')],
    [
      {
        id: 'outer',
        type: 'DATA_LOOKUP',
        settings: { collection: 'customers', keyColumn: 'id', joinVariable: 'id', mode: 'ONE', output: 'direct' },
      },
      {
        id: 'bureau',
        type: 'HTTP_CALL',
        settings: { method: 'GET', url: 'https://bureau.example/flaky', retries: 1, output: 'bureau' },
      },
      {
        id: 'sub',
        type: 'SCENARIO_CALL',
        settings: { scenario: 'customer', inputs: { id: 'id + 1' }, outputVariable: 'called' },
      },
      script('sum', 'total = bureau.body.score + (called.customer ? 1 : 0);', ['total']),
    ],
  ),
);

/** Hooks that watch every call (and answer what the port answered). */
function watching(): {
  hooks: PortHooks;
  seen: Array<{ site: PortCallSite; kind: string; request: unknown; answer: unknown }>;
} {
  const seen: Array<{ site: PortCallSite; kind: string; request: unknown; answer: unknown }> = [];
  return {
    seen,
    hooks: {
      async lookup(site, request, proceed) {
        const answer = await proceed(request);
        seen.push({ site, kind: 'lookup', request, answer });
        return answer;
      },
      async http(site, request, proceed) {
        const answer = await proceed(request);
        seen.push({ site, kind: 'http', request, answer });
        return answer;
      },
    },
  };
}

describe('port hooks', () => {
  it('see every lookup and HTTP call of the run, retries and called scenarios included, with their node and call path', async () => {
    const { hooks, seen } = watching();
    const outcome = await engine.run(scenario, { id: 1 }, { ownerId: 1, portHooks: hooks });
    expect(outcome.result).toMatchObject({
      direct: { id: 1, tier: 'GOLD' },
      called: { customer: { id: 2, tier: 'SILVER' } },
      total: 43,
    });
    expect(seen.map(({ site, kind }) => [kind, site.nodeId, site.callPath])).toEqual([
      ['lookup', 'outer', []],
      ['http', 'bureau', []],
      ['http', 'bureau', []],
      ['lookup', 'inner', ['sub']],
    ]);
    expect(seen[1].answer).toEqual({ status: 503, body: 'busy' });
    expect(seen[3].request).toMatchObject({ ownerId: 1, collection: 'customers', key: 2 });
  });

  it('may answer a call themselves, without calling the port', async () => {
    const before = calls.length;
    const hooks: PortHooks = {
      http: async (_site, _request: HttpRequest) => ({ status: 200, body: { score: 7 } }),
      lookup: async (_site, request: LookupRequest) => ({ id: request.key, tier: 'RECORDED' }),
    };
    const outcome = await engine.run(scenario, { id: 1 }, { ownerId: 1, portHooks: hooks });
    expect(outcome.result).toMatchObject({
      direct: { tier: 'RECORDED' },
      called: { customer: { tier: 'RECORDED' } },
      total: 8,
    });
    expect(calls.length).toBe(before);
  });

  it('fail the node as the port would when they throw', async () => {
    const hooks: PortHooks = {
      lookup: async () => {
        throw new Error('no recording of this lookup');
      },
    };
    await expect(engine.run(scenario, { id: 1 }, { ownerId: 1, portHooks: hooks })).rejects.toMatchObject({
      code: 'LOOKUP_FAILED',
      nodeId: 'outer',
      message: expect.stringContaining('no recording of this lookup'),
    });
  });

  it('are not needed: a run without them calls the ports directly', async () => {
    expect((await engine.run(scenario, { id: 1 }, { ownerId: 1 })).result).toMatchObject({ total: 43 });
  });
});
