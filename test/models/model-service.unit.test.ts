import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelService } from '../../src/models/model-service.js';
import type { ModelUsage } from '../../src/models/model-usage.js';
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

function registry(usedBy: string[] = [], maxBytes = 1 << 20) {
  const store = new FakeModelStore();
  const asked: unknown[][] = [];
  const usage: ModelUsage = { scenariosUsing: async (...args) => { asked.push(args); return usedBy; } };
  return { store, asked, service: new ModelService(store, usage, { maxBytes }) };
}

describe('ModelService', () => {
  it('refuses, storing nothing: a file over the limit (413), a wrong name or not UTF-8 (400), unsupported PMML (422)', async () => {
    const { service, store } = registry([], 1024);
    await expect(service.upload(1, 'm', file(LOGISTIC))).rejects.toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    await expect(registry().service.upload(1, 'm', file(LOGISTIC, 'model.txt'))).rejects.toMatchObject({ status: 400, code: 'MODEL_INVALID' });
    await expect(service.upload(1, 'm', file(Buffer.from([0x3c, 0xff, 0xfe, 0x3e])))).rejects.toMatchObject({ status: 400, code: 'MODEL_INVALID', message: expect.stringContaining('UTF-8') });
    await expect(service.upload(1, 'm', file('<PMML><DataDictionary/><NaiveBayesModel functionName="classification"><MiningSchema/></NaiveBayesModel></PMML>')))
      .rejects.toMatchObject({ status: 422, code: 'MODEL_NOT_SUPPORTED', details: [{ path: 'PMML.NaiveBayesModel' }] });
    expect(await store.listVersions(1)).toEqual([]);
  });

  it('answers a version with the fields read from the file, and the file as uploaded', async () => {
    const { service } = registry();
    const view = await service.upload(1, 'risk', file(LOGISTIC));
    expect(view).toMatchObject({ name: 'risk', version: 1, modelType: 'RegressionModel', target: 'default', sizeBytes: LOGISTIC.length });
    expect(await service.version(1, 'risk', 'latest')).toEqual(view);
    expect(await service.file(1, 'risk', 1)).toBe(LOGISTIC.toString('utf8'));
    await expect(service.version(2, 'risk', 1)).rejects.toMatchObject({ status: 404, code: 'MODEL_NOT_FOUND' });
  });

  it('asks whether a version is in use (as itself, and as latest when it is the newest) and refuses 409 naming the scenarios', async () => {
    const { service, asked, store } = registry(['credit', 'limits']);
    await service.upload(1, 'risk', file(LOGISTIC));
    await service.upload(1, 'risk', file(LOGISTIC));
    await expect(service.delete(1, 'risk', 2)).rejects.toMatchObject({
      status: 409, code: 'MODEL_IN_USE', message: expect.stringContaining('"credit", "limits"'), details: [{ path: 'scenarios.credit' }, { path: 'scenarios.limits' }],
    });
    await expect(service.delete(1, 'risk', 1)).rejects.toMatchObject({ status: 409 });
    expect(asked).toEqual([[1, 'risk', 2, true], [1, 'risk', 1, false]]);
    expect((await store.listVersions(1)).map((v) => v.version)).toEqual([2, 1]);
  });

  it('deletes a version nobody uses', async () => {
    const { service } = registry();
    await service.upload(1, 'risk', file(LOGISTIC));
    await service.delete(1, 'risk', 'latest');
    await expect(service.get(1, 'risk')).rejects.toMatchObject({ status: 404, code: 'MODEL_NOT_FOUND' });
  });
});
