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
  // Every test passed and its file closed what it opened, yet a clean-clone run stayed alive for minutes after the
  // last test (a timer or socket of a library that no file owns): exit once the run is over, so CI never hangs.
  forceExit: true,
};
