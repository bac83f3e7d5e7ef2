import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelResolver } from '../../src/models/model-documents.js';
import { ModelService } from '../../src/models/model-service.js';
import type { ModelUsage } from '../../src/models/model-usage.js';
import type { OnnxInspector } from '../../src/models/onnx-inspector.js';
import { FakeModelStore } from './support/fake-model-store.js';

/** The registry's rules on an in-memory store (the MySQL store passes the same contract: model-store.test.ts). */

const directory = mkdtempSync(join(tmpdir(), 'model-service-'));
let files = 0;
function file(content: string | Buffer, originalName = 'model.pmml') {
  const path = join(directory, `f${++files}`);
  writeFileSync(path, content);
  return { path, originalName, size: Buffer.byteLength(content) };
}
const LOGISTIC = readFileSync(new URL('./fixtures/logistic-binary.pmml', import.meta.url));

function registry(usedBy: string[] = [], maxBytes = 1 << 20, onnx?: OnnxInspector) {
  const store = new FakeModelStore();
  const asked: unknown[][] = [];
  const usage: ModelUsage = {
    scenariosUsing: async (...args) => {
      asked.push(args);
      return usedBy;
    },
  };
  return { store, asked, service: new ModelService(store, usage, { maxBytes }, onnx) };
}

/** An inspector that answers what it is given (the real one loads the file in a child process: onnx-registry.test.ts). */
const inspector = (answer: Awaited<ReturnType<OnnxInspector['inspect']>>): OnnxInspector => ({
  inspect: async () => answer,
});
const DESCRIBED = {
  ok: {
    inputs: [{ name: 'X', elementType: 'float32' as const, shape: ['N', 4] }],
    outputs: [
      { name: 'label', elementType: 'int64' as const, shape: ['N'] },
      { name: 'probabilities', elementType: 'float32' as const, shape: ['N', 2] },
    ],
    skippedOutputs: [],
  },
};

