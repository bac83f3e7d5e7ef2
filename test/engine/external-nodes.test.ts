import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine, type ScenarioDocument } from '../../src/engine/index.js';
import { OutboundHttpClient } from '../../src/outbound/outbound-http-client.js';
import { TargetPolicy } from '../../src/outbound/target-policy.js';
import { chain, fakePorts, input, memoryLookups, script } from './support/scenario-builder.js';

describe('DATA_LOOKUP', () => {
  const engine = new ScenarioEngine({
    ports: fakePorts({
      lookups: memoryLookups({
        customers: {
          indexed: ['id'],
          rows: [
            { id: 1, name: 'Ann', segment: 'GOLD' },
            { id: 2, name: 'Bob', segment: 'SILVER' },
            { id: 2, name: 'Bea', segment: 'GOLD' },
          ],
        },
      }),
    }),
  });
  afterAll(() => engine.dispose());
  const lookup = (mode: string, columns?: string[]) =>
    engine.compile(
      `lookup-${mode}-${columns}`,
      chain(
        [input('customerId', 'INTEGER', false)],
        [
          {
            id: 'find',
            type: 'DATA_LOOKUP',
            settings: {
              collection: 'customers',
              keyColumn: 'id',
              joinVariable: 'customerId',
              mode,
              output: 'customer',
              ...(columns ? { columns } : {}),
            },
          },
          script(
            'use',
            'segment = customer === null ? null : (Array.isArray(customer) ? customer.length : customer.segment);',
            ['segment'],
          ),
        ],
      ),
    );

  it('ONE returns the first matching row, null when nothing matches', async () => {
    expect((await engine.run(lookup('ONE'), { customerId: 1 }, { ownerId: 1 })).result).toEqual({
      customerId: 1,
      customer: { id: 1, name: 'Ann', segment: 'GOLD' },
      segment: 'GOLD',
    });
    expect((await engine.run(lookup('ONE'), { customerId: 9 }, { ownerId: 1 })).result).toMatchObject({
      customer: null,
      segment: null,
    });
  });

  it('ALL returns every matching row with the selected columns, [] when nothing matches', async () => {
    expect((await engine.run(lookup('ALL', ['name']), { customerId: 2 }, { ownerId: 1 })).result).toMatchObject({
      customer: [{ name: 'Bob' }, { name: 'Bea' }],
      segment: 2,
    });
    expect((await engine.run(lookup('ALL'), { customerId: null }, { ownerId: 1 })).result).toMatchObject({
      customer: [],
      segment: 0,
    });
  });

  it('fails with LOOKUP_FAILED naming the node when the port fails', async () => {
    const broken = new ScenarioEngine({ ports: fakePorts() });
    const compiled = broken.compile(
      'x',
      chain(
        [input('customerId', 'INTEGER')],
        [
          {
            id: 'find',
            type: 'DATA_LOOKUP',
            settings: {
              collection: 'customers',
              keyColumn: 'id',
              joinVariable: 'customerId',
              mode: 'ONE',
              output: 'c',
            },
          },
        ],
      ),
    );
    await expect(broken.run(compiled, { customerId: 1 }, { ownerId: 1 })).rejects.toMatchObject({
      code: 'LOOKUP_FAILED',
      nodeId: 'find',
    });
    broken.dispose();
  });
});

