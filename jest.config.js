// jest in ESM mode: run through `npm test` (sets NODE_OPTIONS=--experimental-vm-modules).
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.tsx?$': ['ts-jest', { useESM: true }] },
  globalSetup: '<rootDir>/test/support/global-setup.js',
  testTimeout: 30000,
  // Two test files at a time, whatever the core count (Jest's default is one fewer worker than cores: one on
  // these 2-core machines). Most files wait on MariaDB, Redis, timers and child processes rather than on the
  // CPU, and each keeps to its own scenario ids, users and job-store prefix: 7m44s → 4m21s and 4m44s for the
  // whole suite here, every test passing each time. Not more: timing tests (fairness, lanes) need some CPU spare.
  maxWorkers: 2,
};
