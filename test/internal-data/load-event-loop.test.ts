import { measureLoopHolds } from '../support/loop-probe.js';
import type { TestApp, TestUser } from '../support/test-app.js';
import { uniqueName, upload } from './support/collections.js';
import { createLoadTestApp, LOAD_PATHS } from './support/load-paths.js';

/**
 * loadCollectionData on a large file within the limits (LIMIT_UPLOAD_BYTES, 512 MiB) never holds the event loop
 * over 100 ms (issue 28): the file is parsed, profiled and encoded a chunk at a time with a turn of the loop after
 * each, on both load paths, creating and appending.
 */

const ROWS = 600_000;
/** About 30 MB: customer_id, segment, limit, a quoted name with a comma, a score. */
function bigCsv(offset: number): Buffer {
  const lines = ['customer_id,segment,limit,name,score'];
  for (let row = 0; row < ROWS; row += 1)
    lines.push(`${offset + row},RETAIL,${row * 3},"Name ${row}, Jr",${(row / 7).toFixed(3)}`);
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}

describe.each(LOAD_PATHS)('%s', (loadPath) => {
  let testApp: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    ({ testApp } = await createLoadTestApp(loadPath));
    user = await testApp.newUser();
    // The operation's validators compile on its first requests in a process (lazily): not what is measured here.
    const warm = uniqueName();
    await upload(testApp, user, warm, 'customer_id,a\n1,2\n');
    await upload(testApp, user, warm, 'customer_id,a\n2,2\n');
  }, 60_000);
  afterAll(async () => testApp.close());

  it('creates and appends a 30 MB collection without holding the event loop over 100 ms', async () => {
    const first = bigCsv(0);
    const second = bigCsv(ROWS);
    // The probe runs in the test's process, which also builds the multipart body and collects the test's own
    // garbage (these 30 MB files): a major GC of a long-lived jest worker now and then lands in a measurement. The
    // least of two attempts is what the service holds; a hold of the service's own is in both (as yaml-bodies does).
    const attempts: Array<{ created: number; appended: number }> = [];
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const name = uniqueName();
      const created = await measureLoopHolds(() => upload(testApp, user, name, first, { indexes: 'customer_id,true' }));
      expect(created.result.status).toBe(201);
      expect(created.result.body.rowCount).toBe(ROWS);
      const appended = await measureLoopHolds(() => upload(testApp, user, name, second));
      expect(appended.result.status).toBe(200);
      expect(appended.result.body.rowCount).toBe(2 * ROWS);
      // The loop's own work where the thread's CPU time can be read; wall time elsewhere.
      attempts.push({
        created: created.longest.busyMs ?? created.longest.wallMs,
        appended: appended.longest.busyMs ?? appended.longest.wallMs,
      });
      if (attempts[attempt].created < 100 && attempts[attempt].appended < 100) break;
    }
    expect(Math.min(...attempts.map((a) => a.created))).toBeLessThan(100);
    expect(Math.min(...attempts.map((a) => a.appended))).toBeLessThan(100);
  }, 300_000);
});
