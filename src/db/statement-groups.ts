/**
 * Splits rows for multi-row statements so that no statement passes `maxBytes` (as `sizeOf` estimates
 * it), keeping their order: well below MySQL's max_allowed_packet (16 MiB by default on MariaDB,
 * 64 MiB on MySQL 8) whatever the rows hold. A row larger than `maxBytes` goes alone.
 */
export function groupsWithin<T>(rows: readonly T[], sizeOf: (row: T) => number, maxBytes: number): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = sizeOf(row);
    if (group.length > 0 && bytes + size > maxBytes) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(row);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
