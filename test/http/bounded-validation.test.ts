import request from 'supertest';
import { everyNodeScenario } from '../scenarios/support/fixtures.js';
import { useTestApp } from '../support/test-app.js';

/**
 * Validation work stays bounded by the body's size: bodies of many broken elements are refused
 * within seconds (Ajv's every-problem mode took time in the square of the problems: an 800 KB
 * import held the event loop for ten minutes).
 */

const t = useTestApp();

const bearer = () => ({ Authorization: `Bearer ${t.user.accessToken}` });

describe('validation of large broken bodies', () => {
  it('answers an import of 100,000 broken scenarios (800 KB) with 400 within seconds', async () => {
    const body = `[${Array.from({ length: 100_000 }, () => '{"a":1}').join(',')}]`;
    const started = Date.now();
    const response = await request(t.app.app)
      .post('/api/scenario/import')
      .query({ context: t.user.context() })
      .set(bearer())
      .set('Content-Type', 'application/json')
      .send(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    // Every-problem validation took ten minutes; one problem takes about a second alone, up to 5 s in a loaded full run.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('answers an import whose scorecard has 20,000 broken characteristics with 400 INVALID_SCENARIO within seconds', async () => {
    const scenario = everyNodeScenario('huge-card');
    (scenario.nodeProperties.card.content as { characteristics: unknown[] }).characteristics = Array.from(
      { length: 20_000 },
      () => ({ x: 1 }),
    );
    const started = Date.now();
    const response = await request(t.app.app)
      .post('/api/scenario/import')
      .query({ context: t.user.context() })
      .set(bearer())
      .send(scenario);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_SCENARIO');
    expect(response.body.details[0].path).toMatch(/card\.content\.characteristics\[0\]/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
