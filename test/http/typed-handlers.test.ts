import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * Regenerating from a changed spec must make `tsc` fail in the code that no longer conforms, in every
 * feature module (docs/architecture.md, "Conventions: Handlers"). The test copies src/ twice into a
 * temporary project: one copy with generated/ regenerated from the spec as it is (it must compile
 * clean), one with generated/ regenerated from a spec carrying every mutation below at once. One `tsc`
 * run checks both, and each mutation must produce an error inside the handler (or the code building
 * the body) it names.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Mutation {
  module: string;
  change: string;
  apply(spec: Json): void;
  /** Where `tsc` must report an error: a file of src/ and the function (handler) it is in. */
  file: string;
  inside: string;
}

const schemas = (spec: Json): Json => spec.components.schemas;
const operation = (spec: Json, path: string, method: string): Json => spec.paths[path][method];

function renameProperty(schema: Json, from: string, to: string): void {
  schema.properties = Object.fromEntries(
    Object.entries(schema.properties as Json).map(([name, value]) => [name === from ? to : name, value]),
  );
  schema.required = (schema.required as string[]).map((name) => (name === from ? to : name));
}

function parameterNamed(spec: Json, path: string, method: string, name: string): Json {
  return (operation(spec, path, method).parameters as Json[]).find((parameter) => parameter.name === name) as Json;
}

const MUTATIONS: Mutation[] = [
  {
    module: 'batch',
    change: 'BatchStatus.total becomes a string',
    apply: (spec) => {
      schemas(spec).BatchStatus.properties.total = { type: 'string' };
    },
    file: 'src/execution/batch-routes.ts',
    inside: 'getBatchStatus',
  },
  {
    module: 'batch',
    change: 'the batch request body renames scenarioName',
    apply: (spec) => renameProperty(schemas(spec).BatchRequest, 'scenarioName', 'scenario'),
    file: 'src/execution/batch-routes.ts',
    inside: 'submitBatch',
  },
  {
    module: 'internal-data',
    change: 'CollectionInfo renames rowCount',
    apply: (spec) => renameProperty(schemas(spec).CollectionInfo, 'rowCount', 'rows'),
    file: 'src/internal-data/internal-data-routes.ts',
    inside: 'listCollections',
  },
  {
    module: 'internal-data',
    change: 'the query parameter limit of getCollectionRows becomes a string',
    apply: (spec) => {
      parameterNamed(spec, '/api/internaldata/collections/{collection_name}', 'get', 'limit').schema = {
        type: 'string',
      };
    },
    file: 'src/internal-data/internal-data-routes.ts',
    inside: 'getCollectionRows',
  },
  {
    module: 'execution',
    change: 'ScoreResult.version becomes an integer',
    apply: (spec) => {
      schemas(spec).ScoreResult.properties.version = { type: 'integer' };
    },
    file: 'src/execution/execution-routes.ts',
    inside: 'scoreScenario',
  },
  {
    module: 'execution',
    change: 'the header X-SCE-CallbackRetryCount becomes a string',
    apply: (spec) => {
      parameterNamed(spec, '/api/scenario/code/scoreasync/{name}', 'post', 'X-SCE-CallbackRetryCount').schema = {
        type: 'string',
      };
    },
    file: 'src/execution/execution-routes.ts',
    inside: 'scoreAsync',
  },
  {
    module: 'scenarios',
    change: 'ScenarioSummary renames name (the DTO is built by the service)',
    apply: (spec) => renameProperty(schemas(spec).ScenarioSummary, 'name', 'scenarioName'),
    file: 'src/scenarios/scenario-service.ts',
    inside: 'rename',
  },
  {
    module: 'scenarios',
    change: 'ImportReport renames scenarios',
    apply: (spec) => renameProperty(schemas(spec).ImportReport, 'scenarios', 'outcomes'),
    file: 'src/scenarios/scenario-routes.ts',
    inside: 'importScenarios',
  },
  {
    module: 'scenarios',
    change: 'exportScenarios no longer answers YAML',
    apply: (spec) =>
      void delete operation(spec, '/api/scenario/export', 'get').responses['200'].content['application/yaml'],
    file: 'src/scenarios/scenario-routes.ts',
    inside: 'exportScenarios',
  },
  {
    module: 'errors',
    change: 'Error renames message',
    apply: (spec) => renameProperty(schemas(spec).Error, 'message', 'text'),
    file: 'src/errors/error-handler.ts',
    inside: 'toErrorBody',
  },
];

