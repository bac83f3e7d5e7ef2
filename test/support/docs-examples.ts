import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { HttpRequest, HttpResponse, ScenarioDocument } from '../../src/engine/index.js';

/** One documented run of an example: its inputs, what it meets outside the scenario, what it gives. */
export interface DocsRun {
  given?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
  /** id of the END node the run reaches */
  end?: string;
  trace?: Array<Record<string, unknown>>;
  /** rows of the collections a DATA_LOOKUP reads */
  collections?: Record<string, Record<string, unknown>[]>;
  /** deployed callees of a SCENARIO_CALL: the inputs they must receive and the result they give */
  scenarios?: Record<string, { receives: Record<string, unknown>; returns: Record<string, unknown> }>;
  /** the request an HTTP_CALL must send (a subset) and the answer it gets */
  http?: { request?: Partial<HttpRequest>; response: HttpResponse };
}

/** A scenario example of a docs page: a complete import document, or one node kind's fragment. */
export interface DocsExample {
  title: string;
  /** a complete document (content + nodeProperties), or a fragment (nodes + nodeProperties [+ edges]) */
  complete: boolean;
  document: Record<string, unknown>;
  /** the source text of the block, as a reader would copy it */
  source: string;
  runs: DocsRun[];
  testReports?: Array<Record<string, unknown>>;
}

/**
 * Reads the examples of a docs page. Every ```yaml block must be one of: an example (complete or a node
 * fragment), a `runs` block (for the example before it, or the one named by its `scenario` key), or a
 * `testReports` block (for the example before it); anything else fails, so no example goes unchecked.
 * The ```json block is the canonical (stored) form of the first example.
 */
export function docsExamples(page: URL): { examples: DocsExample[]; canonical?: ScenarioDocument } {
  const markdown = readFileSync(page, 'utf8');
  const examples: DocsExample[] = [];
  let canonical: ScenarioDocument | undefined;
  let section = '';
  const blocks = markdown.matchAll(/^(#{2,3} .*)$|^```(yaml|json)\n([\s\S]*?)^```/gm);
  for (const [, heading, language, text] of blocks) {
    if (heading) {
      section = heading.replace(/^#+ /, '');
      continue;
    }
    const value = language === 'json' ? JSON.parse(text) : parseYaml(text);
    if (language === 'json') {
      canonical = value as ScenarioDocument;
      continue;
    }
    if (value && 'content' in value && 'nodeProperties' in value) {
      examples.push({
        title: `${section}: ${value.name ?? 'complete example'}`,
        complete: true,
        document: value,
        source: text,
        runs: [],
      });
    } else if (value && 'nodes' in value && 'nodeProperties' in value) {
      examples.push({
        title: `${section}: ${value.nodes.map((node: { id: string }) => node.id).join(', ')}`,
        complete: false,
        document: value,
        source: text,
        runs: [],
      });
    } else if (value && 'runs' in value) {
      const target = value.scenario
        ? examples.find((example) => example.document.name === value.scenario)
        : examples.at(-1);
      if (!target) throw new Error(`${section}: runs for an unknown example ${value.scenario ?? ''}`);
      target.runs.push(...(value.runs as DocsRun[]));
    } else if (value && 'testReports' in value) {
      examples.at(-1)!.testReports = value.testReports;
    } else {
      throw new Error(`${section}: a yaml block that is neither an example nor its runs:\n${text}`);
    }
  }
  return { examples, canonical };
}

/** Test case variables as documented (a map, or a list of {variableName | name, value}) as a map. */
export function testCaseVariables(variables: unknown): Record<string, unknown> {
  if (!Array.isArray(variables)) return variables as Record<string, unknown>;
  return Object.fromEntries(
    variables.map((v: { variableName?: string; name?: string; value?: unknown }) => [
      v.variableName ?? v.name,
      v.value ?? null,
    ]),
  );
}
