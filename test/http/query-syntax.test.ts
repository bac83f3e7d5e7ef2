import request from 'supertest';
import { useTestApp } from '../support/test-app.js';

const t = useTestApp();

describe('query strings written the way the docs show them', () => {
  it('accepts `indexes` with raw commas and semicolons, as in `indexes=id,true;segment,false`', async () => {
    const response = await request(t.app.app)
      .post('/api/internaldata/collections/loadData/raw_syntax?fileName=c.csv&indexes=id,true;segment,false')
      .set('Authorization', `Bearer ${t.user.accessToken}`)
      .attach('file', Buffer.from('id,segment\n1,A\n2,B\n'), 'c.csv');
    expect(response.status).toBe(201);
    expect(response.body.indexes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ columns: ['id'], unique: true }),
        expect.objectContaining({ columns: ['segment'], unique: false }),
      ]),
    );
  });

  it('accepts the access-control context as URL-encoded JSON', async () => {
    const context = encodeURIComponent(JSON.stringify({ requester: { username: t.user.username } }));
    const response = await request(t.app.app)
      .get(`/api/scenario/export?context=${context}`)
      .set('Authorization', `Bearer ${t.user.accessToken}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });
});
