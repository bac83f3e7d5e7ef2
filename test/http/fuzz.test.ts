import fc from 'fast-check';
import { describeRequest } from '../support/fuzz/fuzz-requests.js';
import { startFuzzSession, type FuzzSession } from '../support/fuzz/fuzz-session.js';

/**
 * Schema-driven fuzzing (issue #9): requests derived from spec/openapi.json, many of them
 * malformed, against the real app. Any 5xx, any error that is not a JSON `Error` body, and any
 * answer the spec does not declare fails the test, which prints the seed, the path and the request.
 * Time-bounded (FUZZ_TIME_LIMIT_MS, default 35 s of requests); replay a failure with
 * FUZZ_SEED=<seed> FUZZ_PATH=<path>. The longer run is `npm run fuzz -- --requests 10000`.
 */

const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 35_000);
const SEED =
  process.env.FUZZ_SEED === undefined ? Date.now() ^ (Math.random() * 0x100000000) : Number(process.env.FUZZ_SEED);
const PATH = process.env.FUZZ_PATH;

let session: FuzzSession;

beforeAll(async () => {
  session = await startFuzzSession();
}, 60_000);
afterAll(async () => session?.close());

describe('requests derived from the spec, well-formed and malformed', () => {
  it(
    'never get a 5xx, a non-JSON error or an answer the spec does not declare',
    async () => {
      let sent = 0;
      await fc.assert(
        fc.asyncProperty(session.generator.requests(), async (request) => {
          sent += 1;
          const { response, findings } = await session.run(request);
          if (findings.length > 0) {
            throw new Error(
              `${findings.map((finding) => `${finding.kind}: ${finding.message}${finding.cause ? `\ncause: ${finding.cause}` : ''}`).join('\n')}\n${describeRequest(request, session.baseUrl)}\n(answered ${response.status} in ${response.durationMs} ms)`,
            );
          }
        }),
        {
          seed: SEED,
          ...(PATH ? { path: PATH } : {}),
          numRuns: PATH ? 1 : 1_000_000,
          endOnFailure: true,
          plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS)],
          reporter: (details) => {
            if (!details.failed) return;
            const reason =
              details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
            throw new Error(
              `Fuzzing failed (seed ${details.seed}, path ${details.counterexamplePath ?? ''}, after ${details.numRuns} requests):\n${reason}\nReplay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath ?? ''} npm test -- test/http/fuzz.test.ts`,
            );
          },
        },
      );
      // A run (not a replay) must have reached the app in earnest, not stopped at set-up.
      expect(sent).toBeGreaterThan(PATH ? 0 : 50);
    },
    TIME_LIMIT_MS + 60_000,
  );
});
