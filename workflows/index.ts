/**
 * Workflows: deterministic code only. The XState machines (pure data), the small interpreter that runs a
 * machine inside a Temporal workflow, and one workflow per lifecycle kind. This module is the worker's only
 * `workflowsPath`; everything here must replay identically.
 */
export {};
