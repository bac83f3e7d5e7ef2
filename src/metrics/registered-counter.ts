import { Counter, type Registry } from 'prom-client';

/**
 * A counter in `registry`, by the labels `labels` names. Each label's listed values, every combination of
 * them, are exposed at 0 from the start: a series that appears only at its first count hides that first
 * increase from rate() and from alerts. A label listed with no values (owners, reasons not known in advance)
 * starts no series.
 */
export function registeredCounter<L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  labels: Readonly<Record<L, readonly string[]>> = {} as Record<L, readonly string[]>,
): Counter<L> {
  const labelNames = Object.keys(labels) as L[];
  const counter = new Counter<L>({ name, help, labelNames, registers: [registry] });
  if (labelNames.length > 0) for (const combination of combinations(labels, labelNames)) counter.inc(combination, 0);
  return counter;
}

/** Every assignment of one listed value to each of `names`, the first name varying slowest. */
function combinations<L extends string>(
  labels: Readonly<Record<L, readonly string[]>>,
  names: readonly L[],
): Array<Partial<Record<L, string>>> {
  let assignments: Array<Partial<Record<L, string>>> = [{}];
  for (const name of names)
    assignments = assignments.flatMap((assignment) => labels[name].map((value) => ({ ...assignment, [name]: value })));
  return assignments;
}
