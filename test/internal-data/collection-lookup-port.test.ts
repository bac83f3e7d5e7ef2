import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { uniqueName, upload } from './support/collections.js';

let testApp: TestApp;
let user: TestUser;
let name: string;

beforeAll(async () => {
  testApp = await createTestApp();
  user = await testApp.newUser();
  name = uniqueName('rates');
  await upload(
    testApp,
    user,
    name,
    'customer_id,segment,limit_eur,active,note\n10,gold,5000.5,true,a\n11,basic,100,false,\n12,gold,7000,true,c\n',
    { indexes: 'customer_id,true;segment,false' },
  ).expect(201);
});
afterAll(async () => testApp.close());

const port = () => testApp.services.collectionLookups;

describe('CollectionLookupPort', () => {
  it('finds one row by key (ONE), with booleans as booleans and NULLs kept', async () => {
    expect(
      await port().lookup({ ownerId: user.id, collection: name, keyColumn: 'customer_id', key: 11, mode: 'ONE' }),
    ).toEqual({ customer_id: 11, segment: 'basic', limit_eur: 100, active: false, note: null });
  });

  it('converts the key to the column type and selects only the asked columns', async () => {
    expect(
      await port().lookup({
        ownerId: user.id,
        collection: name,
        keyColumn: 'customer_id',
        key: '12',
        columns: ['limit_eur', 'active'],
        mode: 'ONE',
      }),
    ).toEqual({ limit_eur: 7000, active: true });
  });

  it('answers every matching row in load order (ALL)', async () => {
    const rows = await port().lookup({
      ownerId: user.id,
      collection: name,
      keyColumn: 'segment',
      key: 'gold',
      columns: ['customer_id'],
      mode: 'ALL',
    });
    expect(rows).toEqual([{ customer_id: 10 }, { customer_id: 12 }]);
  });

  it('answers null (ONE) or [] (ALL) when nothing matches, including keys the column cannot hold', async () => {
    expect(
      await port().lookup({ ownerId: user.id, collection: name, keyColumn: 'customer_id', key: 99, mode: 'ONE' }),
    ).toBeNull();
    expect(
      await port().lookup({ ownerId: user.id, collection: name, keyColumn: 'segment', key: 'silver', mode: 'ALL' }),
    ).toEqual([]);
    expect(
      await port().lookup({ ownerId: user.id, collection: name, keyColumn: 'customer_id', key: 'abc', mode: 'ONE' }),
    ).toBeNull();
    expect(
      await port().lookup({ ownerId: user.id, collection: name, keyColumn: 'customer_id', key: null, mode: 'ALL' }),
    ).toEqual([]);
  });

  it('throws a clear error for an unknown collection, column or owner', async () => {
    await expect(
      port().lookup({ ownerId: user.id, collection: 'missing_one', keyColumn: 'id', key: 1, mode: 'ONE' }),
    ).rejects.toThrow(/Collection "missing_one" does not exist/);
    await expect(
      port().lookup({ ownerId: user.id, collection: name, keyColumn: 'nope', key: 1, mode: 'ONE' }),
    ).rejects.toThrow(/no column "nope"/);
    await expect(
      port().lookup({
        ownerId: user.id,
        collection: name,
        keyColumn: 'customer_id',
        key: 1,
        columns: ['x'],
        mode: 'ONE',
      }),
    ).rejects.toThrow(/no column "x"/);
    const other = await testApp.newUser();
    await expect(
      port().lookup({ ownerId: other.id, collection: name, keyColumn: 'customer_id', key: 10, mode: 'ONE' }),
    ).rejects.toThrow(/does not exist/);
    await expect(
      port().lookup({ ownerId: user.id, collection: 'a`; drop', keyColumn: 'id', key: 1, mode: 'ONE' }),
    ).rejects.toThrow(/does not exist/);
  });

  it('describes columns and the columns leading an index; null for an unknown collection', async () => {
    expect(await port().describe({ ownerId: user.id, collection: name })).toEqual({
      columns: ['customer_id', 'segment', 'limit_eur', 'active', 'note'],
      indexedColumns: ['segment', 'customer_id'],
    });
    expect(await port().describe({ ownerId: user.id, collection: 'missing_one' })).toBeNull();
  });

  it('sees loads and deletes made in this process at once', async () => {
    const fresh = uniqueName('fresh');
    expect(await port().describe({ ownerId: user.id, collection: fresh })).toBeNull();
    await upload(testApp, user, fresh, 'k\n1\n', { indexes: 'k,true' }).expect(201);
    expect(await port().lookup({ ownerId: user.id, collection: fresh, keyColumn: 'k', key: 1, mode: 'ONE' })).toEqual({
      k: 1,
    });
    await testApp.services.internalData.delete(user.id, fresh);
    await expect(
      port().lookup({ ownerId: user.id, collection: fresh, keyColumn: 'k', key: 1, mode: 'ONE' }),
    ).rejects.toThrow(/does not exist/);
  });
});