describe('SCENARIO_CALL', () => {
  const deployed: Record<string, ScenarioDocument> = {
    double: chain([input('n', 'INTEGER')], [script('calc', 'twice = n * 2; half = n / 2;', ['twice', 'half'])], {
      outputs: ['twice', 'half'],
    }),
    ping: chain(
      [input('depth', 'INTEGER')],
      [{ id: 'call', type: 'SCENARIO_CALL', settings: { scenario: 'pong', inputs: { depth: 'depth + 1' } } }],
    ),
    pong: chain(
      [input('depth', 'INTEGER')],
      [{ id: 'call', type: 'SCENARIO_CALL', settings: { scenario: 'ping', inputs: { depth: 'depth + 1' } } }],
    ),
    wrapper: chain(
      [input('scenario_name', 'STRING'), input('scenario_input', 'MAP')],
      [
        {
          id: 'call',
          type: 'SCENARIO_CALL',
          settings: { scenarioVariable: 'scenario_name', inputVariable: 'scenario_input' },
        },
      ],
    ),
    ...Object.fromEntries(
      [1, 2, 3, 4, 5, 6].map((level) => [
        `level${level}`,
        chain(
          [input('n', 'INTEGER')],
          [{ id: 'call', type: 'SCENARIO_CALL', settings: { scenario: `level${level + 1}`, inputs: { n: 'n + 1' } } }],
        ),
      ]),
    ),
  };
  const engine = new ScenarioEngine({
    limits: { maxCallDepth: 4 },
    ports: fakePorts({
      scenarios: {
        resolveDeployed: async ({ name }) =>
          deployed[name] ? { cacheKey: `dep-${name}`, document: deployed[name] } : null,
      },
    }),
  });
  afterAll(() => engine.dispose());

  it('merges the callee result with mapped inputs (expressions or variable names)', async () => {
    const caller = engine.compile(
      'caller-1',
      chain(
        [input('x', 'INTEGER')],
        [{ id: 'call', type: 'SCENARIO_CALL', prefix: 'd_', settings: { scenario: 'double', inputs: { n: 'x + 1' } } }],
      ),
    );
    expect((await engine.run(caller, { x: 4 }, { ownerId: 1, callStack: ['caller'] })).result).toEqual({
      x: 4,
      d_twice: 10,
      d_half: 2.5,
    });
  });

  it('keeps only selected outputs, optionally inside one MAP variable', async () => {
    const selected = engine.compile(
      'caller-2',
      chain(
        [input('x', 'INTEGER')],
        [
          {
            id: 'call',
            type: 'SCENARIO_CALL',
            settings: { scenario: 'double', inputs: { n: 'x' }, outputs: ['twice'] },
          },
          {
            id: 'call2',
            type: 'SCENARIO_CALL',
            settings: { scenario: 'double', inputs: { n: 'twice' }, outputVariable: 'nested' },
          },
        ],
      ),
    );
    expect((await engine.run(selected, { x: 3 }, { ownerId: 1 })).result).toEqual({
      x: 3,
      twice: 6,
      nested: { twice: 12, half: 3 },
    });
  });

  it('runs any scenario through the wrapper pattern (scenario_name + scenario_input)', async () => {
    const wrapper = engine.compile('wrapper', deployed.wrapper);
    expect(
      (await engine.run(wrapper, { scenario_name: 'double', scenario_input: { n: 5 } }, { ownerId: 1 })).result,
    ).toEqual({ scenario_name: 'double', scenario_input: { n: 5 }, twice: 10, half: 2.5 });
  });

  it('detects a call cycle and names the chain', async () => {
    const ping = engine.compile('ping-root', deployed.ping);
    await expect(engine.run(ping, { depth: 0 }, { ownerId: 1, callStack: ['ping'] })).rejects.toMatchObject({
      code: 'CALL_CYCLE',
      message: expect.stringContaining('ping → pong → ping'),
    });
  });

  it('stops calls nested deeper than the limit', async () => {
    const root = engine.compile('level-root', deployed.level1);
    await expect(engine.run(root, { n: 0 }, { ownerId: 1, callStack: ['level1'] })).rejects.toMatchObject({
      code: 'CALL_DEPTH_EXCEEDED',
      message: expect.stringContaining('level1 → level2 → level3 → level4 → level5'),
    });
  });

  it('fails with NOT_DEPLOYED when the callee has no deployed version', async () => {
    const wrapper = engine.compile('wrapper', deployed.wrapper);
    await expect(
      engine.run(wrapper, { scenario_name: 'ghost', scenario_input: {} }, { ownerId: 1 }),
    ).rejects.toMatchObject({ code: 'NOT_DEPLOYED', nodeId: 'call' });
  });

  it('fails with SCENARIO_CALL_FAILED carrying the callee input violations', async () => {
    const wrapper = engine.compile('wrapper', deployed.wrapper);
    await expect(
      engine.run(wrapper, { scenario_name: 'double', scenario_input: { n: 'x' } }, { ownerId: 1 }),
    ).rejects.toMatchObject({
      code: 'SCENARIO_CALL_FAILED',
      details: [{ variable: 'n', message: expect.stringContaining('integer') }],
    });
  });
});

