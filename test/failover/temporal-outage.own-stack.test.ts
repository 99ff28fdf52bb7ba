// Probes that tell the truth without amplifying an outage. A worker and a starter run as processes (`steward worker`,
// `steward starter`) on a stack of this file's own, whose Temporal dev server is stopped for 60 s and started again
// on its port and database; a second worker and a second starter are started while it is down. Throughout the
// outage every process stays up, /healthz answers 200 and /readyz 503 naming Temporal; once Temporal is back every
// one is ready again, the Pod created during the outage is pushed, and so is one created afterwards by the two
// processes started during the outage alone (the first two stopped).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from '../../deploy/local';
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import { sleep } from '../../deploy/local/process';
import { startTemporal, type TemporalServer } from '../../deploy/local/temporal';
import { startStewardProcess, type StewardProcess } from '../../deploy/local/worker-process';
import { DEFAULT_TENANT } from '../../model/translation/ids';
import { writeWorkflowBundle } from '../../worker/bundle';
import { freePort } from '../../worker/ports';
import { HOSTS, nodeProjection, podProjection } from '../chaos/ops';
import { createNode, createPod, podTranslationNames, seedEmulator, waitForReady } from '../support/objects-harness';
import { stackEnv } from '../support';
import * as k8s from '@kubernetes/client-node';

const OUTAGE_MS = 60_000;
const node = nodeProjection({ kind: 'Node', name: 'node-0', host: 0 });
const pod = (name: string, ip: string) =>
  podProjection({ kind: 'Pod', name, node: 'node-0', peer: false, phase: 'Running', ip });

interface Running extends StewardProcess {
  name: string;
  port: number;
}

let stack: Stack;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;
let env: Record<string, string>;
let restarted: TemporalServer | undefined;
const running: Running[] = [];

/** `steward <role>` as a process with a port of its own, started once `until` answers 200 there. */
async function start(role: 'worker' | 'starter', name: string, until: '/readyz' | '/healthz'): Promise<Running> {
  const port = await freePort();
  const prefix = role === 'worker' ? 'STEWARD' : 'STEWARD_STARTER';
  const started = await startStewardProcess(
    role,
    {
      name,
      env: {
        ...env,
        [`${prefix}_HTTP_HOST`]: '127.0.0.1',
        [`${prefix}_HTTP_PORT`]: String(port),
        ...(role === 'starter' ? { STEWARD_IDENTITY: name } : {}),
      },
      logFile: join(stack.info.stateDir, 'logs', `${name}.log`),
      readyTimeoutMs: 120_000,
    },
    async () => (await fetch(`http://127.0.0.1:${port}${until}`)).ok,
  );
  const process = { ...started, name, port };
  running.push(process);
  return process;
}

const probe = async ({ port }: Running, path: '/healthz' | '/readyz') => {
  const reply = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: reply.status, problems: ((await reply.json()) as { problems: string[] }).problems };
};

