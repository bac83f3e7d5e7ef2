import type { Knex } from 'knex';
import { normalizeScenarioDocument, type ScenarioDocument } from '../../src/engine/index.js';

/**
 * Deployed scenarios for execution tests, written straight into the database (scenario + a
 * DEPLOYED version row) so execution can be tested without the management API.
 */
interface FixtureNode {
  id: string;
  type: string;
  name?: string;
  settings?: unknown;
}

function document(nodes: FixtureNode[], edges: Array<{ from: string; to: string; when?: boolean }>): ScenarioDocument {
  const nodeProperties: Record<string, { id: string; type: string; content: unknown }> = {};
  for (const node of nodes)
    if (node.settings !== undefined) nodeProperties[node.id] = { id: node.id, type: node.type, content: node.settings };
  return normalizeScenarioDocument({
    content: { nodes: nodes.map(({ settings: _settings, ...node }) => node), edges },
    nodeProperties,
  });
}

function line(nodes: FixtureNode[]): ScenarioDocument {
  return document(
    nodes,
    nodes.slice(1).map((node, k) => ({ from: nodes[k].id, to: node.id })),
  );
}

const input = (name: string, type: string, required = true) => ({ name, type: { type }, required });

/** Input `a` (INTEGER) → `doubled = a * 2`; throws at node "explode" when a is 13. */
export function doublingScenario(): ScenarioDocument {
  return line([
    { id: 'start', type: 'START', settings: { inputs: [input('a', 'INTEGER')] } },
    {
      id: 'explode',
      type: 'SCRIPT',
      name: 'explode',
      settings: {
        language: 'javascript',
        code: 'if (a === 13) { throw new Error("unlucky thirteen"); } ok = true;',
        outputs: ['ok'],
      },
    },
    {
      id: 'double',
      type: 'SCRIPT',
      name: 'double',
      settings: { language: 'javascript', code: 'doubled = a * 2;', outputs: ['doubled'] },
    },
    { id: 'end', type: 'END', settings: { outputs: ['doubled'] } },
  ]);
}

/** Input `text` (STRING) → `shout`. */
export function shoutingScenario(): ScenarioDocument {
  return line([
    { id: 'start', type: 'START', settings: { inputs: [input('text', 'STRING')] } },
    {
      id: 'upper',
      type: 'SCRIPT',
      settings: { language: 'javascript', code: 'shout = text.toUpperCase() + "!";', outputs: ['shout'] },
    },
    { id: 'end', type: 'END', settings: { outputs: ['shout'] } },
  ]);
}

/** The wrapper pattern: calls the scenario named by `scenario_name` with `scenario_input`, returns its result as `out`. */
export function wrapperScenario(): ScenarioDocument {
  return line([
    {
      id: 'start',
      type: 'START',
      settings: { inputs: [input('scenario_name', 'STRING'), input('scenario_input', 'MAP')] },
    },
    {
      id: 'call',
      type: 'SCENARIO_CALL',
      name: 'call',
      settings: { scenarioVariable: 'scenario_name', inputVariable: 'scenario_input', outputVariable: 'out' },
    },
    { id: 'end', type: 'END', settings: { outputs: ['out'] } },
  ]);
}

/** Inserts the scenario (when missing) and a new DEPLOYED version of `doc`; returns the version label. */
export async function deployScenario(db: Knex, ownerId: number, name: string, doc: ScenarioDocument): Promise<string> {
  let scenario = (await db('scenarios').where({ owner_id: ownerId, name }).first('id')) as { id: number } | undefined;
  if (!scenario) {
    const [id] = await db('scenarios').insert({ owner_id: ownerId, name });
    scenario = { id: Number(id) };
  }
  const last = (await db('scenario_versions')
    .where({ scenario_id: scenario.id, status: 'DEPLOYED' })
    .max({ n: 'version_number' })
    .first()) as { n: number | null };
  const versionNumber = (last.n ?? 0) + 1;
  await db('scenario_versions').insert({
    scenario_id: scenario.id,
    status: 'DEPLOYED',
    version_number: versionNumber,
    content: doc.content,
    node_properties: JSON.stringify(doc.nodeProperties),
  });
  await db('scenarios')
    .where({ id: scenario.id })
    .update({ next_version: versionNumber + 1 });
  return String(versionNumber);
}

/** A scenario that exists with only a development version (never deployed). */
export async function createUndeployedScenario(
  db: Knex,
  ownerId: number,
  name: string,
  doc: ScenarioDocument = doublingScenario(),
): Promise<void> {
  const [id] = await db('scenarios').insert({ owner_id: ownerId, name });
  await db('scenario_versions').insert({
    scenario_id: Number(id),
    status: 'DEVELOP',
    version_number: null,
    content: doc.content,
    node_properties: JSON.stringify(doc.nodeProperties),
  });
}

/** Like doublingScenario, but each run spins through `loops` iterations first (to slow a batch down on purpose). */
export function slowDoublingScenario(loops: number): ScenarioDocument {
  return line([
    { id: 'start', type: 'START', settings: { inputs: [input('a', 'INTEGER')] } },
    {
      id: 'spin',
      type: 'SCRIPT',
      name: 'spin',
      settings: {
        language: 'javascript',
        code: `var s = 0; for (var i = 0; i < ${loops}; i++) { s += i; } spun = s > 0;`,
        outputs: ['spun'],
      },
    },
    {
      id: 'double',
      type: 'SCRIPT',
      name: 'double',
      settings: { language: 'javascript', code: 'doubled = a * 2;', outputs: ['doubled'] },
    },
    { id: 'end', type: 'END', settings: { outputs: ['doubled'] } },
  ]);
}

/** Input `a` (INTEGER) → one SCRIPT node running `code`, which sets `out` (e.g. an endless loop or a memory bomb, to hit a sandbox limit). */
export function scriptScenario(code: string): ScenarioDocument {
  return line([
    { id: 'start', type: 'START', settings: { inputs: [input('a', 'INTEGER')] } },
    { id: 'script', type: 'SCRIPT', name: 'script', settings: { language: 'javascript', code, outputs: ['out'] } },
    { id: 'end', type: 'END', settings: { outputs: ['out'] } },
  ]);
}
