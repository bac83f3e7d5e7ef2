import { timeOrderedId } from '../ids/time-ordered-id.js';
import type { AppConfig } from '../config/config.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { AsyncSubmissions } from './async-submissions.js';
import type { TargetPolicy } from '../outbound/target-policy.js';
import { TargetRefusedError } from '../outbound/target-refused-error.js';
import { isFinished, type RunResultStore } from './run-result-store.js';
import type { ScoreResult } from './run-outcome.js';
import type { ScenarioRunner } from './scenario-runner.js';
import { storedScoreResult } from './score-results.js';
import type { CallbackSecrets } from './callback-delivery.js';
import type { ScoringUser } from './scoring-user.js';

export interface AsyncRequest {
  requestId?: string;
  callbackUrl?: string;
  callbackRetryCount?: number;
  callbackRetryDelaySeconds?: number;
}

export type AsyncResult =
  | { finished: true; result: ScoreResult }
  | { finished: false; requestId: string; state: 'QUEUED' | 'RUNNING' };

/** Spec defaults of X-SCE-CallbackRetryCount / X-SCE-CallbackRetryDelay. */
const DEFAULT_RETRY_COUNT = 3;
const DEFAULT_RETRY_DELAY_SECONDS = 5;

/** The API side of execution: synchronous scores, async submissions and results (batches: BatchService). */
export class ExecutionService {
  constructor(
    private readonly config: AppConfig,
    private readonly runner: ScenarioRunner,
    private readonly store: RunResultStore,
    private readonly submissions: AsyncSubmissions,
    private readonly callbackPolicy: TargetPolicy,
    private readonly callbackSecrets: CallbackSecrets,
  ) {}

  /**
   * The hot path: the resolver and the engine's compilations are cached, and the only write, the
   * run's decision record (when its scenario records sync runs and this one is sampled), is queued
   * and inserted in bulk later. `requestId` is the HTTP request's id (X-Request-Id). `runId` is new unless the
   * caller names one: the example seeder does, so the record id the spec's examples name exists on a new install.
   */
  async score(
    caller: ScoringUser,
    name: string,
    inputs: Record<string, unknown>,
    requestId: string,
    runId = timeOrderedId(),
  ): Promise<ScoreResult> {
    const champion = await this.runner.requireDeployed(caller.id, name);
    const beginTime = new Date().toISOString();
    const record = { id: runId, mode: 'SYNC' as const, requesterId: caller.id, requestId };
    // A split may give the run to a challenger: the version that decided is the answer's `version`.
    const arm = this.runner.assignArm(champion, inputs, record);
    const deployed = arm?.deployed ?? champion;
    const result = await this.runner.run(deployed, inputs, caller.id, 'sync', record, arm);
    return {
      runId,
      name,
      scenarioName: name,
      version: deployed.version,
      state: 'SUCCEEDED',
      beginTime,
      endTime: new Date().toISOString(),
      result,
      error: null,
    };
  }

  /** Stores the run QUEUED with a job carrying its id (grouped with concurrent submissions: AsyncSubmissions). Returns the request id. */
  async submitAsync(
    caller: ScoringUser,
    name: string,
    inputs: Record<string, unknown>,
    request: AsyncRequest,
  ): Promise<string> {
    await this.runner.requireDeployed(caller.id, name);
    const callback = request.callbackUrl ? await this.checkCallback(caller, request) : null;
    const requestId = request.requestId ?? timeOrderedId();
    await this.submissions.submit({
      id: timeOrderedId(),
      userId: caller.id,
      requestId,
      scenarioName: name,
      input: inputs,
      callback,
    });
    return requestId;
  }

  async asyncResult(caller: ScoringUser, name: string, requestId: string): Promise<AsyncResult> {
    const run = await this.store.findByRequestId(caller.id, requestId);
    if (!run || run.scenarioName !== name) {
      throw new NotFoundError(`No run with request id "${requestId}" of scenario "${name}".`, 'RESULT_NOT_FOUND');
    }
    if (!isFinished(run.state)) return { finished: false, requestId, state: run.state as 'QUEUED' | 'RUNNING' };
    return { finished: true, result: storedScoreResult(run) };
  }

  private async checkCallback(
    caller: ScoringUser,
    request: AsyncRequest,
  ): Promise<{ url: string; retryCount: number; retryDelaySeconds: number }> {
    const { limits } = this.config;
    const retryCount = request.callbackRetryCount ?? Math.min(DEFAULT_RETRY_COUNT, limits.callbackMaxRetries);
    const retryDelaySeconds =
      request.callbackRetryDelaySeconds ?? Math.min(DEFAULT_RETRY_DELAY_SECONDS, limits.callbackMaxDelaySeconds);
    // The spec bounds these headers (0–10, 0–3600); the configured limits may be tighter.
    if (retryCount > limits.callbackMaxRetries) {
      throw new BadRequestError(
        `X-SCE-CallbackRetryCount may be at most ${limits.callbackMaxRetries}.`,
        'VALIDATION_FAILED',
        [{ path: 'header.X-SCE-CallbackRetryCount', message: `must be ≤ ${limits.callbackMaxRetries}` }],
      );
    }
    if (retryDelaySeconds > limits.callbackMaxDelaySeconds) {
      throw new BadRequestError(
        `X-SCE-CallbackRetryDelay may be at most ${limits.callbackMaxDelaySeconds} seconds.`,
        'VALIDATION_FAILED',
        [{ path: 'header.X-SCE-CallbackRetryDelay', message: `must be ≤ ${limits.callbackMaxDelaySeconds}` }],
      );
    }
    const url = request.callbackUrl as string;
    // After the transition a callback is signed with the owner's own secret only: without one it could not be verified.
    if (
      !this.config.callbackLegacySignature &&
      (await this.callbackSecrets.callbackSecretsOf(caller.id)).length === 0
    ) {
      const message =
        'callbacks are signed with your own callback secret, and you have none yet: ask the operator to issue one (npm run token -- <user> --callback-secret)';
      throw new BadRequestError(`The callback URL is refused: ${message}.`, 'CALLBACK_REFUSED', [
        { path: 'header.X-SCE-CallbackUrl', message },
      ]);
    }
    try {
      await this.callbackPolicy.check(url);
    } catch (error) {
      if (error instanceof TargetRefusedError) {
        throw new BadRequestError(`The callback URL is refused: ${error.message}`, 'CALLBACK_REFUSED', [
          { path: 'header.X-SCE-CallbackUrl', message: error.message },
        ]);
      }
      throw error;
    }
    return { url, retryCount, retryDelaySeconds };
  }
}
