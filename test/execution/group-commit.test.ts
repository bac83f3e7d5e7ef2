import { describe, expect, it } from '@jest/globals';
import { GroupCommit } from '../../src/execution/group-commit.js';

/** A commit that records its groups and finishes when told to. */
function recorder(): {
  groups: number[][];
  release: () => void;
  commit: (items: number[]) => Promise<Array<number | Error>>;
} {
  const groups: number[][] = [];
  let releases: Array<() => void> = [];
  return {
    groups,
    release: () => {
      const pending = releases;
      releases = [];
      for (const release of pending) release();
    },
    commit: (items) => {
      groups.push(items);
      return new Promise((resolve) =>
        releases.push(() => resolve(items.map((item) => (item < 0 ? new Error(`negative ${item}`) : item * 10)))),
      );
    },
  };
}

describe('GroupCommit', () => {
  it('commits a lone item at once', async () => {
    const commit = recorder();
    const group = new GroupCommit({ maxItems: 10, commit: commit.commit });
    const answer = group.submit(1);
    expect(commit.groups).toEqual([[1]]);
    commit.release();
    await expect(answer).resolves.toBe(10);
  });

  it('puts the items that arrive while a commit is in flight into the next group, at most maxItems each', async () => {
    const commit = recorder();
    const group = new GroupCommit({ maxItems: 3, commit: commit.commit });
    const answers = [1, 2, 3, 4, 5, 6].map((item) => group.submit(item));
    expect(commit.groups).toEqual([[1]]);
    commit.release();
    await answers[0];
    expect(commit.groups).toEqual([[1], [2, 3, 4]]);
    commit.release();
    await answers[3];
    commit.release();
    await expect(Promise.all(answers)).resolves.toEqual([10, 20, 30, 40, 50, 60]);
    expect(commit.groups).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('rejects only the items the commit answered with an error, and the whole group when it throws', async () => {
    const commit = recorder();
    const group = new GroupCommit({ maxItems: 10, commit: commit.commit });
    const first = group.submit(1);
    const [ok, bad] = [group.submit(2), group.submit(-3)];
    commit.release();
    await first;
    commit.release();
    await expect(ok).resolves.toBe(20);
    await expect(bad).rejects.toThrow('negative -3');

    const failing = new GroupCommit<number, number>({
      maxItems: 10,
      commit: async () => {
        throw new Error('down');
      },
    });
    await expect(Promise.all([failing.submit(1), failing.submit(2)])).rejects.toThrow('down');
  });

  it('starts commits no closer than minIntervalMs under load', async () => {
    const starts: Array<{ at: number; items: number[] }> = [];
    const group = new GroupCommit<number, number>({
      maxItems: 100,
      concurrency: 4,
      minIntervalMs: 30,
      commit: async (items) => {
        starts.push({ at: performance.now(), items });
        return items;
      },
    });
    await Promise.all([0, 1, 2, 3, 4].map((item) => group.submit(item)));
    expect(starts.map((start) => start.items)).toEqual([[0], [1, 2, 3, 4]]);
    expect(starts[1].at - starts[0].at).toBeGreaterThanOrEqual(29);
  });

  it('commits what waits at once when hurried, then spaces commits out again', async () => {
    const starts: Array<{ at: number; items: number[] }> = [];
    const group = new GroupCommit<number, number>({
      maxItems: 2,
      concurrency: 4,
      minIntervalMs: 10_000,
      commit: async (items) => {
        starts.push({ at: performance.now(), items });
        return items;
      },
    });
    const first = group.submit(0);
    const waiting = [1, 2, 3].map((item) => group.submit(item));
    await first;
    expect(starts.map((start) => start.items)).toEqual([[0]]);
    const hurriedAt = performance.now();
    group.hurry();
    await Promise.all(waiting);
    expect(starts.map((start) => start.items)).toEqual([[0], [1, 2], [3]]);
    expect(performance.now() - hurriedAt).toBeLessThan(1000);
    const later = group.submit(4);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(starts).toHaveLength(3);
    group.hurry();
    await later;
    expect(starts.map((start) => start.items)).toEqual([[0], [1, 2], [3], [4]]);
  });
});
