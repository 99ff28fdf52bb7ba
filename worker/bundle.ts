import { bundleWorkflowCode, type Logger, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Steward's workflows: the worker's only workflow entry. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Modules evaluated once per worker, in the shared V8 context, instead of once per workflow (`reuseV8Context` gives
 * each workflow a module cache of its own): xstate, zod's code, the machines and the translation. The SDK deep-freezes
 * what they export, so none of them may hold per-workflow state (none has a module-level Map, counter or cache), and
 * none may import a module that exports a zod schema: a schema writes into itself when first used (its lazy internals,
 * its memoizer), which fails on a frozen one. The schemas (messages.ts, translation/types.ts,
 * model/peerpod-projection.ts) and the lifecycle glue stay per workflow. `jitless-zod` comes first: it completes
 * zod's global config before that is frozen. `npx jest test/replay` replays every recorded history with this list.
 */
export const PRELOADED_WORKFLOW_MODULES = [
  '../model/jitless-zod',
  '../model/message-schemas',
  '../model/translation/projections',
  '../model/vocabulary',
  '../model/naming',
  '../model/patches',
  '../model/search-attributes',
  'activities',
  'interpreter',
  'machines/common',
  'machines/object',
  'machines/translation',
  'machines/peerpod',
  '../model/translation/model',
  '../model/translation/errors',
  '../model/translation/ids',
  '../model/translation/net',
  '../model/translation/resources',
  '../model/translation/custom-resource',
  '../model/translation/node',
  '../model/translation/pod',
  '../model/translation/service',
  '../model/translation/endpoints',
  '../model/translation/global',
]
  .map((m) => require.resolve(`../workflows/${m}`))
  .concat(['zod', 'xstate']);

/**
 * The bundle's inline source map, which the SDK parses in every workflow thread to map each frame of the stack it
 * records for every promise: a line a mapping, not a column, and none of the sources (only the Worker option
 * `showStackTraceSources`, unset here, reads them). Frames still name the TypeScript file and line. The map and the
 * bundle's text then take some 9 MB of a workflow thread where the SDK's default (`inline-source-map`) took 27.
 */
const WORKFLOW_SOURCE_MAP = 'inline-nosources-cheap-module-source-map';

/**
 * Bundles the workflow code with the shared modules preloaded: how every bundle of Steward's workflows is made, by the
 * worker at its start, by `steward bundle` and by the replay test. Interceptor modules only for tracing
 * (platform/tracing.ts): a bundle written ahead has none.
 */
export const bundleWorkflows = (
  workflowsPath = WORKFLOWS_PATH,
  logger?: Logger,
  workflowInterceptorModules: string[] = [],
): Promise<WorkflowBundleWithSourceMap> =>
  bundleWorkflowCode({
    workflowsPath,
    preloadModules: PRELOADED_WORKFLOW_MODULES,
    workflowInterceptorModules,
    webpackConfigHook: (config) => ({ ...config, devtool: WORKFLOW_SOURCE_MAP }),
    ...(logger ? { logger } : {}),
  });

/**
 * Bundles the workflow code once, as every worker would at its start, and writes it to `out` (through a temporary
 * file, so a worker never reads half of one). Workers given the file (STEWARD_WORKFLOW_BUNDLE) skip webpack: less
 * memory kept after it and no bundling CPU at each start. The bundle is only right for the sources it came from.
 */
export async function writeWorkflowBundle(out: string, workflowsPath = WORKFLOWS_PATH): Promise<{ bytes: number }> {
  const { code } = await bundleWorkflows(workflowsPath);
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.partial`;
  writeFileSync(partial, code);
  renameSync(partial, out);
  return { bytes: Buffer.byteLength(code) };
}
