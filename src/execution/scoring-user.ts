/** The user a score token names: the owner of the scenarios it runs and of the runs and batches it asks for. */
export interface ScoringUser {
  id: number;
}
