import { describe, expect, it } from '@jest/globals';
import {
  cutWithMarker,
  databaseErrorReason,
  ERROR_DETAILS_MAX_BYTES,
  RESULT_MAX_BYTES,
  storedOutcomeTexts,
} from '../../src/execution/stored-outcome.js';
import type { RunOutcome } from '../../src/execution/run-outcome.js';

const at = new Date();
const failedWith = (error: Record<string, unknown>): RunOutcome => ({
  state: 'FAILED',
  result: null,
  error: { code: 'SCRIPT_ERROR', message: 'm', ...error },
  version: '1',
  beganAt: at,
  endedAt: at,
});

describe('stored outcome bounds', () => {
  it('keeps a text within its bound as it is', () => {
    expect(cutWithMarker('short', 100)).toBe('short');
  });

  it('cuts a text of multi-byte characters to exactly its bound of bytes, never inside a character', () => {
    const cut = cutWithMarker('é'.repeat(10_000), 1001);
    expect(Buffer.byteLength(cut)).toBe(1001);
    expect(cut).toMatch(/^é+ * … \[cut to 1001 of 20000 bytes\]$/);
    expect(cut).not.toContain('\uFFFD');
  });

  it('stores a result over RESULT_MAX_BYTES as a FAILED run, RESULT_TOO_LARGE, naming its size', () => {
    const texts = storedOutcomeTexts({
      state: 'SUCCEEDED',
      result: { big: 'z'.repeat(RESULT_MAX_BYTES) },
      error: null,
      version: '1',
      beganAt: at,
      endedAt: at,
    });
    expect(texts).toMatchObject({ state: 'FAILED', result: null, errorCode: 'RESULT_TOO_LARGE' });
    expect(texts.errorMessage).toContain(`${RESULT_MAX_BYTES + 10} bytes`);
  });

  it('cuts each string of the details, keys included', () => {
    const texts = storedOutcomeTexts(
      failedWith({ violations: [{ variable: 'k'.repeat(70_000), message: 'is not an input of this scenario' }] }),
    );
    const details = JSON.parse(texts.errorDetails!) as { violations: Array<{ variable: string }> };
    expect(Buffer.byteLength(details.violations[0].variable)).toBe(512);
    expect(details.violations[0].variable).toMatch(/ … \[cut to 512 of 70000 bytes\]$/);
  });

  it('keeps only the node when the details do not fit even with their lists cut', () => {
    const many: Record<string, string> = {};
    for (let k = 0; k < 200; k += 1) many[`field${k}`] = 'v'.repeat(400);
    const texts = storedOutcomeTexts(failedWith({ nodeId: 'n1', nodeName: 'N', nodeType: 'SCRIPT', ...many }));
    expect(JSON.parse(texts.errorDetails!)).toEqual({
      nodeId: 'n1',
      nodeName: 'N',
      nodeType: 'SCRIPT',
      detailsOmitted: true,
    });
    expect(Buffer.byteLength(texts.errorDetails!)).toBeLessThanOrEqual(ERROR_DETAILS_MAX_BYTES);
  });

  it('names a database error by its code and server message, never the statement', () => {
    const error = Object.assign(new Error("INSERT INTO `run_results` VALUES ('secret input') - Data too long"), {
      code: 'ER_DATA_TOO_LONG',
      sqlMessage: "Data too long for column 'version' at row 1",
    });
    expect(databaseErrorReason(error)).toBe("ER_DATA_TOO_LONG: Data too long for column 'version' at row 1");
  });
});
