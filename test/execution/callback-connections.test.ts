import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

/**
 * Issue 27, problem 9: a callback sent on a kept-alive connection that its receiver closed meanwhile
 * failed with "socket hang up" and spent one of its attempts. It is sent again at once on a new
 * connection: one attempt, delivered.
 */
let t: TestApp;
let alice: TestUser;
let receiver: http.Server;
let url: string;
const received: string[] = [];

beforeAll(async () => {
  isolateJobStore('callback-connections');
  t = await createTestApp({ configOverrides: { outboundAllowList: ['127.0.0.1'] } });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  // A plain Node receiver (keep-alive time-out 5 s) that closes a kept-alive connection as the next
  // request arrives on it: the race a server closing an idle connection runs with the client.
  const served = new WeakMap<Socket, number>();
  receiver = http.createServer((req, res) => {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    if (count > 1) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.end('{}');
    });
  });
  receiver.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await t.close();
});

async function deliveredAttempts(
  requestId: string,
): Promise<Array<{ attempt: number; http_status: number | null; error: string | null }>> {
  const submitted = await request(t.app)
    .post('/api/scenario/code/scoreasync/double')
    .set('Score-Token', alice.scoreToken)
    .set({
      'X-SCE-RequestId': requestId,
      'X-SCE-CallbackUrl': url,
      'X-SCE-CallbackRetryCount': '3',
      'X-SCE-CallbackRetryDelay': '30',
    })
    .send({ a: 2 });
  expect(submitted.status).toBe(202);
  const row = await waitFor(async () => {
    const found = (await t.services
      .db('run_results')
      .where({ user_id: alice.id, request_id: requestId })
      .first('id', 'callback_state')) as { id: string; callback_state: string } | undefined;
    return found && found.callback_state !== 'PENDING' ? found : undefined;
  }, 10_000);
  expect(row.callback_state).toBe('DELIVERED');
  return t.services
    .db('callback_attempts')
    .where({ result_id: row.id })
    .orderBy('id')
    .select('attempt', 'http_status', 'error');
}

describe('callbacks on kept-alive connections', () => {
  it('delivers a callback whose reused connection was closed under it in one attempt, without spending a retry', async () => {
    expect(await deliveredAttempts('first-callback')).toEqual([{ attempt: 1, http_status: 200, error: null }]);
    // The second callback goes out on the first one's kept-alive connection, which the receiver closes.
    expect(await deliveredAttempts('second-callback')).toEqual([{ attempt: 1, http_status: 200, error: null }]);
    expect(received).toHaveLength(2);
  });
});