describe('ModelService', () => {
  it('refuses, storing nothing: a file over the limit (413), a wrong name or not UTF-8 (400), unsupported PMML (422)', async () => {
    const { service, store } = registry([], 1024);
    await expect(service.upload(1, 'm', file(LOGISTIC))).rejects.toMatchObject({
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
    });
    await expect(registry().service.upload(1, 'm', file(LOGISTIC, 'model.txt'))).rejects.toMatchObject({
      status: 400,
      code: 'MODEL_INVALID',
    });
    await expect(service.upload(1, 'm', file(Buffer.from([0x3c, 0xff, 0xfe, 0x3e])))).rejects.toMatchObject({
      status: 400,
      code: 'MODEL_INVALID',
      message: expect.stringContaining('UTF-8'),
    });
    await expect(
      service.upload(
        1,
        'm',
        file(
          '<PMML><DataDictionary/><NaiveBayesModel functionName="classification"><MiningSchema/></NaiveBayesModel></PMML>',
        ),
      ),
    ).rejects.toMatchObject({ status: 422, code: 'MODEL_NOT_SUPPORTED', details: [{ path: 'PMML.NaiveBayesModel' }] });
    expect(await store.listVersions(1)).toEqual([]);
  });

  it('answers a version with the fields read from the file, and the file as uploaded', async () => {
    const { service } = registry();
    const view = await service.upload(1, 'risk', file(LOGISTIC));
    expect(view).toMatchObject({
      name: 'risk',
      version: 1,
      modelType: 'RegressionModel',
      target: 'default',
      sizeBytes: LOGISTIC.length,
    });
    expect(await service.version(1, 'risk', 'latest')).toEqual(view);
    expect(await service.file(1, 'risk', 1)).toEqual({ format: 'PMML', bytes: LOGISTIC });
    await expect(service.version(2, 'risk', 1)).rejects.toMatchObject({ status: 404, code: 'MODEL_NOT_FOUND' });
  });

  it('asks whether a version is in use (as itself, and as latest when it is the newest) and refuses 409 naming the scenarios', async () => {
    const { service, asked, store } = registry(['credit', 'limits']);
    await service.upload(1, 'risk', file(LOGISTIC));
    await service.upload(1, 'risk', file(LOGISTIC));
    await expect(service.delete(1, 'risk', 2)).rejects.toMatchObject({
      status: 409,
      code: 'MODEL_IN_USE',
      message: expect.stringContaining('"credit", "limits"'),
      details: [{ path: 'scenarios.credit' }, { path: 'scenarios.limits' }],
    });
    await expect(service.delete(1, 'risk', 1)).rejects.toMatchObject({ status: 409 });
    expect(asked).toEqual([
      [1, 'risk', 2, true],
      [1, 'risk', 1, false],
    ]);
    expect((await store.listVersions(1)).map((v) => v.version)).toEqual([2, 1]);
  });

  it('deletes a version nobody uses', async () => {
    const { service } = registry();
    await service.upload(1, 'risk', file(LOGISTIC));
    await service.delete(1, 'risk', 'latest');
    await expect(service.get(1, 'risk')).rejects.toMatchObject({ status: 404, code: 'MODEL_NOT_FOUND' });
  });

  it('stores an ONNX file the inspector accepts, with the tensors it read, and gives its bytes back', async () => {
    const { service, store } = registry([], 1 << 20, inspector(DESCRIBED));
    const bytes = Buffer.from([0x08, 0x08, 0x00, 0xff, 0x80]);
    const view = await service.upload(1, 'net', file(bytes, 'net.onnx'));
    expect(view).toMatchObject({ format: 'ONNX', modelType: 'ONNX', functionName: 'classification', sizeBytes: 5 });
    expect(view.inputs).toEqual([
      {
        name: 'X',
        dataType: 'float',
        optype: 'continuous',
        invalidValueTreatment: 'returnInvalid',
        tensor: { elementType: 'float32', shape: ['N', 4] },
      },
    ]);
    expect(view.outputs.map((o) => `${o.name}:${o.feature}`)).toEqual([
      'label:predictedValue',
      'probabilities:probability',
    ]);
    expect(await service.file(1, 'net', 1)).toEqual({ format: 'ONNX', bytes });
    // the document keeps the hash, not the file; the resolver embeds the file for compiling
    const [record] = await store.listVersions(1);
    expect((await store.documentOf(record.id)).model).toEqual({ kind: 'onnx', sha256: view.sha256 });
    const doc = {
      content: { nodes: [], edges: [] },
      nodeProperties: { m: { type: 'MODEL', content: JSON.stringify({ model: 'net', outputs: { label: 'l' } }) } },
    };
    const resolved = await new ModelResolver(store).resolve(1, doc as never, 'k');
    expect(resolved.document.models?.['net@latest'].model).toEqual({
      kind: 'onnx',
      sha256: view.sha256,
      file: bytes.toString('base64'),
    });
  });

  it('refuses what the ONNX inspector refuses (400 invalid, 422 unsupported), storing nothing', async () => {
    const refused = (kind: 'invalid' | 'unsupported') =>
      registry([], 1 << 20, inspector({ refused: { kind, message: `it is ${kind}`, path: 'graph' } }));
    const invalid = refused('invalid');
    await expect(invalid.service.upload(1, 'net', file(Buffer.from('x'), 'net.onnx'))).rejects.toMatchObject({
      status: 400,
      code: 'MODEL_INVALID',
      details: [{ path: 'graph', message: 'it is invalid' }],
    });
    expect(await invalid.store.listVersions(1)).toEqual([]);
    const unsupported = refused('unsupported');
    await expect(unsupported.service.upload(1, 'net', file(Buffer.from('x'), 'net.ONNX'))).rejects.toMatchObject({
      status: 422,
      code: 'MODEL_NOT_SUPPORTED',
    });
    expect(await unsupported.store.listVersions(1)).toEqual([]);
  });
});
