import { afterAll, describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import type IsolatedVm from 'isolated-vm';
import { compileScenario } from '../../../src/engine/compiler/compile-scenario.js';
import type { ModelDocument } from '../../../src/engine/index.js';
import { BOOTSTRAP_SOURCE } from '../../../src/engine/sandbox/bootstrap-source.js';
import { chain, input } from '../support/scenario-builder.js';

/**
 * The sandbox runtime's ONNX path (bootstrap-source.ts), with a recording port in place of the engine host's: the
 * runs of one crossing that reach an ONNX MODEL node are scored in one call, their rows stacked, each run resuming
 * with its own row's outputs, in item order; a refused call fails each of them with MODEL_RUN_FAILED.
 */

const ivm = createRequire(import.meta.url)('isolated-vm') as typeof IsolatedVm;
const isolates: IsolatedVm.Isolate[] = [];
afterAll(() => {
  for (const isolate of isolates) isolate.dispose();
});

/** y = 2x per row (output `y`, one value), and [x, -x] (output `pair`, two values). */
const MODEL: ModelDocument = {
  format: 'ONNX',
  modelType: 'ONNX',
  functionName: 'regression',
  inputs: [
    {
      name: 'x',
      dataType: 'double',
      optype: 'continuous',
      invalidValueTreatment: 'returnInvalid',
      tensor: { elementType: 'float64', shape: ['N', 1] },
    },
  ],
  outputs: [
    { name: 'y', feature: 'predictedValue', tensor: { elementType: 'float64', shape: ['N', 1] } },
    { name: 'pair', feature: 'predictedValue', tensor: { elementType: 'float64', shape: ['N', 2] } },
  ],
  model: { kind: 'onnx', sha256: 'f'.repeat(64), file: 'AA==' },
};

function sandbox(answer: (request: { rows: number; feeds: number[][]; fetch: string[] }) => unknown, model = MODEL) {
  const calls: { key: string; rows: number; feeds: number[][]; fetch: string[] }[] = [];
  const isolate = new ivm.Isolate({ memoryLimit: 64 });
  isolates.push(isolate);
  const context = isolate.createContextSync();
  const port = new ivm.Callback((key: string, json: string) => {
    const request = JSON.parse(json) as { rows: number; feeds: number[][]; fetch: string[] };
    calls.push({ key, ...request });
    return JSON.stringify(answer(request));
  });
  const bootstrap = context.evalSync(BOOTSTRAP_SOURCE, { reference: true }) as IsolatedVm.Reference<
    (...args: unknown[]) => unknown
  >;
  const rt = bootstrap.applySync(
    undefined,
    [new ivm.Callback(() => 0), new ivm.ExternalCopy(new SharedArrayBuffer(8)).copyInto(), 1000, port],
    { result: { reference: true } },
  ) as unknown as IsolatedVm.Reference<Record<string, unknown>>;
  const doc = chain(
    [input('x', 'DOUBLE')],
    [{ id: 'm', type: 'MODEL', settings: { model: 'm', version: 1, outputs: { y: 'y', pair: 'pair' } } }],
    { outputs: ['y', 'pair'] },
  );
  const { plan, diagnostics } = compileScenario({ ...doc, models: { 'm@1': model } }, () => null);
  expect(diagnostics).toEqual([]);
  const define = context.evalSync(`(function (rt, id) { "use strict"; rt.define(id, (${plan!.source})(rt)); })`, {
    reference: true,
  });
  define.applySync(undefined, [rt.derefInto(), 1]);
  const batch = rt.getSync('batch', { reference: true }) as IsolatedVm.Reference<(json: string) => string>;
  const run = (xs: unknown[]) => {
    const out = batch.applySync(undefined, [
      JSON.stringify(xs.map((x, k) => [k, 0, 1, [{ x }, plan!.startIndex, null, false, 1, null]])),
    ]) as string;
    const [outputs] = JSON.parse(out.slice(out.indexOf('\n') + 1)) as [
      { s: string; result?: Record<string, unknown>; code?: string; message?: string }[],
    ];
    return outputs;
  };
  return { calls, run };
}

describe('ONNX MODEL nodes in the sandbox runtime', () => {
  it('scores the runs of a crossing in one call, rows stacked, each run getting its own row', () => {
    const { calls, run } = sandbox(({ feeds }) => ({
      ok: [feeds[0].map((x) => 2 * x), feeds[0].flatMap((x) => [x, -x])],
    }));
    const outputs = run([1, 2, 3, 4, 5]);
    expect(calls).toEqual([{ key: 'f'.repeat(64), rows: 5, feeds: [[1, 2, 3, 4, 5]], fetch: ['y', 'pair'] }]);
    expect(outputs.map((o) => o.result)).toEqual([1, 2, 3, 4, 5].map((x) => ({ y: 2 * x, pair: [x, -x] })));
  });

  it('keeps the item order when a run fails before the model, and calls with the rows that reached it', () => {
    const { calls, run } = sandbox(({ feeds }) => ({
      ok: [feeds[0].map((x) => 2 * x), feeds[0].flatMap((x) => [x, -x])],
    }));
    const outputs = run([1, 'two', 3]);
    expect(calls.map((c) => c.feeds)).toEqual([[[1, 3]]]);
    expect(outputs[0].result).toEqual({ y: 2, pair: [1, -1] });
    expect(outputs[1]).toMatchObject({ s: 'error', code: 'MODEL_INPUT_INVALID' });
    expect(outputs[2].result).toEqual({ y: 6, pair: [3, -3] });
  });

  it('fails every run of a refused call with MODEL_RUN_FAILED', () => {
    const { run } = sandbox(() => ({ error: 'bad input' }));
    expect(run([1, 2])).toEqual(
      [1, 2].map(() =>
        expect.objectContaining({
          s: 'error',
          code: 'MODEL_RUN_FAILED',
          message: "node 'm': ONNX Runtime failed: bad input",
        }),
      ),
    );
  });

  it('calls a model whose batch dimension is fixed at 1 run by run', () => {
    const single = {
      ...MODEL,
      inputs: [{ ...MODEL.inputs[0], tensor: { elementType: 'float64' as const, shape: [1, 1] } }],
    };
    const { calls, run } = sandbox(
      ({ feeds }) => ({ ok: [feeds[0].map((x) => 2 * x), feeds[0].flatMap((x) => [x, -x])] }),
      single,
    );
    expect(run([1, 2, 3]).map((o) => o.result?.y)).toEqual([2, 4, 6]);
    expect(calls.map((c) => c.rows)).toEqual([1, 1, 1]);
  });
});
