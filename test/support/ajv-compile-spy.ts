import { Ajv2020 } from 'ajv/dist/2020.js';

type Compile = (schema: unknown, ...rest: unknown[]) => unknown;
// Ajv compiles through `compile`, or through `addSchema` then `getSchema` (express-openapi-validator's way).
const ajvCore = Object.getPrototypeOf(Ajv2020.prototype) as { compile: Compile; addSchema: Compile };

/**
 * Records every schema any Ajv of the process (ours and express-openapi-validator's) is given to compile, from
 * `start()` until `stop()`: how the tests see whether a request compiles anything on the event loop.
 */
export class AjvCompileSpy {
  readonly schemas: unknown[] = [];
  private readonly original = { compile: ajvCore.compile, addSchema: ajvCore.addSchema };

  start(): void {
    const { schemas, original } = this;
    for (const method of ['compile', 'addSchema'] as const) {
      ajvCore[method] = function (this: unknown, schema: unknown, ...rest: unknown[]) {
        schemas.push(schema);
        return original[method].call(this, schema, ...rest);
      };
    }
  }

  stop(): void {
    Object.assign(ajvCore, this.original);
  }
}
