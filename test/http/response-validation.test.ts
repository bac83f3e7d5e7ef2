import { pino } from 'pino';
import request from 'supertest';
import { outsideTheContract } from '../support/outside-the-contract.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * VALIDATE_RESPONSES checks every response against the spec on both lanes of scoreScenario and on
 * every Express operation: a response that breaks the spec is logged and answered as a 500. Off, the
 * response goes out as the handler wrote it (production's default: no schema check per response).
 */
interface LogLine {
  level: number;
  msg: string;
  err?: { message?: string } | string;
}

function capturingLogger(lines: LogLine[]) {
  return pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
}

describe.each([
  ['the fast lane', 'on', true, true],
  ['Express', 'on', false, true],
  ['the fast lane', 'off', true, false],
  ['Express', 'off', false, false],
])('scoreScenario on %s with VALIDATE_RESPONSES %s', (_lane, _setting, fastLane, validate) => {
  let testApp: TestApp;
  let user: TestUser;
  const lines: LogLine[] = [];

  beforeAll(async () => {
    // Breaks the contract: ScoreResult requires more than a runId, and has no `score`.
    const broken = outsideTheContract(async () => ({ status: 200, body: { runId: 'r', score: 1 } }));
    testApp = await createTestApp({
      configOverrides: { scoreFastLane: fastLane, validateResponses: validate },
      fastLane: fastLane ? { scoreScenario: broken } : undefined,
      handlers: {
        scoreScenario: outsideTheContract(async () => ({ status: 200, body: { runId: 'r', score: 1 } })),
        // The spec promises an array of CollectionInfo.
        listCollections: outsideTheContract(async () => ({ status: 200, body: { not: 'an array' } })),
      },
      logger: capturingLogger(lines),
    });
    user = await testApp.newUser();
  });
  afterAll(async () => testApp.close());

  const score = () =>
    request(testApp.app).post(`/api/scenario/code/remote/score?name=s&key=${user.scoreToken}`).send({ a: 1 });
  const collections = () =>
    request(testApp.app).get('/api/internaldata/collections').set('Authorization', `Bearer ${user.accessToken}`);

  if (validate) {
    it('answers a score that breaks the spec with a 500 and logs what is wrong', async () => {
      const response = await score();
      expect(response.status).toBe(500);
      expect(response.body).toMatchObject({
        status: 500,
        code: 'INTERNAL_ERROR',
        requestId: response.headers['x-request-id'],
      });
      const failure = lines.find(
        (line) => line.msg === 'request failed' && /must have required property/.test(JSON.stringify(line.err)),
      );
      expect(failure?.level).toBe(50);
    });

    it('answers another operation whose response breaks the spec with a 500 and logs it', async () => {
      const response = await collections();
      expect(response.status).toBe(500);
      expect(response.body.code).toBe('INTERNAL_ERROR');
      expect(
        lines.some((line) => line.msg === 'request failed' && /must be array/.test(JSON.stringify(line.err))),
      ).toBe(true);
    });
  } else {
    it('sends a score as the handler wrote it', async () => {
      const response = await score();
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ runId: 'r', score: 1 });
    });

    it("sends another operation's response as the handler wrote it", async () => {
      const response = await collections();
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ not: 'an array' });
    });
  }
});
