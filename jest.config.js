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
};
