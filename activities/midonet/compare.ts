// What differs between the body Steward asked for and the object MidoNet holds. Only the fields of the desired
// body count: the server adds many of its own (URIs, tunnel keys, defaults) that the request never set.

/** One differing field, as plain JSON (`null` stands for absent). */
export interface FieldDiff {
  /** Dotted path into the body, with `[i]` for array elements, e.g. `natTargets[0].portFrom`. */
  field: string;
  desired: unknown;
  observed: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// A null asked for is the same as a field the server leaves out.
function collect(desired: unknown, observed: unknown, field: string, out: FieldDiff[]): void {
  if (isRecord(desired) && isRecord(observed)) {
    for (const [key, value] of Object.entries(desired))
      collect(value, observed[key], field ? `${field}.${key}` : key, out);
  } else if (Array.isArray(desired) && Array.isArray(observed) && desired.length === observed.length) {
    desired.forEach((value, i) => collect(value, observed[i], `${field}[${i}]`, out));
  } else if ((desired ?? null) !== (observed ?? null)) {
    out.push({ field, desired: desired ?? null, observed: observed ?? null });
  }
}

/** Fields of `desired` (except `ignore`d top-level ones) whose value `observed` does not hold. */
export function diffBody(
  desired: Record<string, unknown>,
  observed: Record<string, unknown>,
  ignore: readonly string[] = [],
): FieldDiff[] {
  const out: FieldDiff[] = [];
  for (const [key, value] of Object.entries(desired))
    if (!ignore.includes(key)) collect(value, observed[key], key, out);
  return out;
}