interface CompileError {
  copy: string;
  file: string;
  line: number;
  text: string;
}

/** `tsc` errors by copy (`pristine` or `mutated`), file and line. */
function parseErrors(output: string): CompileError[] {
  return [...output.matchAll(/^(pristine|mutated)\/([^\s(]+)\((\d+),\d+\): error (TS\d+: .*)$/gm)].map(
    ([, copy, file, line, text]) => ({ copy, file, line: Number(line), text }),
  );
}

/** The lines (1-based, inclusive) of the function or method `name` in `source`: from its header to the closing brace at its indentation. */
function linesOf(source: string, name: string): [number, number] {
  const lines = source.split('\n');
  const header = new RegExp(`^(\\s*)(?:export )?(?:async )?(?:function )?${name}\\(`);
  const start = lines.findIndex((line) => header.test(line));
  if (start < 0) throw new Error(`no function ${name}`);
  const indent = (header.exec(lines[start]) as RegExpExecArray)[1];
  const end = lines.findIndex((line, index) => index > start && line.startsWith(`${indent}}`));
  return [start + 1, end + 1];
}

async function generate(specPath: string, outDir: string): Promise<void> {
  // A child of its own: jest's NODE_OPTIONS (VM modules) are not the generator's.
  const env = { ...process.env, NODE_OPTIONS: '' };
  await run(
    join(root, 'node_modules/.bin/tsx'),
    [join(root, 'scripts/generate.ts'), '--spec', specPath, '--out', outDir],
    { cwd: root, env },
  );
}

describe('regenerating from a changed spec', () => {
  let project: string;
  let errors: CompileError[];
  let tscOutput: string;

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'typed-handlers-'));
    const spec = JSON.parse(readFileSync(join(root, 'spec/openapi.json'), 'utf8')) as Json;
    for (const mutation of MUTATIONS) mutation.apply(spec);
    for (const copy of ['pristine', 'mutated']) {
      mkdirSync(join(project, copy));
      cpSync(join(root, 'src'), join(project, copy, 'src'), { recursive: true });
    }
    writeFileSync(join(project, 'mutated/openapi.json'), JSON.stringify(spec, null, 2));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    symlinkSync(join(root, 'node_modules'), join(project, 'node_modules'), 'dir');
    const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: Json;
    };
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...compilerOptions, types: ['node'] },
        include: ['pristine/src', 'pristine/generated', 'mutated/src', 'mutated/generated'],
      }),
    );
    await Promise.all([
      generate(join(root, 'spec/openapi.json'), join(project, 'pristine/generated')),
      generate(join(project, 'mutated/openapi.json'), join(project, 'mutated/generated')),
    ]);
    tscOutput = await run(
      join(root, 'node_modules/.bin/tsc'),
      ['--noEmit', '--pretty', 'false', '-p', 'tsconfig.json'],
      { cwd: project, maxBuffer: 16 * 1024 * 1024 },
    ).then(
      ({ stdout }) => stdout,
      (failure: { stdout?: string }) => failure.stdout ?? String(failure),
    );
    errors = parseErrors(tscOutput);
  }, 120_000);

  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('compiles clean from the spec as it is', () => {
    expect(errors.filter((error) => error.copy === 'pristine')).toEqual([]);
    expect(tscOutput).toContain('mutated/');
  });

  it('reports nothing in generated/ itself', () => {
    expect(errors.filter((error) => error.file.startsWith('generated/'))).toEqual([]);
  });

  it.each(MUTATIONS.map((mutation) => [mutation.module, mutation.change, mutation] as const))(
    '%s: %s fails tsc in the code that no longer conforms',
    (_module, _change, mutation) => {
      const [from, to] = linesOf(readFileSync(join(root, mutation.file), 'utf8'), mutation.inside);
      const inside = errors.filter(
        (error) => error.copy === 'mutated' && error.file === mutation.file && error.line >= from && error.line <= to,
      );
      if (inside.length === 0) {
        throw new Error(
          `no tsc error in ${mutation.inside} (${mutation.file}:${from}-${to}); tsc said:\n${tscOutput
            .split('\n')
            .filter((line) => line.startsWith('mutated/'))
            .join('\n')}`,
        );
      }
    },
  );
});
