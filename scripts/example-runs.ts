/**
 * What the spec's examples name by id besides the example scenario (issue #29, "the interactive view works as
 * pre-filled for a new user"): a decision record (getDecisionRecord's `recordId`), a batch (getBatchStatus's and
 * getBatchResults' `batchTaskId`), a finished replay (getReplay's `replayId`) and a cancelled one (cancelReplay's
 * `replayId`: a cancel answers a CANCELLED replay as it is, so Execute keeps answering 200). They are made through
 * the services, with the ids the spec's examples name, read from spec/openapi.json itself so the two never drift.
 * Also a shadow of the development version (getShadow's `shadowId`), stopped so that the example's scores cost
 * nothing until a user starts it, and a running 10 % split sticky by `customerId` (getSplit's `splitId`): the example
 * scenario has no such input, so every run still goes to the champion until a user sends one. Promoting it deploys
 * the challenger, which ends the shadow and the split (startShadow is then 409 SHADOW_ENDED, as docs/live-tests.md
 * says); endSplit answers an ended split as it is.
 * Each is made once: an id that is found already is left as it is, so running the seed again changes nothing.
 */
import { readFile } from 'node:fs/promises';
import { NotFoundError } from '../src/errors/not-found-error.js';
import type { StartReplay } from '../src/replay/replay-service.js';
import type { SeedResult } from '../src/scenarios/example-seeder.js';
import type { Services } from '../src/services.js';
import type { ShadowService } from '../src/shadows/shadow-service.js';
import type { SplitService } from '../src/shadows/split-service.js';

type ShadowRequest = Parameters<ShadowService['attach']>[0]['request'];
type SplitRequest = Parameters<SplitService['create']>[0]['request'];

const SPEC = new URL('../spec/openapi.json', import.meta.url);
/** The request id the seeded run is recorded under. */
const SEED_REQUEST_ID = 'example-seed';

interface Operation {
  operationId?: string;
  parameters?: Array<{ name?: string; example?: unknown }>;
  requestBody?: { content: Record<string, { example?: unknown }> };
}

/** The spec's example ids and bodies, by operationId. */
async function specExamples() {
  const spec = JSON.parse(await readFile(SPEC, 'utf8')) as { paths: Record<string, Record<string, Operation>> };
  const operations = Object.values(spec.paths).flatMap((item) => Object.values(item));
  const operation = (id: string) => {
    const found = operations.find((candidate) => candidate.operationId === id);
    if (!found) throw new Error(`spec/openapi.json has no operation ${id}`);
    return found;
  };
  return {
    pathId: (id: string, name: string): string => {
      const example = operation(id).parameters?.find((parameter) => parameter.name === name)?.example;
      if (typeof example !== 'string') throw new Error(`${id} has no example ${name}`);
      return example;
    },
    body: (id: string): unknown => operation(id).requestBody?.content['application/json']?.example,
  };
}

/** Whether `read` finds what it asks for (false on a 404). */
async function found(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}

/** Makes what is missing of the example's runs, batch and replays; answers the ids it made. */
export async function seedExampleRuns(services: Services, seeded: SeedResult): Promise<string[]> {
  const examples = await specExamples();
  const user = await services.users.ensureUser(seeded.username, false);
  const actor = { owner: { id: user.id, username: user.username }, isAdmin: false };
  const caller = { id: user.id };
  const { scenarioId, scenarioName } = seeded;
  const made: string[] = [];

  // The record first: the finished replay replays it.
  const recordId = examples.pathId('getDecisionRecord', 'recordId');
  if (!(await found(() => services.records.service.get(actor, scenarioId, recordId)))) {
    const inputs = examples.body('scoreScenario') as Record<string, unknown>;
    await services.execution.service.score(caller, scenarioName, inputs, SEED_REQUEST_ID, recordId);
    // Records are written in bulk a moment later: stored now, before the replay counts them.
    await services.records.recorder.flush();
    made.push(`decision record ${recordId}`);
  }

  const batchId = examples.pathId('getBatchStatus', 'batchTaskId');
  if (!(await found(() => services.execution.batches.status(caller, batchId)))) {
    const batch = examples.body('submitBatch') as { scenarioName: string; parameters: Record<string, unknown>[] };
    await services.execution.batches.submit(caller, batch.scenarioName, batch.parameters, undefined, batchId);
    made.push(`batch ${batchId}`);
  }

  const request = examples.body('startReplay') as StartReplay;
  const finishedId = examples.pathId('getReplay', 'replayId');
  if (!(await found(() => services.replay.service.get(actor, scenarioId, finishedId)))) {
    await services.replay.service.start(actor, user.id, scenarioId, request, finishedId);
    // Run here, so it has FINISHED before the service starts; its queued job then finds it ended and does nothing.
    await services.replay.job.run(
      { replayId: finishedId },
      async () => undefined,
      () => false,
    );
    made.push(`replay ${finishedId}`);
  }

  const cancelledId = examples.pathId('cancelReplay', 'replayId');
  if (!(await found(() => services.replay.service.get(actor, scenarioId, cancelledId)))) {
    await services.replay.service.start(actor, user.id, scenarioId, request, cancelledId);
    await services.replay.service.cancel(actor, user.username, scenarioId, cancelledId);
    made.push(`replay ${cancelledId} (cancelled)`);
  }

  const shadowId = examples.pathId('getShadow', 'shadowId');
  if (!(await found(() => services.shadows.service.get(actor, scenarioId, shadowId)))) {
    const shadow = examples.body('attachShadow') as ShadowRequest;
    await services.shadows.service.attach({
      actor,
      createdBy: user.username,
      scenarioId,
      request: shadow,
      id: shadowId,
    });
    await services.shadows.service.stop(actor, scenarioId, shadowId);
    made.push(`shadow ${shadowId} (stopped)`);
  }

  const splitId = examples.pathId('getSplit', 'splitId');
  if (!(await found(() => services.shadows.splits.get(actor, scenarioId, splitId)))) {
    const split = examples.body('createSplit') as SplitRequest;
    await services.shadows.splits.create({ actor, createdBy: user.username, scenarioId, request: split, id: splitId });
    made.push(`split ${splitId}`);
  }
  return made;
}
