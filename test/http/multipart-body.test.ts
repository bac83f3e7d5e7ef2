import request from 'supertest';
import { createTestApp, useTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { collectionTables } from '../internal-data/support/collections.js';

const t = useTestApp();

/** The three operations that take multipart bodies, with the query each needs. */
const operations = () =>
  [
    ['loadCollectionData', `/api/internaldata/collections/loadData/multi_${Date.now().toString(36)}?fileName=f.csv`],
    [
      'createInputVariablesFromCsv',
      `/api/scenario/data/inputvariables/create?context=${encodeURIComponent(t.user.context())}`,
    ],
    ['uploadModelVersion', `/api/models/multi-${Date.now().toString(36)}/versions`],
  ] as const;

const CSV = 'true;income;DOUBLE;yearly income;\n';

function part(boundary: string): string {
  return `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.csv"\r\nContent-Type: text/csv\r\n\r\n${CSV}\r\n--${boundary}--\r\n`;
}

const bodies: Array<[string, string, string]> = [
  ['a boundary that does not match the header', 'multipart/form-data; boundary=expected', part('other')],
  ['a body cut short inside the file', 'multipart/form-data; boundary=b0undary', part('b0undary').slice(0, 90)],
  [
    'a body cut short before its closing boundary',
    'multipart/form-data; boundary=b0undary',
    part('b0undary').slice(0, -12),
  ],
  [
    'a part header without its blank line',
    'multipart/form-data; boundary=b0undary',
    '--b0undary\r\nContent-Disposition: form-data; name="file"; filename="f.csv"\r\n--b0undary--\r\n',
  ],
  ['no boundary at all', 'multipart/form-data', part('b0undary')],
];

describe.each([0, 1, 2])('malformed multipart bodies (operation %#)', (which) => {
  it.each(bodies)('answer 400 MALFORMED_BODY for %s, and write nothing', async (_label, contentType, body) => {
    const [operationId, url] = operations()[which];
    const tablesBefore = await collectionTables(t.app);
    const response = await request(t.app.app)
      .post(url)
      .set('Authorization', `Bearer ${t.user.accessToken}`)
      .set('Content-Type', contentType)
      .send(body);
    expect({ operationId, status: response.status }).toEqual({ operationId, status: 400 });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toMatchObject({
      status: 400,
      code: 'MALFORMED_BODY',
      message: expect.stringMatching(/multipart/i),
    });
    expect(await collectionTables(t.app)).toEqual(tablesBefore);
  });
});

describe('upload sizes per operation', () => {
  let small: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    small = await createTestApp({
      configOverrides: { limits: { ...t.app.config.limits, bodyBytes: 2048, uploadBytes: 1 << 20 } },
    });
    owner = await small.newUser();
  });
  afterAll(async () => small.close());

  it('bounds a variables CSV by the body limit (it is read whole into memory), and a collection CSV by the upload limit', async () => {
    const lines = Array.from({ length: 200 }, (_, index) => `true;v${index};INTEGER;variable number ${index};`).join(
      '\n',
    );
    expect(Buffer.byteLength(lines)).toBeGreaterThan(2048);
    const variables = await request(small.app)
      .post('/api/scenario/data/inputvariables/create')
      .query({ context: owner.context() })
      .set('Authorization', `Bearer ${owner.accessToken}`)
      .attach('file', Buffer.from(lines), 'variables.csv');
    expect(variables.status).toBe(413);
    expect(variables.body.code).toBe('PAYLOAD_TOO_LARGE');
    const collection = await request(small.app)
      .post(`/api/internaldata/collections/loadData/big_${Date.now().toString(36)}`)
      .query({ fileName: 'c.csv' })
      .set('Authorization', `Bearer ${owner.accessToken}`)
      .attach('file', Buffer.from(`required;name;type;description;tags\n${lines}\n`), 'c.csv');
    expect(collection.status).toBe(201);
  });
});
