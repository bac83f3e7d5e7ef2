import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Papa from 'papaparse';
import { CsvFile, isBlankRecord, MAX_RECORD_CHARS } from '../../src/internal-data/csv-file.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-file-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** Records as every pass sees them (blank lines dropped), read `chunkBytes` at a time. */
async function records(path: string, chunkBytes: number): Promise<string[][]> {
  const csv = await CsvFile.open(path, chunkBytes);
  const found: string[][] = [];
  for await (const batch of csv.batches())
    for (const record of batch.records) if (!isBlankRecord(record)) found.push(record);
  return found;
}

function randomCsv(seed: number, delimiter: string, newline: string): string {
  let state = seed;
  const random = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const pieces = ['a', '12', '-3.5', 'true', '', 'x y', 'é€', '0', '007', '1);DROP TABLE t;--'];
  const lines = ['h1,h2,h3'.replace(/,/g, delimiter)];
  for (let row = 0; row < 60; row += 1) {
    const fields: string[] = [];
    const width = random() < 0.1 ? 2 : 3;
    for (let field = 0; field < width; field += 1) {
      const r = random();
      if (r < 0.25) fields.push(`"${pieces[Math.floor(random() * pieces.length)]}${delimiter}""q""${newline}z"`);
      else fields.push(pieces[Math.floor(random() * pieces.length)]);
    }
    lines.push(random() < 0.05 ? '' : fields.join(delimiter));
  }
  return lines.join(newline) + (seed % 2 === 0 ? newline : '');
}

describe('CsvFile, the one tokenizer of every pass', () => {
  it.each([
    [',', '\n'],
    [';', '\r\n'],
    ['\t', '\n'],
    [',', '\r'],
  ])('reads the same records whatever the chunk boundaries (delimiter %j, newline %j)', async (delimiter, newline) => {
    for (let seed = 1; seed <= 12; seed += 1) {
      const path = join(dir, `f${seed}.csv`);
      const text = randomCsv(seed, delimiter, newline);
      await writeFile(path, text);
      const whole = Papa.parse<string[]>(text, { delimiter, newline: newline as '\n', skipEmptyLines: true }).data;
      for (const chunkBytes of [5, 17, 64, 1 << 20]) expect(await records(path, chunkBytes)).toEqual(whole);
    }
  });

  it('rejects an unterminated quote naming its line', async () => {
    const path = join(dir, 'open.csv');
    await writeFile(path, 'a,b\n1,2\n3,"x\n');
    await expect(records(path, 4)).rejects.toMatchObject({
      code: 'INVALID_CSV',
      message: expect.stringMatching(/line 3/),
    });
  });

  it('rejects a record longer than the limit as soon as it is read, naming its line', async () => {
    const path = join(dir, 'endless.csv');
    await writeFile(path, `a,b\n1,2\n3,"${'x'.repeat(MAX_RECORD_CHARS + 10)}`);
    const started = Date.now();
    await expect(records(path, 256 << 10)).rejects.toMatchObject({
      code: 'INVALID_CSV',
      message: expect.stringMatching(/longer than \d+ characters at line 3/),
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