describe('HTTP_CALL', () => {
  let server: http.Server;
  let base: string;
  const seen: { url?: string; method?: string; body: string; headers: http.IncomingHttpHeaders }[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen.push({ url: req.url, method: req.method, body, headers: req.headers });
        if (req.url?.startsWith('/fail')) {
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end('{"error":"down"}');
          return;
        }
        if (req.url?.startsWith('/redirect')) {
          res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ echo: req.url, received: body ? JSON.parse(body) : null }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const allowed = new TargetPolicy({ allowPrivate: ['127.0.0.1/32'] });
  const call = (settings: Record<string, unknown>) =>
    chain(
      [input('id', 'STRING'), input('amount', 'DOUBLE')],
      [{ id: 'http', type: 'HTTP_CALL', settings: { method: 'POST', output: 'response', ...settings } }],
      { outputs: ['response', ...(settings.catchErrors ? ['responseError'] : [])] },
    );

  it('substitutes URL-encoded variables, sends the body template and stores status and JSON body', async () => {
    const engine = new ScenarioEngine({ ports: fakePorts({ http: new OutboundHttpClient(allowed) }) });
    const compiled = engine.compile(
      'h1',
      call({
        url: `${base}/score/{{id}}?x=1`,
        headers: { 'x-trace': 'id-{{id}}' },
        body: { customer: '{{id}}', amount: '{{amount}}', text: 'n={{amount}}' },
      }),
    );
    const { result } = await engine.run(compiled, { id: 'a b/c', amount: 12.5 }, { ownerId: 1 });
    expect(result.response).toEqual({
      status: 200,
      body: { echo: '/score/a%20b%2Fc?x=1', received: { customer: 'a b/c', amount: 12.5, text: 'n=12.5' } },
    });
    expect(seen.at(-1)?.headers['x-trace']).toBe('id-a b/c');
    engine.dispose();
  });

  it('computes the body with bodyExpression', async () => {
    const engine = new ScenarioEngine({ ports: fakePorts({ http: new OutboundHttpClient(allowed) }) });
    const compiled = engine.compile('h2', call({ url: `${base}/x`, bodyExpression: '({ doubled: amount * 2 })' }));
    expect((await engine.run(compiled, { id: 'a', amount: 2 }, { ownerId: 1 })).result.response).toMatchObject({
      body: { received: { doubled: 4 } },
    });
    engine.dispose();
  });

  it('retries failures and then fails with HTTP_CALL_FAILED, or stores the error when catchErrors is set', async () => {
    const engine = new ScenarioEngine({ ports: fakePorts({ http: new OutboundHttpClient(allowed) }) });
    const before = seen.length;
    await expect(
      engine.run(
        engine.compile('h3', call({ url: `${base}/fail`, retries: 2 })),
        { id: 'a', amount: 1 },
        { ownerId: 1 },
      ),
    ).rejects.toMatchObject({ code: 'HTTP_CALL_FAILED', nodeId: 'http' });
    expect(seen.length - before).toBe(3);
    const caught = await engine.run(
      engine.compile('h4', call({ url: `${base}/fail`, catchErrors: true })),
      { id: 'a', amount: 1 },
      { ownerId: 1 },
    );
    expect(caught.result).toEqual({
      response: null,
      responseError: {
        code: 'HTTP_STATUS',
        message: expect.stringContaining('503'),
        status: 503,
        body: { error: 'down' },
      },
    });
    engine.dispose();
  });

  it('does not follow redirects', async () => {
    const engine = new ScenarioEngine({ ports: fakePorts({ http: new OutboundHttpClient(allowed) }) });
    const { result } = await engine.run(
      engine.compile('h5', call({ url: `${base}/redirect` })),
      { id: 'a', amount: 1 },
      { ownerId: 1 },
    );
    expect(result.response).toMatchObject({ status: 302 });
    engine.dispose();
  });

  it('refuses an IPv4-compatible IPv6 form of a loopback target even when 127.0.0.1 is allowed', async () => {
    const engine = new ScenarioEngine({ ports: fakePorts({ http: new OutboundHttpClient(allowed) }) });
    const before = seen.length;
    const url = `http://[::127.0.0.1]:${new URL(base).port}/x`;
    await expect(
      engine.run(engine.compile('h7', call({ url })), { id: 'a', amount: 1 }, { ownerId: 1 }),
    ).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED', nodeId: 'http' });
    expect(seen.length).toBe(before);
    engine.dispose();
  });

  it('refuses loopback targets unless they are explicitly allowed', async () => {
    const engine = new ScenarioEngine({ ports: fakePorts({ http: new OutboundHttpClient(new TargetPolicy()) }) });
    await expect(
      engine.run(engine.compile('h6', call({ url: `${base}/x` })), { id: 'a', amount: 1 }, { ownerId: 1 }),
    ).rejects.toMatchObject({
      code: 'HTTP_TARGET_REFUSED',
      nodeId: 'http',
      message: expect.stringContaining('not a public address'),
    });
    engine.dispose();
  });
});