const metric = async ({ port }: Running, sample: string) => {
  const page = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const found = new RegExp(`^${sample.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(page);
  return found ? Number(found[1]) : undefined;
};
/** The sum of a metric's samples whose labels include `label` (e.g. every kind's sends of one result). */
const metricSum = async ({ port }: Running, name: string, label: string) => {
  const page = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const samples = [...page.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))];
  return samples
    .filter(([, labels]) => labels!.split(',').includes(label))
    .reduce((sum, [, , v]) => sum + Number(v), 0);
};

async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
  return Date.now() - started;
}

/** A projection as the API server made it: a UID (the Translations' names do not depend on which). */
const created = <T extends { metadata: { uid: string } }>(p: T): T => ({ ...p, metadata: { ...p.metadata, uid: 'u' } });

/** The Pod's Translations (its Node's first) Ready. */
const pushed = (name: string, ip: string) =>
  waitForReady(
    { custom },
    `Pod ${name}`,
    podTranslationNames(created(pod(name, ip)), created(node), DEFAULT_TENANT),
    120_000,
  );

beforeAll(async () => {
  stack = await startPrivateStack();
  const { info } = stack;
  await seedEmulator(info, HOSTS);
  const bundle = join(info.stateDir, 'steward', 'workflow-bundle.js');
  await writeWorkflowBundle(bundle);
  env = {
    ...stackEnv(info),
    STEWARD_WORKFLOW_BUNDLE: bundle,
    STEWARD_LEASE_NAME: 'outage-starter',
    STEWARD_DEBOUNCE_WINDOW: '50ms',
    STEWARD_LOG_LEVEL: 'info',
  };
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
  core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
}, 5 * 60_000);

afterAll(async () => {
  for (const p of running.reverse()) await p.stop();
  await restarted?.process.stop();
  await stack?.stop();
});

describe('a Temporal outage of 60 s under running and starting workers and starters', () => {
  it(
    'keeps every process up and alive but unready, naming Temporal, then ready again with nothing lost',
    async () => {
      const [worker1, starter1] = [
        await start('worker', 'worker-1', '/readyz'),
        await start('starter', 'starter-1', '/readyz'),
      ];
      await createNode({ core }, node);
      await createPod({ core }, pod('before', '10.1.0.10'));
      await pushed('before', '10.1.0.10');

      // Temporal stopped: the stack's dev server, SIGTERM, as the chaos run restarts it.
      const { pids, temporal } = stack.info;
      const port = Number(temporal.address.split(':').pop());
      const outageStarted = Date.now();
      process.kill(pids.temporal!, 'SIGTERM');
      await waitUntil('the Temporal dev server gone', () => {
        try {
          process.kill(pids.temporal!, 0);
          return false;
        } catch {
          return true;
        }
      });
      // Started while Temporal is down: each serves its probes at once and waits.
      const [worker2, starter2] = [
        await start('worker', 'worker-2', '/healthz'),
        await start('starter', 'starter-2', '/healthz'),
      ];
      await createPod({ core }, pod('during', '10.1.0.11'));

      const all = [worker1, starter1, worker2, starter2];
      // At least the outage's length, and at least five rounds of probes however slow the machine is.
      for (let rounds = 0; rounds < 5 || Date.now() - outageStarted < OUTAGE_MS; rounds++) {
        for (const p of all) {
          expect([p.name, p.process.running]).toEqual([p.name, true]);
          expect([p.name, await probe(p, '/healthz')]).toEqual([p.name, { status: 200, problems: [] }]);
          const ready = await probe(p, '/readyz');
          const namesTemporal = ready.problems.some((problem) => /Temporal at 127\.0\.0\.1:\d+/.test(problem));
          expect([p.name, ready.status, namesTemporal || ready.problems]).toEqual([p.name, 503, true]);
        }
        await sleep(5_000);
      }

      restarted = await startTemporal({
        stateDir: join(stack.info.stateDir, 'temporal'),
        port,
        uiPort: 0,
        report: () => {},
      });
      expect(restarted.address).toBe(temporal.address);
      for (const p of all)
        await waitUntil(`${p.name} ready again`, async () => (await probe(p, '/readyz')).status === 200);
      await pushed('during', '10.1.0.11');
      await pushed('before', '10.1.0.10');
      // Each process logged its failed attempts at start, once each with why; the first starter's sends during the
      // outage failed and were retried.
      for (const p of [worker2, starter2]) {
        const waits = readFileSync(p.process.logFile, 'utf8')
          .split('\n')
          .filter((line) => line.includes('Temporal is not reachable: waiting for it'))
          .map((line) => JSON.parse(line) as { attempt: number; reason: string });
        expect(waits.length).toBeGreaterThanOrEqual(2);
        expect(waits.map((w) => w.attempt)).toEqual(waits.map((_, i) => i + 1));
        for (const { reason } of waits) expect(reason).toContain(`Temporal at ${temporal.address}`);
      }
      expect(await metricSum(starter1, 'steward_starter_sends_total', 'result="transient_error"')).toBeGreaterThan(0);
      expect(await metric(starter1, 'steward_starter_leader')).toBe(1);
      expect(await metric(starter2, 'steward_starter_leader')).toBe(0);

      // The first two stop: what is done now, the two started during the outage do.
      await starter1.stop();
      await worker1.stop();
      await waitUntil(
        'starter-2 leading',
        async () => (await metric(starter2, 'steward_starter_leader')) === 1,
        60_000,
      );
      await createPod({ core }, pod('after', '10.1.0.12'));
      await pushed('after', '10.1.0.12');
      expect([worker2.process.running, starter2.process.running]).toEqual([true, true]);
    },
    10 * 60_000,
  );
});
