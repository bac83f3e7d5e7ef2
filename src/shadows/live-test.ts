/** What every live test (a shadow, a split) fixes when it starts: whose scenario, who, beside which champion. */
export interface LiveTestTerms {
  id: string;
  scenarioId: number;
  ownerId: number;
  createdBy: string;
  /** The deployed version it runs beside. */
  championVersion: string;
  championVersionId: number;
}
