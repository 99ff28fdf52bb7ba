import { accessSync, constants } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { z } from 'zod';

/**
 * How Steward reads its settings, for every process and command alike: a table of settings (flag and environment
 * variable), parsed flag first, then variable, then default, and validated with every problem named both ways. A
 * leaf (nothing of Steward's imported), so the worker's, the starter's and the cloud's settings can all use it.
 */

/**
 * One setting, as a flag and as an environment variable. The CLI registers its flags from these tables and the
 * README's configuration table lists them, so a setting is named in exactly one place. The flag is `--<kebab key>`.
 * Secrets have no flag (a command line shows in `ps` and in shell history), unless `secretFlag` says otherwise.
 */
export interface Setting {
  env: string;
  description: string;
  /** Placeholder of the flag's value (`--address <host:port>`); absent for a boolean switch. */
  arg?: string;
  default?: string;
  /** Never shown: not in a log line, a printed configuration or a message. */
  secret?: boolean;
  /**
   * A secret that has a flag all the same, because the upstream tool has one (`temporal --api-key`) and one command
   * line should serve both; its help says to prefer the variable.
   */
  secretFlag?: boolean;
  /** What happens when the setting is given neither way, where that is not its default (a cloud provider). */
  whenUnset?: string;
  /** A former flag name, still taken with a deprecation warning where no other option of the command has it. */
  formerFlag?: string;
  /** A flag given any number of times (`--grpc-meta a=1 --grpc-meta b=2`): its values reach the loader one a line. */
  repeatable?: boolean;
  /** A former variable, still read with a deprecation warning when neither the variable nor its alias is set. */
  formerEnv?: string;
  /**
   * The unit the former flag and variable counted in, where the setting is now a duration (`--resync-seconds 30`
   * stands for `--resync-interval 30s`): appended to a bare number given the former way.
   */
  formerUnit?: 's' | 'ms';
  /**
   * midonet-kubernetes' (or cloud-api-adaptor's) variable for the same setting, read as it is, so that its Deployment's
   * environment or ConfigMap moves over unchanged. Given beside the setting's own variable with another value, both
   * are refused.
   */
  alias?: string;
  /** Whose name `alias` is, as the conflict's message says it; midonet-kubernetes' when absent. */
  aliasOf?: "cloud-api-adaptor's" | "Steward's former";
  /** A variable refused, never read, with why: a name that means another thing upstream. */
  refuses?: { env: string; because: string };
}

/** Flag values as commander gives them (camelCase keys). */
export type Flags = Record<string, string | boolean | undefined>;

export const flagOf = (key: string, setting: Setting) =>
  `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}${setting.arg ? ` <${setting.arg}>` : ''}`;

export const hasFlag = (setting: Setting) => !setting.secret || setting.secretFlag === true;

/** How a setting is named in error messages: both ways of giving it (a secret without a flag: its variable). */
export const settingLabel = (key: string, setting: Setting) =>
  hasFlag(setting) ? `${flagOf(key, setting).split(' ')[0]} / ${setting.env}` : setting.env;

/**
 * Values from another source (a profile of Temporal's configuration file), taken where neither the flag nor the
 * variable gives one, before the default; `from` says where they came from when one is refused.
 */
export interface SettingsLayer {
  from: string;
  values: Record<string, string | undefined>;
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

const readable = (file: string) => {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
};
export const readableFile = z
  .string()
  .refine(readable, { error: (issue) => `cannot read file "${String(issue.input)}"` });
export const whole = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, { error: (issue) => `must be a whole number, got "${String(issue.input)}"` })
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
/** `90s`, `10m`, `1h`, `500ms`, or `0`, in ms: how every duration is written on the command line and in variables. */
export const duration = z.string().transform((text, ctx) => {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(text.trim());
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match?.[2] ?? (match?.[1] === '0' ? 'ms' : '')];
  if (!match || unit === undefined) {
    ctx.addIssue({ code: 'custom', message: `must be a duration such as 90s, 10m or 1h, got "${text}"` });
    return z.NEVER;
  }
  return Number(match[1]) * unit;
});
/** A comma-separated list, or `none` for the empty one (an empty value would read as "unset"). */
export const listOrNone = z.string().transform((list) =>
  list.trim() === 'none'
    ? []
    : list
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
);
/** A command-line argument that counts something (workers, Pods): a whole number, at least 1. */
export function countArgument(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('must be a whole number, at least 1.');
  return Number(value);
}
/** A switch: the flag gives a boolean, the variable one of these words. */
export const flag = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

/** A value given the former way, in the setting's unit now: a bare number gets the unit it counted in. */
const inFormerUnit = (setting: Setting, value: string) =>
  setting.formerUnit && /^\d+$/.test(value.trim()) ? `${value.trim()}${setting.formerUnit}` : value;

/**
 * The setting's variable, else its alias, else its former variable (with a warning on stderr); `issues` gets a refused variable that is set, and an alias set beside the
 * variable to another value (named, never shown: either may be a secret).
 */
