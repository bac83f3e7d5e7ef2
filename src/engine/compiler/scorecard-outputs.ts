import type { ScorecardNodeSettings } from '../types.js';

/**
 * The variables a scorecard writes, before the node's prefix, in the order its generated function returns
 * their values: score, reason codes, the breakdown (when asked for), then each characteristic's points
 * (for those with a `pointsVariable`).
 */
export function scorecardOutputs(settings: ScorecardNodeSettings): string[] {
  const names = [settings.scoreVariable ?? 'score', settings.reasonCodesVariable ?? 'reasonCodes'];
  if (settings.breakdownVariable !== undefined) names.push(settings.breakdownVariable);
  for (const characteristic of settings.characteristics) {
    if (characteristic.pointsVariable !== undefined) names.push(characteristic.pointsVariable);
  }
  return names;
}

/** The reason code a characteristic reports: its own, or its name. */
export const reasonCodeOf = (characteristic: { name: string; reasonCode?: string }): string =>
  characteristic.reasonCode ?? characteristic.name;
