import type { AppConfig } from '../config/config.js';
import { OutboundHttpClient } from './outbound-http-client.js';
import { TargetPolicy } from './target-policy.js';

/** The outbound HTTP of a process: one target policy and the one client that enforces it. */
export interface Outbound {
  policy: TargetPolicy;
  client: OutboundHttpClient;
}

/** Built once, in the composition root (src/services.ts); HTTP_CALL nodes and callbacks share it. */
export function createOutbound(config: Pick<AppConfig, 'outboundAllowList'>): Outbound {
  const policy = new TargetPolicy({ allowPrivate: config.outboundAllowList });
  return { policy, client: new OutboundHttpClient(policy) };
}
