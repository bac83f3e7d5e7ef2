import { BaseNotificationChannel, toJobId, type JobNotification } from 'agenda';
import type { Redis } from 'ioredis';

interface WireNotification {
  jobId: string;
  jobName: string;
  nextRunAt: string | null;
  priority: number;
  timestamp: string;
  source?: string;
}

/**
 * Agenda's job notifications over Redis pub/sub ("a job was saved: look now"), in the wire format
 * of @agendajs/redis-backend's own channel, so processes of either kind understand each other.
 *
 * Why not that channel: when Redis goes away it emits 'error' events nobody listens to (the
 * process dies with "Unhandled 'error' event"), and each of its reconnect attempts opens a new
 * subscriber connection that is never closed (about 50 after a 20 s outage). Here one subscriber
 * connection is kept for the channel's life; ioredis reconnects it, and every time it is ready
 * again it subscribes again. Errors go to `onError`, never to an 'error' event.
 */
export class RedisJobNotifications extends BaseNotificationChannel {
  private subscriber?: Redis;
  private subscribing?: Promise<void>;

  /** `client` publishes (it is the job store's own connection); a duplicate of it subscribes. */
  constructor(
    private readonly client: Redis,
    channelName: string,
    private readonly onError: (error: Error) => void,
  ) {
    super({ channelName, reconnect: { enabled: false } });
  }

  /** Resolves once subscribed; when the store is down it rejects, and the subscriber keeps trying on its own. */
  async connect(): Promise<void> {
    if (!this.subscriber) this.subscriber = this.createSubscriber();
    if (this.state !== 'connected') await this.listen(this.subscriber);
  }

  async disconnect(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    subscriber?.disconnect();
    this.handlers.clear();
    this.setState('disconnected');
  }

  async publish(notification: JobNotification): Promise<void> {
    const wire: WireNotification = {
      jobId: String(notification.jobId),
      jobName: notification.jobName,
      nextRunAt: notification.nextRunAt?.toISOString() ?? null,
      priority: notification.priority,
      timestamp: notification.timestamp.toISOString(),
      source: notification.source,
    };
    await this.client.publish(this.config.channelName, JSON.stringify(wire));
  }

  private createSubscriber(): Redis {
    const subscriber = this.client.duplicate();
    subscriber.on('error', (error: Error) => this.onError(error));
    // After every reconnection (ioredis's own, with the job store's retry strategy).
    subscriber.on('ready', () => void this.listen(subscriber).catch((error: Error) => this.onError(error)));
    subscriber.on('close', () => {
      if (this.subscriber === subscriber && this.state === 'connected') this.setState('reconnecting');
    });
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.config.channelName) return;
      let notification: JobNotification;
      try {
        notification = parseNotification(message);
      } catch (error) {
        this.onError(new Error(`unreadable job notification: ${(error as Error).message}`));
        return;
      }
      void this.notifyHandlers(notification);
    });
    this.setState('connecting');
    return subscriber;
  }

  /** Subscribing twice to one channel is harmless in Redis, so a reconnection may overlap a connect(). */
  private listen(subscriber: Redis): Promise<void> {
    this.subscribing ??= subscriber
      .subscribe(this.config.channelName)
      .then(() => {
        if (this.subscriber === subscriber) this.setState('connected');
      })
      .finally(() => {
        this.subscribing = undefined;
      });
    return this.subscribing;
  }
}

function parseNotification(message: string): JobNotification {
  const wire = JSON.parse(message) as WireNotification;
  if (typeof wire.jobName !== 'string' || typeof wire.jobId !== 'string')
    throw new Error('jobName and jobId are required');
  return {
    jobId: toJobId(wire.jobId),
    jobName: wire.jobName,
    nextRunAt: wire.nextRunAt ? new Date(wire.nextRunAt) : null,
    priority: wire.priority,
    timestamp: new Date(wire.timestamp),
    source: wire.source,
  };
}
