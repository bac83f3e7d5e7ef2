import { describe, expect, it } from '@jest/globals';
import type { ModelDocument } from '../../../src/engine/index.js';
import type { ModelStore, NewModelVersion } from '../../../src/models/model-store-type.js';

/** What the fake and the MySQL store both promise (one suite, every implementation). */
export interface StoreUnderTest {
  store: ModelStore;
  newOwner(): Promise<number>;
}

const document: ModelDocument = {
  modelType: 'RegressionModel',
  functionName: 'regression',
  target: 't',
  inputs: [{ name: 'x', dataType: 'double', optype: 'continuous', invalidValueTreatment: 'returnInvalid' }],
  outputs: [{ name: 't', feature: 'predictedValue' }],
  model: {
    kind: 'regression',
    functionName: 'regression',
    normalizationMethod: 'none',
    tables: [{ intercept: 1, numeric: [{ field: 'x', exponent: 1, coefficient: 2 }], categorical: [] }],
  },
};
const version = (fileName: string): NewModelVersion => ({
  format: 'PMML',
  modelType: 'RegressionModel',
  functionName: 'regression',
  fileName,
  sizeBytes: 7,
  sha256: 'a'.repeat(64),
  file: Buffer.from(`<PMML name="${fileName}"/>`),
  document,
});

export function modelStoreContract(label: string, setUp: () => StoreUnderTest): void {
  describe(`${label} (ModelStore contract)`, () => {
    it('numbers the versions of a name from 1 and never reuses a number, even after deletes', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const first = await store.insertVersion(owner, 'm', version('a.pmml'));
      const second = await store.insertVersion(owner, 'm', version('b.pmml'));
      expect([first.version, second.version]).toEqual([1, 2]);
      await store.deleteVersion(second.id);
      await store.deleteVersion(first.id);
      expect(await store.listVersions(owner, 'm')).toEqual([]);
      expect((await store.insertVersion(owner, 'm', version('c.pmml'))).version).toBe(3);
      expect((await store.insertVersion(owner, 'other', version('d.pmml'))).version).toBe(1);
    });

    it("lists the owner's versions by name, newest first, and no one else's", async () => {
      const { store, newOwner } = setUp();
      const [owner, other] = [await newOwner(), await newOwner()];
      await store.insertVersion(owner, 'b', version('b1.pmml'));
      await store.insertVersion(owner, 'a', version('a1.pmml'));
      await store.insertVersion(owner, 'b', version('b2.pmml'));
      await store.insertVersion(other, 'a', version('x.pmml'));
      expect((await store.listVersions(owner)).map((v) => `${v.name}@${v.version}:${v.fileName}`)).toEqual([
        'a@1:a1.pmml',
        'b@2:b2.pmml',
        'b@1:b1.pmml',
      ]);
      expect((await store.listVersions(owner, 'b')).map((v) => v.version)).toEqual([2, 1]);
    });

    it('finds a version by number or the newest, and keeps its file and document as given', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      await store.insertVersion(owner, 'm', version('one.pmml'));
      const two = await store.insertVersion(owner, 'm', version('two.pmml'));
      expect(await store.findVersion(owner, 'm', 'latest')).toMatchObject({
        id: two.id,
        version: 2,
        fileName: 'two.pmml',
        format: 'PMML',
        sizeBytes: 7,
      });
      expect((await store.findVersion(owner, 'm', 1))?.fileName).toBe('one.pmml');
      expect(await store.findVersion(owner, 'm', 3)).toBeUndefined();
      expect(await store.findVersion(owner, 'nope', 'latest')).toBeUndefined();
      expect((await store.fileOf(two.id)).toString('utf8')).toBe('<PMML name="two.pmml"/>');
      expect(await store.documentOf(two.id)).toEqual(document);
    });

    it('keeps a binary file (ONNX) byte for byte', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, k) => k));
      const stored = await store.insertVersion(owner, 'net', {
        ...version('net.onnx'),
        format: 'ONNX',
        file: bytes,
        sizeBytes: bytes.length,
      });
      expect(stored.format).toBe('ONNX');
      expect(Buffer.compare(await store.fileOf(stored.id), bytes)).toBe(0);
    });
  });
}