function fromEnv(setting: Setting, env: NodeJS.ProcessEnv, issues: string[]): string | undefined {
  const { refuses, alias, aliasOf = "midonet-kubernetes'" } = setting;
  if (refuses && env[refuses.env]) issues.push(`${refuses.env}: ${refuses.because}`);
  const own = env[setting.env] || undefined;
  const aliased = alias ? env[alias] || undefined : undefined;
  if (own !== undefined && aliased !== undefined && own !== aliased)
    issues.push(
      `${setting.env} and ${alias} (${aliasOf} name for it) are both set, to different values: set one of them`,
    );
  const former = setting.formerEnv ? env[setting.formerEnv] || undefined : undefined;
  if (own !== undefined || aliased !== undefined || former === undefined) return own ?? aliased;
  process.stderr.write(`warning: ${setting.formerEnv} is deprecated: use ${setting.env}\n`);
  return inFormerUnit(setting, former);
}

/**
 * Flag, else environment variable (or its upstream alias), else the layer's value, else default, validated by
 * `schema`; every problem named by its flag and variable, and by the layer when the value came from there.
 */
export function parseSettings<S extends Record<string, Setting>, T>(
  settings: S,
  schema: z.ZodType<T>,
  flags: Flags,
  env: NodeJS.ProcessEnv,
  layer?: SettingsLayer,
): T {
  const issues: string[] = [];
  const fromLayer = new Set<string>();
  const raw = Object.fromEntries(
    Object.entries(settings).map(([key, setting]) => {
      const fromFlag = hasFlag(setting) ? flags[key] : undefined;
      const fromVariable = fromEnv(setting, env, issues);
      const given = typeof fromFlag === 'boolean' ? String(fromFlag) : (fromFlag ?? fromVariable);
      if (given !== undefined) return [key, given];
      const layered = layer?.values[key];
      if (layered !== undefined) fromLayer.add(key);
      return [key, layered ?? setting.default];
    }),
  );
  const result = schema.safeParse(raw);
  if (result.success && issues.length === 0) return result.data;
  throw new ConfigError([
    ...issues,
    ...(result.error?.issues ?? []).map((issue) => {
      const key = String(issue.path[0]);
      const setting = (settings as Record<string, Setting | undefined>)[key];
      if (!setting) return issue.message;
      const source = fromLayer.has(key) ? ` (from ${layer!.from})` : '';
      return `${settingLabel(key, setting)}${source}: ${issue.message}`;
    }),
  ]);
}

const camel = (kebab: string) => kebab.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The help's bracket: where else the setting comes from, and what applies without it. */
const helpSuffix = (setting: Setting) =>
  `[${setting.env}${setting.alias ? ` or ${setting.alias}` : ''}${setting.whenUnset ? `, unset: ${setting.whenUnset}` : setting.default ? `, default ${setting.default}` : ''}]`;

/** A secret's flag says why its variable is the better way. */
const secretNote = (setting: Setting) =>
  setting.secret ? ` (a command line shows in ps and shell history: prefer ${setting.env})` : '';

/**
 * Flags without defaults: a given flag wins over the variable, and the loader applies the defaults. Secrets have no
 * flag unless `secretFlag`. A former flag name is registered too, unless the command already has an option of that
 * name (then its meaning wins): given, it warns on stderr and stands for the new flag.
 */
export function addSettingFlags(command: Command, settings: Record<string, Setting>): Command {
  for (const [key, setting] of Object.entries(settings)) {
    if (!hasFlag(setting)) continue;
    const newFlag = flagOf(key, setting).split(' ')[0]!;
    const help = `${setting.description}${secretNote(setting)} ${helpSuffix(setting)}`;
    if (setting.repeatable)
      command.option(flagOf(key, setting), help, (value: string, given?: string) =>
        given === undefined ? value : `${given}\n${value}`,
      );
    else command.option(flagOf(key, setting), help);
    const former = setting.formerFlag;
    if (!former || command.options.some((o) => o.long === `--${former}`)) continue;
    const arg = setting.formerUnit ? { s: 'seconds', ms: 'ms' }[setting.formerUnit] : setting.arg;
    command.option(`--${former}${arg ? ` <${arg}>` : ''}`, `deprecated: use ${newFlag}`);
    command.hook('preAction', (_, action) => {
      const value: unknown = action.getOptionValue(camel(former));
      if (value === undefined) return;
      process.stderr.write(`warning: --${former} is deprecated: use ${newFlag}\n`);
      if (action.getOptionValue(key) !== undefined) return;
      action.setOptionValue(key, typeof value === 'string' ? inFormerUnit(setting, value) : value);
    });
  }
  return command;
}

/** Runs each loader and reports the problems of all of them at once, as one ConfigError. */
export function loadAll<T extends unknown[]>(...loaders: { [K in keyof T]: () => T[K] }): T {
  const issues: string[] = [];
  const values = loaders.map((load) => {
    try {
      return load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...error.issues);
      return undefined;
    }
  });
  if (issues.length > 0) throw new ConfigError(issues);
  return values as T;
}
