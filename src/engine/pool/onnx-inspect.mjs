// @ts-check
/**
 * Reads an uploaded ONNX file in a process of its own (started by src/models/onnx-inspector.ts for each upload):
 * loading a hostile file may crash or hang the native addon, which must never happen in the API's process.
 * Usage: node onnx-inspect.mjs <file>. Writes one JSON line to stdout: `{ ok: description }` (describeOnnx) or
 * `{ refused: { kind, message, path } }`, then exits.
 */
import { readFileSync } from 'node:fs';
import { OnnxModelError, describeOnnx } from './onnx-sessions.mjs';

let answer;
try {
  answer = { ok: describeOnnx(readFileSync(process.argv[2])) };
} catch (error) {
  answer =
    error instanceof OnnxModelError
      ? { refused: { kind: error.kind, message: error.message, path: error.path } }
      : {
          refused: {
            kind: 'invalid',
            message: `ONNX Runtime cannot load the file: ${String(error instanceof Error ? error.message : error)}`,
            path: 'file',
          },
        };
}
process.stdout.write(`${JSON.stringify(answer)}\n`, () => process.exit(0));
