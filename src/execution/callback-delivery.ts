import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { CallbackSlots } from './callback-slots.js';
import type { OutboundHttpClient } from '../outbound/outbound-http-client.js';
import { signCallback, signCallbackV2 } from './callback-signature.js';
import type { ExecutionQueue } from './execution-queue.js';
import type { RunResultStore } from './run-result-store.js';
import type { ScoreResult } from './run-outcome.js';
import { storedScoreResult } from './score-results.js';

/** Each user's own callback signing secret (implemented by the auth feature's UserService). */
export interface CallbackSecrets {
  /**
   * The secrets that sign the user's callbacks, current first, then the one a rotation replaced while its overlap
   * lasts (CALLBACK_SECRET_OVERLAP_SECONDS); empty when the user was issued none; throws when they cannot be read.
   */
  callbackSecretsOf(userId: number): Promise<string[]>;
}

export interface CallbackSettings {
  /** CALLBACK_SIGNING_SECRET while CALLBACK_LEGACY_SIGNATURE is on (the legacy header is sent too); else undefined. */
  legacySigningSecret: string | undefined;
  timeoutMs: number;
  /** Shortest delay before a retry (CALLBACK_RETRY_FLOOR_SECONDS); each further retry doubles the delay. */
  retryFloorSeconds: number;
  /** Longest delay before a retry (LIMIT_CALLBACK_DELAY_SECONDS). */
  retryMaxDelaySeconds: number;
  /** How long an attempt waits, as a delayed job, when its tenant's slots are all taken. */
  slotWaitSeconds: number;
}

/**
 * The delay before attempt `failed + 1`, after attempt `failed` (1-based) failed: the requested delay raised to
 * the floor, doubled for each retry already made, at most the maximum. A receiver that is down is then not
 * called again at once (a delay of 0 was allowed, and ten retries of a slow receiver multiplied the load it
 * put on the delivery slots), and a long outage is met with fewer and fewer attempts.
 */
export function retryDelaySeconds(
  requested: number,
  failed: number,
  settings: Pick<CallbackSettings, 'retryFloorSeconds' | 'retryMaxDelaySeconds'>,
): number {
  const base = Math.max(settings.retryFloorSeconds, requested);
  return Math.min(settings.retryMaxDelaySeconds, base * 2 ** Math.max(0, failed - 1));
}

/**
 * Delivers a finished run's ScoreResult to its callback URL, one attempt per job: a 2xx ends
 * delivery (DELIVERED); anything else schedules the next attempt as a delayed job (floor and backoff:
 * retryDelaySeconds) until the retries are used up (FAILED). Every attempt is recorded in callback_attempts.
 * The outbound client re-checks the target policy (DNS) at delivery, pins the connection to the approved
 * addresses and never follows redirects.
 *
 * Signatures: `X-SCE-Signature-V2: v2=<hex>` with the run owner's own callback secret over timestamp, URL,
 * request id and body (callback-signature.ts), `v2=<new>,v2=<old>` during a rotation's overlap; during the
 * transition also the legacy `X-SCE-Signature`.
 * A run whose owner has no callback secret is sent with the legacy signature only, while it is on; with it
 * off, such an attempt fails (recorded, retried like any failure: issuing a secret in the meantime lets it through).
 */
export class CallbackDelivery {
  constructor(
    private readonly store: RunResultStore,
    private readonly queue: ExecutionQueue,
    private readonly http: OutboundHttpClient,
    private readonly secrets: CallbackSecrets,
    private readonly settings: CallbackSettings,
    private readonly logger: Logger,
    private readonly metrics: Pick<Metrics, 'callbackDelivered'>,
    /** Deliveries of one tenant in flight at once (CALLBACK_SLOTS_PER_TENANT), across processes when Redis holds them (callback-slots.ts). */
    private readonly slots: CallbackSlots,
  ) {}

  async attempt(resultId: string, attempt: number): Promise<void> {
    const run = await this.store.findById(resultId);
    const callback = run?.callback;
    if (!run || !callback || callback.state !== 'PENDING') return;
    const slot = await this.slots.tryTake(run.userId);
    if (!slot) {
      // Not an attempt: the same attempt again shortly, as a delayed job, leaving this job slot to other tenants.
      await this.queue.scheduleCallback(resultId, attempt, this.settings.slotWaitSeconds);
      return;
    }
    let status: number | null = null;
    let failure: string | null = null;
    try {
      const body = JSON.stringify(storedScoreResult(run) satisfies ScoreResult);
      const timestamp = Math.floor(Date.now() / 1000);
      const signatures = await this.signatures(run.userId, {
        timestamp,
        url: callback.url,
        requestId: run.requestId,
        body,
      });
      if (typeof signatures === 'string') {
        failure = signatures;
      } else {
        const response = await this.http.request({
          method: 'POST',
          url: callback.url,
          headers: {
            'content-type': 'application/json',
            'x-sce-requestid': run.requestId,
            'x-sce-timestamp': String(timestamp),
            ...signatures,
            'user-agent': 'scenario-scoring-callback/2',
          },
          body,
          timeoutMs: this.settings.timeoutMs,
        });
        status = response.status;
        if (status < 200 || status > 299) failure = `answered HTTP ${status}`;
      }
    } catch (error) {
      failure = (error as Error).message;
    } finally {
      await slot.release();
    }
    await this.store.recordCallbackAttempt(resultId, { attempt, httpStatus: status, error: failure });
    if (failure === null) {
      await this.store.setCallbackState(resultId, 'DELIVERED');
      this.metrics.callbackDelivered('delivered');
      return;
    }
    if (attempt <= callback.retryCount) {
      const delay = retryDelaySeconds(callback.retryDelaySeconds, attempt, this.settings);
      this.logger.info({ resultId, attempt, failure, retryInSeconds: delay }, 'callback attempt failed; retrying');
      await this.queue.scheduleCallback(resultId, attempt + 1, delay);
      this.metrics.callbackDelivered('retrying');
      return;
    }
    this.logger.warn({ resultId, attempts: attempt, failure }, 'callback delivery failed; retries exhausted');
    await this.store.setCallbackState(resultId, 'FAILED');
    this.metrics.callbackDelivered('failed');
  }

  /** The signature headers of one attempt, or why it cannot be signed. */
  private async signatures(
    userId: number,
    callback: { timestamp: number; url: string; requestId: string; body: string },
  ): Promise<Record<string, string> | string> {
    const headers: Record<string, string> = {};
    // During a rotation's overlap two signatures, the new secret's first: a receiver accepts the one it can check.
    const secrets = await this.secrets.callbackSecretsOf(userId);
    if (secrets.length > 0)
      headers['x-sce-signature-v2'] = secrets.map((secret) => signCallbackV2(secret, callback)).join(',');
    if (this.settings.legacySigningSecret !== undefined)
      headers['x-sce-signature'] = signCallback(this.settings.legacySigningSecret, callback.timestamp, callback.body);
    if (Object.keys(headers).length === 0) {
      return "not sent: the run's user has no callback secret and CALLBACK_LEGACY_SIGNATURE is off (issue one: npm run token -- <user> --callback-secret)";
    }
    return headers;
  }
}
