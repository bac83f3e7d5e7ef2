// The fast tier alone (`npm run test:unit`): the `unit` project of jest.config.js, which `npm test` runs too.
import { runOptions, unitProject } from './jest.config.js';

export default { ...runOptions, ...unitProject };
