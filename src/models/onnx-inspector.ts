import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import type { OnnxDescription } from '../engine/index.js';

/** Why a file was refused: 'invalid' (400 MODEL_INVALID) or 'unsupported' (422 MODEL_NOT_SUPPORTED), and where. */
export interface OnnxRefusal {
  kind: 'invalid' | 'unsupported';
  message: string;
  path: string;
}

/** Reads an ONNX file's graph inputs and outputs, or says why it is refused. */
export interface OnnxInspector {
  inspect(path: string): Promise<{ ok: OnnxDescription } | { refused: OnnxRefusal }>;
}

const SCRIPT = fileURLToPath(new URL('../engine/pool/onnx-inspect.mjs', import.meta.url));

/**
 * Loads each uploaded ONNX file in a child process of its own (src/engine/pool/onnx-inspect.mjs), never on the
 * API's event loop or in its process: ONNX Runtime is a native addon, and a hostile file that crashes or hangs it
 * costs that child only. A child that dies, answers nothing or outlives `timeoutMs` refuses the file (400).
 */
export class ChildProcessOnnxInspector implements OnnxInspector {
  constructor(private readonly timeoutMs: number) {}

  inspect(path: string): Promise<{ ok: OnnxDescription } | { refused: OnnxRefusal }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--max-old-space-size=256', SCRIPT, path], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let settled = false;
      const finish = (answer: { ok: OnnxDescription } | { refused: OnnxRefusal }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(answer);
      };
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        finish({
          refused: {
            kind: 'invalid',
            message: `ONNX Runtime did not load the file within ${this.timeoutMs} ms`,
            path: 'file',
          },
        });
      }, this.timeoutMs);
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        if (out.length < 1_048_576) out += chunk;
      });
      child.stderr.resume();
      child.on('error', (error) =>
        finish({
          refused: { kind: 'invalid', message: `The model could not be inspected: ${error.message}`, path: 'file' },
        }),
      );
      child.on('close', (code, signal) => {
        try {
          const answer = JSON.parse(out) as { ok: OnnxDescription } | { refused: OnnxRefusal };
          if (code === 0 && ('ok' in answer || 'refused' in answer)) return finish(answer);
        } catch {
          // no answer: the child died loading the file
        }
        finish({
          refused: {
            kind: 'invalid',
            message: `ONNX Runtime failed loading the file (its process ended with ${signal ?? `code ${code}`})`,
            path: 'file',
          },
        });
      });
    });
  }
}
