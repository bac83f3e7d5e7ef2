import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * The process metrics (`process_*`, `nodejs_*`), read when scraped and at no other time. prom-client's
 * collectDefaultMetrics keeps collectors running between scrapes (an event-loop-delay monitor, a GC observer);
 * measured in one run of `npm run bench:http`, they cost synchronous scoring about 15 % of its throughput (metrics on
 * 83.7 % of off; without them 99.5 %: docs/benchmarks.md). These answer the same questions from `process` at scrape
 * time: CPU, memory, heap, start time, version, and the event loop's lag as one setImmediate's delay.
 */
export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  const cpu = () => process.cpuUsage();
  new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'User CPU time spent, in seconds.',
    registers,
    collect() {
      this.reset();
      this.inc(cpu().user / 1e6);
    },
  });
  new Counter({
    name: 'process_cpu_system_seconds_total',
    help: 'System CPU time spent, in seconds.',
    registers,
    collect() {
      this.reset();
      this.inc(cpu().system / 1e6);
    },
  });
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent, in seconds.',
    registers,
    collect() {
      const used = cpu();
      this.reset();
      this.inc((used.user + used.system) / 1e6);
    },
  });
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size, in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  const startedAt = Math.round(Date.now() / 1000 - process.uptime());
  new Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since the Unix epoch, in seconds.',
    registers,
    collect() {
      this.set(startedAt);
    },
  });
  new Gauge({
    name: 'nodejs_heap_size_total_bytes',
    help: 'Process heap size from Node.js, in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage().heapTotal);
    },
  });
  new Gauge({
    name: 'nodejs_heap_size_used_bytes',
    help: 'Process heap size used from Node.js, in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage().heapUsed);
    },
  });
  new Gauge({
    name: 'nodejs_external_memory_bytes',
    help: 'Node.js external memory size, in bytes.',
    registers,
    collect() {
      this.set(process.memoryUsage().external);
    },
  });
  new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Lag of the event loop when scraped: how late one setImmediate ran, in seconds.',
    registers,
    async collect() {
      const started = performance.now();
      await new Promise((resolve) => setImmediate(resolve));
      this.set((performance.now() - started) / 1000);
    },
  });
  new Gauge({
    name: 'nodejs_version_info',
    help: 'Node.js version info.',
    labelNames: ['version'],
    registers,
    collect() {
      this.set({ version: process.version }, 1);
    },
  });
}
