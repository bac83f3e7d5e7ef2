import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { OutboundHttpClient } from '../outbound/outbound-http-client.js';
import { signCallback } from './callback-signature.js';
import type { ExecutionQueue } from './execution-queue.js';
import type { RunResultStore } from './run-result-store.js';
import type { ScoreResult } from './run-outcome.js';
import { storedScoreResult } from './score-results.js';

export interface CallbackSettings {
  signingSecret: string;
  timeoutMs: number;
}

/**
 * Delivers a finished run's ScoreResult to its callback URL, one attempt per job: a 2xx ends
 * delivery (DELIVERED); anything else schedules the next attempt as a delayed job until the
 * retries are used up (FAILED). Every attempt is recorded in callback_attempts. The outbound client
 * re-checks the target policy (DNS) at delivery, pins the connection to the approved addresses
 * and never follows redirects.
 */
export class CallbackDelivery {
  constructor(
    private readonly store: RunResultStore,
    private readonly queue: ExecutionQueue,
    private readonly http: OutboundHttpClient,
    private readonly settings: CallbackSettings,
    private readonly logger: Logger,
    private readonly metrics: Pick<Metrics, 'callbackDelivered'>,
  ) {}

  async attempt(resultId: string, attempt: number): Promise<void> {
    const run = await this.store.findById(resultId);
    const callback = run?.callback;
    if (!run || !callback || callback.state !== 'PENDING') return;
    const body = JSON.stringify(storedScoreResult(run) satisfies ScoreResult);
    const timestamp = Math.floor(Date.now() / 1000);
    let status: number | null = null;
    let failure: string | null = null;
    try {
      const response = await this.http.request({
        method: 'POST',
        url: callback.url,
        headers: {
          'content-type': 'application/json',
          'x-sce-requestid': run.requestId,
          'x-sce-timestamp': String(timestamp),
          'x-sce-signature': signCallback(this.settings.signingSecret, timestamp, body),
          'user-agent': 'scenario-scoring-callback/1',
        },
        body,
        timeoutMs: this.settings.timeoutMs,
      });
      status = response.status;
      if (status < 200 || status > 299) failure = `answered HTTP ${status}`;
    } catch (error) {
      failure = (error as Error).message;
    }
    await this.store.recordCallbackAttempt(resultId, attempt, status, failure);
    if (failure === null) {
      await this.store.setCallbackState(resultId, 'DELIVERED');
      this.metrics.callbackDelivered('delivered');
      return;
    }
    if (attempt <= callback.retryCount) {
      this.logger.info({ resultId, attempt, failure }, 'callback attempt failed; retrying');
      await this.queue.scheduleCallback(resultId, attempt + 1, callback.retryDelaySeconds);
      this.metrics.callbackDelivered('retrying');
      return;
    }
    this.logger.warn({ resultId, attempts: attempt, failure }, 'callback delivery failed; retries exhausted');
    await this.store.setCallbackState(resultId, 'FAILED');
    this.metrics.callbackDelivered('failed');
  }
}
