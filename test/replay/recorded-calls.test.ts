import { afterAll, describe, expect, it } from '@jest/globals';
import { ScenarioEngine } from '../../src/engine/index.js';
import type { HttpCapture } from '../../src/records/decision-record.js';
import { RecordedCalls } from '../../src/replay/recorded-calls.js';
import { chain, fakePorts, input, script } from '../engine/support/scenario-builder.js';

/** HTTP_CALL nodes answered from a record's captures (the engine's per-run port hooks); the HTTP port itself fails loudly. */

const engine = new ScenarioEngine({ ports: fakePorts() });
afterAll(() => engine.dispose());

const capture = (
  attempt: number,
  answer: Pick<HttpCapture, 'response' | 'failure'>,
  nodeId = 'bureau',
): HttpCapture => ({
  seq: attempt - 1,
  kind: 'HTTP_CALL',
  nodeId,
  callPath: [],
  attempt,
  request: { method: 'GET', url: 'https://bureau.example/score/1' },
  ...answer,
});

function bureauScenario(settings: Record<string, unknown>) {
  return engine.compile(
    `recorded-${JSON.stringify(settings)}`,
    chain(
      [input('id', 'INTEGER')],
      [
        {
          id: 'bureau',
          type: 'HTTP_CALL',
          settings: { method: 'GET', url: 'https://bureau.example/score/{{id}}', output: 'bureau', ...settings },
        },
        script('read', 'score = bureau ? bureau.body.score : null;', ['score']),
      ],
    ),
  );
}

describe('RecordedCalls', () => {
  it('answers each attempt with what that attempt got: a recorded 503 is retried and the retry gets the recorded answer', async () => {
    const calls = new RecordedCalls([
      capture(1, { response: { status: 503, body: 'busy' } }),
      capture(2, { response: { status: 200, body: { score: 640 } } }),
    ]);
    const outcome = await engine.run(bureauScenario({ retries: 1 }), { id: 1 }, { ownerId: 1, portHooks: calls });
    expect(outcome.result.score).toBe(640);
    expect(calls).toMatchObject({ served: 2, requestDiffers: 0, unrecorded: [] });
  });

  it('throws a recorded failure again, with its code, so the node catches or fails as it did', async () => {
    const refused = { failure: { code: 'HTTP_TARGET_REFUSED', message: 'target refused by the outbound policy' } };
    const caught = new RecordedCalls([capture(1, refused)]);
    const outcome = await engine.run(
      bureauScenario({ retries: 3, catchErrors: true, errorOutput: 'problem' }),
      { id: 1 },
      { ownerId: 1, portHooks: caught },
    );
    // Refusals are never retried: one attempt, as recorded.
    expect(outcome.result).toMatchObject({
      bureau: null,
      problem: { code: 'HTTP_TARGET_REFUSED', message: 'target refused by the outbound policy' },
    });
    expect(caught.served).toBe(1);
    await expect(
      engine.run(bureauScenario({}), { id: 1 }, { ownerId: 1, portHooks: new RecordedCalls([capture(1, refused)]) }),
    ).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED', nodeId: 'bureau' });
  });

  it('makes no call for an attempt the recording lacks, and names the node', async () => {
    const calls = new RecordedCalls([capture(1, { failure: { message: 'connect ECONNREFUSED' } })]);
    await expect(
      engine.run(bureauScenario({ retries: 1 }), { id: 1 }, { ownerId: 1, portHooks: calls }),
    ).rejects.toMatchObject({
      code: 'HTTP_CALL_FAILED',
      message: expect.stringContaining('no recorded answer for HTTP_CALL node "bureau"'),
    });
    expect(calls.unrecorded).toEqual([{ nodeId: 'bureau', callPath: [] }]);
    expect(calls.served).toBe(1);
  });

  it('counts a served call whose request differs from the recorded one', async () => {
    const calls = new RecordedCalls([capture(1, { response: { status: 200, body: { score: 1 } } })]);
    await engine.run(bureauScenario({}), { id: 2 }, { ownerId: 1, portHooks: calls });
    expect(calls).toMatchObject({ served: 1, requestDiffers: 1 });
  });

  it("does not serve another node's recording", async () => {
    const calls = new RecordedCalls([capture(1, { response: { status: 200, body: { score: 1 } } }, 'elsewhere')]);
    const outcome = await engine.run(
      bureauScenario({ catchErrors: true, errorOutput: 'problem' }),
      { id: 1 },
      { ownerId: 1, portHooks: calls },
    );
    expect(outcome.result.bureau).toBeNull();
    expect(calls.unrecorded).toEqual([{ nodeId: 'bureau', callPath: [] }]);
  });
});
