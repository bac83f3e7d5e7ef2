import knex from 'knex';
import { knexConfig } from '../../src/db/database.js';
import { PortUnavailableError, ScenarioEngine } from '../../src/engine/index.js';
import { toApiErrorBody } from '../../src/http/error-body.js';
import { CollectionLookupPort } from '../../src/internal-data/collection-lookup-port.js';
import { InternalDataStore } from '../../src/internal-data/internal-data-store.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { chain, fakePorts, input, script } from '../engine/support/scenario-builder.js';
import { uniqueName, upload } from './support/collections.js';
import { UserStore } from '../../src/auth/user-store.js';

let testApp: TestApp;
let user: TestUser;
let engine: ScenarioEngine;
let name: string;

beforeAll(async () => {
  testApp = await createTestApp();
  user = await testApp.newUser();
  name = uniqueName('limits');
  await upload(testApp, user, name, 'customer_id;segment;limit_eur;active\n1;gold;5000;true\n2;basic;800.5;false\n', {
    indexes: 'customer_id,true',
  }).expect(201);
  engine = new ScenarioEngine({ ports: fakePorts({ lookups: testApp.services.collectionLookups }) });
});
afterAll(async () => {
  await engine.dispose();
  await testApp.close();
});

const scoring = (collection: string, keyColumn = 'customer_id') =>
  chain(
    [input('customerId', 'INTEGER', false), input('amount', 'DOUBLE')],
    [
      {
        id: 'find',
        type: 'DATA_LOOKUP',
        settings: {
          collection,
          keyColumn,
          joinVariable: 'customerId',
          mode: 'ONE',
          output: 'customer',
          columns: ['segment', 'limit_eur', 'active'],
        },
      },
      script(
        'score',
        'approved = customer !== null && customer.active && amount <= customer.limit_eur; segment = customer === null ? "unknown" : customer.segment;',
        ['approved', 'segment'],
      ),
    ],
  );

describe('a scenario with a DATA_LOOKUP node scoring against a loaded collection', () => {
  it('reads the row by its indexed key and scores with it', async () => {
    const compiled = engine.compile(`lookup-${name}`, scoring(name));
    expect((await engine.run(compiled, { customerId: 1, amount: 1000 }, { ownerId: user.id })).result).toMatchObject({
      approved: true,
      segment: 'gold',
    });
    expect((await engine.run(compiled, { customerId: 2, amount: 100 }, { ownerId: user.id })).result).toMatchObject({
      approved: false,
      segment: 'basic',
    });
    expect((await engine.run(compiled, { customerId: 3, amount: 100 }, { ownerId: user.id })).result).toMatchObject({
      customer: null,
      approved: false,
      segment: 'unknown',
    });
  });

  it('reports a missing collection and an unindexed key column as diagnostics', async () => {
    const missing = await engine.diagnose(scoring('no_such_collection'), { ownerId: user.id });
    expect(missing.map((diagnostic) => diagnostic.code)).toContain('LOOKUP_COLLECTION_NOT_FOUND');
    const unindexed = await engine.diagnose(scoring(name, 'segment'), { ownerId: user.id });
    expect(unindexed.map((diagnostic) => diagnostic.code)).toContain('LOOKUP_KEY_NOT_INDEXED');
    expect(await engine.diagnose(scoring(name), { ownerId: user.id })).toEqual([]);
  });

  it('fails with LOOKUP_FAILED when the collection was deleted', async () => {
    const gone = uniqueName('gone');
    await upload(testApp, user, gone, 'customer_id,segment,limit_eur,active\n1,gold,1,true\n', {
      indexes: 'customer_id,true',
    }).expect(201);
    const compiled = engine.compile(`lookup-${gone}`, scoring(gone));
    await testApp.services.internalData.delete(user.id, gone);
    await expect(engine.run(compiled, { customerId: 1, amount: 1 }, { ownerId: user.id })).rejects.toMatchObject({
      code: 'LOOKUP_FAILED',
      nodeId: 'find',
    });
  });

  it('abandons the run with PortUnavailableError (503 DATABASE_UNAVAILABLE, not 422 LOOKUP_FAILED) when MySQL is unreachable', async () => {
    const url = new URL(testApp.config.databaseUrl);
    const proxy = new TcpProxy(url.hostname, Number(url.port || 3306));
    await proxy.start();
    const db = knex(knexConfig(proxy.rewrite(url.toString()), { min: 0, max: 2 }, true));
    const cut = new ScenarioEngine({
      ports: fakePorts({ lookups: new CollectionLookupPort(new InternalDataStore(db, new UserStore(db)), 60_000) }),
    });
    try {
      const compiled = cut.compile(`lookup-outage-${name}`, scoring(name));
      // Warm: the collection's registry entry is cached, so the next lookup goes straight to its table.
      expect((await cut.run(compiled, { customerId: 1, amount: 1 }, { ownerId: user.id })).result).toMatchObject({
        segment: 'gold',
      });
      await proxy.cut();
      const error = await cut
        .run(compiled, { customerId: 1, amount: 1 }, { ownerId: user.id })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PortUnavailableError);
      expect(toApiErrorBody(error)).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE' });
    } finally {
      await cut.dispose();
      await db.destroy();
      await proxy.close();
    }
  }, 30_000);
});
