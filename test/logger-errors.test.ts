import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../src/logger.js';

/** Issue 27, problem 2: a failing write logged its whole statement (57 MB, inputs and results included). */
function captured(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, sink };
}

describe('logged errors', () => {
  it('carry a query error’s code and server message, never its statement', () => {
    const { lines, sink } = captured();
    const error = Object.assign(
      new Error(
        'insert into `run_results` (`input`) values (\'{"ssn":"123-45-6789"}\') - Data too long for column \'error_message\' at row 1',
      ),
      {
        code: 'ER_DATA_TOO_LONG',
        errno: 1406,
        sqlMessage: "Data too long for column 'error_message' at row 1",
        sql: 'insert into `run_results` (`input`) values (\'{"ssn":"123-45-6789"}\')',
      },
    );
    createLogger('info', sink).error({ err: error }, 'write failed');
    const line = JSON.parse(lines[0]) as { err: { message: string; stack: string; code: string; sql?: string } };
    expect(line.err.message).toBe("ER_DATA_TOO_LONG: Data too long for column 'error_message' at row 1");
    expect(line.err.code).toBe('ER_DATA_TOO_LONG');
    expect(line.err.sql).toBeUndefined();
    expect(lines[0]).not.toContain('123-45-6789');
    expect(line.err.stack.split('\n')[0]).toBe(
      "Error: ER_DATA_TOO_LONG: Data too long for column 'error_message' at row 1",
    );
  });

  it('cut any other long message, and leave short ones as they are', () => {
    const { lines, sink } = captured();
    const logger = createLogger('info', sink);
    logger.error({ err: new Error('q'.repeat(100_000)) }, 'long');
    logger.error({ err: new Error('short and plain') }, 'short');
    expect(lines[0].length).toBeLessThan(5000);
    expect((JSON.parse(lines[1]) as { err: { message: string } }).err.message).toBe('short and plain');
  });
});
