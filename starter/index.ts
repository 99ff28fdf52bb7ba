/**
 * Starter: the watcher that turns Kubernetes watch events into signal-with-start, one leader at a time
 * (`controller/`), its configuration (`config.ts`) and how a process runs it (`run.ts`: the global setup workflow and
 * the sweeper's Schedule, `sweep-schedule.ts`, ensured first). `steward starter` (cli/starter.ts) runs it.
 */
export { createStarter, type Starter, type StarterOptions } from './controller';
