import type { Command } from 'commander';
import { z } from 'zod';
import { kubeconfigFiles, kubeconfigSetting, loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import { addSettingFlags, parseSettings, type Flags, type Setting } from '../platform/settings';
import { temporalUiUrl, temporalUiUrlSetting } from '../platform/temporal-config';
import { temporalUiLink } from '../model/naming';
import { UsageError } from './errors';
import { outputOf, outputOption, type OutputFormat, type OutputWord } from './output';

/**
 * The flags of the commands about Kubernetes objects (list, status, the operator actions), as kubectl spells them:
 * `-n/--namespace`, `--kubeconfig`, `--context`, `-o/--output`; and where the Temporal UI is, for links. Checked with
 * zod before anything is asked, each problem named by its flag.
 */

export const objectSettings = {
  kubeconfig: {
    ...kubeconfigSetting,
    description: `${kubeconfigSetting.description}: its context's namespace is the default of -n`,
  },
  temporalUiUrl: {
    ...temporalUiUrlSetting,
    description: "the Temporal UI's address: status and list -o wide then link each object's workflow page",
  },
} satisfies Record<string, Setting>;

const settingsSchema = z.object({
  kubeconfig: kubeconfigFiles.optional(),
  temporalUiUrl: temporalUiUrl.optional(),
});

/** A Kubernetes namespace name (DNS-1123 label), as the API server takes it. */
export const kubernetesNamespace = z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
    error: (issue) => `must be a namespace name (lowercase letters, digits and '-'), got "${String(issue.input)}"`,
  });

const flagLabels: Record<string, string> = {
  namespace: '-n/--namespace',
  allNamespaces: '-A/--all-namespaces',
  output: '-o/--output',
  context: '--context',
};

/** `schema`'s reading of the options; else an error naming each flag that is wrong and why. */
export function checkFlags<T>(schema: z.ZodType<T>, options: Flags): T {
  const result = schema.safeParse(options);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    const label = flagLabels[key] ?? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    return `${label}: ${issue.message}`;
  });
  throw new UsageError(problems.join('; '));
}

/** `-n`, `-o`, `--kubeconfig`, `--context` and the UI's address; before the Temporal flags, so `-n` keeps its name. */
export function addObjectFlags(command: Command, formats: readonly OutputWord[]): Command {
  command
    .option(
      '-n, --namespace <namespace>',
      "Kubernetes namespace (not Temporal's: that is --temporal-namespace); default the kubeconfig context's, else default",
    )
    .addOption(outputOption(formats))
    .option('--context <name>', 'kubeconfig context whose namespace is the default of -n');
  return addSettingFlags(command, objectSettings);
}

export interface ObjectFlags {
  namespace?: string;
  output?: OutputFormat;
  /** The namespace when none is given: the kubeconfig context's, else `default`; read only when asked. */
  defaultNamespace: () => string;
  /** The object's page in the Temporal UI, when its address is set. */
  link: (temporalNamespace: string, workflowId: string) => string | undefined;
  /** The kubeconfig of --kubeconfig and --context, for what reads the cluster itself (the mass-deletion guard). */
  kubeConfig?: () => ReturnType<typeof loadKubeConfig>;
}

export function readObjectFlags(options: Flags): ObjectFlags {
  const own = checkFlags(
    z.object({
      namespace: kubernetesNamespace.optional(),
      context: z.string().min(1, 'must not be empty').optional(),
    }),
    options,
  );
  const { kubeconfig, temporalUiUrl } = parseSettings(objectSettings, settingsSchema, options, process.env);
  return {
    ...own,
    output: outputOf(options),
    defaultNamespace: () => {
      const kubeConfig = loadKubeConfig(kubeconfig, own.context);
      return kubeConfig?.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? 'default';
    },
    kubeConfig: () => loadKubeConfig(kubeconfig, own.context),
    link: (temporalNamespace, workflowId) =>
      temporalUiUrl ? temporalUiLink(temporalUiUrl, temporalNamespace, workflowId) : undefined,
  };
}
