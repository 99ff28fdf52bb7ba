import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { searchAttributeKeys } from '../model/search-attributes';

/**
 * Steward's search attributes in a Temporal namespace: checked when a worker or starter connects (a workflow started
 * without them fails on its first upsert, far from the cause), and registered by `steward setup`.
 */

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;

/** The command that registers them by hand, with the Temporal CLI. */
export const registerCommand = (namespace: string, names: readonly string[]) =>
  `temporal operator search-attribute create --namespace ${namespace} ${names.map((name) => `--name ${name} --type Keyword`).join(' ')}`;

export class MissingSearchAttributesError extends Error {
  constructor(namespace: string, missing: readonly string[]) {
    super(
      `Temporal namespace ${namespace} lacks Steward's search attributes ${missing.join(', ')}: run \`steward setup\` ` +
        `(with the same Temporal settings), or \`${registerCommand(namespace, missing)}\``,
    );
    this.name = 'MissingSearchAttributesError';
  }
}

/** The names of Steward's search attributes the namespace lacks (or has with another type than Keyword). */
export async function missingSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  return searchAttributeKeys.map((key) => key.name).filter((name) => customAttributes?.[name] !== KEYWORD);
}

/**
 * Throws MissingSearchAttributesError when some are missing. A server that does not let this identity list them
 * (Temporal Cloud, where they are registered with `tcld`) is not held against it: `unchecked` is told why.
 */
export async function requireSearchAttributes(
  connection: Connection,
  namespace: string,
  unchecked: (reason: string) => void,
): Promise<void> {
  let missing: string[];
  try {
    missing = await missingSearchAttributes(connection, namespace);
  } catch (error) {
    const code = (error as { code?: number }).code;
    if (code !== GRPC_PERMISSION_DENIED && code !== GRPC_UNIMPLEMENTED) throw error;
    return unchecked(error instanceof Error ? error.message : String(error));
  }
  if (missing.length > 0) throw new MissingSearchAttributesError(namespace, missing);
}

/** Registers those the namespace lacks; idempotent. Returns what it registered. */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (missing.length > 0)
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
    });
  return missing;
}
