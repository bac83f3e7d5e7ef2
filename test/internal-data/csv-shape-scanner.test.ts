import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Papa from 'papaparse';
import { CsvFile, type CsvDialect } from '../../src/internal-data/csv-file.js';
import { scanCsv } from '../../src/internal-data/csv-shape-scanner.js';

let dir: string;
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'scanner-')); });
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** Records as the first pass sees them (blank lines dropped). */
async function scanned(path: string, dialect: CsvDialect, chunkBytes: number): Promise<string[][]> {
  const records: string[][] = [];
  let current: string[] = [];
  await scanCsv(path, dialect, {
    range: (text, start, end) => { current.push(text.slice(start, end)); },
    value: (value) => { current.push(value); },
    record: () => { records.push(current); current = []; },
    abandon: () => { current = []; },
  }, chunkBytes);
  return records;
}

/** Records as the second pass (papaparse) sees them. */
async function parsed(path: string, chunkBytes: number): Promise<string[][]> {
  const csv = await CsvFile.open(path, chunkBytes);
  const records: string[][] = [];
  for await (const batch of csv.batches()) for (const record of batch.records) if (!(record.length === 1 && record[0] === '')) records.push(record);
  return records;
}

function randomCsv(seed: number, delimiter: string, newline: string): string {
  let state = seed;
  const random = () => { state = (state * 1103515245 + 12345) & 0x7fffffff; return state / 0x7fffffff; };
  const pieces = ['a', '12', '-3.5', 'true', '', 'x y', 'é€', '0', '007'];
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

describe('the first pass tokenizer', () => {
  it.each([
    [',', '\n'], [';', '\r\n'], ['\t', '\n'], [',', '\r'],
  ])('reads the same records as papaparse (delimiter %j, newline %j), across chunk boundaries', async (delimiter, newline) => {
    for (let seed = 1; seed <= 12; seed += 1) {
      const path = join(dir, `f${seed}.csv`);
      await writeFile(path, randomCsv(seed, delimiter, newline));
      const dialect = { delimiter, newline } as CsvDialect;
      const expected = await parsed(path, 1 << 20);
      for (const chunkBytes of [5, 17, 64, 1 << 20]) {
        expect(await scanned(path, dialect, chunkBytes)).toEqual(expected);
        expect(await parsed(path, chunkBytes)).toEqual(expected);
      }
      expect(expected).toEqual(Papa.parse<string[]>(randomCsv(seed, delimiter, newline), { delimiter, newline: newline as '\n', skipEmptyLines: true }).data);
    }
  });

  it('rejects an unterminated quote naming its line', async () => {
    const path = join(dir, 'open.csv');
    await writeFile(path, 'a,b\n1,2\n3,"x\n');
    await expect(scanned(path, { delimiter: ',', newline: '\n' }, 4)).rejects.toMatchObject({ code: 'INVALID_CSV', message: expect.stringMatching(/line 3/) });
  });
});
