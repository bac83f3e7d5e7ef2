import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RecordingSettingsStore } from '../../src/records/recording-settings-store.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { freePort } from '../support/private-redis.js';
import {
  exitWithin,
  startServiceProcess,
  stopAll,
  waitUntilListening,
  type ServiceProcess,
} from '../support/service-process.js';

/**
 * Issue 27, problem 7: SIGTERM of an API under keep-alive load kept answering new requests for 30 s,
 * was forced out with exit 1 without storing its buffered decision records, and reset requests on
 * keep-alive connections that were idle for a moment. An API process as operators run it, under
 * keep-alive load from this test, gets SIGTERM.
 */
const CONNECTIONS = 16;

let t: TestApp;
let alice: TestUser;
let scenarioId: number;
let port: number;
let api: ServiceProcess;
const processes: ServiceProcess[] = [];

interface Outcome {
  status?: number;
  connectionClose?: boolean;
  error?: string;
  reused?: boolean;
  at: number;
}

beforeAll(async () => {
  t = await createTestApp();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  scenarioId = (
    (await t.services.db('scenarios').where({ owner_id: alice.id, name: 'double' }).first('id')) as { id: number }
  ).id;
  // Every sync run recorded: the records written must equal the 200s answered.
  await new RecordingSettingsStore(t.services.db).save(scenarioId, {
    enabled: true,
    retentionDays: 30,
    syncSampleRate: 1,
    trace: false,
  });
  port = await freePort();
  api = startServiceProcess('src/main.ts', {
    PORT: String(port),
    RUN_WORKER: 'false',
    LOG_LEVEL: 'info',
    JOBS_KEY_PREFIX: `scoring:test:shutdown:${randomUUID().slice(0, 8)}:`,
  });
  processes.push(api);
  await waitUntilListening(api, port);
}, 60_000);

afterAll(async () => {
  await stopAll(processes);
  await t?.close();
});

/** One keep-alive client: sends sync scores one after another on its connection until one is refused. */
async function loadLoop(agent: http.Agent, outcomes: Outcome[]): Promise<void> {
  for (;;) {
    const outcome = await new Promise<Outcome>((resolve) => {
      const payload = JSON.stringify({ a: 3 });
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/scenario/code/remote/score?name=double',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(payload)),
            'score-token': alice.scoreToken,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode, connectionClose: res.headers.connection === 'close', at: Date.now() }),
          );
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ error: error.code ?? error.message, reused: req.reusedSocket, at: Date.now() }),
      );
      req.end(payload);
    });
    outcomes.push(outcome);
    if (outcome.error) return;
  }
}

describe('SIGTERM under keep-alive load', () => {
  it('stops taking requests on every connection, answers what was sent, stores every record and exits 0 within seconds', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const loops: Outcome[][] = Array.from({ length: CONNECTIONS }, () => []);
    const running = loops.map((outcomes) => loadLoop(agent, outcomes));
    // A keep-alive connection that sits idle: the server closes it, nothing is reset.
    const idleAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    await new Promise<void>((resolve, reject) =>
      http
        .get({ host: '127.0.0.1', port, path: '/health/live', agent: idleAgent }, (res) =>
          res.resume().on('end', resolve),
        )
        .on('error', reject),
    );
    let idleClosedAt = 0;
    const idleSocket = Object.values(idleAgent.freeSockets).flat()[0];
    idleSocket?.on('close', () => {
      idleClosedAt = Date.now();
    });

    await new Promise((resolve) => setTimeout(resolve, 2000));
    const beforeSignal = loops.flat().filter((outcome) => outcome.status === 200).length;
    expect(beforeSignal).toBeGreaterThan(50);
    const signalled = Date.now();
    api.child.kill('SIGTERM');
    const code = await exitWithin(api, 15_000);
    const exitedAfterMs = Date.now() - signalled;
    await Promise.all(running);
    agent.destroy();
    idleAgent.destroy();

    const all = loops.flat();
    // Exit 0, well inside the 30 s an orchestrator gives, and the logs were written out to the end.
    expect(code).toBe(0);
    expect(exitedAfterMs).toBeLessThan(8000);
    expect(api.output()).toContain('HTTP connections closed');
    // No request written on a connection was reset or left unanswered: the only failures are new
    // connections refused once the listener closed.
    expect(all.filter((outcome) => outcome.error && outcome.error !== 'ECONNREFUSED')).toEqual([]);
    expect(all.filter((outcome) => outcome.status !== undefined && outcome.status !== 200)).toEqual([]);
    // Every connection stopped taking requests: its last answer said Connection: close, and the request
    // after it was refused.
    for (const outcomes of loops) {
      expect(outcomes[outcomes.length - 1].error).toBe('ECONNREFUSED');
      expect(outcomes[outcomes.length - 2]).toMatchObject({ status: 200, connectionClose: true });
      expect(outcomes[outcomes.length - 2].at - signalled).toBeLessThan(3000);
    }
    expect(idleClosedAt).toBeGreaterThan(0);
    expect(idleClosedAt - signalled).toBeLessThan(3000);
    // Every run answered 200 has its decision record (the buffered ones were stored before the exit).
    const answered = all.filter((outcome) => outcome.status === 200).length;
    const recorded = (await t.services
      .db('decision_record_pages')
      .where({ scenario_id: scenarioId })
      .sum({ n: 'records' })
      .first()) as { n: string | number | null };
    expect(Number(recorded.n ?? 0)).toBe(answered);
  }, 60_000);
});
