import request from 'supertest';
import { useTestApp } from '../support/test-app.js';

const t = useTestApp();

describe('tables left by interrupted loads', () => {
  it('are dropped at start-up, and collections are kept', async () => {
    const loaded = await request(t.app.app)
      .post('/api/internaldata/collections/loadData/kept?fileName=k.csv')
      .set('Authorization', `Bearer ${t.user.accessToken}`)
      .attach('file', Buffer.from('id,name\n1,a\n'), 'k.csv');
    expect(loaded.status).toBe(201);
    const { db } = t.app.services;
    // What a process that died mid-load leaves: a collection table no registry row owns, and a staging table.
    await db.raw('CREATE TABLE idc_987654321 (_row_id BIGINT PRIMARY KEY)');
    await db.raw('CREATE TABLE idcstage_1_deadbeef0000 (_row_id BIGINT PRIMARY KEY)');

    // A negative age makes the just-created tables count as old.
    const dropped = await t.app.services.internalData.removeOrphanTables(-5);
    expect(dropped).toEqual(expect.arrayContaining(['idc_987654321', 'idcstage_1_deadbeef0000']));
    const [rows] = (await db.raw(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('idc_987654321', 'idcstage_1_deadbeef0000')",
    )) as [unknown[], unknown];
    expect(rows).toEqual([]);
    const read = await request(t.app.app)
      .get('/api/internaldata/collections/kept')
      .set('Authorization', `Bearer ${t.user.accessToken}`);
    expect(read.body.rows).toEqual([{ id: 1, name: 'a' }]);
  });

  it('spare tables younger than the age given (a load in progress)', async () => {
    await t.app.services.db.raw('CREATE TABLE idc_987654322 (_row_id BIGINT PRIMARY KEY)');
    expect(await t.app.services.internalData.removeOrphanTables(3600)).not.toContain('idc_987654322');
    await t.app.services.db.raw('DROP TABLE idc_987654322');
  });
});
