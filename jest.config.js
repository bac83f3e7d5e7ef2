// jest in ESM mode: run through `npm test` (sets NODE_OPTIONS=--experimental-vm-modules).
// Two tiers (docs/testing.md, "Tiers"), each file in exactly one: `unit` (test/engine but its host-timing
// tests, and every *.unit.test.ts: no MariaDB, no Redis, `npm run test:unit`) and `integration` (the rest, on a
// fresh test database). `npm test` and `make test` run both.
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.tsx?$': ['ts-jest', { useESM: true }] },
};

/**
 * Engine tests that time real host processes (deaths, quarantine, lane fairness) against wall-clock bounds:
 * the slowest of test/engine and the first to fail on a loaded machine, so they run in the full suite only.
 */
const HOST_TIMING_TESTS = ['pool/engine-hosts', 'isolation'];
const hostTiming = HOST_TIMING_TESTS.map((name) => `${name.replace('/', '\\/')}\\.test\\.ts$`).join('|');

/**
 * The fast tier (`npm run test:unit`, jest.unit.config.js): these globs only. Its setup file points
 * DATABASE_URL and JOBS_URL at a closed port, so a unit test that reaches MariaDB or Redis fails.
 */
export const unitProject = {
  ...shared,
  displayName: 'unit',
  roots: ['<rootDir>/test'],
  testMatch: ['<rootDir>/test/engine/**/*.test.ts', '<rootDir>/test/**/*.unit.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', `<rootDir>/test/engine/(${hostTiming})`],
  setupFiles: ['<rootDir>/test/support/unit-tier.js'],
};

export const runOptions = {
  testTimeout: 30000,
  // Every test passed and its file closed what it opened, yet a clean-clone run stayed alive for minutes after the
  // last test (a timer or socket of a library that no file owns): exit once the run is over, so CI never hangs.
  forceExit: true,
};

export default {
  ...runOptions,
  projects: [
    unitProject,
    {
      ...shared,
      displayName: 'integration',
      roots: ['<rootDir>/test'],
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', `<rootDir>/test/engine/(?!${hostTiming})`, '\\.unit\\.test\\.ts$'],
      globalSetup: '<rootDir>/test/support/global-setup.js',
    },
  ],
};
